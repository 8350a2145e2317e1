//! Tests of the run checks of [`super`]: runs, booleans read back and the masks, against
//! byte-wise masks and the per-field path.

use super::*;
use crate::simd::BytewiseWindow;

#[test]
fn booleans_read_back_from_their_ends() {
    // The word compare against the slice compare, in every case and position.
    let slow = |data: &[u8], start: usize, end: usize| {
        let word = |w: &[u8]| {
            let Some(at) = end.checked_sub(w.len()).filter(|&at| at >= start) else {
                return false;
            };
            data[at..end].eq_ignore_ascii_case(w)
                && (at == start || matches!(data.get(at - 1), Some(&b',' | &b'\n')))
        };
        word(b"true") || word(b"false")
    };
    for text in [
        "true",
        "TRUE",
        "tRuE",
        "false",
        "FALSE",
        "fAlSe",
        "xtrue",
        "a,true",
        "a\ntrue",
        "a,false",
        "afalse",
        "a,False",
        "trUe,",
        "t",
        "rue",
        "alse",
        "\u{0}alse",
        "5alse",
        "a,fals",
        "a,Dalse",
        "a,tru\u{5}",
        "TRU\u{45}",
        "a;true",
    ] {
        let data = text.as_bytes();
        for start in 0..=data.len() {
            for end in start..=data.len() {
                assert_eq!(
                    bool_before(data, start, end, b','),
                    slow(data, start, end),
                    "{text:?} {start}..{end}"
                );
            }
        }
    }
}

/// The run from the start of `text` for columns of `shapes`, read with byte-wise masks
/// and, where the CPU has them, AVX2 masks (both must agree).
fn run(text: &str, shapes: &[Shape], budget: u64) -> Run {
    let cols: Vec<ColumnInfer> = shapes.iter().map(|&s| ColumnInfer::with_shape(s)).collect();
    let mut masks = ShapeMasks::new(cols.len());
    masks.update(&cols);
    assert!(masks.enabled);
    let data = text.as_bytes();
    let mut cache = MaskCache::new();
    let portable =
        stream_records::<BytewiseWindow>(data, 0, b',', &mut cache, &masks, budget, None);
    #[cfg(target_arch = "x86_64")]
    if crate::simd::avx2_available() {
        let mut cache = MaskCache::new();
        let vector = stream_records::<crate::simd::Avx2Window>(
            data, 0, b',', &mut cache, &masks, budget, None,
        );
        assert_eq!(vector, portable);
    }
    portable
}

/// The rows of a run over `count` copies of `record`, with `other` in place of copy
/// `at`.
fn rows(record: &str, count: usize, at: usize, other: &str, shapes: &[Shape]) -> u64 {
    let text: String = (0..count)
        .map(|i| if i == at { other } else { record })
        .collect();
    run(&text, shapes, u64::MAX).rows
}

#[test]
fn runs_stop_before_the_block_of_a_misfit() {
    use Shape::{Float, FloatInt, Int, Other, Text};
    let cols = [Int, Text, Float];
    // 11-byte records: 34 end inside the six whole blocks of 440 bytes.
    assert_eq!(rows("12,ab,-3.5\n", 40, 99, "", &cols), 34);
    // A misfit in record 20 (bytes 220..231, block 3): the run ends at record 17.
    for misfit in [
        "1x,ab,-3.5\n",
        "1.,ab,-3.5\n",
        "-,ab,-3.5\n",
        "12,ab,3\n",
        "12,ab,3.5.\n",
        "12,ab,.\n",
        "12,ab,-.\n",
        "12,ab,1e5\n",
        "12,ab,\"5\"\n",
        "12,ab\n",
        "12,ab,-3.5,\n",
        "\n",
        "\r\n",
        "1234567890123456789,ab,-3.5\n",
    ] {
        assert_eq!(
            rows("12,ab,-3.5\n", 40, 20, misfit, &cols),
            17,
            "{misfit:?}"
        );
    }
    for fit in ["-0,,.5\n", ",x-1,\n", "123456789012345678,x,1.\r\n"] {
        assert!(rows("12,ab,-3.5\n", 40, 20, fit, &cols) >= 33, "{fit:?}");
    }
    // Integers fit Float64 columns that have seen integers.
    assert!(rows("12,ab,-3.5\n", 40, 20, "1,a,7\n", &[Int, Text, FloatInt]) >= 33);
    // Only empty fields fit a column without a value.
    assert_eq!(rows(",,\n", 150, 20, "1,,\n", &[Int, Other, Other]), 149);
    assert_eq!(rows(",,\n", 150, 70, ",1,\n", &[Int, Other, Other]), 64);
}

/// The rows of a run whose second record, `tail`, starts at byte `at` (near the end of
/// the first block), for columns of `shapes` (the first record fits them).
fn straddle(at: usize, tail: &str, shapes: &[Shape]) -> u64 {
    let first = match shapes[0] {
        Shape::Text => format!("{},1\n", "a".repeat(at - 3)),
        _ => format!("1.{},1\n", "0".repeat(at - 5)),
    };
    let text = format!("{first}{tail}{}", "0.5,1\n".repeat(30));
    run(&text, shapes, u64::MAX).rows
}

#[test]
fn fields_carry_across_blocks() {
    use Shape::{Float, Int, Text};
    let cols = [Float, Int];
    for (at, tail) in [
        (62, "1.2,3\n"),
        (62, "-.5,4\n"),
        (58, "2.5,4\r\n"),
        (63, ",-5\n"),
        (61, "5.,-5\n"),
    ] {
        assert!(straddle(at, tail, &cols) > 2, "{at} {tail:?}");
    }
    for (at, tail) in [
        (62, "1..5,3\n"),
        (61, "1.2.3,3\n"),
        (62, "1x2,4\n"),
        (63, "-,4\n"),
        (62, "-.,4\n"),
        (63, ".,4\n"),
        (59, "2.5,4\r\r\n"),
    ] {
        assert_eq!(straddle(at, tail, &cols), 1, "{at} {tail:?}");
    }
    // Integers of 18 and 19 digits starting before the block end.
    let cols = [Text, Int];
    let digits = |n| "1".repeat(n);
    assert!(straddle(53, &format!("x,{}\n", digits(18)), &cols) > 2);
    assert_eq!(straddle(53, &format!("x,{}\n", digits(19)), &cols), 1);
    // A letter just before the block end in an integer that goes on after it.
    assert_eq!(straddle(60, "x,1y2\n", &cols), 1);
    assert!(straddle(60, "x,-12\n", &cols) > 2);
    // A 70-byte integer spans a whole block.
    let long = format!("x,{}\n", "1".repeat(70));
    assert_eq!(run(&long.repeat(4), &cols, u64::MAX).rows, 0);
    assert_eq!(run(&long.repeat(4), &[Text, Text], u64::MAX).rows, 3);
}

#[test]
fn booleans_fit_their_columns_in_any_case() {
    use Shape::{Bool, Int, Text};
    let cols = [Int, Bool, Text];
    // 10-byte records: 37 end inside the six whole blocks of 440 bytes.
    assert!(rows("12,true,a\n", 44, 99, "", &cols) >= 37);
    for fit in [
        "1,FALSE,x\n",
        "1,True,x\n",
        "1,,x\n",
        "1,false,\r\n",
        "1,fAlSe,true\n",
    ] {
        assert!(rows("12,true,a\n", 44, 20, fit, &cols) >= 36, "{fit:?}");
    }
    // A misfit in record 20 (bytes 200..210, block 3): the run ends at record 19.
    for misfit in [
        "1,yes,x\n",
        "1,tru,x\n",
        "1,xtrue,x\n",
        "1,truex,x\n",
        "1,\"true\",x\n",
        "1,1,x\n",
        "1,t rue,x\n",
        "1,falsefalse\n",
    ] {
        assert_eq!(rows("12,true,a\n", 44, 20, misfit, &cols), 19, "{misfit:?}");
    }
    // A boolean in the first column, after a line feed or a CRLF, and at the run start.
    let cols = [Bool, Int];
    assert!(rows("TRUE,1\r\n", 60, 99, "", &cols) >= 50);
    // 8-byte records: record 20 is in block 2, which starts with record 16.
    assert_eq!(rows("false,1\n", 60, 20, "fals,1\n", &cols), 16);
}

#[test]
fn quoted_fields_of_text_columns_stay_in_the_run() {
    use Shape::{Int, Text};
    let cols = [Int, Text, Int];
    // Quoted text with delimiters, doubled quotes, line feeds and CRLF inside, and quotes
    // at every offset of a block: every record of the run is taken.
    let quoted = [
        "\"a,b\"",
        "\"say \"\"hi\"\", then go\"",
        "\"two\nlines\"",
        "\"crlf\r\ninside\"",
        "\"\"",
        "\"\"\"\"",
        "plain",
        "",
    ];
    for shift in 0..64 {
        let mut text = format!("1,{},2\n", "x".repeat(shift));
        let mut n = 1;
        for k in 0..40 {
            text.push_str(&format!("{k},{},-{k}\n", quoted[k % quoted.len()]));
            n += 1;
        }
        text.push_str(&"9,z,9\n".repeat(30));
        n += 30;
        let r = run(&text, &cols, u64::MAX);
        // The run stops before the last 64 bytes; every record before them is taken.
        let before_tail = text[..text.len() - 64].matches("\n9,z,9").count();
        assert!(
            r.rows as usize >= n - 30 + before_tail - 1,
            "shift {shift}: {}",
            r.rows
        );
        assert_eq!(&text[r.end - 1..r.end], "\n");
        // The run ends at a record end outside quotes.
        assert_eq!(text[..r.end].matches('"').count() % 2, 0, "shift {shift}");
    }
}

#[test]
fn quotes_the_general_path_reads_otherwise_end_the_run() {
    use Shape::{Int, Text};
    let cols = [Int, Text, Int];
    for misfit in [
        "1,ab\"c,2\n",
        "1,\"ab\"c,2\n",
        "1,\"ab\" ,2\n",
        "1,\"ab\"\r,2\n",
        "\"1\",ab,2\n",
        "1,ab,\"2\"\n",
        "1, \"ab\",2\n",
    ] {
        assert_eq!(rows("12,ab,34\n", 40, 20, misfit, &cols), 14, "{misfit:?}");
    }
    // An unterminated quote: no record after it ends, the run stops before it.
    let text = format!(
        "{}1,\"open,2\n{}",
        "12,ab,34\n".repeat(20),
        "12,ab,34\n".repeat(20)
    );
    assert_eq!(run(&text, &cols, u64::MAX).rows, 20);
}

#[test]
fn runs_end_at_the_budget() {
    use Shape::{Int, Text};
    let text = "12,ab\n".repeat(40);
    let r = run(&text, &[Int, Text], 5);
    assert_eq!((r.rows, r.end, r.high), (5, 30, false));
    let r = run(&text.replace("ab", "\u{e9}b"), &[Int, Text], 3);
    assert_eq!((r.rows, r.high), (3, true));
}
