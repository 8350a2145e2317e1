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

/// The estimate of the bytes a scan reads (what the Python package uses to tell a short
/// call from a long one): nothing for an empty range, at most the lake, and one file's size
/// at most for a range inside that file; never less for a longer range.
#[test]
fn scan_estimates_stay_within_the_files_they_read() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("id,name\n");
    for i in 0..5_000 {
        text.push_str(&format!("{i},\"row, {i}\"\n"));
    }
    std::fs::write(dir.path().join("a.csv"), &text).unwrap();
    std::fs::write(dir.path().join("b.csv"), &text).unwrap();
    let options = bazan::CreateOptions {
        stride: 1_000,
        ..bazan::CreateOptions::default()
    };
    let lake = bazan::create_map(dir.path(), &options).unwrap().lake;
    let size = text.len() as u64;
    assert_eq!(lake.total_rows(), 10_000);
    assert_eq!(lake.estimated_scan_bytes(7..7), 0);
    assert_eq!(lake.estimated_scan_bytes(0..10_000), 2 * size);
    let one = lake.estimated_scan_bytes(4_000..4_010);
    assert!(one > 0 && one < size, "{one}");
    // Both files: more than either alone.
    assert!(lake.estimated_scan_bytes(4_990..5_010) > one);
    let mut last = 0;
    for len in [1, 10, 100, 1_000, 5_000] {
        let e = lake.estimated_scan_bytes(0..len);
        assert!(e >= last && e <= size, "{len}: {e}");
        last = e;
    }
}
