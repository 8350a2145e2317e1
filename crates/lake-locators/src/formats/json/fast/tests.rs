//! Differential tests of the byte walk of [`super`] against the reference inference
//! (`serde_json` values, arrow-json's inference and the widening): random nested documents
//! with random member orders, escapes, unicode, type conflicts and broken bytes, and every
//! JSON file of the conformance corpus. Where the walk answers, its schema must be the
//! reference's, exactly; where the reference fails, the walk must not answer.

use std::path::Path;

use super::*;
use crate::formats::json::{layout, slow_schema, slow_stats, walk_rows};
use crate::locator::StatsColumns;
use crate::testutil::{XorShift, stress_cases};
use crate::text::infer::null_to_utf8;

thread_local! {
    /// Set by tests: the walk takes no row, so that every file runs the reference path.
    pub(crate) static REFERENCE_ONLY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Scalar texts, tricky ones included (some are invalid JSON for serde_json).
const SCALARS: &[&str] = &[
    "0",
    "-0",
    "7",
    "-7",
    "1e5",
    "-1E-3",
    "2.5",
    "0.0",
    "-0.0",
    "0e99999",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "-9223372036854775809",
    "18446744073709551615",
    "18446744073709551616",
    "123456789012345678901234567890",
    "true",
    "false",
    "null",
    "null",
    "\"abc\"",
    "\"\"",
    "\"\\u00e9t\\u00e9 \\\"q\\\" \\\\ \\/ \\b\\f\\n\\r\\t\"",
    "\"\\ud83d\\ude00\"",
    "\"\u{e9}t\u{e9} \u{65e5}\u{672c}\"",
];

/// Scalar texts serde_json refuses.
const BROKEN: &[&str] = &[
    "\"\\ud83d\"",
    "\"\\ude00\"",
    "\"\\ud83d\\u0041\"",
    "\"\\x\"",
    "\"a\tb\"",
    "\"\\u12G4\"",
    "01",
    "-",
    "1.",
    ".5",
    "1e",
    "+1",
    "tru",
    "nul",
    "NaN",
    "1e400",
    "-1e400",
];

/// Member names: escaped spellings of other names make duplicates.
const KEYS: &[&str] = &[
    "a",
    "b",
    "B",
    "id",
    "user",
    "tags",
    "\u{e9}",
    "\u{65e5}\u{672c}",
    "q\\\"",
    "",
    "z9",
];

fn scalar(rng: &mut XorShift, out: &mut String) {
    out.push_str(SCALARS[rng.below(SCALARS.len())]);
}

/// A random value of at most `depth` levels; `kind` steers it to one shape (so that many
/// files agree on types) unless it is `None`.
fn value(rng: &mut XorShift, depth: usize, kind: Option<usize>, out: &mut String) {
    let kind = kind.unwrap_or_else(|| rng.below(6));
    if depth == 0 {
        return scalar(rng, out);
    }
    match kind {
        0..=2 => scalar(rng, out),
        3 => {
            // An array: of scalars, of arrays or of objects (or a mix).
            out.push('[');
            let n = rng.below(4);
            let inner = rng.below(4);
            for i in 0..n {
                if i > 0 {
                    out.push_str(if rng.below(8) == 0 { " , " } else { "," });
                }
                match inner {
                    0 => scalar(rng, out),
                    1 => value(rng, depth - 1, Some(3), out),
                    2 => value(rng, depth - 1, Some(4), out),
                    _ => value(rng, depth - 1, None, out),
                }
            }
            out.push(']');
        }
        _ => object(rng, depth - 1, out),
    }
}

/// A random object.
fn object(rng: &mut XorShift, depth: usize, out: &mut String) {
    out.push('{');
    let n = rng.below(6);
    let first = rng.below(KEYS.len());
    for i in 0..n {
        if i > 0 {
            out.push(',');
        }
        if rng.below(10) == 0 {
            out.push(' ');
        }
        out.push('"');
        // Distinct names but rarely (`\u0061` is a second `a`).
        out.push_str(match rng.below(40) {
            0 => "\\u0061",
            1 => KEYS[rng.below(KEYS.len())],
            _ => KEYS[(first + i) % KEYS.len()],
        });
        out.push_str(if rng.below(10) == 0 { "\" : " } else { "\":" });
        value(rng, depth, None, out);
    }
    out.push('}');
}

/// Scalars of one column type each: integers, numbers, strings (statistics come from them).
const TYPED: &[&[&str]] = &[
    &[
        "0",
        "7",
        "-7",
        "9223372036854775807",
        "-9223372036854775808",
        "42",
    ],
    &[
        "0",
        "-7",
        "2.5",
        "1e5",
        "-1E-3",
        "0.0",
        "18446744073709551616",
        "-0.0",
        "3",
    ],
    &[
        "\"abc\"",
        "\"\"",
        "\"ab\"",
        "\"\\u00e9t\\u00e9\"",
        "\"\u{e9}t\u{e9}\"",
        "\"\\ud83d\\ude00\"",
        "\"\u{65e5}\"",
        "\"a\\\"b\"",
    ],
];

/// A random file of clean rows: valid JSON, each top-level name of one type (a typed
/// scalar or a nested shape), nulls anywhere.
fn clean_file(rng: &mut XorShift) -> String {
    let rows = 1 + rng.below(12);
    clean_rows(rng, rows)
}

/// [`clean_file`] of `rows` rows.
pub(crate) fn clean_rows(rng: &mut XorShift, rows: usize) -> String {
    let kinds: Vec<usize> = KEYS.iter().map(|_| rng.below(5)).collect();
    let mut out = String::new();
    for _ in 0..rows {
        let mut order: Vec<usize> = (0..KEYS.len()).filter(|_| rng.below(2) == 0).collect();
        for i in (1..order.len()).rev() {
            order.swap(i, rng.below(i + 1));
        }
        out.push('{');
        for (i, &k) in order.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push('"');
            out.push_str(KEYS[k]);
            out.push_str("\":");
            match kinds[k] {
                _ if rng.below(8) == 0 => out.push_str("null"),
                t @ 0..3 => out.push_str(TYPED[t][rng.below(TYPED[t].len())]),
                3 => value(rng, 2, Some(4), &mut out),
                _ => {
                    // A list of one typed scalar.
                    let t = k % 3;
                    out.push('[');
                    for j in 0..rng.below(3) {
                        if j > 0 {
                            out.push(',');
                        }
                        out.push_str(TYPED[t][rng.below(TYPED[t].len())]);
                    }
                    out.push(']');
                }
            }
        }
        out.push_str("}\n");
    }
    out
}

/// A random file of rows; `kinds` fixes a shape per top-level name for most rows.
pub(crate) fn random_file(rng: &mut XorShift) -> String {
    if rng.below(3) == 0 {
        return clean_file(rng);
    }
    let kinds: Vec<usize> = KEYS.iter().map(|_| rng.below(6)).collect();
    let consistent = rng.below(2) == 0;
    let rows = 1 + rng.below(8);
    let mut out = String::new();
    for _ in 0..rows {
        out.push('{');
        let mut order: Vec<usize> = (0..KEYS.len()).filter(|_| rng.below(2) == 0).collect();
        // A random order of the names.
        for i in (1..order.len()).rev() {
            order.swap(i, rng.below(i + 1));
        }
        if rng.below(25) == 0 && !order.is_empty() {
            order.push(order[0]);
        }
        let escaped_a = rng.below(25) == 0;
        for (i, &k) in order.iter().enumerate() {
            if i > 0 {
                // Now and then a row goes on past a line feed (each line is then malformed).
                out.push_str(if rng.below(60) == 0 { ",\n" } else { "," });
            }
            out.push('"');
            out.push_str(if escaped_a && k == 0 {
                "\\u0061"
            } else {
                KEYS[k]
            });
            out.push_str("\":");
            let kind = (consistent && rng.below(10) != 0).then_some(kinds[k]);
            if rng.below(400) == 0 {
                out.push_str(BROKEN[rng.below(BROKEN.len())]);
            } else {
                value(rng, 3, kind, &mut out);
            }
        }
        out.push('}');
        if rng.below(30) == 0 {
            out.push_str(" \r");
        }
        out.push('\n');
        if rng.below(30) == 0 {
            // A blank line, or the next line starts with blanks.
            out.push_str(if rng.below(2) == 0 { " \n" } else { "  " });
        }
    }
    if rng.below(20) == 0 {
        // A broken byte somewhere.
        let mut bytes = out.into_bytes();
        let at = rng.below(bytes.len());
        bytes[at] = b"{}[],:\"\\ x1\n"[rng.below(12)];
        return String::from_utf8_lossy(&bytes).into_owned();
    }
    out
}

/// The row spans of a line file, as the reference reads them.
fn spans(path: &Path, data: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    walk_rows(path, data, layout(path, data), |s, e| {
        out.push((s, e));
        Ok(())
    })
    .expect("rows are delimited");
    out
}

/// Compares the walk's statistics with the reference's on `data` (whose schemas agree);
/// true when the walk answered.
fn agree_stats(path: &Path, data: &[u8], spans: &[(usize, usize)], schema: &Schema) -> bool {
    let schema = null_to_utf8(schema);
    let text = String::from_utf8_lossy(data);
    let mut answered = false;
    let some = StatsColumns::Only(vec!["a".into(), "id".into(), "\u{e9}".into()]);
    for wanted in [StatsColumns::All, some] {
        let fast = infer_state(data, spans, &wanted).and_then(|f| f.stats(&schema, &wanted));
        if let Some(fast) = fast {
            match slow_stats(path, "ndjson", data, spans, &schema, &wanted) {
                Ok(slow) => assert_eq!(fast, slow, "the walk's statistics differ on\n{text}"),
                Err(e) => panic!(
                    "the walk's statistics {fast:?} where the reference fails ({e}) on\n{text}"
                ),
            }
            answered = true;
        }
    }
    answered
}

/// Compares the walk with the reference on `data`; true when the walk answered.
fn agree(path: &Path, data: &[u8], spans: &[(usize, usize)]) -> bool {
    agree_all(path, data, spans).0
}

/// [`agree`], and whether the walk answered the statistics too.
fn agree_all(path: &Path, data: &[u8], spans: &[(usize, usize)]) -> (bool, bool) {
    let fast = infer_rows(data, spans);
    let slow = slow_schema(path, "ndjson", data, spans);
    let text = String::from_utf8_lossy(data);
    match (&fast, &slow) {
        (Some(f), Ok(s)) => {
            assert_eq!(&f.schema, s, "the walk's schema differs on\n{text}");
            let strict =
                arrow_json::reader::infer_json_schema_from_iterator(spans.iter().map(|&(s, e)| {
                    serde_json::from_slice::<serde_json::Value>(&data[s..e])
                        .map_err(|e| arrow_schema::ArrowError::JsonError(e.to_string()))
                }));
            // Widened members are the JSON text columns; arrow-json refuses no fewer rows
            // (it also joins a scalar and an array, which the widening does not).
            let json = s
                .fields()
                .iter()
                .any(|x| crate::formats::json::widen::is_json(x));
            assert_eq!(f.widened, json, "widened differs on\n{text}");
            assert!(f.widened || strict.is_ok(), "not widened on\n{text}");
            return (true, agree_stats(path, data, spans, s));
        }
        (Some(f), Err(e)) => {
            panic!("the walk answered {f:?} where the reference fails ({e}) on\n{text}")
        }
        (None, _) => {}
    }
    (false, false)
}

#[test]
fn random_documents_infer_as_the_reference() {
    let path = Path::new("t.ndjson");
    let mut rng = XorShift(0x5eed_0f1a_5700);
    let cases = stress_cases(4000);
    let (mut answered, mut with_stats) = (0, 0);
    for _ in 0..cases {
        let text = random_file(&mut rng);
        let data = text.as_bytes();
        let (schema, stats) = agree_all(path, data, &spans(path, data));
        answered += usize::from(schema);
        with_stats += usize::from(stats);
    }
    eprintln!("the walk answered {answered} of {cases} random files, {with_stats} with statistics");
    assert!(
        with_stats * 8 > cases,
        "statistics answered {with_stats} of {cases}"
    );
    // Most files are valid JSON without duplicate names: the walk must take them.
    assert!(
        answered * 3 > cases,
        "the walk answered {answered} of {cases}"
    );
}

#[test]
fn corner_cases_infer_as_the_reference() {
    let path = Path::new("t.ndjson");
    let cases: &[&str] = &[
        "{\"b\":1,\"a\":2}\n{\"d\":1,\"c\":2,\"a\":3}",
        "{\"a\":[1]}\n{\"a\":2}",
        "{\"a\":2}\n{\"a\":[1.5]}",
        "{\"a\":[[1]]}\n{\"a\":2}",
        "{\"a\":[[1]]}\n{\"a\":[2]}",
        "{\"a\":[{\"x\":1}]}\n{\"a\":2}",
        "{\"a\":{\"x\":1}}\n{\"a\":[1]}",
        "{\"a\":[null]}\n{\"a\":[]}",
        "{\"a\":[]}\n{\"a\":[[]]}",
        "{\"a\":[1,[2]]}",
        "{\"a\":[[1],2]}",
        "{\"a\":[{\"x\":1},2]}",
        "{\"a\":[{\"y\":1,\"x\":[true]},{\"z\":{}}]}",
        "{\"a\":1,\"a\":\"x\"}",
        "{\"a\":1,\"\\u0061\":\"x\"}",
        "{\"\\u00e9\":1}\n{\"\u{e9}\":2.5}",
        "{\"a\":-0}",
        "{\"a\":1e5}",
        "{\"a\":9223372036854775808}",
        "{\"a\":-9223372036854775808}",
        "{\"a\":1e400}",
        "[1]",
        "{\"a\":1} x",
        "{\"a\":1,}",
        "{\"a\":[1,]}",
        "{}\n{}",
        "{\"a\":null}",
        "{\"a\":\"x\"}\n{\"a\":true}\n{\"a\":{\"b\":1}}",
    ];
    for c in cases {
        agree(path, c.as_bytes(), &spans(path, c.as_bytes()));
    }
    // Deep nesting goes to the reference, which refuses depth 128.
    let deep = format!("{{\"a\":{}1{}}}", "[".repeat(130), "]".repeat(130));
    assert!(!agree(path, deep.as_bytes(), &spans(path, deep.as_bytes())));
}

/// Every JSON file of the conformance corpus, read in place.
#[test]
fn conformance_files_infer_as_the_reference() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance");
    if !root.is_dir() {
        eprintln!("skipped: no conformance corpus at {}", root.display());
        return;
    }
    let mut files = Vec::new();
    let mut dirs = vec![root.join("lake/lake"), root.join("external")];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if matches!(
                p.extension().and_then(|e| e.to_str()),
                Some("json" | "ndjson" | "jsonl")
            ) {
                files.push(p);
            }
        }
    }
    let (mut checked, mut answered) = (0, 0);
    for p in &files {
        let Ok(data) = std::fs::read(p) else {
            continue;
        };
        let mut spans = Vec::new();
        let delimited = walk_rows(p, &data, layout(p, &data), |s, e| {
            spans.push((s, e));
            Ok(())
        });
        if delimited.is_err() {
            continue;
        }
        checked += 1;
        if agree(p, &data, &spans) {
            answered += 1;
        }
    }
    eprintln!("{checked} conformance JSON files compared, {answered} taken by the walk");
    assert!(checked > 20 && answered > 10);
}

/// The word-at-a-time string scan against a byte loop, on byte soup with quotes,
/// backslashes, control bytes and non-ASCII bytes at every offset.
#[test]
fn digit_runs_match_a_byte_loop() {
    // The second alphabet makes runs longer than one 16-byte window.
    let mixed: &[u8] = b"0123456789/:a\x80\xff ";
    let long: &[u8] = b"01234567890123456789012345678901234567890123456789x";
    for seed in 0..stress_cases(3000) as u64 {
        let alphabet = if seed % 2 == 0 { mixed } else { long };
        let d = crate::testutil::byte_soup(seed + 1, seed as usize % 45, alphabet);
        for p in 0..=d.len() {
            assert_eq!(
                text::digit_run(&d, p),
                text::digit_run_bytes(&d, p),
                "at {p} of {d:?}"
            );
        }
    }
    let d = [b'7'; 40];
    assert_eq!(text::digit_run(&d, 3), 40);
}

#[test]
fn short_decimals_equal_a_correctly_rounded_parse() {
    let mut rng = XorShift(0x5eed_dec1);
    let digits = |rng: &mut XorShift, n: usize| -> String {
        (0..n)
            .map(|_| char::from(b'0' + rng.below(10) as u8))
            .collect()
    };
    for _ in 0..stress_cases(20_000) {
        let total = 2 + rng.below(14);
        let ints = 1 + rng.below(total - 1);
        let (int, frac) = (digits(&mut rng, ints), digits(&mut rng, total - ints));
        let text = format!("{int}.{frac}");
        let got = text::short_decimal(int.as_bytes(), frac.as_bytes());
        assert_eq!(
            got.map(f64::to_bits),
            Some(text.parse::<f64>().unwrap().to_bits()),
            "{text}"
        );
    }
    assert_eq!(text::short_decimal(b"1234567890", b"123456"), None);
    assert_eq!(
        text::short_decimal(b"0", b"0").map(f64::to_bits),
        Some(0f64.to_bits())
    );
}

#[test]
fn string_end_matches_a_byte_loop() {
    let naive = |d: &[u8], open: usize| -> Option<(usize, bool, bool)> {
        let mut pos = open + 1;
        let mut escaped = false;
        let mut high = false;
        loop {
            match *d.get(pos)? {
                b'"' => return Some((pos + 1, escaped, high)),
                0x80.. => {
                    high = true;
                    pos += 1;
                }
                b'\\' => {
                    escaped = true;
                    pos += 2;
                }
                c if c < 0x20 => return None,
                _ => pos += 1,
            }
        }
    };
    let alphabet = b"\"\\ab \x1f\x00\t\x7f\x80\xff\x20\x9f";
    for seed in 0..stress_cases(3000) as u64 {
        let soup = crate::testutil::byte_soup(seed + 1, 1 + (seed as usize % 40), alphabet);
        let mut d = vec![b'"'];
        d.extend_from_slice(&soup);
        assert_eq!(string_end(&d, 0), naive(&d, 0), "on {d:?}");
        assert_eq!(text::string_end_swar(&d, 0), naive(&d, 0), "on {d:?}");
        #[cfg(target_arch = "x86_64")]
        assert_eq!(text::string_end_sse2(&d, 0), naive(&d, 0), "on {d:?}");
    }
    for c in 0..=255u8 {
        let w = u64::from_le_bytes([c, b'a', c, 0x20, 0x1f, c, 0xff, c]);
        let marked = control_bytes(w);
        for (i, b) in w.to_le_bytes().iter().enumerate() {
            assert_eq!(marked >> (8 * i + 7) & 1 == 1, *b < 0x20, "byte {b:#x}");
        }
    }
}

/// Whole indexes (rows, checkpoints, schema, statistics, errors) with the walk and with the
/// reference path alone, for random files as line files and as arrays, at several strides.
#[test]
fn indexes_equal_the_reference_path() {
    use crate::locator::IndexOptions;
    let mut rng = XorShift(0x0dd_ba11_cafe);
    let show = |r: crate::error::Result<crate::locator::FileIndex>| match r {
        Ok(i) => format!("{i:?}"),
        Err(e) => format!("error: {e}"),
    };
    for case in 0..stress_cases(1500) {
        let mut text = String::new();
        // Flat lines first now and then: the walk starts at the first nested line.
        for _ in 0..rng.below(3) {
            text.push_str("{\"a\":1,\"id\":\"x\"}\n");
        }
        text.push_str(&random_file(&mut rng));
        let array = case % 4 == 3;
        let (name, bytes) = if array {
            let rows: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
            ("t.json", format!("[{}]", rows.join(",\n")).into_bytes())
        } else {
            ("t.ndjson", text.into_bytes())
        };
        let mut bytes = bytes;
        if case % 5 == 0 && !bytes.is_empty() {
            // A byte that breaks UTF-8 (inside a string or not): the same error either way.
            let at = rng.below(bytes.len());
            bytes[at] = [0xff, 0xc3, 0x80, 0xe6][rng.below(4)];
        }
        let path = Path::new(name);
        for stats in [StatsColumns::All, StatsColumns::None] {
            let options = IndexOptions {
                stride: 1 + rng.below(4) as u64,
                stats,
            };
            let fast = show(super::super::index_bytes(path, &bytes, &options));
            REFERENCE_ONLY.with(|c| c.set(true));
            let slow = show(super::super::index_bytes(path, &bytes, &options));
            REFERENCE_ONLY.with(|c| c.set(false));
            assert_eq!(fast, slow, "on\n{}", String::from_utf8_lossy(&bytes));
        }
    }
}

/// Name heads read as one word equal those assembled byte by byte.
#[test]
fn heads_read_as_words_equal_heads_of_bytes() {
    let d = b"\"abcdefghijkl\":1,\"\":2,\"x\"";
    for at in 0..d.len() {
        for len in 0..=d.len() - at {
            let key = &d[at..at + len];
            let mut word = [0u8; 8];
            let n = len.min(8);
            word[..n].copy_from_slice(&key[..n]);
            assert_eq!(head(key), u64::from_le_bytes(word));
            assert_eq!(head_at(d, at, len), head(key), "at {at} len {len}");
        }
    }
}
