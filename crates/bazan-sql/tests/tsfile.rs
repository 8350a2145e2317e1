//! TsFile tables: names, every row, time ranges and tag equality pushed into the reader,
//! each checked against the facade's own table query.

use std::path::{Path, PathBuf};

use bazan::tsfile::Query;
use bazan_sql::SqlSession;
use serde_json::Value;

use crate::common::{assert_same_rows, rows};

fn corpus(name: &str) -> Option<PathBuf> {
    let lake = crate::common::conformance_lake()?;
    let p = lake.join("../../tsfile").join(format!("{name}.tsfile"));
    if p.is_file() {
        Some(p)
    } else {
        println!("skipped: no {}", p.display());
        None
    }
}

/// The facade's rows of a table, with an optional time range and tag filter.
fn facade(
    path: &Path,
    table: &str,
    start: Option<i64>,
    end: Option<i64>,
    tags: Vec<(String, String)>,
) -> Vec<Vec<Value>> {
    let q = Query {
        table: Some(table.to_string()),
        start_time: start,
        end_time: end,
        tags,
        ..Default::default()
    };
    let (_, batches) = bazan::tsfile::query(path, &q).expect("facade query");
    rows(&batches)
}

#[test]
fn several_tables_get_suffixed_names() {
    let Some(path) = corpus("table_multi_tables") else {
        return;
    };
    let s = SqlSession::with_threads(2).expect("session");
    let names = s.register_tsfile("t", &path).expect("register");
    let tables = bazan::tsfile::table_names(&path).expect("tables");
    assert!(tables.len() > 1);
    assert_eq!(
        names,
        tables.iter().map(|t| format!("t_{t}")).collect::<Vec<_>>()
    );
    for (name, table) in names.iter().zip(&tables) {
        let (_, b) = s.sql(&format!("select * from {name}")).expect("select *");
        assert_same_rows(
            name,
            &rows(&b),
            &facade(&path, table, None, None, vec![]),
            false,
        );
    }
    let one = corpus("table_multi_chunk").expect("corpus");
    assert_eq!(
        s.register_tsfile("m", &one).expect("one table"),
        vec!["m".to_string()]
    );
}

#[test]
fn time_ranges_and_tags_are_pushed_down() {
    let Some(path) = corpus("table_many_devices") else {
        return;
    };
    let table = bazan::tsfile::table_names(&path).expect("tables").remove(0);
    let s = SqlSession::with_threads(2).expect("session");
    s.register_tsfile("t", &path).expect("register");
    let all = facade(&path, &table, None, None, vec![]);
    let (_, b) = s.sql("select * from t").expect("all");
    assert_same_rows("select * from t", &rows(&b), &all, false);

    // A time window in the middle of the data, as raw milliseconds.
    let (_, b) = s
        .sql("select min(cast(time as bigint)), max(cast(time as bigint)) from t")
        .expect("range");
    let r = rows(&b);
    let (lo, hi) = (
        r[0][0].as_i64().expect("min"),
        r[0][1].as_i64().expect("max"),
    );
    let (a, z) = (lo + (hi - lo) / 3, lo + 2 * (hi - lo) / 3);
    let query = format!(
        "select * from t where time >= to_timestamp_millis({a}) and time <= to_timestamp_millis({z})"
    );
    let plan = s.explain(&query).expect("explain");
    assert!(plan.contains(&format!("time=[{a}, {z}]")), "{plan}");
    assert!(
        !plan.contains("FilterExec"),
        "the time filter is exact: {plan}"
    );
    let (_, b) = s.sql(&query).expect("time window");
    let want = facade(&path, &table, Some(a), Some(z), vec![]);
    assert!(!want.is_empty() && want.len() < all.len());
    assert_same_rows(&query, &rows(&b), &want, false);

    // Tag equality: the first tag column's value in the first row.
    let provider = bazan_sql::TsFileTable::open(&path, &table).expect("table");
    let tag_col = provider.tags().first().expect("a tag column").clone();
    let (_, b) = s
        .sql(&format!(
            "select {tag_col} from t where {tag_col} is not null limit 1"
        ))
        .expect("first tag");
    let value = rows(&b)[0][0].as_str().expect("a tag value").to_string();
    let query =
        format!("select * from t where {tag_col} = '{value}' and time <= to_timestamp_millis({z})");
    let plan = s.explain(&query).expect("explain");
    assert!(
        plan.contains(&value) && !plan.contains("FilterExec"),
        "{plan}"
    );
    let (_, b) = s.sql(&query).expect("tag filter");
    let want = facade(&path, &table, None, Some(z), vec![(tag_col, value)]);
    assert!(!want.is_empty());
    assert_same_rows(&query, &rows(&b), &want, false);

    // Projection and count(*).
    let (_, b) = s.sql("select count(*) from t").expect("count");
    assert_eq!(rows(&b)[0][0].as_u64(), Some(all.len() as u64));
}
