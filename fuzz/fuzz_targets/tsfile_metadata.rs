//! Fuzzes TsFileMetadata decoding (V4 and V3): any input gives `Ok` or a typed error, and a
//! decoded value re-encodes to bytes that decode to the same value.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tsfile_format::cursor::Writer;
use tsfile_format::file::{FileTail, TsFileMetadata, TsFileMetadataV3, decode_head};

fuzz_target!(|data: &[u8]| {
    let base = 1000;
    if let Ok(m) = TsFileMetadata::decode(data, base) {
        for t in &m.table_roots {
            let _ = t.root.validate(base, None);
        }
        let _ = m.bloom_filter.might_contain("root.sg.d1.s1");
        let mut w = Writer::new();
        m.encode(&mut w);
        assert_eq!(TsFileMetadata::decode(w.as_bytes(), base).as_ref(), Ok(&m));
    }
    if let Ok(m) = TsFileMetadataV3::decode(data, base) {
        let _ = m.root.validate(base, None);
        let mut w = Writer::new();
        m.encode(&mut w);
        assert_eq!(
            TsFileMetadataV3::decode(w.as_bytes(), base).as_ref(),
            Ok(&m)
        );
    }
    // The same bytes as a whole file: head, tail, then the metadata the tail points at.
    if data.len() >= 10 && decode_head(data).is_ok() {
        let size = data.len() as u64;
        if let Ok(tail) = FileTail::decode(&data[data.len() - 10..], size) {
            let r = tail.metadata_range(size);
            let _ = TsFileMetadata::decode(&data[r.start as usize..r.end as usize], r.start);
        }
    }
});
