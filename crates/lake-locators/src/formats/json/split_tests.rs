//! Tests of the split JSON-lines scan: random files, flat and nested, split at random range
//! lengths give exactly the sequential index for every stride, or fall back on errors.

use std::io::Write as _;

use super::*;
use crate::testutil::{XorShift, byte_soup, stress_cases};
use crate::text::blocks::MAP_FINE;

const VALUES: &[&str] = &[
    "0",
    "-7",
    "123456789012345678",
    "12345678901234567890",
    "-8673.29",
    "1e5",
    "null",
    "true",
    "false",
    "\"abc\"",
    "\"c123-abcd\"",
    "\"\\u00e9t\\u00e9 \\\"q\\\" \\\\ x\\ny\"",
    "\"\u{e9}t\u{e9} \u{65e5}\"",
    "\"\"",
];

/// Nested members, each key with values of one compatible kind (objects, lists of scalars,
/// lists of objects).
const NESTED: &[(&str, &[&str])] = &[
    (
        "n",
        &[
            "{\"id\":1,\"name\":\"x\"}",
            "{\"name\":\"y\",\"vip\":true}",
            "{}",
            "null",
        ],
    ),
    ("t", &["[\"t1\",\"t2\"]", "[]", "[1,2.5]", "[null]"]),
    ("u", &["[[]]", "[[1],[2,3]]", "[]", "[[\"x\"],[]]"]),
    ("o", &["[{\"k\":1},{\"j\":\"s\"}]", "[]", "[{\"k\":-2.5}]"]),
];

/// A random JSON-lines file; with `nested`, some values are objects and arrays.
fn random_ndjson(rng: &mut XorShift, rows: usize, nested: bool) -> Vec<u8> {
    let keys = ["a", "bb", "c_long_key", "d", "\u{e9}"];
    let turn: Vec<usize> = keys.iter().map(|_| rng.below(rows + 1)).collect();
    let mut out = String::new();
    for r in 0..rows {
        if rng.below(30) == 0 {
            out.push_str(if rng.below(2) == 0 { "\n" } else { "  \r\n" });
        }
        if rng.below(40) == 0 {
            out.push(' ');
        }
        let mut members = Vec::new();
        for (k, key) in keys.iter().enumerate() {
            if rng.below(6) == 0 {
                continue;
            }
            let v = if r < turn[k] {
                VALUES[rng.below(5)]
            } else {
                VALUES[rng.below(VALUES.len())]
            };
            members.push(format!("\"{key}\":{v}"));
        }
        if nested {
            for (key, values) in NESTED {
                if rng.below(4) == 0 {
                    members.push(format!("\"{key}\":{}", values[rng.below(values.len())]));
                }
            }
        }
        if rng.below(3) == 0 {
            members.reverse();
        }
        out.push('{');
        out.push_str(&members.join(","));
        out.push('}');
        if r + 1 < rows || rng.below(2) == 0 {
            out.push('\n');
        }
    }
    out.into_bytes()
}

fn mapped(text: &[u8]) -> (tempfile::NamedTempFile, FileBytes) {
    let mut f = tempfile::Builder::new()
        .suffix(".ndjson")
        .tempfile()
        .unwrap();
    f.write_all(text).unwrap();
    f.flush().unwrap();
    let bytes = FileBytes::open(f.path()).unwrap();
    (f, bytes)
}

fn sequential(text: &[u8], options: &IndexOptions) -> Result<String> {
    super::super::index_bytes(Path::new("t.ndjson"), text, options).map(|i| format!("{i:?}"))
}

fn split_index(file: &FileBytes, options: &IndexOptions, chunk: usize) -> Option<String> {
    let p = plan(file, chunk);
    // One thread too: large files are read in ranges on a pool of one (bounded memory).
    let threads = 1 + chunk % 2;
    run_plan(Path::new("t.ndjson"), file, options, &p, threads).map(|i| format!("{i:?}"))
}

#[test]
fn split_scans_equal_the_sequential_scan() {
    let mut rng = XorShift(0x5eed_9876_0000_0001);
    // Nested files whose split held (a range with lists of nulls alone falls back).
    let mut nested_held = 0;
    for case in 0..stress_cases(60) {
        let rows = 1 + rng.below(300);
        let nested = case % 3 == 2;
        let text = random_ndjson(&mut rng, rows, nested);
        let (_f, file) = mapped(&text);
        for stride in [1, 3, 64, 1000] {
            for stats in [StatsColumns::None, StatsColumns::All] {
                let options = IndexOptions { stride, stats };
                let want = sequential(&text, &options).expect("a well-formed file");
                let chunk = 8 + rng.below(text.len());
                match split_index(&file, &options, chunk) {
                    Some(got) => {
                        assert_eq!(got, want, "case {case} stride {stride} chunk {chunk}");
                        nested_held += usize::from(nested);
                    }
                    None => assert!(nested, "case {case}: a flat file fell back"),
                }
            }
        }
    }
    assert!(nested_held > 0, "no nested split held");
}

#[test]
fn split_scans_of_broken_files_fall_back_or_agree() {
    let alphabet = b"{}[]\":,1-.e \n\\ax\xc3\xa9\xff";
    for case in 0..stress_cases(300) {
        let text = byte_soup(case as u64 * 104_729, 20 + case % 500, alphabet);
        let (_f, file) = mapped(&text);
        let options = IndexOptions {
            stride: 2,
            stats: StatsColumns::All,
        };
        let want = sequential(&text, &options);
        for chunk in [5, 40, 200] {
            match (&want, split_index(&file, &options, chunk)) {
                (Ok(w), Some(g)) => assert_eq!(&g, w, "case {case} chunk {chunk}"),
                (Err(e), Some(g)) => panic!("case {case}: split gave {g}, sequential {e}"),
                (_, None) => {}
            }
        }
    }
}

/// A nested file of several megabytes split in ranges of 2 MiB: the same index as the
/// sequential scan.
#[test]
fn a_large_nested_file_splits_in_ranges_of_megabytes() {
    let mut rng = XorShift(0x5eed_0000_0000_0078);
    let mut text = Vec::new();
    while text.len() < 5 << 20 {
        text.extend(random_ndjson(&mut rng, 200, true));
        text.push(b'\n');
    }
    // Arrays of nulls alone send a range to the sequential scan: none here.
    let text = String::from_utf8(text)
        .unwrap()
        .replace("[null]", "[\"n\"]")
        .into_bytes();
    let (_f, file) = mapped(&text);
    let options = IndexOptions::default();
    let want = sequential(&text, &options).unwrap();
    let p = plan(&file, crate::text::split::chunk_len(text.len(), 2));
    assert!(p.len() > 1);
    let got = run_plan(Path::new("t.ndjson"), &file, &options, &p, 2);
    assert_eq!(got.map(|g| format!("{g:?}")), Some(want));
}

/// Split scans (ranges on worker threads, whose schemas and statistics come from the walk
/// when it takes every range) equal the sequential scan by the reference path alone.
#[test]
fn split_indexes_equal_the_reference_path() {
    use std::io::Write as _;

    use crate::formats::json::fast::tests::{REFERENCE_ONLY, clean_rows, random_file};
    use crate::locator::IndexOptions;
    use crate::text::scan::FileBytes;
    let mut rng = XorShift(0x5b1_17ed_0001);
    let (mut compared, mut walked) = (0, 0);
    for _ in 0..stress_cases(300) {
        let text = if rng.below(4) == 0 {
            random_file(&mut rng)
        } else {
            let rows = 1 + rng.below(60);
            clean_rows(&mut rng, rows)
        };
        let mut tmp = tempfile::Builder::new()
            .suffix(".ndjson")
            .tempfile()
            .expect("temp file");
        tmp.write_all(text.as_bytes()).expect("write");
        tmp.flush().expect("flush");
        let path = tmp.path();
        let file = FileBytes::open(path).expect("open");
        let plan = plan(&file, 64 + rng.below(400));
        for stats in [StatsColumns::All, StatsColumns::None] {
            let options = IndexOptions {
                stride: 1 + rng.below(5) as u64,
                stats,
            };
            let Some(split) = run_plan(path, &file, &options, &plan, 2) else {
                continue;
            };
            REFERENCE_ONLY.with(|c| c.set(true));
            let slow = super::super::index_bytes(path, &file, &options);
            REFERENCE_ONLY.with(|c| c.set(false));
            let slow = slow.expect("the split scan succeeded, so does the sequential one");
            assert_eq!(format!("{split:?}"), format!("{slow:?}"), "on\n{text}");
            compared += 1;
            walked += usize::from(split.stats.as_ref().is_some_and(|s| !s.is_empty()));
        }
    }
    eprintln!("{compared} split indexes compared, {walked} with statistics");
    assert!(compared > 50, "{compared} split indexes compared");
}

/// Strides with fine checkpoints in the map (multiples of `MAP_FINE` rows): a split at random
/// range lengths gives exactly the sequential index, whose blocks carry them; a read from a
/// fine checkpoint returns the rows a read from the start returns.
#[test]
fn fine_checkpoints_survive_splits_and_serve_reads() {
    let mut rng = XorShift(0x5eed_f1e5_0000_0004);
    for case in 0..stress_cases(3) {
        let rows = 9_000 + rng.below(12_000);
        let text = random_ndjson(&mut rng, rows, case % 2 == 1);
        let (f, file) = mapped(&text);
        let options = IndexOptions {
            stride: 8_192,
            stats: StatsColumns::None,
        };
        let index = super::super::index_bytes(Path::new("t.ndjson"), &text, &options).unwrap();
        let fine = index.blocks[0].fine.as_ref().expect("fine checkpoints");
        assert_eq!(fine.rows, MAP_FINE);
        assert_eq!(fine.bytes.len() as u64, 8_192 / MAP_FINE - 1);
        let want = format!("{index:?}");
        for _ in 0..3 {
            let chunk = 1_000 + rng.below(text.len() / 2);
            if let Some(got) = split_index(&file, &options, chunk) {
                assert_eq!(got, want, "case {case} chunk {chunk}");
            }
        }
        let locator = super::super::JsonLocator;
        let read = |start: u64, blocks| {
            crate::testutil::read_text(&locator, f.path(), &index.schema, blocks, start, 3)
        };
        for start in [4_095, 4_096, 4_097, 8_191, 8_192, 12_300] {
            assert_eq!(read(start, Some(&index.blocks[..])), read(start, None));
        }
    }
}
