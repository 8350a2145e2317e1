//! The test vectors of the reference (`tsfile.md` §16). TV2–TV9 are the consecutive pieces of
//! one 378-byte file, so they are assembled into that file and walked like a corpus file;
//! TV1, TV10 and TV12 are checked piece by piece. (TV11, the value encodings, is tested with
//! the encoders in `src/encoding/`.)

use tsfile_format::chunk::{ChunkGroupHeader, ChunkHeader, DataRecord};
use tsfile_format::cursor::{Cursor, Writer};
use tsfile_format::device_id::{DeviceId, DeviceKey};
use tsfile_format::page::PageHeader;
use tsfile_format::statistics::StatisticsValues;
use tsfile_format::types::{FormatVersion, Marker, TSDataType};

use crate::walk::walk;

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.split_whitespace().collect();
    assert!(s.len().is_multiple_of(2), "odd hex string");
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn encoded(f: impl FnOnce(&mut Writer)) -> Vec<u8> {
    let mut w = Writer::new();
    f(&mut w);
    w.into_inner()
}

fn var_str(s: Option<&str>) -> Vec<u8> {
    encoded(|w| w.write_var_str(s))
}

/// The file of TV2–TV9: table `t`, TAG `id`, FIELD `v INT32`, rows (100..102, 'd1', 7..9).
fn reference_file() -> Vec<u8> {
    let mut f = Vec::new();
    // TV2 @0: head, chunk group of (t, d1).
    f.extend(hex("54 73 46 69 6c 65 04 00 02 02 74 04 64 31"));
    // TV3 @14: aligned time chunk, one page of three PLAIN timestamps.
    f.extend(hex("85 00 1a 06 00 00 18 18"));
    for t in [100i64, 101, 102] {
        f.extend(t.to_be_bytes());
    }
    // TV4 @46: aligned value chunk, then the op-index record @63 and the separator @80.
    f.extend(hex("45 02 76 0a 01 00 00 08 08 00 00 00 03 e0 0e 10 12"));
    f.push(0x04);
    f.extend([0u8; 16]);
    f.push(0x02);
    // TV5 @81: TimeseriesMetadata of the time column.
    f.extend(hex(
        "00 00 06 08 03 0000000000000064 0000000000000066 000000000000000e",
    ));
    // TV7 @110: TimeseriesMetadata of `v`, embedding TV6.
    f.extend(hex(
        "00 02 76 01 08 03 0000000000000064 0000000000000066 00000007 00000009 00000007 \
         00000009 0000000000000018 000000000000002e",
    ));
    // TV8 @164: LEAF_MEASUREMENT node.
    f.extend(hex("01 00 0000000000000051 00000000000000a4 03"));
    // TV9 @183: TsFileMetadata.
    f.extend(hex(
        "01 02 74 01 02 02 74 04 64 31 00000000000000a4 00000000000000b7 01 \
         01 02 74 02 00000002 6964 0b 00 00 00000000 00000000 \
         00000001 76 01 00 00 00000000 00000001 0000000000000050 \
         1f 00000010000000422000000000000000098000001000000000800000000040 80 02 05 06",
    ));
    f.extend(var_str(Some("encryptKey")));
    f.extend(var_str(None));
    f.extend(var_str(Some("encryptType")));
    f.extend(var_str(Some("org.apache.tsfile.encrypt.UNENCRYPTED")));
    f.extend(var_str(Some("encryptLevel")));
    f.extend(var_str(Some("0")));
    f.extend(hex("000000b9 54 73 46 69 6c 65"));
    f
}

#[test]
fn tv1_primitives() {
    assert_eq!(var_str(Some("d1")), hex("04 64 31"));
    assert_eq!(var_str(None), hex("01"));
    assert_eq!(encoded(|w| w.write_uvarint(256)), hex("80 02"));
    assert_eq!(encoded(|w| w.write_varint(3)), hex("06"));
    assert_eq!(encoded(|w| w.write_varint(20240102)), hex("cc db a6 13"));
    let mut c = Cursor::new(&[0xcc, 0xdb, 0xa6, 0x13, 0x01], 0);
    assert_eq!(c.read_varint("v").unwrap(), 20240102);
    assert_eq!(c.read_var_str("s").unwrap(), None);
}

#[test]
fn tv2_to_tv9_reference_file_round_trips_whole() {
    let file = reference_file();
    assert_eq!(file.len(), 378);
    let w = walk("reference file", &file);
    assert_eq!(w.devices, [DeviceId::from_strs(&["t", "d1"])]);
    assert_eq!(w.counts.chunk_groups, 1);
    assert_eq!(w.counts.chunks, 2);
    assert_eq!(w.counts.pages, 2);
    assert_eq!(w.counts.operation_indexes, 1);
    let offsets: Vec<(String, u64, usize)> = w
        .series
        .iter()
        .map(|s| (s.meta.measurement_id.clone(), s.offset, s.len))
        .collect();
    assert_eq!(
        offsets,
        [("".to_owned(), 81, 29), ("v".to_owned(), 110, 54)]
    );
    let v = &w.series[1].meta.statistics;
    assert_eq!(
        v.values,
        StatisticsValues::Int32 {
            min: 7,
            max: 9,
            first: 7,
            last: 9,
            sum: 24
        }
    );
    let meta = w.metadata.expect("V4 metadata");
    assert!(meta.bloom_filter.might_contain("t.d1.v"));
    assert!(meta.bloom_filter.might_contain("t.d1."));
    assert_eq!(meta.meta_offset, 80);
}

#[test]
fn tv10_multi_page_and_all_null_value_chunks() {
    let mut bytes = hex("41 02 76 62 01 00 00 06 06 01");
    bytes.extend(1i64.to_be_bytes());
    bytes.extend(1i64.to_be_bytes());
    for _ in 0..4 {
        bytes.extend(10i32.to_be_bytes());
    }
    bytes.extend(10i64.to_be_bytes());
    bytes.extend(hex("00 00 00 02 80 14"));
    let mut c = Cursor::new(&bytes, 0);
    let h = ChunkHeader::decode(&mut c).unwrap();
    assert_eq!(h.marker, Marker::ValueChunkHeader);
    assert_eq!(h.data_size, 0x62);
    assert!(h.pages_have_statistics());
    let p = PageHeader::decode_for_chunk(&mut c, &h).unwrap();
    assert_eq!(p.statistics.as_ref().map(|s| s.count), Some(1));
    assert_eq!(p.take_payload(&mut c).unwrap(), hex("00 00 00 02 80 14"));
    assert!(c.is_empty());
    let again = encoded(|w| {
        h.encode(w);
        p.encode(w);
        w.write_bytes(&hex("00 00 00 02 80 14"));
    });
    assert_eq!(again, bytes);

    // The C++ all-null value chunk: data_size 1, one empty page.
    let null_chunk = hex("45 02 76 01 01 00 00 00");
    let mut c = Cursor::new(&null_chunk, 0);
    let h = ChunkHeader::decode(&mut c).unwrap();
    assert_eq!(
        (h.marker, h.data_size),
        (Marker::OnlyOnePageValueChunkHeader, 1)
    );
    let p = PageHeader::decode_for_chunk(&mut c, &h).unwrap();
    assert!(p.is_empty() && c.is_empty());
    assert_eq!(encoded(|w| p.encode(w)), [0x00]);
}

#[test]
fn tv12_tree_model_chunk_group_and_chunk() {
    let group = hex("00 02 0e 72 6f 6f 74 2e 73 67 04 64 31");
    let mut c = Cursor::new(&group, 7);
    let g = ChunkGroupHeader::decode(&mut c, FormatVersion::V4).unwrap();
    let id = DeviceId::from_tree_path("root.sg.d1");
    assert_eq!(g.device, DeviceKey::Id(id.clone()));
    assert!(id.is_tree_model());
    assert_eq!(encoded(|w| g.encode(w)), group);

    let mut chunk = hex("05 04 73 31 1e 01 00 00 1c 1c 18");
    for t in [100i64, 101, 102] {
        chunk.extend(t.to_be_bytes());
    }
    chunk.extend(hex("0e 10 12"));
    let mut c = Cursor::new(&chunk, 20);
    let DataRecord::Chunk(h) = DataRecord::decode(&mut c, FormatVersion::V4).unwrap() else {
        panic!("not a chunk");
    };
    assert_eq!(
        (h.measurement_id.as_str(), h.data_type, h.data_size),
        ("s1", TSDataType::Int32, 30)
    );
    let p = PageHeader::decode_for_chunk(&mut c, &h).unwrap();
    assert_eq!(
        (
            p.uncompressed_size,
            p.compressed_size,
            p.statistics.is_none()
        ),
        (28, 28, true)
    );
    let payload = p.take_payload(&mut c).unwrap();
    assert_eq!(payload[0], 0x18);
    assert!(c.is_empty());
}
