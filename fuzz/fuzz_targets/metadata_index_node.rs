//! Fuzzes MetadataIndexNode decoding and the five node checks. The first byte picks the
//! version, the expected level and the parent type; the rest is the node's byte range.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tsfile_format::cursor::{Cursor, Writer};
use tsfile_format::metadata_index::MetadataIndexNode;
use tsfile_format::types::{FormatVersion, IndexLevel, MetadataIndexNodeType};

fuzz_target!(|data: &[u8]| {
    let Some((&sel, bytes)) = data.split_first() else {
        return;
    };
    let version = if sel & 1 == 0 {
        FormatVersion::V4
    } else {
        FormatVersion::V3
    };
    let level = if sel & 2 == 0 {
        IndexLevel::Device
    } else {
        IndexLevel::Measurement
    };
    let parent = MetadataIndexNodeType::from_code((sel >> 2) & 7, 0).ok();
    let base = 77;
    let checked = MetadataIndexNode::decode_checked(bytes, base, version, level, parent);
    if let Ok(node) = MetadataIndexNode::decode(&mut Cursor::new(bytes, base), version, level) {
        let mut w = Writer::new();
        node.encode(&mut w);
        let again = MetadataIndexNode::decode(&mut Cursor::new(w.as_bytes(), base), version, level);
        assert_eq!(again.as_ref(), Ok(&node));
        for i in 0..=node.children.len() {
            let _ = node.child_range(i);
        }
        let _ = node.find_measurement("s1");
        // A node that passes every check must also decode plainly to the same value.
        if let Ok(c) = &checked {
            assert_eq!(c, &node);
        }
    } else {
        assert!(checked.is_err());
    }
});
