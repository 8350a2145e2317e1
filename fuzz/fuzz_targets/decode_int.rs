//! Fuzzes the integer value decoders (PLAIN, TS_2DIFF, RLE, GORILLA, ZIGZAG, CHIMP, SPRINTZ,
//! RLBE on INT32 and INT64; PLAIN and RLE on BOOLEAN), mixing `decode` and `skip`: any input
//! gives values or an error, never a panic or more values than asked for.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tsfile_format::encoding::{self, Decoder, ValueDecoder};
use tsfile_format::types::{TSDataType, TSEncoding};

const ENCODINGS: [TSEncoding; 8] = [
    TSEncoding::Plain,
    TSEncoding::Ts2Diff,
    TSEncoding::Rle,
    TSEncoding::Gorilla,
    TSEncoding::Zigzag,
    TSEncoding::Chimp,
    TSEncoding::Sprintz,
    TSEncoding::Rlbe,
];

fn drive<T>(d: &mut dyn Decoder<T>, plan: u8) {
    let mut out = Vec::new();
    let mut total = 0;
    for step in 0..64u32 {
        let ask = 1 + ((u32::from(plan) * (step + 7)) % 300) as usize;
        let r = if (plan >> (step % 8)) & 1 == 0 {
            out.clear();
            d.decode(&mut out, ask)
                .inspect(|&n| assert_eq!(n, out.len()))
        } else {
            d.skip(ask)
        };
        match r {
            Ok(n) => {
                assert!(n <= ask);
                total += n;
                if n == 0 {
                    break;
                }
            }
            Err(_) => break,
        }
    }
    assert!(total <= 64 * 300);
}

fuzz_target!(|data: &[u8]| {
    let [sel, plan, bytes @ ..] = data else {
        return;
    };
    let e = ENCODINGS[usize::from(sel % 8)];
    let t = match (sel >> 3) % 3 {
        0 => TSDataType::Int32,
        1 => TSDataType::Int64,
        _ => TSDataType::Boolean,
    };
    match encoding::decoder(e, t, bytes, 0) {
        Ok(ValueDecoder::Int32(mut d)) => drive(d.as_mut(), *plan),
        Ok(ValueDecoder::Int64(mut d)) => drive(d.as_mut(), *plan),
        Ok(ValueDecoder::Boolean(mut d)) => drive(d.as_mut(), *plan),
        Ok(_) => unreachable!("integer types give integer decoders"),
        Err(_) => {}
    }
});
