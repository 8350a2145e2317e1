//! Queries against the full read: a time range, a projection, tag filters and the batch size
//! must give exactly the rows and columns of the full read, filtered — on every corpus file,
//! so that page/chunk skipping and `skip(n)` inside cut pages are exercised on real files.

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, RecordBatch};
use arrow_schema::{DataType, TimeUnit};
use arrow_select::filter::filter_record_batch;
use tsfile_index::arrow_types::TimeRepr;
use tsfile_index::query::{TableQuery, TreeQuery};
use tsfile_index::{ReadOptions, TimeRange, TsFileReader};

use crate::common::corpus_files;

fn times(batch: &RecordBatch) -> Vec<i64> {
    batch
        .column(0)
        .as_primitive::<Int64Type>()
        .values()
        .to_vec()
}

/// The rows of `full` whose time lies in `[lo, hi]`.
fn expected(full: &RecordBatch, lo: i64, hi: i64) -> RecordBatch {
    let mask: arrow_array::BooleanArray = times(full)
        .iter()
        .map(|t| Some((lo..=hi).contains(t)))
        .collect();
    filter_record_batch(full, &mask).unwrap()
}

/// Cut points inside the data: the 10th, 37th and 80th percentiles of the times.
fn windows(ts: &[i64]) -> Vec<(i64, i64)> {
    let mut sorted = ts.to_vec();
    sorted.sort_unstable();
    let at = |q: usize| sorted[(sorted.len() - 1) * q / 100];
    vec![
        (at(10), at(37)),
        (at(37), at(80)),
        (at(80), at(80)),
        (i64::MIN, at(10)),
        (at(80) + 1, i64::MAX),
    ]
}

#[test]
fn time_ranges_equal_the_filtered_full_read() {
    let mut checked = 0;
    for path in corpus_files() {
        let reader = TsFileReader::open(&path)
            .unwrap()
            .with_options(ReadOptions {
                time: TimeRepr::Int64,
            });
        if reader.is_table_model() {
            for t in reader.table_schemas() {
                let full = reader
                    .read_table(&t.table_name, &TableQuery::default())
                    .unwrap();
                if full.num_rows() == 0 {
                    continue;
                }
                for (lo, hi) in windows(&times(&full)) {
                    let query = TableQuery {
                        time_range: TimeRange::new(Some(lo), Some(hi)),
                        ..TableQuery::default()
                    };
                    let got = reader.read_table(&t.table_name, &query).unwrap();
                    // Rows come device by device, so filter the full read the same way.
                    assert_eq!(
                        got,
                        expected(&full, lo, hi),
                        "{} {} [{lo}, {hi}]",
                        path.display(),
                        t.table_name
                    );
                    checked += 1;
                }
            }
        } else {
            for device in reader.devices().unwrap() {
                let device = device.unwrap();
                let full = reader.read_device(&device, &TreeQuery::default()).unwrap();
                if full.num_rows() == 0 {
                    continue;
                }
                for (lo, hi) in windows(&times(&full)) {
                    let query = TreeQuery {
                        time_range: TimeRange::new(Some(lo), Some(hi)),
                        ..TreeQuery::default()
                    };
                    let got = reader.read_device(&device, &query).unwrap();
                    // Non-aligned series merged by time: a row exists when any series has a
                    // point in range, which is exactly the filtered full read.
                    assert_eq!(
                        got,
                        expected(&full, lo, hi),
                        "{} {} [{lo}, {hi}]",
                        path.display(),
                        device.path()
                    );
                    checked += 1;
                }
            }
        }
    }
    if checked > 0 {
        assert!(checked > 100, "only {checked} windows checked");
    }
}

#[test]
fn projection_tags_batches_and_time_unit() {
    let Some(dir) = crate::common::corpus("tsfile") else {
        return;
    };
    let reader = TsFileReader::open(dir.join("table_null_tags.tsfile")).unwrap();
    let full = reader.read_table("tags", &TableQuery::default()).unwrap();
    assert_eq!(
        full.schema().field(0).data_type(),
        &DataType::Timestamp(TimeUnit::Millisecond, None)
    );
    // Projection: any order, `time` optional.
    let q = TableQuery {
        columns: Some(vec!["txt".into(), "a".into()]),
        ..TableQuery::default()
    };
    let got = reader.read_table("tags", &q).unwrap();
    let names: Vec<String> = got
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    assert_eq!(names, ["txt", "a"]);
    assert_eq!(got.num_rows(), full.num_rows());
    assert_eq!(got.column(0), full.column_by_name("txt").unwrap());
    // Tag filter: only rows whose tag `a` is "p" and `b` is "x".
    let q = TableQuery {
        tags: vec![
            ("a".into(), Some("p".into())),
            ("b".into(), Some("x".into())),
        ],
        ..TableQuery::default()
    };
    let got = reader.read_table("tags", &q).unwrap();
    let a = full.column_by_name("a").unwrap().as_string::<i32>();
    let b = full.column_by_name("b").unwrap().as_string::<i32>();
    let want = (0..full.num_rows())
        .filter(|&i| a.is_valid(i) && a.value(i) == "p" && b.is_valid(i) && b.value(i) == "x")
        .count();
    assert!(want > 0);
    assert_eq!(got.num_rows(), want);
    // A null tag is matched by `None`.
    let q = TableQuery {
        tags: vec![("a".into(), None)],
        ..TableQuery::default()
    };
    let got = reader.read_table("tags", &q).unwrap();
    assert_eq!(got.num_rows(), a.null_count());
    // Batch size: no batch above it, same rows in the same order.
    let q = TableQuery {
        batch_size: 7,
        ..TableQuery::default()
    };
    let batches: Vec<RecordBatch> = reader
        .query_table("tags", &q)
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert!(
        batches
            .iter()
            .all(|b| b.num_rows() <= 7 && b.num_rows() > 0)
    );
    let joined = arrow_select::concat::concat_batches(&full.schema(), &batches).unwrap();
    assert_eq!(joined, full);
    // Unknown names are errors for tables.
    let q = TableQuery {
        columns: Some(vec!["nope".into()]),
        ..TableQuery::default()
    };
    assert!(reader.read_table("tags", &q).is_err());
    assert!(reader.read_table("nope", &TableQuery::default()).is_err());
    // Tree model: batches of a device.
    let tree = TsFileReader::open(dir.join("tree_multi_page.tsfile")).unwrap();
    let device = tree.devices().unwrap().next().unwrap().unwrap();
    let whole = tree.read_device(&device, &TreeQuery::default()).unwrap();
    let q = TreeQuery {
        batch_size: 100,
        ..TreeQuery::default()
    };
    let parts = tree.query_device(&device, &q).unwrap();
    assert!(parts.len() > 1 && parts.iter().all(|b| b.num_rows() <= 100));
    assert_eq!(
        arrow_select::concat::concat_batches(&whole.schema(), &parts).unwrap(),
        whole
    );
    // Other time units and raw Int64.
    let micros = reader.clone_with_options(ReadOptions {
        time: TimeRepr::Timestamp(TimeUnit::Microsecond),
    });
    let got = micros.read_table("tags", &TableQuery::default()).unwrap();
    assert_eq!(
        got.schema().field(0).data_type(),
        &DataType::Timestamp(TimeUnit::Microsecond, None)
    );
    let raw = reader.clone_with_options(ReadOptions {
        time: TimeRepr::Int64,
    });
    let got = raw.read_table("tags", &TableQuery::default()).unwrap();
    assert_eq!(got.schema().field(0).data_type(), &DataType::Int64);
}
