//! Tests of whole-file type inference and its statistics accumulators.

use super::*;

#[test]
fn expected_keys() {
    let mut cols = Columns::default();
    let all = StatsColumns::All;
    for name in ["a", "seven77", "eight888", "q\"", ""] {
        cols.index_of(name.as_bytes(), usize::MAX, &all);
    }
    let data = br#""a":1,"ab":2,"seven77":3,"seven7":4,"eight888":5,"q\"":6,"":7,"a""#;
    let key = |hint: usize, at: usize| cols.expected_key(hint, data, at);
    assert_eq!(key(0, 1), Some(3));
    assert_eq!(key(0, 7), None);
    assert_eq!(key(1, 14), Some(22));
    assert_eq!(key(1, 26), None);
    assert_eq!(key(2, 37), Some(46));
    // A name with a quote or backslash is never matched raw.
    assert_eq!(key(3, 50), None);
    assert_eq!(key(4, 58), Some(59));
    // Near the end of the data the byte-wise comparison serves.
    assert_eq!(key(0, data.len() - 2), Some(data.len()));
    assert_eq!(key(9, 1), None);
}

#[test]
fn text_bounds_by_prefix_keys_equal_plain_min_max() {
    // Short alphabets make equal prefixes, shared prefixes and zero bytes common.
    let mut rng = crate::testutil::XorShift(0x9e37_79b9_7f4a_7c15);
    let mut texts: Vec<Vec<u8>> = Vec::new();
    for _ in 0..5_000 {
        let x = rng.next();
        let len = (x % 12) as usize;
        texts.push(
            (0..len)
                .map(|i| [0u8, b'a', b'b'][((x >> (8 + 2 * i)) % 3) as usize])
                .collect(),
        );
    }
    let mut c = ColumnInfer::new("t".into(), true);
    let mut buf = Vec::new();
    for (k, t) in texts.iter().enumerate() {
        // Alternately through the slice API and the whole-buffer API.
        if k % 2 == 0 {
            c.text(t);
        } else {
            buf.clear();
            buf.extend_from_slice(t);
            buf.extend_from_slice(b"zzzzzzzz");
            let key = prefix_key_at(&buf, 0, t.len());
            assert_eq!(key, prefix_key(t));
            c.text_bounds_keyed(t, key);
        }
    }
    let lo = texts.iter().min().unwrap();
    let hi = texts.iter().max().unwrap();
    let b = c.str_bounds.as_ref().unwrap();
    let (s1, s2) = (b.lo.key.to_be_bytes(), b.hi.key.to_be_bytes());
    assert_eq!((b.lo.bytes(&s1), b.hi.bytes(&s2)), (&lo[..], &hi[..]));
}

#[test]
fn lattice() {
    let mut c = ColumnInfer::new("a".into(), true);
    assert_eq!(c.data_type(), DataType::Utf8);
    c.observe_text_field(b"1");
    c.observe_text_field(b"");
    assert_eq!(c.data_type(), DataType::Int64);
    c.observe_text_field(b"2.5");
    assert_eq!(c.data_type(), DataType::Float64);
    assert_eq!(c.stats(), Some(ColumnStats::Float { min: 1.0, max: 2.5 }));
    c.observe_text_field(b"true");
    assert_eq!(c.data_type(), DataType::Utf8);
    assert_eq!(
        c.stats(),
        Some(ColumnStats::Str {
            min_str: "1".into(),
            max_str: "true".into()
        })
    );
    let mut b = ColumnInfer::new("b".into(), false);
    b.observe_text_field(b"TRUE");
    b.observe_text_field(b"false");
    assert_eq!(b.data_type(), DataType::Boolean);
    assert_eq!(b.stats(), None);
    let mut big = ColumnInfer::new("c".into(), true);
    big.observe_text_field(b"9223372036854775808");
    assert_eq!(big.data_type(), DataType::Float64);
    let mut nan = ColumnInfer::new("d".into(), true);
    nan.observe_text_field(b"NaN");
    assert_eq!(nan.data_type(), DataType::Utf8);
}
