//! Tests of the footer rewrite: files written by the parquet crate whose footer bytes are then
//! patched to carry annotations newer than the crate knows, as old parquet-cpp and DuckDB
//! files do.

use std::sync::Arc;

use arrow_array::{Array, ArrayRef, Int8Array, Int32Array, NullArray, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use bytes::Bytes;
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions};
use parquet::arrow::arrow_writer::ArrowWriterOptions;

use super::drop_unknown_annotations;
use crate::formats::parquet::ParquetLocator;
use crate::locator::{IndexOptions, ReadRequest};

/// A file of 5 rows: `nulls` (Arrow Null: INT32 with the UNKNOWN logical type) and `small`
/// (Int8: INT32 with converted type INT_8 and logical type INTEGER(8, true)), without the
/// stored Arrow schema so that only the Parquet schema decides the types.
fn file() -> Vec<u8> {
    let schema = Arc::new(Schema::new(vec![
        Field::new("nulls", DataType::Null, true),
        Field::new("small", DataType::Int8, true),
    ]));
    let columns: Vec<ArrayRef> = vec![
        Arc::new(NullArray::new(5)),
        Arc::new(Int8Array::from(vec![
            Some(1),
            None,
            Some(-3),
            Some(4),
            Some(5),
        ])),
    ];
    let batch = RecordBatch::try_new(schema.clone(), columns).unwrap();
    let mut out = Vec::new();
    let options = ArrowWriterOptions::new().with_skip_arrow_metadata(true);
    let mut w = ArrowWriter::try_new_with_options(&mut out, schema, options).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    out
}

/// The file with the first occurrence of `from` in its footer replaced by `to` (the footer
/// length is rewritten).
fn patch_footer(file: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    let n = file.len();
    let meta_len = u32::from_le_bytes(file[n - 8..n - 4].try_into().unwrap()) as usize;
    let start = n - 8 - meta_len;
    let meta = &file[start..n - 8];
    let at = meta
        .windows(from.len())
        .position(|w| w == from)
        .unwrap_or_else(|| panic!("{from:02x?} not in the footer {meta:02x?}"));
    let mut out = file[..start].to_vec();
    out.extend_from_slice(&meta[..at]);
    out.extend_from_slice(to);
    out.extend_from_slice(&meta[at + from.len()..]);
    out.extend_from_slice(
        &u32::try_from(meta_len + to.len() - from.len())
            .unwrap()
            .to_le_bytes(),
    );
    out.extend_from_slice(b"PAR1");
    out
}

fn footer(file: &[u8]) -> &[u8] {
    let n = file.len();
    let meta_len = u32::from_le_bytes(file[n - 8..n - 4].try_into().unwrap()) as usize;
    &file[n - 8 - meta_len..n - 8]
}

/// Field 4 (name "nulls") then field 10 (logical type, header delta 6): inserts field 6,
/// converted type 24 (zigzag 48), and re-encodes field 10's header as a delta of 4.
fn null_with_converted_24(file: &[u8]) -> Vec<u8> {
    patch_footer(file, b"\x18\x05nulls\x6c", b"\x18\x05nulls\x25\x30\x4c")
}

/// `small`: converted type INT_8 (zigzag 30) becomes 24, and the logical type's union variant
/// 10 (INTEGER) becomes 19, which no parquet release knows (long-form field header).
fn int8_with_unknown_annotations(file: &[u8]) -> Vec<u8> {
    patch_footer(
        file,
        b"\x18\x05small\x25\x1e\x4c\xac",
        b"\x18\x05small\x25\x30\x4c\x0c\x26",
    )
}

fn index_and_read(bytes: Vec<u8>) -> (crate::locator::FileIndex, Vec<RecordBatch>) {
    let path = std::path::Path::new("patched.parquet");
    let index = ParquetLocator
        .index_reader(path, Bytes::from(bytes.clone()), &IndexOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let request = ReadRequest {
        rows: 0..index.row_count,
        blocks: Some(&index.blocks),
        schema: Some(index.schema.clone()),
        projection: None,
        batch_size: 0,
    };
    let batches = ParquetLocator
        .read_reader(path, Bytes::from(bytes), &request)
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    (index, batches)
}

/// The patched file is refused by the parquet crate itself: the tests below test the rewrite.
fn crate_refuses(bytes: &[u8]) -> String {
    ArrowReaderMetadata::load(&Bytes::from(bytes.to_vec()), ArrowReaderOptions::new())
        .unwrap_err()
        .to_string()
}

#[test]
fn known_annotations_are_left_alone() {
    let f = file();
    assert_eq!(drop_unknown_annotations(footer(&f)), None);
}

/// As in DuckDB's `empty.parquet` (parquet-cpp 1.5): converted type 24 beside the UNKNOWN
/// logical type. The column maps and reads as Arrow Null, as pyarrow gives.
#[test]
fn converted_type_newer_than_the_crate_is_ignored() {
    let f = null_with_converted_24(&file());
    assert!(
        crate_refuses(&f).contains("ConvertedType 24"),
        "{}",
        crate_refuses(&f)
    );
    let patched = drop_unknown_annotations(footer(&f)).unwrap();
    // Removing the field gives back the footer the crate wrote, byte for byte.
    assert_eq!(patched, footer(&file()));
    let (index, batches) = index_and_read(f);
    assert_eq!(index.row_count, 5);
    assert_eq!(index.schema.field(0).data_type(), &DataType::Null);
    assert_eq!(index.schema.field(1).data_type(), &DataType::Int8);
    assert_eq!(batches.iter().map(RecordBatch::num_rows).sum::<usize>(), 5);
}

/// An unknown converted type and an unknown logical type on one column: both are dropped and
/// the physical type (INT32) is read as it is.
#[test]
fn unknown_logical_type_reads_the_physical_type() {
    let f = int8_with_unknown_annotations(&file());
    let refused = crate_refuses(&f);
    assert!(refused.contains("ConvertedType 24"), "{refused}");
    let (index, batches) = index_and_read(f);
    assert_eq!(index.row_count, 5);
    assert_eq!(index.schema.field(1).data_type(), &DataType::Int32);
    let small = batches[0]
        .column(1)
        .as_any()
        .downcast_ref::<Int32Array>()
        .unwrap();
    assert_eq!(
        small.iter().collect::<Vec<_>>(),
        vec![Some(1), None, Some(-3), Some(4), Some(5)]
    );
}

/// Only the unknown logical type (the converted type INT_8 is known and kept): the crate
/// decodes the footer but refuses the pair; after the rewrite the column is Int8.
#[test]
fn unknown_logical_type_alone() {
    let f = patch_footer(
        &file(),
        b"\x18\x05small\x25\x1e\x4c\xac",
        b"\x18\x05small\x25\x1e\x4c\x0c\x26",
    );
    let refused = crate_refuses(&f);
    assert!(refused.contains("_Unknown { field_id: 19 }"), "{refused}");
    let (index, batches) = index_and_read(f);
    assert_eq!(index.schema.field(1).data_type(), &DataType::Int8);
    assert_eq!(batches[0].column(1).null_count(), 1);
}

/// Every truncation and every single-byte change of a patched footer is either rewritten or
/// given up, never a panic.
#[test]
fn damaged_footers_never_panic() {
    let f = int8_with_unknown_annotations(&file());
    let meta = footer(&f);
    for n in 0..meta.len() {
        let _ = drop_unknown_annotations(&meta[..n]);
    }
    for i in 0..meta.len() {
        for b in [0x00, 0x0c, 0x19, 0xf9, 0xff] {
            let mut m = meta.to_vec();
            m[i] = b;
            let _ = drop_unknown_annotations(&m);
        }
    }
}
