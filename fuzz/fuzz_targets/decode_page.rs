//! Fuzzes the page payload layouts (non-aligned split, aligned value page, time-encoding
//! detection) together with the TEXT decoders (PLAIN, DICTIONARY) that read their values.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tsfile_format::page_payload;
use tsfile_format::types::{TSDataType, TSEncoding};

fuzz_target!(|data: &[u8]| {
    let Some((&sel, bytes)) = data.split_first() else {
        return;
    };
    let enc = if sel & 1 == 0 {
        TSEncoding::Plain
    } else {
        TSEncoding::Dictionary
    };
    if sel & 2 == 0 {
        if let Ok(p) = page_payload::split_non_aligned(bytes, 0) {
            let mut times = Vec::new();
            let te = page_payload::detect_time_encoding(p.times);
            if let Ok(n) =
                page_payload::decode_times(te, p.times, p.times_offset, &mut times, 10_000)
            {
                assert!(n <= 10_000);
                if let Ok(v) =
                    page_payload::decode_values(enc, TSDataType::Text, p.values, p.values_offset, n)
                {
                    assert_eq!(v.len(), n);
                }
            }
        }
    } else if let Ok(p) = page_payload::split_aligned_value(bytes, 0) {
        let n = p.present_count();
        assert!(n <= p.row_count);
        let validity = p.validity();
        let mut back = Vec::new();
        page_payload::join_aligned_value(&validity, p.values, &mut back);
        let again = page_payload::split_aligned_value(&back, 0).unwrap();
        assert_eq!(again.validity(), validity);
        if let Ok(v) =
            page_payload::decode_values(enc, TSDataType::String, p.values, p.values_offset, n)
        {
            assert_eq!(v.len(), n);
        }
    }
});
