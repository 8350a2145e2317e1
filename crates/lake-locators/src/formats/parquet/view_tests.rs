//! Tests of string columns read as Utf8View when the request's schema types them so.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, Int64Array, LargeStringArray, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;
use parquet::file::properties::WriterProperties;

use crate::formats::parquet::ParquetLocator;
use crate::locator::{Locator, ReadRequest};

/// 1,000 rows in row groups of 300: `s` (Utf8, dictionary-encoded, every 7th null), `l`
/// (LargeUtf8, strings longer than a view's 12 inline bytes) and `n` (Int64).
fn write(path: &std::path::Path) -> RecordBatch {
    let schema = Arc::new(Schema::new(vec![
        Field::new("s", DataType::Utf8, true),
        Field::new("l", DataType::LargeUtf8, true),
        Field::new("n", DataType::Int64, false),
    ]));
    let s: StringArray = (0..1000)
        .map(|i| (i % 7 != 0).then(|| format!("c{:03}", i % 40)))
        .collect();
    let l: LargeStringArray = (0..1000)
        .map(|i| Some(format!("a longer string number {i}")))
        .collect();
    let columns: Vec<ArrayRef> = vec![
        Arc::new(s),
        Arc::new(l),
        Arc::new(Int64Array::from_iter_values(0..1000)),
    ];
    let batch = RecordBatch::try_new(Arc::clone(&schema), columns).unwrap();
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(300))
        .build();
    let file = std::fs::File::create(path).unwrap();
    let mut w = ArrowWriter::try_new(file, schema, Some(props)).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    batch
}

fn read(path: &std::path::Path, schema: Option<Arc<Schema>>) -> Vec<RecordBatch> {
    let projection = ["n".to_string(), "s".to_string(), "l".to_string()];
    let request = ReadRequest {
        rows: 250..910,
        schema,
        projection: Some(&projection),
        ..ReadRequest::default()
    };
    ParquetLocator
        .read(path, &request)
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap()
}

#[test]
fn strings_typed_utf8view_are_decoded_as_views() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v.parquet");
    let written = write(&path);
    let plain = read(&path, None);
    let wanted = Arc::new(Schema::new(vec![
        Field::new("s", DataType::Utf8View, true),
        Field::new("l", DataType::Utf8View, true),
        Field::new("n", DataType::Int64, false),
    ]));
    let views = read(&path, Some(wanted));
    let rows: usize = views.iter().map(RecordBatch::num_rows).sum();
    assert_eq!(rows, 660);
    let mut at = 250;
    for (p, v) in plain.iter().zip(&views) {
        assert_eq!(p.num_rows(), v.num_rows());
        assert_eq!(p.column(1).data_type(), &DataType::Utf8);
        assert_eq!(p.column(2).data_type(), &DataType::LargeUtf8);
        assert_eq!(v.column(0).data_type(), &DataType::Int64);
        assert_eq!(v.schema().field(1).data_type(), &DataType::Utf8View);
        let (s, l) = (v.column(1).as_string_view(), v.column(2).as_string_view());
        let (ws, wl) = (
            written.column(0).as_string::<i32>(),
            written.column(1).as_string::<i64>(),
        );
        for i in 0..v.num_rows() {
            assert_eq!(s.is_null(i), ws.is_null(at + i));
            if !s.is_null(i) {
                assert_eq!(s.value(i), ws.value(at + i));
            }
            assert_eq!(l.value(i), wl.value(at + i));
        }
        assert_eq!(v.column(0).to_data(), p.column(0).to_data());
        at += v.num_rows();
    }
    assert_eq!(at, 910);
    // A schema that types the strings as Utf8 (or names other columns) changes nothing.
    let same = Arc::new(Schema::new(vec![Field::new("s", DataType::Utf8, true)]));
    let again = read(&path, Some(same));
    assert_eq!(again, plain);
}
