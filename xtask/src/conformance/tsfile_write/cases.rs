//! The cases of the `tsfile-write` suite: table and tree files covering every data type, nulls,
//! multi-page and multi-chunk series, many devices with index degree 3–5, and every encoding ×
//! compression the writer produces.

use super::*;

pub(super) fn all_types(e_int: E, e_float: E, e_text: E, k: C) -> Vec<Col> {
    vec![
        ("f_bool", T::Boolean, E::Plain, k),
        ("f_int32", T::Int32, e_int, k),
        ("f_int64", T::Int64, e_int, k),
        (
            "f_float",
            T::Float,
            if e_float == E::Sprintz {
                E::Rlbe
            } else {
                e_float
            },
            k,
        ),
        (
            "f_double",
            T::Double,
            if e_float == E::Sprintz {
                E::Rlbe
            } else {
                e_float
            },
            k,
        ),
        ("f_text", T::Text, e_text, k),
        ("f_string", T::String, e_text, k),
        (
            "f_ts",
            T::Timestamp,
            if e_int == E::Zigzag || e_int == E::Sprintz {
                E::Ts2Diff
            } else {
                e_int
            },
            k,
        ),
        (
            "f_date",
            T::Date,
            if e_int == E::Zigzag || e_int == E::Sprintz {
                E::Plain
            } else {
                e_int
            },
            k,
        ),
        ("f_blob", T::Blob, E::Plain, k),
    ]
}

pub(super) fn table_cases() -> Vec<TableCase> {
    let d = WriterOptions::default;
    let base = |name, opts: WriterOptions, fields: Vec<Col>| TableCase {
        name,
        opts,
        tables: vec![("t", 2, fields)],
        devices: 3,
        rows: 300,
        nulls: 0.15,
        flushes: 1,
        parts: 0,
        null_tags: false,
        start: 1_700_000_000_000,
    };
    let codecs = [
        (
            "table_plain_uncompressed",
            E::Plain,
            E::Plain,
            E::Plain,
            C::Uncompressed,
        ),
        (
            "table_ts2diff_snappy",
            E::Ts2Diff,
            E::Gorilla,
            E::Plain,
            C::Snappy,
        ),
        (
            "table_gorilla_gzip",
            E::Gorilla,
            E::Gorilla,
            E::Dictionary,
            C::Gzip,
        ),
        ("table_rle_zstd", E::Rle, E::Chimp, E::Dictionary, C::Zstd),
        ("table_zigzag_lzma2", E::Zigzag, E::Rlbe, E::Plain, C::Lzma2),
        ("table_chimp_lz4", E::Chimp, E::Chimp, E::Plain, C::Lz4),
        (
            "table_rle_gorilla_snappy",
            E::Rle,
            E::Gorilla,
            E::Dictionary,
            C::Snappy,
        ),
        ("table_rlbe_zstd", E::Rlbe, E::Rlbe, E::Plain, C::Zstd),
        (
            "table_defaults_lz4",
            E::Ts2Diff,
            E::Gorilla,
            E::Plain,
            C::Lz4,
        ),
    ];
    let mut out: Vec<TableCase> = codecs
        .iter()
        .map(|(n, i, f, s, k)| {
            base(
                n,
                WriterOptions {
                    time_compression: *k,
                    default_compression: *k,
                    ..d()
                },
                all_types(*i, *f, *s, *k),
            )
        })
        .collect();
    let defaults = || all_types(E::Ts2Diff, E::Gorilla, E::Plain, C::Lz4);
    out.push(TableCase {
        rows: 2000,
        ..base(
            "table_multi_page",
            WriterOptions {
                max_points_per_page: 37,
                max_page_bytes: 3000,
                ..d()
            },
            defaults(),
        )
    });
    out.push(TableCase {
        flushes: 4,
        ..base("table_multi_chunk", d(), defaults())
    });
    out.push(TableCase {
        devices: 60,
        rows: 20,
        ..base(
            "table_many_devices_degree3",
            WriterOptions {
                max_degree: 3,
                ..d()
            },
            defaults(),
        )
    });
    out.push(TableCase {
        devices: 2,
        rows: 50,
        ..base(
            "table_wide_degree4",
            WriterOptions {
                max_degree: 4,
                ..d()
            },
            (0..40)
                .map(|i| {
                    (
                        Box::leak(format!("s{i:02}").into_boxed_str()) as &'static str,
                        if i % 2 == 0 { T::Double } else { T::Int64 },
                        E::Plain,
                        C::Snappy,
                    )
                })
                .collect(),
        )
    });
    out.push(TableCase {
        null_tags: true,
        nulls: 0.3,
        ..base("table_null_tags", d(), defaults())
    });
    out.push(TableCase {
        start: -1_000_000,
        ..base(
            "table_negative_time_plain",
            WriterOptions {
                time_encoding: E::Plain,
                time_compression: C::Uncompressed,
                ..d()
            },
            defaults(),
        )
    });
    out.push(TableCase {
        nulls: 1.0,
        ..base("table_all_null", d(), defaults())
    });
    // Java's choices: mask bits on aligned TimeseriesMetadata, Java Bloom sizing and hashing,
    // no operation-index record, Java property order; trailing null tags trimmed.
    out.push(TableCase {
        null_tags: true,
        flushes: 2,
        ..base(
            "table_java_flavor",
            WriterOptions {
                flavor: Flavor::Java,
                ..d()
            },
            defaults(),
        )
    });
    // Numeric columns only with small pages, written in many batches: pages are encoded as
    // soon as they are full, across batch boundaries.
    out.push(TableCase {
        rows: 1000,
        parts: 7,
        ..base(
            "table_pages_sealed_while_writing",
            WriterOptions {
                max_points_per_page: 100,
                ..d()
            },
            vec![
                ("i32", T::Int32, E::Ts2Diff, C::Lz4),
                ("i64", T::Int64, E::Rle, C::Zstd),
                ("f32", T::Float, E::Gorilla, C::Snappy),
                ("f64", T::Double, E::Chimp, C::Gzip),
                ("b", T::Boolean, E::Plain, C::Uncompressed),
            ],
        )
    });
    // Chunk groups flushed by the memory threshold alone.
    out.push(TableCase {
        rows: 1500,
        parts: 30,
        ..base(
            "table_memory_threshold_flush",
            WriterOptions {
                chunk_group_size_threshold: 16 * 1024,
                ..d()
            },
            defaults(),
        )
    });
    // Every encoding we write × every compression we write, one column each.
    let mut matrix: Vec<Col> = Vec::new();
    for k in [
        C::Uncompressed,
        C::Snappy,
        C::Gzip,
        C::Lz4,
        C::Zstd,
        C::Lzma2,
    ] {
        for e in [
            E::Plain,
            E::Rle,
            E::Ts2Diff,
            E::Gorilla,
            E::Zigzag,
            E::Chimp,
            E::Rlbe,
        ] {
            let name = format!("i64_{}_{}", e.name(), k.name()).to_lowercase();
            matrix.push((Box::leak(name.into_boxed_str()), T::Int64, e, k));
        }
        let name = format!("bool_plain_{}", k.name()).to_lowercase();
        matrix.push((Box::leak(name.into_boxed_str()), T::Boolean, E::Plain, k));
        let name = format!("text_dictionary_{}", k.name()).to_lowercase();
        matrix.push((Box::leak(name.into_boxed_str()), T::Text, E::Dictionary, k));
        let name = format!("double_gorilla_{}", k.name()).to_lowercase();
        matrix.push((Box::leak(name.into_boxed_str()), T::Double, E::Gorilla, k));
    }
    out.push(TableCase {
        devices: 2,
        rows: 700,
        ..base(
            "table_encoding_x_compression",
            WriterOptions {
                max_points_per_page: 256,
                ..d()
            },
            matrix,
        )
    });
    out.push(TableCase {
        tables: vec![
            ("alpha", 1, defaults()),
            ("beta", 3, all_types(E::Plain, E::Plain, E::Plain, C::Gzip)),
            ("gamma", 0, vec![("v", T::Double, E::Gorilla, C::Zstd)]),
        ],
        ..base(
            "table_multi_tables",
            WriterOptions {
                properties: vec![Property {
                    key: "origin".into(),
                    value: Some(b"bazan".to_vec()),
                }],
                ..d()
            },
            vec![],
        )
    });
    out
}

pub(super) fn tree_cases() -> Vec<TreeCase> {
    let d = WriterOptions::default;
    let mixed = |k: C| all_types(E::Ts2Diff, E::Gorilla, E::Plain, k);
    vec![
        TreeCase {
            name: "tree_nonaligned_all_types",
            opts: d(),
            devices: vec![
                ("root.sg.d1".into(), false, mixed(C::Lz4)),
                (
                    "root.sg.d2".into(),
                    false,
                    all_types(E::Rle, E::Chimp, E::Dictionary, C::Zstd),
                ),
            ],
            rows: 400,
            nulls: 0.2,
        },
        TreeCase {
            name: "tree_aligned_all_types",
            opts: WriterOptions {
                max_points_per_page: 50,
                ..d()
            },
            devices: vec![(
                "root.al.dev".into(),
                true,
                all_types(E::Gorilla, E::Rlbe, E::Dictionary, C::Snappy),
            )],
            rows: 500,
            nulls: 0.25,
        },
        TreeCase {
            name: "tree_mixed_aligned",
            opts: WriterOptions {
                time_encoding: E::Plain,
                ..d()
            },
            devices: vec![
                ("root.a.b.c.d".into(), true, mixed(C::Gzip)),
                ("root.a.x".into(), false, mixed(C::Lzma2)),
                ("root.z".into(), false, mixed(C::Uncompressed)),
            ],
            rows: 120,
            nulls: 0.1,
        },
        TreeCase {
            name: "tree_many_devices_degree5",
            opts: WriterOptions {
                max_degree: 5,
                ..d()
            },
            devices: (0..90)
                .map(|i| {
                    (
                        format!("root.p{}.dev{i:03}", i % 2),
                        false,
                        vec![
                            ("s1", T::Int32, E::Ts2Diff, C::Lz4),
                            ("s2", T::Double, E::Gorilla, C::Lz4),
                        ],
                    )
                })
                .collect(),
            rows: 15,
            nulls: 0.1,
        },
        TreeCase {
            name: "tree_wide_degree4",
            opts: WriterOptions {
                max_degree: 4,
                max_points_per_page: 64,
                ..d()
            },
            devices: vec![(
                "root.w.dev".into(),
                false,
                (0..50)
                    .map(|i| {
                        (
                            Box::leak(format!("m{i:02}").into_boxed_str()) as &'static str,
                            T::Float,
                            E::Chimp,
                            C::Zstd,
                        )
                    })
                    .collect(),
            )],
            rows: 200,
            nulls: 0.05,
        },
    ]
}
