//! `ScanOptions::string_views`: the same values, Utf8 columns and `_path` as Utf8View.

use std::path::Path;
use std::sync::Arc;

use arrow_array::Array;
use arrow_schema::DataType;
use arrow_select::concat::concat_batches;
use bazan::ScanOptions;

/// A scan with string views returns the plain scan's values, its Utf8 columns and its
/// dictionary `_path` as Utf8View, over Parquet files (decoded as views) and a CSV file
/// (cast).
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
        if f.data_type() == &DataType::Utf8 || f.name() == bazan::PATH_COLUMN {
            strings += 1;
            assert_eq!(views.schema().field(i).data_type(), &DataType::Utf8View);
            let back = arrow_cast::cast(v, &DataType::Utf8).unwrap();
            let want = arrow_cast::cast(plain.column(i), &DataType::Utf8).unwrap();
            assert_eq!(back.to_data(), want.to_data(), "{}", f.name());
        } else {
            assert_eq!(v.to_data(), plain.column(i).to_data(), "{}", f.name());
        }
    }
    assert!(strings > 0);
}

/// `map_rows` gives the `_gid` and `_path` a read of the same rows gives, in batches of at
/// most the batch size, without opening the file: a file changed after mapping is not
/// noticed (the read of its rows is `Stale`). A column of the files is refused.
#[test]
fn map_rows_are_the_virtual_columns_of_a_read() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("id\n");
    for i in 0..2_500 {
        text.push_str(&format!("{i}\n"));
    }
    std::fs::write(dir.path().join("a.csv"), "id\n1\n2\n").unwrap();
    std::fs::write(dir.path().join("b.csv"), &text).unwrap();
    let lake = Arc::new(
        bazan::create_map(dir.path(), &bazan::CreateOptions::default())
            .unwrap()
            .lake,
    );
    let options = ScanOptions {
        columns: Some(vec![
            bazan::PATH_COLUMN.to_string(),
            bazan::GID_COLUMN.to_string(),
        ]),
        batch_size: 1_000,
        string_views: true,
        ..ScanOptions::default()
    };
    let schema = lake.scan_schema(&options).unwrap();
    let from_map = lake.map_rows(1, 100..2_600, &options).unwrap();
    assert_eq!(from_map.schema(), schema);
    let batches = from_map.collect_batches().unwrap();
    let rows: Vec<usize> = batches.iter().map(|b| b.num_rows()).collect();
    assert_eq!(rows, [1_000, 1_000, 400]);
    let read = lake.read_file_rows(1, 100..2_600, &options).unwrap();
    let want = concat_batches(&schema, &read.collect_batches().unwrap()).unwrap();
    assert_eq!(concat_batches(&schema, &batches).unwrap(), want);
    assert_eq!(
        arrow_cast::display::array_value_to_string(want.column(1), 0).unwrap(),
        "102"
    );

    std::fs::write(dir.path().join("b.csv"), "id\n7\n").unwrap();
    assert!(
        lake.map_rows(1, 0..10, &options)
            .unwrap()
            .next()
            .unwrap()
            .is_ok()
    );
    let stale = lake
        .read_file_rows(1, 0..10, &options)
        .unwrap()
        .next_batch();
    assert_eq!(stale.unwrap().unwrap_err().kind(), bazan::ErrorKind::Stale);
    let id = ScanOptions {
        columns: Some(vec!["id".to_string()]),
        ..ScanOptions::default()
    };
    assert!(lake.map_rows(1, 0..10, &id).is_err());
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

/// A short read decoded in two halves at once comes back as two batches when the file has
/// every output column, and as one when the file lacks some (its halves are joined before
/// the missing columns are added as nulls): the same rows either way.
#[test]
fn halves_are_joined_when_a_file_lacks_columns() {
    let dir = tempfile::tempdir().unwrap();
    let mut wide = String::from("id,note\n");
    for i in 0..20_000 {
        wide.push_str(&format!("{i},\"a, \"\"quoted\"\" note\nof row {i}\"\n"));
    }
    std::fs::write(dir.path().join("a.csv"), &wide).unwrap();
    std::fs::write(dir.path().join("b.csv"), "id,extra\n1,x\n").unwrap();
    let lake = Arc::new(
        bazan::create_map(dir.path(), &bazan::CreateOptions::default())
            .unwrap()
            .lake,
    );
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    let read = |columns: Option<Vec<String>>| {
        let options = ScanOptions {
            columns,
            ..ScanOptions::default()
        };
        let schema = lake.scan_schema(&options).unwrap();
        let batches = pool.install(|| {
            lake.scan(10_000..13_000, &options)
                .unwrap()
                .collect_batches()
                .unwrap()
        });
        let rows: Vec<usize> = batches.iter().map(|b| b.num_rows()).collect();
        (rows, concat_batches(&schema, &batches).unwrap())
    };
    // `a.csv` has both of these: its halves stay apart.
    let own = Some(vec!["id".to_string(), "note".to_string()]);
    let (rows, apart) = read(own);
    // Cut at the map's fine checkpoint nearest the middle (row 11,520 = 45 x 256), not by
    // skipping to the middle record.
    assert_eq!(rows, [1_520, 1_480]);
    // It lacks `extra`: one batch, holding the same id and note values.
    let (rows, joined) = read(None);
    assert_eq!(rows, [3_000]);
    assert_eq!(joined.num_columns(), 3);
    assert_eq!(joined.column(2).null_count(), 3_000);
    for i in 0..2 {
        assert_eq!(joined.column(i).to_data(), apart.column(i).to_data());
    }
}
