//! `ScanOptions::string_views`: the same values, Utf8 columns as Utf8View.

use std::path::Path;
use std::sync::Arc;

use arrow_array::Array;
use arrow_schema::DataType;
use arrow_select::concat::concat_batches;
use bazan::ScanOptions;

/// A scan with string views returns the plain scan's values, its Utf8 columns as
/// Utf8View, over Parquet files (decoded as views) and a CSV file (cast).
#[test]
fn views_hold_the_plain_strings() {
    let dir = tempfile::tempdir().unwrap();
    let data = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/lake"));
    for (from, to) in [
        ("nested/a/b/deep.parquet", "a.parquet"),
        ("📊 metrics.parquet", "b.parquet"),
        ("alpha.csv", "c.csv"),
    ] {
        std::fs::copy(data.join(from), dir.path().join(to)).unwrap();
    }
    let created = bazan::create_map(dir.path(), &bazan::CreateOptions::default()).unwrap();
    let lake = Arc::new(created.lake);
    let total = lake.total_rows();
    let scan = |string_views: bool| {
        let options = ScanOptions {
            with_path: true,
            string_views,
            ..ScanOptions::default()
        };
        let schema = lake.scan_schema(&options).unwrap();
        let batches = lake.scan(0..total, &options).unwrap();
        concat_batches(&schema, &batches.collect_batches().unwrap()).unwrap()
    };
    let (plain, views) = (scan(false), scan(true));
    assert_eq!(plain.num_rows() as u64, total);
    let mut strings = 0;
    for (i, f) in plain.schema().fields().iter().enumerate() {
        let v = views.column(i);
        if f.data_type() == &DataType::Utf8 {
            strings += 1;
            assert_eq!(views.schema().field(i).data_type(), &DataType::Utf8View);
            let back = arrow_cast::cast(v, &DataType::Utf8).unwrap();
            assert_eq!(back.to_data(), plain.column(i).to_data(), "{}", f.name());
        } else {
            assert_eq!(v.to_data(), plain.column(i).to_data(), "{}", f.name());
        }
    }
    assert!(strings > 0);
}
