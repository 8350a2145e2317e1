//! Fuzzes the other index and data-section structures: TimeseriesMetadata (with its
//! ChunkMetadata list), and a data section scanned record by record with its page headers.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tsfile_format::chunk::DataRecord;
use tsfile_format::cursor::{Cursor, Writer};
use tsfile_format::page::PageHeader;
use tsfile_format::timeseries::TimeseriesMetadata;
use tsfile_format::types::FormatVersion;

fuzz_target!(|data: &[u8]| {
    let Some((&sel, bytes)) = data.split_first() else {
        return;
    };
    if sel & 1 == 0 {
        let mut c = Cursor::new(bytes, 81);
        while let Ok(t) = TimeseriesMetadata::decode(&mut c) {
            let mut w = Writer::new();
            t.encode(&mut w);
            // Compared as bytes, not values: statistics may hold NaN, which is not equal to
            // itself. Encoding a decoded value is a fixed point.
            let again = TimeseriesMetadata::decode(&mut Cursor::new(w.as_bytes(), 0)).unwrap();
            let mut w2 = Writer::new();
            again.encode(&mut w2);
            assert_eq!(w.as_bytes(), w2.as_bytes());
            for i in 0..=t.chunk_metadata.len() {
                let _ = t.chunk_statistics(i);
            }
        }
        return;
    }
    let version = if sel & 2 == 0 {
        FormatVersion::V4
    } else {
        FormatVersion::V3
    };
    let mut c = Cursor::new(bytes, 7);
    while let Ok(rec) = DataRecord::decode(&mut c, version) {
        let mut w = Writer::new();
        rec.encode(&mut w);
        let again = DataRecord::decode(&mut Cursor::new(w.as_bytes(), 0), version);
        assert_eq!(again.as_ref(), Ok(&rec));
        match rec {
            DataRecord::Separator => break,
            DataRecord::Chunk(h) => {
                let Ok(mut pages) = c.sub(h.data_size as usize, "pages") else {
                    break;
                };
                while !pages.is_empty() {
                    let Ok(p) = PageHeader::decode_for_chunk(&mut pages, &h) else {
                        break;
                    };
                    let mut w = Writer::new();
                    p.encode(&mut w);
                    let again = PageHeader::decode_for_chunk(&mut Cursor::new(w.as_bytes(), 0), &h)
                        .unwrap();
                    let mut w2 = Writer::new();
                    again.encode(&mut w2);
                    assert_eq!(w.as_bytes(), w2.as_bytes());
                    if p.take_payload(&mut pages).is_err() {
                        break;
                    }
                }
            }
            _ => {}
        }
    }
});
