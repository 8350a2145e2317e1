//! Tests of the ORC tail walker: on files orc-rust writes (every codec it writes), it agrees
//! with orc-rust's own metadata; files with a bare top-level type are counted from their
//! stripes and their reads refused; damaged tails never panic.

use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use bytes::Bytes;
use orc_rust::compression::CompressionType;

use super::{STRUCT, read_tail};
use crate::error::Error;
use crate::formats::orc::OrcLocator;
use crate::locator::{IndexOptions, Locator, ReadRequest};

/// A file of `rows` rows in stripes of about 1,000 rows, written by orc-rust.
fn written(compression: Option<CompressionType>, rows: i64) -> Bytes {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("name", DataType::Utf8, true),
    ]));
    let ids: Vec<i64> = (0..rows).collect();
    let names: Vec<String> = ids.iter().map(|i| format!("name {i}")).collect();
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from(ids)),
        Arc::new(StringArray::from(names)),
    ];
    let batch = RecordBatch::try_new(schema.clone(), columns).unwrap();
    let mut out = Vec::new();
    let mut builder = orc_rust::ArrowWriterBuilder::new(&mut out, schema).with_batch_size(1000);
    if let Some(c) = compression {
        builder = builder.with_compression(c);
    }
    let mut w = builder.try_build().unwrap();
    for start in (0..batch.num_rows()).step_by(1000) {
        w.write(&batch.slice(start, 1000.min(batch.num_rows() - start)))
            .unwrap();
        w.flush_stripe().unwrap();
    }
    w.close().unwrap();
    Bytes::from(out)
}

#[test]
fn agrees_with_orc_rust_on_every_codec() {
    let codecs = [
        None,
        Some(CompressionType::Zlib),
        Some(CompressionType::Snappy),
        Some(CompressionType::Lz4),
        Some(CompressionType::Zstd),
    ];
    for codec in codecs {
        let file = written(codec, 3500);
        let tail = read_tail(&file).unwrap_or_else(|| panic!("{codec:?}"));
        let meta = orc_rust::reader::metadata::read_metadata(&mut file.clone()).unwrap();
        assert_eq!(tail.root_kind, STRUCT, "{codec:?}");
        assert_eq!(tail.rows, meta.number_of_rows(), "{codec:?}");
        let ours: Vec<(u64, u64, u64)> = tail
            .stripes
            .iter()
            .map(|s| (s.offset, s.data_length, s.rows))
            .collect();
        let theirs: Vec<(u64, u64, u64)> = meta
            .stripe_metadatas()
            .iter()
            .map(|s| (s.offset(), s.data_length(), s.number_of_rows()))
            .collect();
        assert_eq!(ours, theirs, "{codec:?}");
        assert_eq!(ours.len(), 4, "{codec:?}");
    }
}

fn varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// An ORC file whose root type is `root` (an encoded `Type` message), with two stripes of 3
/// and 4 rows (10 bytes each, never decoded), its footer stored uncompressed or, for a codec
/// other than NONE (0), as an original chunk.
fn bare(root: &[u8], codec: u64) -> Vec<u8> {
    let mut file = b"ORC".to_vec();
    file.extend_from_slice(&[0u8; 20]);
    let mut footer = vec![0x08, 0x03, 0x10, 23];
    for (offset, rows) in [(3u64, 3u64), (13, 4)] {
        let mut s = Vec::new();
        for (field, v) in [(1u8, offset), (2, 0), (3, 7), (4, 3), (5, rows)] {
            s.push(field << 3);
            varint(v, &mut s);
        }
        footer.push(0x1a);
        varint(s.len() as u64, &mut footer);
        footer.extend_from_slice(&s);
    }
    footer.push(0x22);
    varint(root.len() as u64, &mut footer);
    footer.extend_from_slice(root);
    footer.extend_from_slice(&[0x30, 7]);
    if codec != 0 {
        let header = ((footer.len() as u32) << 1) | 1;
        let mut framed = header.to_le_bytes()[..3].to_vec();
        framed.extend_from_slice(&footer);
        footer = framed;
    }
    file.extend_from_slice(&footer);
    let mut ps = vec![0x08];
    varint(footer.len() as u64, &mut ps);
    ps.extend_from_slice(&[0x10, codec as u8, 0x28, 0x00, 0x82, 0xf4, 0x03, 0x03]);
    ps.extend_from_slice(b"ORC");
    file.extend_from_slice(&ps);
    file.push(ps.len() as u8);
    file
}

/// A bare `int` (as `pyorc.Writer(f, "int")` writes) and a bare `decimal(10,2)`, with an
/// uncompressed and a ZLIB footer: mapped with the stripes' rows and one column `value`, a
/// read refused with an error naming the file and the feature, an empty range read.
#[test]
fn bare_top_level_types_are_counted_and_refused() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&[u8], DataType, &str); 2] = [
        (&[0x08, 0x03], DataType::Int32, "(int)"),
        (
            &[0x08, 0x0e, 0x28, 0x0a, 0x30, 0x02],
            DataType::Decimal128(10, 2),
            "(decimal)",
        ),
    ];
    for (root, data_type, name) in cases {
        for codec in [0, 1] {
            let path = dir.path().join(format!("bare-{codec}.orc"));
            std::fs::write(&path, bare(root, codec)).unwrap();
            let idx = OrcLocator.index(&path, &IndexOptions::default()).unwrap();
            assert_eq!(idx.row_count, 7);
            let blocks: Vec<(u64, u64, Option<u64>)> = idx
                .blocks
                .iter()
                .map(|b| (b.first_row, b.row_count, b.first_byte))
                .collect();
            assert_eq!(blocks, [(0, 3, Some(3)), (3, 4, Some(13))]);
            assert_eq!(idx.schema.field(0).name(), "value");
            assert_eq!(idx.schema.field(0).data_type(), &data_type);
            let request = ReadRequest {
                rows: 0..7,
                ..ReadRequest::default()
            };
            let err = OrcLocator.read(&path, &request).err().unwrap();
            let text = err.to_string();
            assert!(matches!(err, Error::Unsupported { .. }), "{text}");
            assert!(text.contains(path.to_str().unwrap()), "{text}");
            assert!(text.contains(&format!("not a struct {name}")), "{text}");
            let empty = ReadRequest {
                rows: 7..7,
                ..ReadRequest::default()
            };
            assert_eq!(OrcLocator.read(&path, &empty).unwrap().count(), 0);
        }
    }
}

/// A bare file whose stripes hold other rows than its footer says is refused as malformed.
#[test]
fn bare_file_with_wrong_row_count_is_malformed() {
    let mut file = bare(&[0x08, 0x03], 0);
    // The footer's numberOfRows (7) becomes 9.
    let at = file.windows(2).rposition(|w| w == [0x30, 7]).unwrap();
    file[at + 1] = 9;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rows.orc");
    std::fs::write(&path, file).unwrap();
    let err = OrcLocator
        .index(&path, &IndexOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("the stripes hold 7 rows, the footer says 9"),
        "{err}"
    );
}

/// Truncated tails are walked without panicking (the uncompressed walker never calls into
/// orc-rust's decompressor).
#[test]
fn truncated_tails_never_panic() {
    let file = bare(&[0x08, 0x03], 0);
    for n in 0..file.len() {
        let _ = read_tail(&Bytes::from(file[..n].to_vec()));
    }
    for i in 0..file.len() {
        let mut f = file.clone();
        f[i] ^= 0xff;
        let _ = read_tail(&Bytes::from(f));
    }
}
