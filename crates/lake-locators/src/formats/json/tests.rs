//! Tests of the JSON locator: the window, template, streaming and run paths against the
//! portable path, layouts and errors.

use super::*;
use crate::simd::NoWindow;

/// Byte soup: the window path and the portable path agree (and neither panics).
#[test]
fn window_path_equals_the_portable_path_on_byte_soup() {
    let alphabet = b"{}\"a:,1-.0\n\\e9tr[] \xc3\xa9nul";
    for case in 0..crate::testutil::stress_cases(300) {
        let mut text = b"{\"a\":1,\"b\":\"x\"}\n".to_vec();
        text.extend(crate::testutil::byte_soup(
            case as u64 * 7919,
            40 + case % 400,
            alphabet,
        ));
        let path = Path::new("t.ndjson");
        for stats in [StatsColumns::None, StatsColumns::All] {
            let options = IndexOptions { stride: 3, stats };
            let fast = index_bytes(path, &text, &options);
            let portable = index_lazy::<NoWindow>(path, &text, &options, false);
            assert_eq!(format!("{fast:?}"), format!("{portable:?}"), "case {case}");
        }
    }
}

/// A column that turns Utf8 in the line that starts a block, after a number in the same
/// line: the rescan must include that line.
#[test]
fn text_bounds_of_a_number_in_the_turning_line() {
    let mut text = String::from("{\"a\":5}\n{\"a\":1,\"a\":\"x\"}\n");
    for _ in 0..10 {
        text.push_str("{\"b\":1}\n");
    }
    let options = IndexOptions {
        stride: 1,
        stats: StatsColumns::All,
    };
    let index = index_bytes(Path::new("t.ndjson"), text.as_bytes(), &options).unwrap();
    let stats = index.stats.unwrap();
    assert_eq!(
        stats["a"],
        crate::locator::ColumnStats::Str {
            min_str: "1".into(),
            max_str: "x".into()
        }
    );
}

/// A column of booleans that turns Utf8 several blocks on: the booleans' text bounds, left
/// out while it was boolean, are read again.
#[test]
fn text_bounds_of_booleans_before_the_turn() {
    let mut text = String::new();
    for i in 0..40 {
        text.push_str(if i % 3 == 0 {
            "{\"a\":false}\n"
        } else {
            "{\"a\":true}\n"
        });
    }
    text.push_str("{\"a\":\"m\"}\n");
    for stride in [1, 7, 1000] {
        let options = IndexOptions {
            stride,
            stats: StatsColumns::All,
        };
        let stats = match index_bytes(Path::new("t.ndjson"), text.as_bytes(), &options) {
            Ok(index) => index.stats,
            Err(e) => panic!("stride {stride}: {e}"),
        };
        assert_eq!(
            stats.as_ref().and_then(|s| s.get("a")).cloned(),
            Some(crate::locator::ColumnStats::Str {
                min_str: "false".into(),
                max_str: "true".into()
            }),
            "stride {stride}"
        );
    }
}

/// A line break inside a string splits the row (JSON strings hold no raw line breaks):
/// every path reports the broken line, even with the window and template fast paths.
#[test]
fn line_break_inside_a_string_is_an_error() {
    let long = format!("{{\"a\":\"{}\"}}\n", "z".repeat(70));
    for at in [0, 1, 5] {
        let mut text = long.repeat(at);
        text.push_str("{\"a\":\"x\ny\"}\n");
        text.push_str(&long.repeat(3));
        let path = Path::new("t.ndjson");
        for stats in [StatsColumns::None, StatsColumns::All] {
            let options = IndexOptions { stride: 4, stats };
            let fast = index_bytes(path, text.as_bytes(), &options);
            assert!(fast.is_err(), "{fast:?}");
            let portable = index_lazy::<NoWindow>(path, text.as_bytes(), &options, false);
            assert_eq!(format!("{fast:?}"), format!("{portable:?}"));
        }
    }
}

/// Files whose lines mostly repeat one layout (the streaming reader's case), with values
/// of every shape and now and then a line of another layout: the index equals the
/// portable path's, or the error does.
#[test]
fn streamed_lines_equal_the_portable_path() {
    const NAMES: &[&str] = &["id", "code", "v", "x", "a,b", "thirteen_char", "\u{e9}"];
    const VALUES: &[&str] = &[
        "0",
        "-7",
        "123456789012345678",
        "1234567890123456789",
        "-8673.29",
        "1e5",
        "01",
        "\"abc\"",
        "\"a,b:}{[\"",
        "\"x\\\"y\"",
        "\"a\\\\\"",
        "\"\"",
        "\"\u{e9}t\u{e9}\"",
        "true",
        "null",
        "{\"n\":1}",
        "[1,2]",
        "\"0123456789012345678901234567890123456789012345678901234567890123\"",
        // Made invalid UTF-8 below.
        "\"BAD\"",
    ];
    let mut rng = crate::testutil::XorShift(0x5eed_0f57_12ea_0001);
    let mut next = move |n: usize| rng.below(n);
    for case in 0..crate::testutil::stress_cases(120) {
        let members = 1 + next(5);
        let names: Vec<&str> = (0..members).map(|_| NAMES[next(NAMES.len())]).collect();
        // Per file, how often a value is odd and how often a line breaks the layout.
        let odd = 2 + next(40);
        let other = 2 + next(200);
        let mut text = String::new();
        for _ in 0..50 + next(250) {
            let mut line = String::from("{");
            let layout_break = next(other) == 0;
            for (m, name) in names.iter().enumerate() {
                if m > 0 {
                    line.push(',');
                }
                let name = if layout_break {
                    NAMES[next(NAMES.len())]
                } else {
                    name
                };
                let value = if next(odd) == 0 {
                    VALUES[next(VALUES.len())]
                } else {
                    VALUES[next(5)]
                };
                line.push_str(&format!("\"{name}\":{value}"));
            }
            line.push('}');
            if next(other) == 0 {
                line.push(' ');
            }
            text.push_str(&line);
            text.push_str(["\n", "\n", "\n", "\r\n", "\n\n"][next(5)]);
        }
        let text = text.replace("BAD", "\u{e9}BAD").into_bytes();
        let text: Vec<u8> = text
            .windows(2)
            .map(|w| if w == [0xa9, b'B'] { 0xff } else { w[0] })
            .chain(text.last().copied())
            .collect();
        let path = Path::new("t.ndjson");
        for (stride, stats) in [
            (7, StatsColumns::None),
            (64, StatsColumns::All),
            (1, StatsColumns::All),
        ] {
            let options = IndexOptions { stride, stats };
            let fast = index_bytes(path, &text, &options);
            let portable = index_lazy::<NoWindow>(path, &text, &options, false);
            assert_eq!(
                format!("{fast:?}"),
                format!("{portable:?}"),
                "case {case}:\n{}",
                String::from_utf8_lossy(&text)
            );
        }
    }
}

/// An escaped string in a run of lines of one layout (read by the streaming reader and
/// the template): its statistics are of the unescaped text, as on the portable path.
#[test]
fn escaped_strings_in_streamed_runs() {
    for at in [0, 1, 10, 19] {
        let mut text = String::new();
        for i in 0..20 {
            let v = if i == at { "a\\\\" } else { "q" };
            text.push_str(&format!("{{\"a\":\"{v}\",\"b\":{i}}}\n"));
        }
        for stride in [1, 5, 100] {
            let options = IndexOptions {
                stride,
                stats: StatsColumns::All,
            };
            let path = Path::new("t.ndjson");
            let fast = index_bytes(path, text.as_bytes(), &options).unwrap();
            assert_eq!(
                fast.stats.unwrap()["a"],
                crate::locator::ColumnStats::Str {
                    min_str: "a\\".into(),
                    max_str: "q".into()
                },
                "line {at}, stride {stride}"
            );
        }
    }
}

/// A member ending right at the end of a window that is also the end of the data.
#[test]
fn member_at_the_window_edge_is_an_error_not_a_panic() {
    let mut line = format!("{{\"a\":\"{}\",", "x".repeat(56));
    assert_eq!(line.len(), 64);
    let options = IndexOptions::default();
    let path = Path::new("t.ndjson");
    assert!(index_bytes(path, line.as_bytes(), &options).is_err());
    line.push_str("\"b\":1}\n");
    let index = index_bytes(path, line.as_bytes(), &options).unwrap();
    assert_eq!(index.row_count, 1);
}

/// Random JSON-lines files mixing compact flat objects (the window path) with every
/// shape it must hand over: both paths must give the same index, or the same error.
#[test]
fn window_path_equals_the_portable_path() {
    const KEYS: &[&str] = &[
        "id",
        "code",
        "v",
        "x",
        "a b",
        "k\\\"q",
        "\u{e9}",
        "seven77",
        "a\\\":1,\\\"b",
    ];
    const VALUES: &[&str] = &[
        "0",
        "-7",
        "123456789012345678",
        "1234567890123456789",
        "9999999999999999999",
        "-8673.29",
        "1.",
        "-.5",
        "2909.6900000000005",
        "1e5",
        "-0.0",
        "01",
        "-",
        "1.2.3",
        "\"abc\"",
        "\"a,b:}{[\"",
        "\"x\\\"y\"",
        "\"\"",
        "\"\u{e9}t\u{e9}\"",
        "true",
        "false",
        "null",
        "tru",
        "{\"n\":1}",
        "[1,2]",
        "\"0123456789012345678901234567890123456789\"",
    ];
    let mut rng = crate::testutil::XorShift(0x0123_4567_89ab_cdef);
    let mut next = move |n: usize| rng.below(n);
    for case in 0..crate::testutil::stress_cases(300) {
        let mut text = String::new();
        for _ in 0..next(60) {
            let members = next(9);
            let spaced = next(6) == 0;
            let mut line = String::from("{");
            for (m, &usual) in KEYS.iter().enumerate().take(members) {
                if m > 0 {
                    line.push_str(if spaced { ", " } else { "," });
                }
                // Mostly one key order and number-only values, as in real files.
                let key = if next(8) == 0 {
                    KEYS[next(KEYS.len())]
                } else {
                    usual
                };
                let value = if case % 2 == 0 && next(4) != 0 {
                    VALUES[next(3)]
                } else {
                    VALUES[next(VALUES.len())]
                };
                line.push_str(&format!(
                    "\"{key}\":{}{value}",
                    if spaced { " " } else { "" }
                ));
            }
            line.push('}');
            match next(60) {
                0 => line.pop().map(drop).unwrap_or(()),
                1 => line.push_str(" x"),
                2 => line = format!("  {line}"),
                _ => {}
            }
            text.push_str(&line);
            text.push_str(["\n", "\r\n", "\n\n", "\n \n"][next(4)]);
        }
        if next(2) == 0 {
            text.pop();
        }
        let path = Path::new("t.ndjson");
        // Stride 1 starts a block at every line: the rescan ends of lazily left-out text
        // bounds are noted at block starts.
        for (stride, stats) in [
            (5, StatsColumns::None),
            (5, StatsColumns::All),
            (1, StatsColumns::All),
        ] {
            let options = IndexOptions { stride, stats };
            let fast = index_bytes(path, text.as_bytes(), &options);
            // The reference: the portable path, every text bound taken as it comes.
            let portable = index_lazy::<NoWindow>(path, text.as_bytes(), &options, false);
            assert_eq!(
                format!("{fast:?}"),
                format!("{portable:?}"),
                "case {case}:\n{text}"
            );
        }
    }
}

/// Long files of one compact layout whose members keep one type, with now and then a value
/// or a line that must change a type or be handed to the per-line tiers: the runs of lines,
/// with AVX2 masks and with byte-wise masks and the portable `pdep`, must give the index of
/// the portable path (or its error).
#[test]
fn runs_of_lines_equal_the_portable_path() {
    const NAMES: &[&str] = &[
        "id",
        "code",
        "v",
        "x",
        "a:b",
        "thirteen_char",
        "\u{e9}",
        "q",
    ];
    const INTS: &[&str] = &["0", "-7", "42", "123456789012345678", "-99"];
    const NUMBERS: &[&str] = &["12", "-8673.29", "1.", "0.25", "-0.5", "3", "null", "-0.0"];
    const DECIMALS: &[&str] = &["-8673.29", "1.", "-0.125", "2909.6900000000005"];
    const STRINGS: &[&str] = &[
        "null",
        "\"abc\"",
        "\"c123-abcd\"",
        "\"\"",
        "\"a,b:}{[\"",
        "\"\u{e9}\"",
    ];
    // Valid values that change a type or that runs hand over.
    const POISON: &[&str] = &[
        "\"7\"",
        "7",
        "7.5",
        "null",
        "true",
        "false",
        "{\"n\":1}",
        "[1,2]",
        "1e5",
        "-0",
        "1234567890123456789",
        "99999999999999999999",
        "\"x\\\"y\"",
        "\"a\\\\\"",
        " 1",
        "1 ",
        "0.5E-3",
        "\"a:b,}\"",
    ];
    // Invalid values: the whole index is an error (used in a few files only).
    const INVALID: &[&str] = &[
        "-", "-.", "+5", "\"a\nb\"", "\"a\"b\"", "\"a\"x", "1\"", "\"1", "1.2.3", "--1", "0x10",
        "\"\"\"", "1:2", "\"a\":1",
    ];
    let kinds: [&[&str]; 4] = [INTS, NUMBERS, DECIMALS, STRINGS];
    let mut rng = crate::testutil::XorShift(0x5eed_0f5a_0000_0777);
    let mut next = move |n: usize| rng.below(n);
    let path = Path::new("t.ndjson");
    for case in 0..crate::testutil::stress_cases(130) {
        // Every fourth file is wide: around 64 members (the narrow masks' limit) and past it.
        let wide = case % 4 == 3;
        let members = if wide { 60 + next(100) } else { 1 + next(5) };
        let mut names: Vec<String> = Vec::new();
        while names.len() < members {
            let name = if wide {
                format!("m{}", names.len())
            } else {
                NAMES[next(NAMES.len())].to_string()
            };
            if !names.contains(&name) {
                names.push(name);
            }
        }
        let cols: Vec<&[&str]> = (0..members).map(|_| kinds[next(kinds.len())]).collect();
        let invalid = next(8) == 0;
        let poison = if wide { 20 * members } else { 200 };
        let mut text = String::new();
        for _ in 0..if wide {
            20 + next(150)
        } else {
            100 + next(1200)
        } {
            let mut line = String::from("{");
            for (m, name) in names.iter().enumerate() {
                if m > 0 {
                    line.push(',');
                }
                let value = if invalid && next(400) == 0 {
                    INVALID[next(INVALID.len())]
                } else if next(poison) == 0 {
                    POISON[next(POISON.len())]
                } else {
                    cols[m][next(cols[m].len())]
                };
                line.push_str(&format!("\"{name}\":{value}"));
            }
            line.push('}');
            match next(1500) {
                0 => line.push(' '),
                1 => line.push('\r'),
                2 => line.push('\n'),
                3 => line = format!("{{\"other\":1,{}", &line[1..]),
                _ => {}
            }
            text.push_str(&line);
            text.push('\n');
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
            let portable = format!("{:?}", index_lazy::<NoWindow>(path, data, &options, false));
            for other in other_paths(path, data, &options) {
                assert_eq!(
                    format!("{other:?}"),
                    portable,
                    "case {case} stride {stride}:\n{text}"
                );
            }
            let fast = index_bytes(path, data, &options);
            assert_eq!(
                format!("{fast:?}"),
                portable,
                "case {case} stride {stride}:\n{text}"
            );
        }
    }
}

/// One odd line among lines of one layout, its bytes moved across every block boundary by
/// the length of a string before it: runs must hand it over or stop before it, so that the
/// index (or the error) is the portable path's.
#[test]
fn odd_lines_in_runs_equal_the_portable_path() {
    const ODD: &[&str] = &[
        r#"{"a":"s"x,"b":1}"#,
        r#"{"a":"s"x"t","b":1}"#,
        r#"{"a":"s""t","b":1}"#,
        r#"{"a":"x\","b":1}"#,
        r#"{"a":"x\\","b":1}"#,
        r#"{"a":"s","b":99999999999999999999}"#,
        r#"{"a":"s","b":-9999999999999999999}"#,
        r#"{"a":"s","b":1.5}"#,
        r#"{"a":"s","b":"1"}"#,
        r#"{"a":1,"b":1}"#,
        r#"{"a":"s":1,"b":1}"#,
        r#"{"a":"s","b":1:2}"#,
        r#"{"a":"s","b":1,"c":2}"#,
        r#"{"a":"s"}"#,
        r#"{"a":"s","b":1} "#,
        r#"{"b":1,"a":"s"}"#,
        r#"{"a":"s","b":1}}"#,
        r#"{"a":"s","b":[1]}"#,
        r#"{"a":"s","b":null}"#,
        r#"{"a":null,"b":null}"#,
        r#"{"a":"s","b":nul}"#,
        r#"{"a":"s","b":nullx}"#,
        r#"{"a":"s","b":null1}"#,
        r#"{"a":"s","b":nulll}"#,
        "{\"a\":\"s\nt\",\"b\":1}",
        r#"{"a":"s,"b":1}"#,
        r#"{"a":"s","b":-}"#,
        r#"{"a":"s","b":1}{"a":"s","b":1}"#,
    ];
    let path = Path::new("t.ndjson");
    for (odd, stats) in ODD
        .iter()
        .flat_map(|odd| [(odd, StatsColumns::None), (odd, StatsColumns::All)])
    {
        let options = IndexOptions {
            stride: 65_536,
            stats,
        };
        for pad in 0..70 {
            let mut text = String::new();
            for i in 0..40 {
                if i == 20 {
                    text.push_str(&format!("{{\"a\":\"{}\",\"b\":7}}\n", "p".repeat(pad)));
                    text.push_str(odd);
                    text.push('\n');
                } else {
                    text.push_str(&format!("{{\"a\":\"q{i}\",\"b\":{}}}\n", i * 37));
                }
            }
            let data = text.as_bytes();
            let portable = format!("{:?}", index_lazy::<NoWindow>(path, data, &options, false));
            for other in other_paths(path, data, &options) {
                assert_eq!(format!("{other:?}"), portable, "{odd} after {pad}");
            }
            let fast = index_bytes(path, data, &options);
            assert_eq!(format!("{fast:?}"), portable, "{odd} after {pad}");
        }
    }
}

/// The index by every window path of this CPU (byte-wise masks with the portable `pdep`, and
/// each vector loop the CPU has, whichever `index_bytes` takes), to compare with the portable
/// path.
fn other_paths(path: &Path, data: &[u8], options: &IndexOptions) -> Vec<Result<FileIndex>> {
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

/// NDJSON lines decoded in two halves on two threads (a batch of thousands of lines), or in
/// batches too small to share: the same rows.
#[test]
fn halves_decoded_at_once_equal_one_decoding() {
    use std::io::Write;
    let mut f = tempfile::Builder::new()
        .suffix(".ndjson")
        .tempfile()
        .unwrap();
    for i in 0..20_000u32 {
        if i % 2 == 0 {
            writeln!(
                f,
                r#"{{"id":{i},"tags":["a","b{i}"],"user":{{"n":"x\"{i}"}}}}"#
            )
            .unwrap();
        } else {
            writeln!(
                f,
                r#"{{"user":{{"n":"y"}},"id":{i},"score":{}.25}}"#,
                i % 13
            )
            .unwrap();
        }
    }
    f.flush().unwrap();
    crate::testutil::assert_halves_equal_small_batches(&JsonLocator, f.path());
}
