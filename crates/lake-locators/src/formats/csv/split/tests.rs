//! Tests of the split delimited scan: random files split at random range lengths give
//! exactly the sequential index (checkpoints, row count, schema, statistics) for every
//! stride, or fall back when the file has an error.

use super::*;
use crate::locator::StatsColumns;
use crate::testutil::{XorShift, byte_soup, stress_cases};
use crate::text::blocks::MAP_FINE;

/// Fields of every shape: numbers, text, quoted text with delimiters, doubled quotes and
/// line breaks, empty fields, non-ASCII.
const FIELDS: &[&str] = &[
    "0",
    "-7",
    "123456789012345678",
    "1234567890123456789",
    "-8673.29",
    "1.5e3",
    "",
    "abc",
    "c123-abcd",
    "true",
    "false",
    "\u{e9}t\u{e9} \u{65e5}",
    "\"q,\nx\"",
    "\"a \"\"b\"\" c\"",
    "\"\"",
    "\"line\r\nbreak, comma\"",
    "\"long long long long long long long long long long long long long long text\"",
];

/// A random well-formed delimited file: `ncols` columns, LF or CRLF, empty lines, a BOM now
/// and then; columns drift from numbers to text late so that left-out text bounds are read
/// again.
fn random_csv(rng: &mut XorShift, rows: usize) -> Vec<u8> {
    let ncols = 1 + rng.below(6);
    let crlf = rng.below(2) == 0;
    let eol = if crlf { "\r\n" } else { "\n" };
    let mut out = String::new();
    if rng.below(5) == 0 {
        out.push('\u{feff}');
    }
    let names: Vec<String> = (0..ncols).map(|c| format!("c{c}")).collect();
    out.push_str(&names.join(","));
    out.push_str(eol);
    // Per column: the row from which any field may come; numbers before it.
    let turn: Vec<usize> = (0..ncols).map(|_| rng.below(rows + 1)).collect();
    for r in 0..rows {
        if rng.below(40) == 0 {
            out.push_str(eol);
        }
        for (c, &t) in turn.iter().enumerate() {
            if c > 0 {
                out.push(',');
            }
            let field = if r < t {
                FIELDS[rng.below(5)]
            } else {
                FIELDS[rng.below(FIELDS.len())]
            };
            out.push_str(field);
        }
        if r + 1 < rows || rng.below(2) == 0 {
            out.push_str(eol);
        }
    }
    out.into_bytes()
}

/// The sequential index of `text` (or its error), as text.
fn sequential(text: &[u8], options: &IndexOptions) -> Result<String> {
    index_bytes(Path::new("t.csv"), text, options).map(|r| format!("{:?}", r.1))
}

/// The split index of `text` for ranges of `chunk` bytes, or `None` when it falls back.
fn split_index(
    file: &FileBytes,
    options: &IndexOptions,
    chunk: usize,
    threads: usize,
) -> Option<String> {
    let path = Path::new("t.csv");
    let h = header(path, file).ok()?;
    plan_and_run(path, file, options, &h, chunk, threads).map(|i| format!("{i:?}"))
}

fn mapped(text: &[u8]) -> (tempfile::NamedTempFile, FileBytes) {
    crate::text::scan::mapped_file(text, ".csv")
}

#[test]
fn split_scans_equal_the_sequential_scan() {
    let mut rng = XorShift(0x5eed_1234_abcd_0001);
    for case in 0..stress_cases(60) {
        let rows = 1 + rng.below(400);
        let text = random_csv(&mut rng, rows);
        let (_f, file) = mapped(&text);
        for stride in [1, 3, 7, 64, 1000, 65_536] {
            for stats in [StatsColumns::None, StatsColumns::All] {
                let options = IndexOptions { stride, stats };
                let want = sequential(&text, &options).expect("a well-formed file");
                let chunk = 16 + rng.below(text.len());
                let got = split_index(&file, &options, chunk, 1 + chunk % 2);
                assert_eq!(
                    got.as_deref(),
                    Some(want.as_str()),
                    "case {case} stride {stride} chunk {chunk}"
                );
            }
        }
    }
}

#[test]
fn split_scans_of_broken_files_fall_back_or_agree() {
    let alphabet = b"a,b\n\"1-.0\r9,,\n\xc3\xa9\xff e";
    for case in 0..stress_cases(300) {
        let mut text = b"h1,h2,h3\n".to_vec();
        text.extend(byte_soup(case as u64 * 7919, 40 + case % 600, alphabet));
        let (_f, file) = mapped(&text);
        for stats in [StatsColumns::None, StatsColumns::All] {
            let options = IndexOptions { stride: 3, stats };
            let want = sequential(&text, &options);
            for chunk in [8, 33, 100] {
                let got = split_index(&file, &options, chunk, 2);
                match (&want, got) {
                    // A split may give up on a good file (a wrong guess), never differ.
                    (Ok(w), Some(g)) => assert_eq!(&g, w, "case {case} chunk {chunk}"),
                    (Err(e), Some(g)) => panic!("case {case}: split gave {g}, sequential {e}"),
                    (_, None) => {}
                }
            }
        }
    }
}

/// A stray quote inside an unquoted field (a plain byte, as in the csv crate) flips the
/// parity guess: the split must notice and fall back, or agree.
#[test]
fn stray_quotes_never_give_a_wrong_index() {
    let mut text = b"a,b\n".to_vec();
    for i in 0..2000 {
        if i % 97 == 5 {
            text.extend_from_slice(b"x\"y,1\n");
        } else {
            text.extend_from_slice(format!("r{i},\"q\nz\"\n").as_bytes());
        }
    }
    let (_f, file) = mapped(&text);
    let options = IndexOptions::default();
    let want = sequential(&text, &options).unwrap();
    for chunk in [50, 333, 1000, 4096] {
        if let Some(got) = split_index(&file, &options, chunk, 2) {
            assert_eq!(got, want, "chunk {chunk}");
        }
    }
}

/// A file of several megabytes through [`index_file`] (nominal ranges of 2 MiB, the
/// smallest): the same index as the sequential scan.
#[test]
fn a_large_file_splits_in_ranges_of_megabytes() {
    let mut rng = XorShift(0x5eed_0000_0000_0077);
    let mut text = b"id,note,x\r\n".to_vec();
    let mut i = 0u64;
    while text.len() < 5 << 20 {
        let note = FIELDS[rng.below(FIELDS.len())];
        text.extend_from_slice(format!("{i},{note},{}.5\r\n", i % 1000).as_bytes());
        i += 1;
    }
    let (f, file) = mapped(&text);
    let options = IndexOptions::default();
    let want = sequential(&text, &options).unwrap();
    let got = index_file(f.path(), &file, &options, 2).unwrap();
    assert_eq!(got.map(|g| format!("{g:?}")), Some(want));
}

/// Strides with fine checkpoints in the map (multiples of `MAP_FINE` rows) and block statistics:
/// a split at random range lengths gives exactly the sequential index, whose blocks carry
/// their fine checkpoints and bounds.
#[test]
fn fine_checkpoints_and_block_stats_survive_splits() {
    let mut rng = XorShift(0x5eed_f1e5_0000_0002);
    let mut with_stats = 0;
    for case in 0..stress_cases(4) {
        let rows = 9_000 + rng.below(20_000);
        // A sorted id, a number column and text of every shape, then random columns.
        let mut text = b"id,x,note\n".to_vec();
        for i in 0..rows {
            let note = FIELDS[rng.below(FIELDS.len())];
            let x = FIELDS[rng.below(5)];
            text.extend_from_slice(format!("{i},{x},{note}\n").as_bytes());
        }
        text.extend(
            random_csv(&mut rng, 50)
                .iter()
                .skip_while(|&&b| b != b'\n')
                .skip(1),
        );
        let (_f, file) = mapped(&text);
        for stride in [8_192, 12_288] {
            for stats in [StatsColumns::None, StatsColumns::All] {
                let options = IndexOptions { stride, stats };
                let (_, index) = index_bytes(Path::new("t.csv"), &text, &options).unwrap();
                let first = &index.blocks[0];
                let fine = first.fine.as_ref().expect("fine checkpoints");
                assert_eq!(fine.rows, MAP_FINE);
                assert_eq!(fine.bytes.len() as u64, stride / MAP_FINE - 1);
                assert!(fine.bytes.windows(2).all(|w| w[0] < w[1]));
                with_stats += index.blocks.iter().filter(|b| b.stats.is_some()).count();
                let want = format!("{index:?}");
                for _ in 0..3 {
                    let chunk = 1_000 + rng.below(text.len() / 2);
                    let got = split_index(&file, &options, chunk, 2);
                    assert_eq!(
                        got.as_deref(),
                        Some(want.as_str()),
                        "case {case} stride {stride} chunk {chunk}"
                    );
                }
            }
        }
    }
    assert!(with_stats > 0, "no block got statistics");
}

/// A read that starts at a fine checkpoint returns the rows a read from the file's start
/// returns, wherever the rows lie (quoted line breaks included).
#[test]
fn reads_from_fine_checkpoints_equal_reads_from_the_start() {
    use crate::locator::Locator;
    let mut rng = XorShift(0x5eed_f1e5_0000_0003);
    let mut text = b"id,note\n".to_vec();
    for i in 0..20_000 {
        let note = FIELDS[rng.below(FIELDS.len())];
        text.extend_from_slice(format!("{i},{note}\n").as_bytes());
    }
    let (f, _file) = mapped(&text);
    let options = IndexOptions {
        stride: 8_192,
        stats: StatsColumns::None,
    };
    let locator = super::super::DelimitedLocator;
    let index = locator.index(f.path(), &options).unwrap();
    assert!(index.blocks.iter().any(|b| b.fine.is_some()));
    let read = |start: u64, blocks| {
        crate::testutil::read_text(&locator, f.path(), &index.schema, blocks, start, 5)
    };
    for start in [0, 4_095, 4_096, 4_100, 8_191, 8_192, 12_290, 16_384, 19_998] {
        let fast = read(start, Some(&index.blocks[..]));
        assert_eq!(fast, read(start, None), "rows from {start}");
        assert!(fast.contains(&format!("{start}")), "rows from {start}");
    }
    // A take of far-apart rows seeks to each one's fine checkpoint: the same rows.
    let take = |blocks| {
        let rows = [3, 4_100, 4_101, 9_000, 15_000, 19_999];
        let request = crate::locator::RowsRequest {
            rows: &rows,
            blocks,
            schema: Some(index.schema.clone()),
            ..Default::default()
        };
        format!("{:?}", locator.read_rows(f.path(), &request).unwrap())
    };
    assert_eq!(take(Some(&index.blocks[..])), take(None));
    // The read does start at the fine checkpoint: one moved to the next record is seen.
    let mut moved = index.blocks.clone();
    let first = moved[0].first_byte.unwrap();
    let fine = moved[0].fine.as_mut().unwrap();
    // The fine checkpoint of row 4,096, the one a read of row 4,100 starts from.
    let k = (4_096 / MAP_FINE - 1) as usize;
    let at = (first + fine.bytes[k]) as usize;
    fine.bytes[k] += text[at..].iter().position(|&b| b == b'\n').unwrap() as u64 + 1;
    assert_ne!(read(4_100, Some(&moved[..])), read(4_100, None));
}

/// Found by the `csv_scan` fuzz target: stray quotes, CRs inside unquoted fields and records
/// wider than the header, split in 1-byte ranges (stride 2, all statistics).
#[test]
fn fuzz_case_wide_records_with_stray_quotes() {
    let text: &[u8] = &[
        b"4,4\r\n5,\"q5\",5\r\n6,\"b\"c8,8\r,na\x00id,nadore\r\n0,\"ab\"c0\x00\x00\x00\x00"
            .as_slice(),
        b"\x00\x00ote\n1,a,1.5,true,x\n1,b,2.5,false,y\x00\x00\x00\x00\x00\x00\x00\x00\x00"
            .as_slice(),
        b"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
            .as_slice(),
        b"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
            .as_slice(),
        b"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00te\n3,a,1.5,true,x,0\r\n1,bq1\",$\r"
            .as_slice(),
        b"\n2,\"q2\"\"q3\",3\r\n4,\"ab\"c!4,4\r\n5,\"q5\",C5\r\n6,\"q6\",\x00\x00\x00\x00"
            .as_slice(),
        b"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
            .as_slice(),
        b"\x00\x00\x00\x00\x006\r\n7,\"q7\",7\x07@di\r\n8,\"ab\"c8,8\r,name,score\r\n\n".as_slice(),
    ]
    .concat();
    let (_f, file) = mapped(text);
    for stats in [StatsColumns::None, StatsColumns::All] {
        for stride in [1, 2, 3] {
            let options = IndexOptions {
                stride,
                stats: stats.clone(),
            };
            let want = sequential(text, &options).unwrap();
            for chunk in [1, 5, 9, 17, 33] {
                if let Some(got) = split_index(&file, &options, chunk, 2) {
                    assert_eq!(got, want, "stride {stride} chunk {chunk}");
                }
            }
        }
    }
}

/// The fuzz case above, reduced: the header's two columns share a name (so they keep no
/// statistics), and the records add three columns that do. Runs of records must still give
/// those columns their values (they gathered none when no header column kept statistics).
#[test]
fn runs_gather_values_for_added_columns_only() {
    let text = [
        b"4,4\n6,cc,r,d,n\n1,a,1.5,true,x\n1,b,2.5,false,y".as_slice(),
        &[b'z'; 34],
    ]
    .concat();
    let options = IndexOptions {
        stride: 1,
        stats: StatsColumns::All,
    };
    let want = crate::csv::portable_index(Path::new("t.csv"), &text, &options)
        .map(|r| format!("{:?}", r.1))
        .unwrap();
    assert!(
        want.contains(r#""column3": Str { min_str: "d", max_str: "true" }"#),
        "{want}"
    );
    for l in crate::simd::available_loops() {
        let got = crate::simd::with_loop(l, || sequential(&text, &options)).unwrap();
        assert_eq!(got, want, "{l:?}");
    }
}

#[test]
fn a_wrong_quote_guess_falls_back_to_counted_parities() {
    // A quoted field of about 190 KB with line feeds and no quote: a boundary in its first
    // part finds no telling quote within the guess window, guesses "outside", and puts a
    // range start inside the field.
    let mut text = b"id,note\n1,a\n2,\"".to_vec();
    for i in 0..5000 {
        text.extend_from_slice(format!("line {i} of a long note, with commas\n").as_bytes());
    }
    text.extend_from_slice(b"end\"\n3,b\n");
    let (_f, file) = mapped(&text);
    let path = Path::new("t.csv");
    let h = match header(path, &file) {
        Ok(h) => h,
        Err(e) => panic!("the test file's header: {e}"),
    };
    let chunk = 50_000;
    let guessed = plan(&file, &h, chunk, Quotes::Guessed);
    let counted = plan(&file, &h, chunk, Quotes::Counted);
    assert_ne!(guessed, counted, "the guess is wrong inside the long field");
    for stats in [StatsColumns::None, StatsColumns::All] {
        let options = IndexOptions { stride: 1, stats };
        assert!(run_plan(path, &file, &options, &h, &guessed, 2).is_none());
        let want = match sequential(&text, &options) {
            Ok(want) => want,
            Err(e) => panic!("a well-formed file: {e}"),
        };
        assert_eq!(split_index(&file, &options, chunk, 2), Some(want));
    }
}
