//! Fuzzes the FLOAT/DOUBLE value decoders: PLAIN, the lossy TS_2DIFF/RLE wrapper (all three
//! forms and the legacy raw form), GORILLA, GORILLA_V1, CHIMP, SPRINTZ, RLBE and CAMEL.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tsfile_format::encoding::{self, Decoder, ValueDecoder};
use tsfile_format::types::{TSDataType, TSEncoding};

const ENCODINGS: [TSEncoding; 10] = [
    TSEncoding::Plain,
    TSEncoding::Ts2Diff,
    TSEncoding::Rle,
    TSEncoding::Gorilla,
    TSEncoding::GorillaV1,
    TSEncoding::Chimp,
    TSEncoding::Sprintz,
    TSEncoding::Rlbe,
    TSEncoding::Camel,
    TSEncoding::Ts2Diff,
];

fn drive<T>(d: &mut dyn Decoder<T>, plan: u8) {
    let mut out = Vec::new();
    for step in 0..64u32 {
        let ask = 1 + ((u32::from(plan) * (step + 3)) % 257) as usize;
        let r = if (plan >> (step % 8)) & 1 == 0 {
            out.clear();
            d.decode(&mut out, ask)
                .inspect(|&n| assert_eq!(n, out.len()))
        } else {
            d.skip(ask)
        };
        match r {
            Ok(0) | Err(_) => break,
            Ok(n) => assert!(n <= ask),
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let [sel, plan, bytes @ ..] = data else {
        return;
    };
    let e = ENCODINGS[usize::from(sel % 10)];
    let t = if sel & 0x80 == 0 {
        TSDataType::Double
    } else {
        TSDataType::Float
    };
    match encoding::decoder(e, t, bytes, 0) {
        Ok(ValueDecoder::Float(mut d)) => drive(d.as_mut(), *plan),
        Ok(ValueDecoder::Double(mut d)) => drive(d.as_mut(), *plan),
        Ok(_) => unreachable!("float types give float decoders"),
        Err(_) => {}
    }
});
