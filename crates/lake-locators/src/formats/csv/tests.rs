//! Tests of the delimited-text locator: the window and streaming paths against the portable
//! path, dialect sniffing and field splitting.

use super::*;
use crate::locator::StatsColumns;

/// Byte soup: the window path and the portable path agree (and neither panics).
#[test]
fn window_path_equals_the_portable_path_on_byte_soup() {
    let alphabet = b"a,b\n\"1-.0\r9,,\n\xc3\xa9\xff e";
    for case in 0..crate::testutil::stress_cases(300) {
        let mut text = b"h1,h2,h3\n".to_vec();
        text.extend(crate::testutil::byte_soup(
            case as u64 * 7919,
            40 + case % 400,
            alphabet,
        ));
        let path = Path::new("t.csv");
        for stats in [StatsColumns::None, StatsColumns::All] {
            let options = IndexOptions { stride: 3, stats };
            let fast = index_bytes(path, &text, &options).map(|r| r.1);
            let portable = portable_index(path, &text, &options).map(|r| r.1);
            assert_eq!(format!("{fast:?}"), format!("{portable:?}"), "case {case}");
        }
    }
}

/// Random delimited files mixing every field shape the window path decides on (and those
/// it must hand over): both paths must give the same index, or the same error.
#[test]
fn window_path_equals_the_portable_path() {
    const FIELDS: &[&str] = &[
        "0",
        "-7",
        "123456789012345678",
        "-123456789012345678",
        "1234567890123456789",
        "-",
        ".",
        "-.",
        "1.",
        ".5",
        "-8673.29",
        "2909.6900000000005",
        "1e5",
        "1.2.3",
        "",
        "abc",
        "c123-abcd",
        "true",
        "FALSE",
        "\u{e9}t\u{e9}",
        "\"q,\nx\"",
        "\"\"\"\"",
        "9007199254740993.5",
        "0000000000000000000000000000000000000000000000000000000000000001",
        "x\ry",
        "-0",
        "-0.0",
        "9999999999999999999",
    ];
    const INTS: &[&str] = &[
        "0",
        "-7",
        "123456789012345678",
        "-123456789012345678",
        "1234567890123456789",
        "",
        "-0",
        "9999999999999999999",
        "-9223372036854775808",
        "-9223372036854775809",
    ];
    const NUMBERS: &[&str] = &[
        "12",
        "-8673.29",
        "1.",
        ".5",
        "-.5",
        "2909.6900000000005",
        "",
        "1e5",
        "-0.0",
        "0.00000000000000000000000000000000000000000000000000000000001",
    ];
    // Booleans, and once in a while a word that turns the column Utf8 (their text bounds,
    // left out while it is boolean, are read again then).
    const BOOLS: &[&str] = &[
        "true", "FALSE", "True", "false", "", "TRUE", "fAlSe", "true", "false", "x",
    ];
    let mut rng = crate::testutil::XorShift(0x0123_4567_89ab_cdef);
    let mut next = move |n: usize| rng.below(n);
    for case in 0..crate::testutil::stress_cases(200) {
        let ncols = 1 + next(6);
        let mut text = (0..ncols)
            .map(|i| format!("c{i}"))
            .collect::<Vec<_>>()
            .join(",");
        text.push('\n');
        let rows = next(120);
        for _ in 0..rows {
            // Columns of integers only and of numbers only keep a number type.
            let fields: Vec<&str> = (0..ncols)
                .map(|c| match (c + case) % 4 {
                    0 => INTS[next(INTS.len())],
                    1 => NUMBERS[next(NUMBERS.len())],
                    // The turning word about once in 150 values.
                    2 => {
                        let turning = usize::from(next(15) == 0);
                        BOOLS[next(BOOLS.len() - 1 + turning)]
                    }
                    _ => FIELDS[next(FIELDS.len())],
                })
                .collect();
            // Now and then a row with a field too few.
            let n = if next(400) == 0 { ncols - 1 } else { ncols };
            text.push_str(&fields[..n].join(","));
            text.push_str(["\n", "\r\n", "\n\n", "\n\r\n"][next(4)]);
        }
        if next(2) == 0 {
            text.pop();
        }
        let path = Path::new("t.csv");
        // Stride 1 starts a block at every record: the rescan ends of lazily left-out
        // text bounds are noted at block starts.
        for (stride, stats) in [
            (7, StatsColumns::None),
            (7, StatsColumns::All),
            (1, StatsColumns::All),
        ] {
            let options = IndexOptions { stride, stats };
            let fast = index_bytes(path, text.as_bytes(), &options).map(|r| r.1);
            // The reference: the portable path, every text bound taken as it comes.
            let portable = portable_index(path, text.as_bytes(), &options).map(|r| r.1);
            assert_eq!(
                format!("{fast:?}"),
                format!("{portable:?}"),
                "case {case}:\n{text}"
            );
        }
    }
}

#[test]
fn sniffs_txt_delimiters() {
    assert_eq!(sniff_delimiter(b"a;b;c\n1,2;3;4\n"), b';');
    assert_eq!(sniff_delimiter(b"\xEF\xBB\xBFa\tb\n"), b'\t');
    assert_eq!(sniff_delimiter(b"\"a,b\"|c\n"), b'|');
    assert_eq!(sniff_delimiter(b"text\nx,y\n"), NO_DELIMITER);
}

#[test]
fn plain_records_word_at_a_time() {
    let mut cuts = [0usize; MAX_CUTS];
    let data = b"a,bb,,ccc,dddd,eeeee\r\n1234567,12345678,x\n\"q\",1\nz,\"q\"\nlast,,";
    assert_eq!(
        scan_plain_record(data, 0, b',', &mut cuts),
        Some((21, 5, false))
    );
    assert_eq!(cuts[..5], [1, 4, 5, 9, 14]);
    assert_eq!(
        scan_plain_record(data, 22, b',', &mut cuts),
        Some((40, 2, false))
    );
    assert_eq!(cuts[..2], [29, 38]);
    assert_eq!(scan_plain_record(data, 41, b',', &mut cuts), None);
    assert_eq!(scan_plain_record(data, 47, b',', &mut cuts), None);
    assert_eq!(
        scan_plain_record(data, 53, b',', &mut cuts),
        Some((data.len(), 2, false))
    );
    let accents = "é,1\nx,y\n".as_bytes();
    assert_eq!(
        scan_plain_record(accents, 0, b',', &mut cuts),
        Some((4, 1, true))
    );
    let long = "a,b,cdefgh,ijklmnopé\n".as_bytes();
    assert_eq!(
        scan_plain_record(long, 0, b',', &mut cuts),
        Some((long.len() - 1, 3, true))
    );
    let wide = [b','; 100];
    assert_eq!(scan_plain_record(&wide, 0, b',', &mut cuts), None);
}

#[test]
fn splits_fields() {
    let data = b"1,\"a\"\"b\",,x\r\n\"q\"";
    let mut fields = Vec::new();
    let (end, n) = split_record(data, 0, b',', |i, t, e| fields.push((i, t.to_vec(), e)))
        .ok()
        .unwrap();
    assert_eq!((end, n), (13, 4));
    assert_eq!(fields[1], (1, b"a\"\"b".to_vec(), true));
    assert_eq!(fields[2], (2, b"".to_vec(), false));
    assert_eq!(fields[3], (3, b"x".to_vec(), false));
    let mut out = Vec::new();
    unescape_into(b"a\"\"b\"\"", &mut out);
    assert_eq!(out, b"a\"b\"");
}

/// Long files whose columns keep one type, with now and then a value that must change it
/// (or must be handed to the per-field path): the streamed runs of records that fit their
/// types, with AVX2 masks and with byte-wise masks and the portable `pdep`, must give the
/// index of the portable path.
#[test]
fn streamed_runs_equal_the_portable_path() {
    const INTS: &[&str] = &["0", "-7", "42", "123456789012345678", "-99", ""];
    const NUMBERS: &[&str] = &["12", "-8673.29", "1.", ".5", "-.5", "0.25", ""];
    const DECIMALS: &[&str] = &["-8673.29", "1.", ".5", "-0.125", "2909.6900000000005"];
    const TEXT: &[&str] = &[
        "abc",
        "c123-abcd",
        "1.2.3",
        "-",
        "",
        "x y",
        "\u{e9}t\u{e9}",
        // Quoted: delimiters, doubled quotes, line ends inside; empty; a doubled quote alone.
        "\"a,b\"",
        "\"say \"\"hi\"\", then\"",
        "\"two\nlines\"",
        "\"cr\r\nlf\"",
        "\"\"",
        "\"\"\"\"",
        "\"\u{e9},\"",
    ];
    const BOOLS: &[&str] = &["true", "false", "TRUE", ""];
    const POISON: &[&str] = &[
        "x",
        "1x",
        "1.5",
        "-",
        ".",
        "-.",
        "1.2.3",
        "1..2",
        "+5",
        "1e5",
        "--1",
        "5-",
        "1234567890123456789",
        "-123456789012345678",
        "99999999999999999999",
        "true",
        "\"7\"",
        "\"a,b\"",
        "ab\"c",
        "\"ab\"c",
        "\"open,",
        "\u{e9}",
        "",
        "7",
        "-0.5",
        "0x10",
        " 1",
        "1 ",
        "\r",
    ];
    let kinds: [&[&str]; 6] = [INTS, NUMBERS, DECIMALS, TEXT, BOOLS, &[""]];
    let mut rng = crate::testutil::XorShift(0x5eed_0f5a_a7e5);
    let mut next = move |n: usize| rng.below(n);
    let path = Path::new("t.csv");
    for case in 0..crate::testutil::stress_cases(160) {
        // Every fourth file is wide: around 64 columns (the narrow masks' limit) and past it.
        let ncols = if case % 4 == 3 {
            60 + next(150)
        } else {
            1 + next(6)
        };
        let cols: Vec<&[&str]> = (0..ncols).map(|_| kinds[next(kinds.len())]).collect();
        let mut text = (0..ncols)
            .map(|i| format!("c{i}"))
            .collect::<Vec<_>>()
            .join(",");
        text.push('\n');
        let crlf = next(4) == 0;
        let rows = if ncols > 6 {
            20 + next(200)
        } else {
            100 + next(1400)
        };
        for _ in 0..rows {
            let mut fields: Vec<&str> = cols.iter().map(|vals| vals[next(vals.len())]).collect();
            if next(if ncols > 6 { 20 } else { 150 }) == 0 {
                fields[next(ncols)] = POISON[next(POISON.len())];
            }
            // Now and then a field too many or too few, or an empty line.
            match next(2000) {
                0 => fields.push("1"),
                1 => {
                    fields.pop();
                }
                2 => text.push('\n'),
                _ => {}
            }
            text.push_str(&fields.join(","));
            text.push_str(if crlf { "\r\n" } else { "\n" });
        }
        for (stride, stats) in [
            (65_536, StatsColumns::None),
            (7, StatsColumns::None),
            (1, StatsColumns::None),
            (65_536, StatsColumns::All),
            (100, StatsColumns::All),
            (7, StatsColumns::All),
        ] {
            let options = IndexOptions { stride, stats };
            let data = text.as_bytes();
            let show = |r: Result<(Header, FileIndex)>| format!("{:?}", r.map(|r| r.1));
            let portable = portable_index(path, data, &options);
            let portable = show(portable);
            for other in other_paths(path, data, &options) {
                assert_eq!(
                    show(other),
                    portable,
                    "case {case} stride {stride}:\n{text}"
                );
            }
            let fast = show(index_bytes(path, data, &options));
            assert_eq!(fast, portable, "case {case} stride {stride}:\n{text}");
        }
    }
}

/// The index by every window path of this CPU (byte-wise masks with the portable `pdep`, and
/// each vector loop the CPU has, whichever `index_bytes` takes), to compare with the portable
/// path.
fn other_paths(
    path: &Path,
    data: &[u8],
    options: &IndexOptions,
) -> Vec<Result<(Header, FileIndex)>> {
    let kernel = Indexer {
        path,
        data,
        options,
    };
    crate::simd::every_window(kernel)
        .into_iter()
        .map(|(_, index)| index)
        .collect()
}

/// A name the header repeats gets no statistics, in the file's or any block's: they are keyed
/// by name, and either column's bounds would be wrong for the other. The other columns keep
/// theirs.
#[test]
fn a_repeated_header_name_gets_no_statistics() {
    let text = b"a,x,x,,\n1,2,300,4,5\n6,7,800,9,10\n";
    let options = IndexOptions {
        stride: 1,
        stats: StatsColumns::All,
    };
    for index in [
        index_bytes(Path::new("t.csv"), text, &options).map(|r| r.1),
        portable_index(Path::new("t.csv"), text, &options).map(|r| r.1),
    ] {
        let index = index.expect("a valid file");
        let stats = index.stats.expect("column a has statistics");
        assert_eq!(stats.keys().collect::<Vec<_>>(), ["a"]);
        for block in &index.blocks {
            let keys: Vec<_> = block.stats.iter().flat_map(|s| s.keys()).collect();
            assert_eq!(keys, ["a"], "block {}", block.ordinal);
        }
    }
}
