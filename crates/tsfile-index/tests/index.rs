//! The index walk refuses a node whose child points back at (or after) itself: the cycle
//! becomes an error naming the node, never a hang.

use std::sync::Arc;

use bytes::Bytes;
use tsfile_format::metadata_index::MetadataIndexNode;
use tsfile_format::types::{IndexLevel, MetadataIndexNodeType};
use tsfile_index::{Error, TsFileReader};

#[test]
fn a_child_pointing_at_its_parent_is_an_error() {
    let Some(dir) = crate::common::corpus("tsfile") else {
        return;
    };
    let original = std::fs::read(dir.join("tree_many_devices.tsfile")).unwrap();
    let reader = TsFileReader::from_reader(Arc::new(Bytes::from(original.clone()))).unwrap();
    let root = &reader.table_roots()[0].1;
    assert_eq!(root.node_type, MetadataIndexNodeType::InternalDevice);
    let (start, end) = root.child_range(0).unwrap();
    let child = MetadataIndexNode::decode_checked(
        &original[start as usize..end as usize],
        start as u64,
        reader.format_version(),
        IndexLevel::Device,
        Some(root.node_type),
    )
    .unwrap();
    // Point the child's first entry at the child itself.
    let target = child.children[0].offset.to_be_bytes();
    let at = original[start as usize..end as usize]
        .windows(8)
        .position(|w| w == target)
        .unwrap()
        + start as usize;
    let mut bad = original.clone();
    bad[at..at + 8].copy_from_slice(&start.to_be_bytes());
    let reader = TsFileReader::from_reader(Arc::new(Bytes::from(bad))).unwrap();
    let err = reader
        .devices()
        .unwrap()
        .find_map(Result::err)
        .expect("the walk must fail");
    assert!(
        matches!(err, Error::Corrupt { .. } | Error::Format(_)),
        "{err}"
    );
    assert!(err.to_string().contains("byte"), "{err}");
}
