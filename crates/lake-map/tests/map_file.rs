//! The map written, loaded and equal field by field; configuration and totals; damaged and
//! foreign files refused without panics.

use std::fs;
use std::sync::Arc;

use arrow_array::{Int64Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use lake_map::{
    CreateOptions, Error, Fingerprint, MapConfig, StatsColumns, TextEncoding, create_map_with,
    hash_file, load_map, resolve_map_path,
};

use crate::common::{lines_registry, standard_files, write_lake};

fn options(config: MapConfig) -> CreateOptions {
    CreateOptions {
        config,
        registry: lines_registry(),
        ..CreateOptions::default()
    }
}

#[test]
fn written_loaded_equal() {
    let dir = tempfile::tempdir().unwrap();
    write_lake(dir.path(), &standard_files());
    let config = MapConfig {
        checkpoint_stride_rows: 7,
        fingerprint: Fingerprint::Blake3,
        stats_columns: StatsColumns::Only(vec!["v".into()]),
        text_encoding: TextEncoding::Latin1,
    };
    let built = create_map_with(dir.path(), &options(config.clone()))
        .unwrap()
        .map;
    let loaded = load_map(dir.path()).unwrap();
    assert_eq!(loaded.map_schema(), 3);
    assert_eq!(loaded.config(), &config);
    assert_eq!(loaded.to_entries(), built.to_entries());
    assert_eq!(loaded.total_files(), 7);
    assert_eq!(loaded.total_rows(), 99);
    let bytes: u64 = standard_files()
        .iter()
        .map(|(p, _)| fs::metadata(dir.path().join(p)).unwrap().len())
        .sum();
    assert_eq!(loaded.total_bytes(), bytes);
    let paths: Vec<&str> = loaded.entries().map(|e| e.path).collect();
    assert_eq!(
        paths,
        [
            "Z.lines",
            "a.lines",
            "b-2.lines",
            "b/c.lines",
            "d/e/f.lines",
            "empty.lines",
            "z.lines"
        ]
    );
    let e = loaded.find("b/c.lines").unwrap();
    assert_eq!(e.first_global_row, 17);
    assert_eq!(e.row_count, 25);
    assert_eq!(
        e.blake3.unwrap(),
        hash_file(&dir.path().join("b/c.lines")).unwrap()
    );
    assert_eq!(loaded.blocks(e.index).unwrap().len(), 4);
    assert_eq!(e.stats_json, Some(r#"{"v":{"min":17,"max":41}}"#));
    assert_eq!(
        e.schema_json,
        Some(r#"[{"name":"v","nullable":false,"type":"int64"}]"#)
    );
    // The schema metadata of §2.1.
    let schema = lake_map::map_schema(loaded.config());
    let md = schema.metadata();
    assert_eq!(md["bazan.kind"], "lake_map");
    assert_eq!(md["bazan.version"], "1");
    assert_eq!(md["bazan.payload"], "arrow_ipc");
    assert_eq!(md["bazan.map_schema"], "3");
    assert_eq!(md["bazan.checkpoint_stride_rows"], "7");
    assert_eq!(md["bazan.fingerprint"], "blake3");
    assert_eq!(md["bazan.stats_columns"], r#"["v"]"#);
    assert_eq!(md["bazan.text_encoding"], "latin-1");
    // Stored as map_schema says, with `schema_json` dictionary-encoded (§2).
    let file = fs::File::open(resolve_map_path(dir.path())).unwrap();
    let reader = arrow_ipc::reader::FileReader::try_new(file, None).unwrap();
    let stored: Vec<Field> = schema
        .fields()
        .iter()
        .map(|f| match f.name().as_str() {
            "schema_json" => Field::new(
                "schema_json",
                DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
                true,
            ),
            _ => f.as_ref().clone(),
        })
        .collect();
    let stored = Schema::new_with_metadata(stored, schema.metadata().clone());
    assert_eq!(reader.schema().as_ref(), &stored);
}

#[test]
fn defaults_and_stats_off() {
    let dir = tempfile::tempdir().unwrap();
    write_lake(dir.path(), &standard_files());
    let config = MapConfig {
        stats_columns: StatsColumns::None,
        ..MapConfig::default()
    };
    create_map_with(dir.path(), &options(config)).unwrap();
    let map = load_map(dir.path()).unwrap();
    assert_eq!(map.config().checkpoint_stride_rows, 65_536);
    assert_eq!(map.config().fingerprint, Fingerprint::Metadata);
    assert_eq!(map.config().stats_columns, StatsColumns::None);
    for e in map.entries() {
        assert_eq!(e.blake3, None);
        assert_eq!(e.stats_json, None);
        assert!(e.row_count == 0 || e.row_groups_json != "[]");
    }
    let json = lake_map::show::map_json(&map).unwrap();
    assert_eq!(json["stats_columns"], serde_json::json!([]));
    assert_eq!(map.config().text_encoding, TextEncoding::Utf8);
    assert_eq!(json["text_encoding"], "utf-8");
    assert_eq!(json["files"][1]["blocks"][0]["row_count"], 10);
}

#[test]
fn locate_row_binary_search() {
    let dir = tempfile::tempdir().unwrap();
    write_lake(dir.path(), &standard_files());
    let config = MapConfig {
        checkpoint_stride_rows: 7,
        ..MapConfig::default()
    };
    let map = create_map_with(dir.path(), &options(config)).unwrap().map;
    // Rows 0..4 are Z.lines; 58..98: after the zero-row empty.lines comes z.lines.
    let l = map.locate_row(0).unwrap();
    assert_eq!((l.entry().path, l.local_row), ("Z.lines", 0));
    let l = map.locate_row(3).unwrap();
    assert_eq!((l.entry().path, l.local_row), ("Z.lines", 3));
    let l = map.locate_row(4).unwrap();
    assert_eq!((l.entry().path, l.local_row), ("a.lines", 0));
    let l = map.locate_row(82).unwrap();
    assert_eq!((l.entry().path, l.local_row), ("z.lines", 0));
    let l = map.locate_row(98).unwrap();
    assert_eq!((l.entry().path, l.local_row), ("z.lines", 16));
    assert_eq!(l.block.as_ref().unwrap().ordinal, 2);
    assert_eq!(l.block.unwrap().first_row, 14);
    assert!(matches!(
        map.locate_row(99),
        Err(Error::RowOutOfRange {
            row: 99,
            total_rows: 99
        })
    ));
    // Every row, against a linear scan.
    for g in 0..99 {
        let l = map.locate_row(g).unwrap();
        let e = map
            .entries()
            .find(|e| e.first_global_row <= g && g < e.first_global_row + e.row_count)
            .unwrap();
        assert_eq!(l.entry().path, e.path);
        assert_eq!(l.local_row, g - e.first_global_row);
        let b = l.block.unwrap();
        assert!(b.row_range().contains(&l.local_row));
    }
}

#[test]
fn empty_lake() {
    let dir = tempfile::tempdir().unwrap();
    create_map_with(dir.path(), &options(MapConfig::default())).unwrap();
    let map = load_map(dir.path()).unwrap();
    assert_eq!(
        (map.total_files(), map.total_rows(), map.total_bytes()),
        (0, 0, 0)
    );
    assert!(map.plan_slice(0, 10).is_empty());
    assert!(map.locate_row(0).is_err());
}

#[test]
fn foreign_and_damaged_files_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = resolve_map_path(dir.path());
    // Junk bytes.
    fs::write(&path, b"not an arrow file at all").unwrap();
    assert!(matches!(
        load_map(dir.path()),
        Err(Error::InvalidMap { .. })
    ));
    // A valid Arrow IPC file that is not a lake map.
    let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Int64, false)]));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![Arc::new(Int64Array::from(vec![1, 2, 3]))],
    )
    .unwrap();
    let mut w =
        arrow_ipc::writer::FileWriter::try_new(fs::File::create(&path).unwrap(), &schema).unwrap();
    w.write(&batch).unwrap();
    w.finish().unwrap();
    let err = load_map(dir.path()).unwrap_err().to_string();
    assert!(err.contains("not a valid lake map"), "{err}");
    // A lake map with a wrong kind, and one with an unknown schema number.
    for (key, value, expect) in [
        ("bazan.kind", "other", "bazan.kind"),
        ("bazan.map_schema", "9", "unknown bazan.map_schema"),
    ] {
        let mut md = std::collections::HashMap::new();
        md.insert(key.to_string(), value.to_string());
        let schema = Arc::new(Schema::new_with_metadata(
            vec![Field::new("x", DataType::Int64, false)],
            md,
        ));
        let mut w =
            arrow_ipc::writer::FileWriter::try_new(fs::File::create(&path).unwrap(), &schema)
                .unwrap();
        w.write(&batch.clone().with_schema(schema.clone()).unwrap())
            .unwrap();
        w.finish().unwrap();
        let err = load_map(dir.path()).unwrap_err().to_string();
        assert!(err.contains(expect), "{err}");
    }
}

#[test]
fn truncated_and_flipped_maps_never_panic() {
    let dir = tempfile::tempdir().unwrap();
    write_lake(dir.path(), &standard_files());
    create_map_with(dir.path(), &options(MapConfig::default())).unwrap();
    let path = resolve_map_path(dir.path());
    let good = fs::read(&path).unwrap();
    for cut in (0..good.len()).step_by(7) {
        fs::write(&path, &good[..cut]).unwrap();
        assert!(
            load_map(dir.path()).is_err(),
            "a map cut at {cut} bytes loaded"
        );
    }
    for pos in (0..good.len()).step_by(3) {
        let mut bad = good.clone();
        bad[pos] ^= 0x5a;
        fs::write(&path, &bad).unwrap();
        // Either a clear error or a map whose entries passed every check.
        let _ = load_map(dir.path());
    }
}

#[test]
fn loaded_columns_of_an_uncompressed_map_point_into_the_mapping() {
    let dir = tempfile::tempdir().unwrap();
    write_lake(dir.path(), &standard_files());
    let built = create_map_with(dir.path(), &options(MapConfig::default()))
        .unwrap()
        .map;
    // A map stored without compression (as older writers stored maps of any size) is
    // decoded zero-copy.
    let batch = built.to_record_batch().unwrap();
    let mut w = arrow_ipc::writer::FileWriter::try_new(
        fs::File::create(resolve_map_path(dir.path())).unwrap(),
        &batch.schema(),
    )
    .unwrap();
    w.write(&batch).unwrap();
    w.finish().unwrap();
    let map = load_map(dir.path()).unwrap();
    assert_eq!(map.to_entries(), built.to_entries());
    let mapped = map.mapped_bytes().unwrap();
    let range = mapped.as_ptr_range();
    for (i, col) in map.batch().unwrap().columns().iter().enumerate() {
        for buf in col.to_data().buffers() {
            let p = buf.as_ptr();
            assert!(range.contains(&p), "column {i}: buffer at {p:?} is a copy");
        }
    }
    assert_eq!(mapped, fs::read(resolve_map_path(dir.path())).unwrap());
}

#[test]
fn skip_errors_reports_and_default_fails_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    write_lake(dir.path(), &standard_files());
    fs::write(dir.path().join("b/bad.lines"), "1\n2\nthree\n").unwrap();
    let err = create_map_with(dir.path(), &options(MapConfig::default())).unwrap_err();
    assert!(err.to_string().contains("bad.lines"), "{err}");
    assert!(
        !resolve_map_path(dir.path()).exists(),
        "no map written on failure"
    );
    let calls = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let seen = calls.clone();
    let report = create_map_with(
        dir.path(),
        &CreateOptions {
            skip_errors: true,
            progress: Some(std::sync::Arc::new(move |p: lake_map::Progress| {
                assert!(p.done_files <= p.total_files && p.done_bytes <= p.total_bytes);
                seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            })),
            ..options(MapConfig::default())
        },
    )
    .unwrap();
    assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 8);
    assert_eq!(report.failures.len(), 1);
    assert_eq!(report.failures[0].path, "b/bad.lines");
    assert!(
        report.failures[0].message.contains("three"),
        "{:?}",
        report.failures
    );
    assert_eq!(report.map.total_files(), 7);
    assert!(load_map(dir.path()).unwrap().find("b/bad.lines").is_none());
}

#[test]
fn multi_batch_maps_load_and_bad_utf8_json_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    write_lake(dir.path(), &standard_files());
    let built = create_map_with(dir.path(), &options(MapConfig::default()))
        .unwrap()
        .map;
    // A map split into two record batches (a reader must accept any number).
    let batch = built.to_record_batch().unwrap();
    let path = resolve_map_path(dir.path());
    let mut w =
        arrow_ipc::writer::FileWriter::try_new(fs::File::create(&path).unwrap(), &batch.schema())
            .unwrap();
    w.write(&batch.slice(0, 3)).unwrap();
    w.write(&batch.slice(3, batch.num_rows() - 3)).unwrap();
    w.finish().unwrap();
    let loaded = load_map(dir.path()).unwrap();
    assert_eq!(loaded.to_entries(), built.to_entries());
    // Invalid UTF-8 inside a stored JSON value: the load succeeds (values are checked when
    // read) and reading that entry's blocks is a clear error.
    let mut bytes = fs::read(&path).unwrap();
    let pos = bytes.windows(9).position(|w| w == b"\"ordinal\"").unwrap();
    bytes[pos + 1] = 0xff;
    fs::write(&path, &bytes).unwrap();
    let map = load_map(dir.path()).unwrap();
    let bad = (0..map.total_files())
        .find(|&i| map.blocks(i).is_err())
        .expect("one entry is damaged");
    let err = map.blocks(bad).unwrap_err().to_string();
    assert!(err.contains("row_groups_json"), "{err}");
    assert!(
        map.to_record_batch().is_err(),
        "a damaged map is not written back"
    );
}

/// A map of many entries sharing a schema is stored in record batches of 2,048 entries, its
/// body compressed and `schema_json` stored once: small per entry, and read back equal, its
/// JSON columns decoded batch by batch as entries are used.
#[test]
fn large_maps_are_compact_and_read_back_equal() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let schema = r#"[{"name":"id","nullable":false,"type":"int64"},{"name":"name","nullable":true,"type":"utf8"}]"#;
    let mut entries: Vec<lake_map::MapEntry> = (0..5_000u64)
        .map(|i| lake_map::MapEntry {
            path: format!("d{:02}/e{:02}/part-{i:06}.csv", i % 97, (i / 97) % 31),
            format: "csv".into(),
            size_bytes: 2_000 + i % 4_000,
            mtime_ms: 1_764_400_000_000 + i as i64,
            row_count: 20 + i % 13,
            first_global_row: 0,
            row_groups_json: format!(
                r#"[{{"ordinal":0,"first_row":0,"row_count":{},"first_byte":25,"total_byte_size":{},"compressed_size":null,"columns":null}}]"#,
                20 + i % 13,
                1_975 + i % 4_000
            ),
            blake3: None,
            stats_json: Some(format!(
                r#"{{"id":{{"min":0,"max":{}}},"name":{{"min":"a{i}","max":"z{i}"}}}}"#,
                19 + i % 13
            )),
            schema_json: (i % 10 != 3).then(|| schema.to_string()),
        })
        .collect();
    lake_map::assign_first_global_rows(&mut entries);
    let built = lake_map::LakeMap::from_entries(root, MapConfig::default(), &entries).unwrap();
    let path = resolve_map_path(root);
    lake_map::write_map_to(&built, &path).unwrap();
    let size = fs::metadata(&path).unwrap().len();
    assert!(size < 5_000 * 100, "{size} bytes for 5,000 entries");
    let reader =
        arrow_ipc::reader::FileReader::try_new(fs::File::open(&path).unwrap(), None).unwrap();
    assert_eq!(reader.num_batches(), 3);
    let loaded = load_map(root).unwrap();
    // Entries of the last batch first: batches decode in any order.
    let last = loaded.locate_row(loaded.total_rows() - 1).unwrap();
    assert_eq!(last.entry().path, entries[4_999].path);
    assert_eq!(last.block.unwrap().row_count, entries[4_999].row_count);
    assert_eq!(loaded.to_entries(), entries);
    assert_eq!(
        loaded.to_record_batch().unwrap(),
        built.to_record_batch().unwrap()
    );
    // Written again from the loaded map: the same bytes.
    let again = root.join("again.bazan");
    lake_map::write_map_to(&loaded, &again).unwrap();
    assert_eq!(fs::read(&again).unwrap(), fs::read(&path).unwrap());
}

/// A map's record batches are decoded and checked when an entry of theirs is first used: a
/// damaged record batch (here an entry path escaping the root) leaves the others readable,
/// and every fallible reader of its entries, the entry check and an update refuse it; no
/// entry of it ever reads as a path a file could have.
#[test]
fn a_damaged_record_batch_is_refused_when_read_and_the_others_read() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let mut entries: Vec<lake_map::MapEntry> = (0..5_000u64)
        .map(|i| lake_map::MapEntry {
            path: format!("d{:02}/e{:02}/part-{i:06}.csv", i % 97, (i / 97) % 31),
            format: "csv".into(),
            size_bytes: 2_000 + i,
            mtime_ms: 1_764_400_000_000,
            row_count: 3,
            first_global_row: 0,
            row_groups_json: r#"[{"ordinal":0,"first_row":0,"row_count":3}]"#.into(),
            blake3: None,
            stats_json: None,
            schema_json: Some("[]".into()),
        })
        .collect();
    entries.sort_by(|a, b| a.path.cmp(&b.path));
    lake_map::assign_first_global_rows(&mut entries);
    let built = lake_map::LakeMap::from_entries(root, MapConfig::default(), &entries).unwrap();
    // Uncompressed record batches of 2,048 entries, so that a path can be patched.
    let batch = built.to_record_batch().unwrap();
    let path = resolve_map_path(root);
    let mut w =
        arrow_ipc::writer::FileWriter::try_new(fs::File::create(&path).unwrap(), &batch.schema())
            .unwrap();
    for start in (0..5_000).step_by(2_048) {
        w.write(&batch.slice(start, 2_048.min(5_000 - start)))
            .unwrap();
    }
    w.finish().unwrap();
    let first = entries[0].path.clone();
    let bad = format!("..{}", &first[3..]).replacen("-", "-0", 1);
    assert_eq!(bad.len(), first.len());
    let mut bytes = fs::read(&path).unwrap();
    let pos = bytes
        .windows(first.len())
        .position(|w| w == first.as_bytes())
        .unwrap();
    bytes[pos..pos + first.len()].copy_from_slice(bad.as_bytes());
    fs::write(&path, &bytes).unwrap();

    let map = load_map(root).unwrap();
    assert_eq!(map.total_rows(), 15_000);
    let last = map.locate_row(14_999).unwrap();
    assert_eq!(last.head().path, entries[4_999].path);
    assert_eq!(map.entry(2_048).path, entries[2_048].path);
    let err = map.locate_row(0).unwrap_err();
    assert!(matches!(err, Error::PathEscape { .. }), "{err}");
    assert!(map.blocks(5).is_err());
    let e = map.entry(5);
    assert!(e.path.contains('\0') && e.stats_json.is_none(), "{e:?}");
    assert_eq!((e.row_count, e.first_global_row), (3, 15));
    assert!(map.head(5).path.contains('\0'));
    let err = map.check_entries().unwrap_err();
    assert!(err.to_string().contains(&bad), "{err}");
    assert!(map.to_record_batch().is_err());
    assert!(lake_map::update_map(root).is_err());
    // The same map with every record batch sound checks whole.
    built.check_entries().unwrap();
    lake_map::write_map_to(&built, &path).unwrap();
    let map = load_map(root).unwrap();
    map.check_entries().unwrap();
    assert_eq!(map.to_entries(), entries);
    assert_eq!(
        map.total_bytes(),
        entries.iter().map(|e| e.size_bytes).sum::<u64>()
    );
}

/// `f(record batch message, its bytes, metadata length)` for each record batch of the map
/// file `bytes`, in the footer's order.
fn each_batch<T>(bytes: &[u8], f: impl Fn(arrow_ipc::RecordBatch, &[u8], usize) -> T) -> Vec<T> {
    let n = bytes.len();
    let footer_len = i32::from_le_bytes(bytes[n - 10..n - 6].try_into().unwrap()) as usize;
    let footer = arrow_ipc::root_as_footer(&bytes[n - 10 - footer_len..n - 10]).unwrap();
    footer
        .recordBatches()
        .unwrap()
        .iter()
        .map(|block| {
            let at = block.offset() as usize;
            let meta = block.metaDataLength() as usize;
            let all = &bytes[at..at + meta + block.bodyLength() as usize];
            let start = if all[..4] == [0xff; 4] { 8 } else { 4 };
            let m = arrow_ipc::root_as_message(&all[start..meta]).unwrap();
            f(m.header_as_record_batch().unwrap(), all, meta)
        })
        .collect()
}

/// The stored length prefix of buffer `k` (in the order of the IPC buffer list) of each
/// record batch of the map file `bytes`.
fn buffer_prefixes(bytes: &[u8], k: usize) -> Vec<i64> {
    each_batch(bytes, |batch, all, meta| {
        let at = meta + batch.buffers().unwrap().get(k).offset() as usize;
        i64::from_le_bytes(all[at..at + 8].try_into().unwrap())
    })
}

/// `n` entries of small CSV files in 97 folders, sorted, their first rows assigned.
fn csv_entries(n: u64) -> Vec<lake_map::MapEntry> {
    let mut entries: Vec<lake_map::MapEntry> = (0..n)
        .map(|i| lake_map::MapEntry {
            path: format!("d{:02}/part-{i:06}.csv", i % 97),
            format: "csv".into(),
            size_bytes: 2_000 + i,
            mtime_ms: 1_764_400_000_000,
            row_count: 3 + i % 5,
            first_global_row: 0,
            row_groups_json: "[]".into(),
            blake3: None,
            stats_json: None,
            schema_json: Some("[]".into()),
        })
        .collect();
    entries.sort_by(|a, b| a.path.cmp(&b.path));
    lake_map::assign_first_global_rows(&mut entries);
    entries
}

/// The map file the writer stores for `entries` in `dir`.
fn written(dir: &std::path::Path, entries: &[lake_map::MapEntry]) -> Vec<u8> {
    let map = lake_map::LakeMap::from_entries(dir, MapConfig::default(), entries).unwrap();
    let path = resolve_map_path(dir);
    lake_map::write_map_to(&map, &path).unwrap();
    fs::read(&path).unwrap()
}

/// Whether each record batch of the map file `bytes` states a body compression.
fn batches_compressed(bytes: &[u8]) -> Vec<bool> {
    each_batch(bytes, |batch, _, _| batch.compression().is_some())
}

/// A map whose entries take at most 64 KiB is stored uncompressed (its load creates no
/// decompression context), a larger one compressed; both read back equal.
#[test]
fn small_maps_are_stored_uncompressed() {
    for (n, compressed) in [(1, false), (100, false), (3_000, true)] {
        let dir = tempfile::tempdir().unwrap();
        let entries = csv_entries(n);
        let bytes = written(dir.path(), &entries);
        let stated = batches_compressed(&bytes);
        assert!(!stated.is_empty());
        assert!(
            stated.iter().all(|&c| c == compressed),
            "{n} entries: {stated:?}"
        );
        assert_eq!(load_map(dir.path()).unwrap().to_entries(), entries);
    }
}

/// The writer stores `first_global_row` uncompressed in every record batch (length prefix
/// -1), the other buffers compressed, and the map reads back equal.
#[test]
fn the_writer_stores_first_global_row_uncompressed() {
    let dir = tempfile::tempdir().unwrap();
    let entries = csv_entries(5_000);
    let bytes = written(dir.path(), &entries);
    // Buffers: path, format (validity, offsets, values each), size_bytes, mtime_ms,
    // row_count (validity, values each), then first_global_row's validity and values.
    assert_eq!(buffer_prefixes(&bytes, 13), vec![-1; 3]);
    // The path column's values: compressed, their uncompressed length stated.
    assert!(buffer_prefixes(&bytes, 2).iter().all(|&p| p > 0));
    assert_eq!(load_map(dir.path()).unwrap().to_entries(), entries);
}
