//! Tests of the split JSON-lines scan: random files, flat and nested, split at random range
//! lengths give exactly the sequential index for every stride, or fall back on errors.

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
    mapped_as(text, ".ndjson")
}

fn mapped_as(text: &[u8], suffix: &str) -> (tempfile::NamedTempFile, FileBytes) {
    crate::text::scan::mapped_file(text, suffix)
}

fn sequential(text: &[u8], options: &IndexOptions) -> Result<String> {
    super::super::index_bytes(Path::new("t.ndjson"), text, options).map(|i| format!("{i:?}"))
}

fn split_index(file: &FileBytes, options: &IndexOptions, chunk: usize) -> Option<String> {
    let p = plan(file, chunk);
    // One thread too: large files are read in ranges on a pool of one (bounded memory).
    let threads = 1 + chunk % 2;
    run_plan(
        Path::new("t.ndjson"),
        file,
        Layout::Lines,
        options,
        &p,
        threads,
    )
    .map(|i| format!("{i:?}"))
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
    let got = run_plan(Path::new("t.ndjson"), &file, Layout::Lines, &options, &p, 2);
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
            let Some(split) = run_plan(path, &file, Layout::Lines, &options, &plan, 2) else {
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

/// Top-level arrays split at guessed elements, printed in several ways (one line, one element
/// per line, indented, spaced, after a byte-order mark), flat and nested, for every stride:
/// the split gives the sequential index, or falls back when a guess fell inside an element
/// (nested arrays of objects printed on one line hold the one-line separator). Flat
/// elements hold no separator, so their splits always hold.
#[test]
fn array_splits_equal_the_sequential_scan() {
    let styles: [(&str, &str, &str); 5] = [
        ("[", ",", "]"),
        ("[\n", ",\n", "\n]\n"),
        ("[\n  ", ",\n  ", "\n]"),
        (" [ ", " , ", " ] "),
        ("\u{feff}[", ", ", "]"),
    ];
    let path = Path::new("t.json");
    let mut rng = XorShift(0x5eed_a77a_0000_0001);
    let (mut held, mut nested_held) = (0, 0);
    for case in 0..stress_cases(60) {
        let rows = 2 + rng.below(300);
        let nested = case % 3 == 2;
        // Arrays of nulls alone send a nested split to the sequential scan: fewer here.
        let lines = match String::from_utf8(random_ndjson(&mut rng, rows, nested)) {
            Ok(lines) => lines,
            Err(e) => panic!("case {case}: the generated rows are not UTF-8: {e}"),
        };
        let lines = if case % 2 == 0 {
            lines.replace("[null]", "[\"n\"]")
        } else {
            lines
        };
        let elements: Vec<&str> = lines
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        let (open, sep, close) = styles[case % styles.len()];
        let text = format!("{open}{}{close}", elements.join(sep));
        let (_f, file) = mapped_as(text.as_bytes(), ".json");
        let lay = layout(path, &file);
        let Layout::Array(first) = lay else {
            panic!("case {case}: not read as an array");
        };
        for stride in [1, 3, 64, 1000] {
            for stats in [StatsColumns::None, StatsColumns::All] {
                let options = IndexOptions { stride, stats };
                let want = match super::super::index_bytes(path, text.as_bytes(), &options) {
                    Ok(i) => format!("{i:?}"),
                    Err(e) => panic!("case {case}: the sequential scan failed: {e}"),
                };
                let chunk = 8 + rng.below(text.len());
                let Some(plan) = array_plan(&file, first, chunk) else {
                    panic!("case {case}: no plan for an array of objects");
                };
                match run_plan(path, &file, lay, &options, &plan, 1 + chunk % 2) {
                    Some(got) => {
                        assert_eq!(
                            format!("{got:?}"),
                            want,
                            "case {case} stride {stride} chunk {chunk}"
                        );
                        held += usize::from(plan.len() > 1);
                        nested_held += usize::from(nested && plan.len() > 1);
                    }
                    None => assert!(nested, "case {case}: a flat array fell back"),
                }
            }
        }
    }
    eprintln!("{held} array splits held, {nested_held} of nested arrays");
    assert!(
        held > 200 && nested_held > 20,
        "{held} splits held, {nested_held} nested"
    );
}

/// A guess inside an element (an array of objects printed on one line, like the top-level
/// array) makes the split fail, so the file is read sequentially.
#[test]
fn a_guess_inside_an_element_fails_the_split() {
    let mut text = String::from("[{\"a\":0},{\"a\":1,\"b\":[");
    let inner: Vec<String> = (0..300).map(|i| format!("{{\"c\":{i}}}")).collect();
    text.push_str(&inner.join(","));
    text.push_str("]},{\"a\":2}]");
    let (_f, file) = mapped_as(text.as_bytes(), ".json");
    let (Some(from), Some(to)) = (text.find("{\"c\":0}"), text.find("]}")) else {
        panic!("no inner array in {text}");
    };
    let inside = from..to;
    let Some(plan) = array_plan(&file, 0, 200) else {
        panic!("no plan for an array of objects");
    };
    assert!(
        plan.iter().skip(1).any(|r| inside.contains(&r.start)),
        "no guess inside the element: {plan:?}"
    );
    let options = IndexOptions::default();
    assert!(
        run_plan(
            Path::new("t.json"),
            &file,
            Layout::Array(0),
            &options,
            &plan,
            2
        )
        .is_none()
    );
    // The sequential scan reads it: 3 rows.
    match super::super::index_bytes(Path::new("t.json"), text.as_bytes(), &options) {
        Ok(index) => assert_eq!(index.row_count, 3),
        Err(e) => panic!("the sequential scan failed: {e}"),
    }
}

/// Members whose value types conflict (a scalar and an array, an object and a scalar, a
/// conflict inside an object) only between ranges, or only inside a later range: the split
/// holds (its merge makes them JSON text) and gives exactly the sequential index, for many
/// range lengths, lines of one length putting some range ends exactly at the turn.
#[test]
fn conflicts_between_and_inside_ranges_give_the_sequential_index() {
    // Every line of one length: ids, users and geometries of each kind are as long.
    let row = |r: usize, late: bool| {
        let (id, user, geo) = if late {
            (format!("[1{:03}]", r % 1000), "\"anon1\"", "{\"c\":[[1]]}")
        } else {
            (
                format!("\"{:04}\"", r % 10_000),
                "{\"n\":1}",
                "{\"c\":[1,2]}",
            )
        };
        format!(
            "{{\"r\":1{:04},\"id\":{id},\"user\":{user},\"geo\":{geo}}}\n",
            r % 10_000
        )
    };
    let mut rng = XorShift(0x5eed_c0f1_1c75_0001);
    let mut held = 0;
    for case in 0..stress_cases(12) {
        let rows = 40 + rng.below(200);
        let mixed = case % 2 == 1;
        let text: String = (0..rows)
            // In `mixed` files some rows of the late half keep the early shapes.
            .map(|r| row(r, r >= rows / 2 && !(mixed && r % 7 == 3)))
            .collect();
        let (_f, file) = mapped(text.as_bytes());
        let first_len = text.find('\n').map_or(1, |i| i + 1);
        for stats in [StatsColumns::None, StatsColumns::All] {
            let options = IndexOptions { stride: 5, stats };
            let want = sequential(text.as_bytes(), &options).expect("a well-formed file");
            assert!(want.contains("arrow.json"), "no JSON text column: {want}");
            for chunk in [first_len * (rows / 2), 8 + rng.below(text.len()), 64] {
                let got = split_index(&file, &options, chunk);
                assert_eq!(got.as_ref(), Some(&want), "case {case} chunk {chunk}");
                held += 1;
            }
            // The same rows as a top-level array, split at guessed elements.
            let array = format!("[{}]", text.trim_end().replace('\n', ","));
            let (_a, afile) = mapped_as(array.as_bytes(), ".json");
            let path = Path::new("t.json");
            let want = match super::super::index_bytes(path, array.as_bytes(), &options) {
                Ok(i) => format!("{i:?}"),
                Err(e) => panic!("case {case}: the sequential scan failed: {e}"),
            };
            assert!(want.contains("arrow.json"), "no JSON text column: {want}");
            for chunk in [first_len * (rows / 2), 8 + rng.below(array.len())] {
                let Some(plan) = array_plan(&afile, 0, chunk) else {
                    panic!("case {case}: no plan for an array of objects");
                };
                let got = run_plan(path, &afile, Layout::Array(0), &options, &plan, 2);
                let got = got.map(|g| format!("{g:?}"));
                assert_eq!(got.as_ref(), Some(&want), "case {case} array chunk {chunk}");
                held += 1;
            }
        }
    }
    assert!(held > 0);
}
