//! Encoder → decoder round trips of every writable encoding (proptest, with the extremes
//! each encoding can carry), the RLE and TS_2DIFF boundary sizes, and hostile payloads:
//! truncations, bit flips and random bytes must give values or typed errors, never a
//! panic, and never more values than asked for.

use proptest::prelude::*;
use tsfile_format::encoding::{self, ValueDecoder, ValueEncoder};
use tsfile_format::types::{TSDataType, TSEncoding};

fn enc_i32(e: TSEncoding, v: &[i32]) -> Vec<u8> {
    let mut out = Vec::new();
    match encoding::encoder(e, TSDataType::Int32).unwrap() {
        ValueEncoder::Int32(mut x) => {
            x.put_slice(v);
            x.flush(&mut out);
        }
        _ => unreachable!(),
    }
    out
}

fn dec_i32(e: TSEncoding, b: &[u8], n: usize) -> Vec<i32> {
    let mut out = Vec::new();
    match encoding::decoder(e, TSDataType::Int32, b, 0).unwrap() {
        ValueDecoder::Int32(mut d) => d.decode_all(&mut out, n + 1).unwrap(),
        _ => unreachable!(),
    };
    out
}

fn enc_i64(e: TSEncoding, v: &[i64]) -> Vec<u8> {
    let mut out = Vec::new();
    match encoding::encoder(e, TSDataType::Int64).unwrap() {
        ValueEncoder::Int64(mut x) => {
            x.put_slice(v);
            x.flush(&mut out);
        }
        _ => unreachable!(),
    }
    out
}

fn dec_i64(e: TSEncoding, b: &[u8], n: usize) -> Vec<i64> {
    let mut out = Vec::new();
    match encoding::decoder(e, TSDataType::Int64, b, 0).unwrap() {
        ValueDecoder::Int64(mut d) => d.decode_all(&mut out, n + 1).unwrap(),
        _ => unreachable!(),
    };
    out
}

fn enc_f64(e: TSEncoding, v: &[f64]) -> Vec<u8> {
    let mut out = Vec::new();
    match encoding::encoder(e, TSDataType::Double).unwrap() {
        ValueEncoder::Double(mut x) => {
            x.put_slice(v);
            x.flush(&mut out);
        }
        _ => unreachable!(),
    }
    out
}

fn dec_f64(e: TSEncoding, b: &[u8], n: usize) -> Vec<f64> {
    let mut out = Vec::new();
    match encoding::decoder(e, TSDataType::Double, b, 0).unwrap() {
        ValueDecoder::Double(mut d) => d.decode_all(&mut out, n + 1).unwrap(),
        _ => unreachable!(),
    };
    out
}

fn enc_f32(e: TSEncoding, v: &[f32]) -> Vec<u8> {
    let mut out = Vec::new();
    match encoding::encoder(e, TSDataType::Float).unwrap() {
        ValueEncoder::Float(mut x) => {
            x.put_slice(v);
            x.flush(&mut out);
        }
        _ => unreachable!(),
    }
    out
}

fn dec_f32(e: TSEncoding, b: &[u8], n: usize) -> Vec<f32> {
    let mut out = Vec::new();
    match encoding::decoder(e, TSDataType::Float, b, 0).unwrap() {
        ValueDecoder::Float(mut d) => d.decode_all(&mut out, n + 1).unwrap(),
        _ => unreachable!(),
    };
    out
}

fn bits64(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

fn bits32(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

fn i32s() -> impl Strategy<Value = i32> {
    prop_oneof![
        any::<i32>(),
        Just(i32::MIN),
        Just(i32::MAX),
        Just(0),
        Just(-1),
        -3..3i32
    ]
}

fn i64s() -> impl Strategy<Value = i64> {
    prop_oneof![
        any::<i64>(),
        Just(i64::MIN),
        Just(i64::MAX),
        Just(0),
        Just(-1),
        -3..3i64
    ]
}

fn f64s() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<f64>(),
        Just(f64::MIN),
        Just(f64::MAX),
        Just(-0.0),
        Just(f64::MIN_POSITIVE),
        Just(f64::from_bits(1)),
        Just(f64::NAN),
        Just(f64::INFINITY),
        (-1000i32..1000).prop_map(|i| f64::from(i) / 4.0),
    ]
}

fn f32s() -> impl Strategy<Value = f32> {
    prop_oneof![
        any::<f32>(),
        Just(f32::MIN),
        Just(f32::MAX),
        Just(-0.0f32),
        Just(f32::MIN_POSITIVE),
        Just(f32::from_bits(1)),
        Just(f32::NAN),
        (-1000i32..1000).prop_map(|i| i as f32 / 4.0),
    ]
}

/// Lengths around the block and group boundaries, besides random ones.
fn len() -> impl Strategy<Value = usize> {
    prop_oneof![
        0..300usize,
        Just(1),
        Just(128),
        Just(129),
        Just(130),
        Just(504),
        Just(512)
    ]
}

const LOSSLESS_INT: [TSEncoding; 6] = [
    TSEncoding::Plain,
    TSEncoding::Ts2Diff,
    TSEncoding::Rle,
    TSEncoding::Zigzag,
    TSEncoding::Rlbe,
    TSEncoding::Gorilla,
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]

    #[test]
    fn int32_round_trips(n in len(), seed in proptest::collection::vec(i32s(), 520)) {
        let v = &seed[..n];
        for e in LOSSLESS_INT.iter().copied().chain([TSEncoding::Chimp]) {
            // GORILLA and CHIMP stop at their terminator INT32_MIN (a format limitation).
            let v: Vec<i32> = if matches!(e, TSEncoding::Gorilla | TSEncoding::Chimp) {
                v.iter().map(|&x| if x == i32::MIN { 0 } else { x }).collect()
            } else {
                v.to_vec()
            };
            prop_assert_eq!(dec_i32(e, &enc_i32(e, &v), v.len()), v, "{:?}", e);
        }
    }

    #[test]
    fn int64_round_trips(n in len(), seed in proptest::collection::vec(i64s(), 520)) {
        let v = &seed[..n];
        for e in LOSSLESS_INT.iter().copied().chain([TSEncoding::Chimp]) {
            let v: Vec<i64> = if matches!(e, TSEncoding::Gorilla | TSEncoding::Chimp) {
                v.iter().map(|&x| if x == i64::MIN { 0 } else { x }).collect()
            } else {
                v.to_vec()
            };
            prop_assert_eq!(dec_i64(e, &enc_i64(e, &v), v.len()), v, "{:?}", e);
        }
    }

    #[test]
    fn double_round_trips(n in len(), seed in proptest::collection::vec(f64s(), 520)) {
        let v = &seed[..n];
        for e in [TSEncoding::Plain, TSEncoding::Gorilla, TSEncoding::Chimp, TSEncoding::Rlbe] {
            // The canonical NaN is the GORILLA/CHIMP terminator; other NaN payloads pass.
            let v: Vec<f64> = if matches!(e, TSEncoding::Gorilla | TSEncoding::Chimp) {
                v.iter().map(|&x| if x.to_bits() == 0x7ff8_0000_0000_0000 { f64::from_bits(0x7ff8_0000_0000_0001) } else { x }).collect()
            } else {
                v.to_vec()
            };
            prop_assert_eq!(bits64(&dec_f64(e, &enc_f64(e, &v), v.len())), bits64(&v), "{:?}", e);
        }
    }

    #[test]
    fn float_round_trips(n in len(), seed in proptest::collection::vec(f32s(), 520)) {
        let v = &seed[..n];
        for e in [TSEncoding::Plain, TSEncoding::Gorilla, TSEncoding::Chimp, TSEncoding::Rlbe] {
            let v: Vec<f32> = if matches!(e, TSEncoding::Gorilla | TSEncoding::Chimp) {
                v.iter().map(|&x| if x.to_bits() == 0x7fc0_0000 { f32::from_bits(0x7fc0_0001) } else { x }).collect()
            } else {
                v.to_vec()
            };
            prop_assert_eq!(bits32(&dec_f32(e, &enc_f32(e, &v), v.len())), bits32(&v), "{:?}", e);
        }
    }

    #[test]
    fn lossy_float_wrapper_stays_within_its_precision(n in len(), seed in proptest::collection::vec(f64s(), 520)) {
        let v = &seed[..n];
        for e in [TSEncoding::Ts2Diff, TSEncoding::Rle] {
            let back = dec_f64(e, &enc_f64(e, v), v.len());
            prop_assert_eq!(back.len(), v.len());
            for (a, b) in v.iter().zip(&back) {
                if a.is_finite() && a.abs() < 9e18 {
                    // Scaled values lose at most half a hundredth, rounded ones half a unit.
                    let tol = if (a * 100.0).abs() < 9e18 { 0.005 } else { 0.5 };
                    prop_assert!((a - b).abs() <= tol + a.abs() * 1e-15, "{} → {}", a, b);
                } else {
                    prop_assert_eq!(a.to_bits(), b.to_bits());
                }
            }
            let f: Vec<f32> = v.iter().map(|&x| x as f32).collect();
            let back = dec_f32(e, &enc_f32(e, &f), f.len());
            for (a, b) in f.iter().zip(&back) {
                if a.is_finite() && (f64::from(*a)).abs() < 2e9 {
                    let tol = if (f64::from(*a) * 100.0).abs() < 2e9 { 0.005 } else { 0.5 };
                    prop_assert!((f64::from(*a) - f64::from(*b)).abs() <= tol + f64::from(a.abs()) * 1e-6, "{} → {}", a, b);
                } else {
                    prop_assert_eq!(a.to_bits(), b.to_bits());
                }
            }
        }
    }

    #[test]
    fn sprintz_round_trips_walks(n in len(), start in any::<i32>(), steps in proptest::collection::vec(-1000i32..1000, 520)) {
        // SPRINTZ maps errors e ↦ 2e − 1 / −2e in the value's width, so it carries
        // prediction errors within ±2^30 (±2^62): walks like the corpus's.
        let mut x = start / 4;
        let v: Vec<i32> = steps[..n].iter().map(|s| { x = x.wrapping_add(*s); x }).collect();
        prop_assert_eq!(dec_i32(TSEncoding::Sprintz, &enc_i32(TSEncoding::Sprintz, &v), n), v.clone());
        let w: Vec<i64> = v.iter().map(|&x| i64::from(x) * 1_000_003).collect();
        prop_assert_eq!(dec_i64(TSEncoding::Sprintz, &enc_i64(TSEncoding::Sprintz, &w), n), w);
        let f: Vec<f64> = v.iter().enumerate().map(|(i, _)| 1.0 + i as f64 * 0.25).collect();
        prop_assert_eq!(bits64(&dec_f64(TSEncoding::Sprintz, &enc_f64(TSEncoding::Sprintz, &f), n)), bits64(&f));
        let g: Vec<f32> = f.iter().map(|&x| x as f32).collect();
        prop_assert_eq!(bits32(&dec_f32(TSEncoding::Sprintz, &enc_f32(TSEncoding::Sprintz, &g), n)), bits32(&g));
    }

    #[test]
    fn text_and_bool_round_trip(
        picks in proptest::collection::vec(0usize..6, 0..300),
        pool in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..20), 6),
    ) {
        let v: Vec<&[u8]> = picks.iter().map(|&i| pool[i].as_slice()).collect();
        for e in [TSEncoding::Plain, TSEncoding::Dictionary] {
            let mut bytes = Vec::new();
            let ValueEncoder::Binary(mut x) = encoding::encoder(e, TSDataType::Text).unwrap() else { unreachable!() };
            for s in &v {
                x.put(s);
            }
            x.flush(&mut bytes);
            let ValueDecoder::Binary(mut d) = encoding::decoder(e, TSDataType::Text, &bytes, 0).unwrap() else { unreachable!() };
            let mut back = Vec::new();
            d.decode_all(&mut back, v.len() + 1).unwrap();
            prop_assert_eq!(&back, &v);
        }
        let b: Vec<bool> = picks.iter().map(|&i| i % 2 == 0).collect();
        for e in [TSEncoding::Plain, TSEncoding::Rle] {
            let mut bytes = Vec::new();
            let ValueEncoder::Boolean(mut x) = encoding::encoder(e, TSDataType::Boolean).unwrap() else { unreachable!() };
            x.put_slice(&b);
            x.flush(&mut bytes);
            let ValueDecoder::Boolean(mut d) = encoding::decoder(e, TSDataType::Boolean, &bytes, 0).unwrap() else { unreachable!() };
            let mut back = Vec::new();
            d.decode_all(&mut back, b.len() + 1).unwrap();
            prop_assert_eq!(&back, &b);
        }
    }

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        decode_everything(&bytes, 1000);
    }
}

/// Runs every decoder the factory offers over `bytes`, asking for at most `max` values;
/// errors are fine, panics and over-long output are not.
fn decode_everything(bytes: &[u8], max: usize) {
    use TSDataType as T;
    let types = [T::Boolean, T::Int32, T::Int64, T::Float, T::Double, T::Text];
    for e in 0..=14u8 {
        let Ok(e) = TSEncoding::from_code(e, 0) else {
            continue;
        };
        for t in types {
            let Ok(d) = encoding::decoder(e, t, bytes, 0) else {
                continue;
            };
            let n = match d {
                ValueDecoder::Boolean(mut d) => d.decode_all(&mut Vec::new(), max),
                ValueDecoder::Int32(mut d) => d.decode_all(&mut Vec::new(), max),
                ValueDecoder::Int64(mut d) => d.decode_all(&mut Vec::new(), max),
                ValueDecoder::Float(mut d) => d.decode_all(&mut Vec::new(), max),
                ValueDecoder::Double(mut d) => d.decode_all(&mut Vec::new(), max),
                ValueDecoder::Binary(mut d) => d.decode_all(&mut Vec::new(), max),
            };
            if let Ok(n) = n {
                assert!(n <= max, "{e:?}/{t:?} decoded {n} > {max}");
            }
        }
    }
}

#[test]
fn truncations_and_bit_flips_of_valid_streams_never_panic() {
    let ints: Vec<i64> = (0..300)
        .map(|i| (i * i * 7919) % 100_003 - 50_000)
        .collect();
    let mut streams = Vec::new();
    for e in [
        TSEncoding::Plain,
        TSEncoding::Ts2Diff,
        TSEncoding::Rle,
        TSEncoding::Zigzag,
        TSEncoding::Gorilla,
        TSEncoding::Chimp,
        TSEncoding::Sprintz,
        TSEncoding::Rlbe,
    ] {
        streams.push(enc_i64(e, &ints));
        let small: Vec<i32> = ints.iter().map(|&x| x as i32).collect();
        streams.push(enc_i32(e, &small));
        let f: Vec<f64> = ints.iter().map(|&x| x as f64 / 8.0).collect();
        if e != TSEncoding::Zigzag {
            streams.push(enc_f64(e, &f));
        }
    }
    for s in &streams {
        for cut in (0..s.len()).step_by(3) {
            decode_everything(&s[..cut], 400);
        }
        for i in (0..s.len()).step_by(7) {
            let mut m = s.clone();
            m[i] ^= 0x5A;
            decode_everything(&m, 400);
        }
    }
}

#[test]
fn rle_group_and_run_limits_round_trip() {
    let mut cases: Vec<Vec<i32>> = Vec::new();
    for run in [7, 8, 9, 15, 16, 17, 0x7FFF, 0x8000, 0x8001] {
        cases.push(vec![42; run]);
        let mut v = vec![1, 2, 3];
        v.extend(vec![9; run]);
        v.push(4);
        cases.push(v);
    }
    for groups in [62, 63, 64, 127] {
        cases.push((0..groups * 8).collect());
        cases.push((0..groups * 8 + 3).map(|i| i % 5).collect());
    }
    for v in cases {
        assert_eq!(
            dec_i32(TSEncoding::Rle, &enc_i32(TSEncoding::Rle, &v), v.len()),
            v
        );
        let w: Vec<i64> = v.iter().map(|&x| i64::from(x) - (1 << 40)).collect();
        assert_eq!(
            dec_i64(TSEncoding::Rle, &enc_i64(TSEncoding::Rle, &w), w.len()),
            w
        );
    }
}

#[test]
fn ts2diff_block_boundaries_round_trip() {
    for n in [1, 127, 128, 129, 130, 257, 258] {
        let v: Vec<i64> = (0..n as i64).map(|i| i64::MAX - i * 3).collect();
        let bytes = enc_i64(TSEncoding::Ts2Diff, &v);
        assert_eq!(dec_i64(TSEncoding::Ts2Diff, &bytes, n), v, "{n} values");
        // A block holds at most 128 deltas: 129 values per block.
        let blocks = n.div_ceil(129);
        let mut d =
            match encoding::decoder(TSEncoding::Ts2Diff, TSDataType::Int64, &bytes, 0).unwrap() {
                ValueDecoder::Int64(d) => d,
                _ => unreachable!(),
            };
        assert_eq!(d.skip(n).unwrap(), n);
        assert_eq!(d.skip(1).unwrap(), 0);
        assert!(bytes.len() >= blocks * 24);
    }
}

#[test]
fn empty_pages_encode_to_nothing_and_decode_to_nothing() {
    for e in LOSSLESS_INT
        .iter()
        .copied()
        .chain([TSEncoding::Chimp, TSEncoding::Sprintz])
    {
        assert!(enc_i64(e, &[]).is_empty(), "{e:?}");
        assert!(dec_i64(e, &[], 0).is_empty(), "{e:?}");
    }
}

#[test]
fn lying_sizes_and_counts_do_not_allocate() {
    use tsfile_format::compression;
    use tsfile_format::types::CompressionType as C;
    let data: Vec<u8> = (0..4000u32).map(|i| (i % 251) as u8).collect();
    let declared = 1 << 30;
    for c in [C::Snappy, C::Gzip, C::Lz4, C::Zstd, C::Lzma2] {
        let z = compression::compress(c, &data).unwrap();
        let (r, largest) =
            crate::alloc::largest_allocation(|| compression::decompress(c, &z, declared, 0));
        assert!(r.is_err(), "{c:?}");
        assert!(
            largest < 16 << 20,
            "{c:?} allocated {largest} bytes for a lying size"
        );
    }
    // A DICTIONARY claiming a billion entries, a TS_2DIFF block of 2^31 zero-width deltas
    // and an RLE run of 2^31 copies: the decoders allocate by what they are asked for.
    let mut dict = vec![0xfe, 0xff, 0xff, 0xff, 0x07];
    dict.extend([0x02, b'a']);
    let mut ts = vec![0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0];
    ts.extend([0u8; 16]);
    let rle = vec![0x07, 0x01, 0xfe, 0xff, 0xff, 0xff, 0x0f, 0x01];
    let (_, largest) = crate::alloc::largest_allocation(|| {
        assert!(encoding::decoder(TSEncoding::Dictionary, TSDataType::Text, &dict, 0).is_err());
        for (e, b) in [(TSEncoding::Ts2Diff, &ts), (TSEncoding::Rle, &rle)] {
            let ValueDecoder::Int64(mut d) = encoding::decoder(e, TSDataType::Int64, b, 0).unwrap()
            else {
                unreachable!()
            };
            let mut out = Vec::new();
            let _ = d.decode_all(&mut out, 1000);
            assert!(out.len() <= 1000);
            let _ = d.skip(usize::MAX / 2);
        }
    });
    assert!(largest < 1 << 20, "decoders allocated {largest} bytes");
}
