//! The query set against DuckDB: a copy of the CSV/TSV/PSV/NDJSON/JSON/Parquet files of the
//! conformance lake is mapped and registered as `lake`, its `big/` files again as a second
//! lake `big`; DuckDB reads the same files into views of the same names (its own row counts
//! give `_gid`); every query must return the same rows in both.

use bazan_sql::SqlSession;

use crate::common::{assert_same_rows, duckdb, duckdb_readable, duckdb_view, mapped_copy, rows};

/// `(query, ordered)`: `ordered` compares rows in order (the query has a total ORDER BY).
const QUERIES: &[(&str, bool)] = &[
    // Whole-lake aggregates.
    ("select count(*) from lake", false),
    (
        "select count(*), count(qty), sum(qty), min(price), max(price) from lake",
        false,
    ),
    (
        "select count(distinct name), count(distinct code) from lake",
        false,
    ),
    ("select avg(qty), avg(price), avg(v) from lake", false),
    ("select min(day), max(day), count(day) from lake", false),
    // Filters on file columns (statistics prune files, DataFusion filters rows).
    (
        "select _gid, name, qty from lake where qty > 990000 order by _gid",
        true,
    ),
    (
        "select count(*) from lake where price between -100 and 100",
        false,
    ),
    ("select count(*), sum(v) from lake where v > 99000", false),
    (
        "select count(*) from lake where code >= 'kz' and code < 'kzz'",
        false,
    ),
    (
        "select _gid, name from lake where name = 'zulu' order by _gid",
        true,
    ),
    ("select count(*) from lake where flag = true", false),
    ("select count(*) from lake where qty is null", false),
    (
        "select _gid, x from lake where x < -9999.9 order by _gid",
        true,
    ),
    // Group by.
    (
        "select _path, count(*), sum(qty), min(gid), max(gid) from lake group by _path",
        false,
    ),
    (
        "select code, count(*), sum(v) from lake where code is not null group by code order by count(*) desc, code limit 10",
        true,
    ),
    (
        "select _path, count(*) from lake group by _path having count(*) > 1000",
        false,
    ),
    (
        "select qty % 7 as m, count(*) from lake where qty is not null group by qty % 7",
        false,
    ),
    // Order by + limit.
    (
        "select _gid, name, price from lake where price is not null order by price desc, _gid limit 15",
        true,
    ),
    (
        "select _gid, v from lake where v is not null order by v, _gid limit 7",
        true,
    ),
    ("select _gid from lake order by _gid desc limit 3", true),
    // `_gid` ranges (exact: served by reading only those rows).
    (
        "select _gid, gid, name, qty from lake where _gid between 1000 and 1100 order by _gid",
        true,
    ),
    (
        "select _gid, gid, code from lake where _gid in (0, 5, 70000, 200123, 400000) order by _gid",
        true,
    ),
    (
        "select count(*), min(_gid), max(_gid) from lake where _gid < 10 or _gid >= 300000",
        false,
    ),
    (
        "select _gid, _path from lake where _gid >= 123456 and _gid < 123460 order by _gid",
        true,
    ),
    (
        "select count(*) from lake where _gid not between 10 and 400000",
        false,
    ),
    // `_path` filters (exact: file pruning).
    (
        "select count(*), sum(qty) from lake where _path = 'alpha.csv'",
        false,
    ),
    (
        "select _path, count(*) from lake where _path like 'big/%' group by _path",
        false,
    ),
    (
        "select _path, count(*) from lake where _path in ('data.csv', 'file2.csv', 'json/lines.json') group by _path",
        false,
    ),
    (
        "select count(*) from lake where _path not like '%.parquet'",
        false,
    ),
    (
        "select _gid, name from lake where _path = 'file10.csv' and _gid % 10 = 3 order by _gid",
        true,
    ),
    // Window functions.
    (
        "select _gid, qty, sum(qty) over (order by _gid rows between 2 preceding and current row) from lake where _path = 'file10.csv' order by _gid",
        true,
    ),
    (
        "select _path, name, r from (select _path, name, _gid, rank() over (partition by _path order by qty desc nulls last, _gid) r from lake where _path like 'data%') t where r <= 3 order by _path, r",
        true,
    ),
    (
        "select _gid, v, lag(v) over (order by _gid) from lake where _gid between 200000 and 200020 order by _gid",
        true,
    ),
    // Joins of two lakes, subqueries, unions.
    (
        "select count(*), sum(a.qty), sum(b.v) from lake a join big b on a._gid = b._gid",
        false,
    ),
    (
        "select b.code, count(*) from lake a join big b on a.qty % 100 = b.v % 100 where a._path = 'file2.csv' and b._gid < 1000 group by b.code order by b.code limit 20",
        true,
    ),
    (
        "select count(*) from lake where qty > (select avg(qty) from lake)",
        false,
    ),
    (
        "select _path, count(*) from (select _path from lake where _path like 'json/%' union all select _path from big where _gid < 10) t group by _path",
        false,
    ),
    (
        "select case when qty < 0 then 'neg' when qty > 0 then 'pos' else 'zero' end s, count(*) from lake where qty is not null group by 1",
        false,
    ),
    (
        "select count(*) from (select * from lake limit 10) t",
        false,
    ),
];

#[test]
fn queries_equal_duckdb() {
    let Some((_dir, lake)) = mapped_copy(&duckdb_readable) else {
        return;
    };
    let Some((_big_dir, big)) = mapped_copy(&|r: &str| r.starts_with("big/") && duckdb_readable(r))
    else {
        return;
    };
    let session = SqlSession::with_threads(4).expect("session");
    session
        .register_lake_map("lake", lake.clone())
        .expect("register lake");
    session
        .register_lake_map("big", big.clone())
        .expect("register big");
    let queries: Vec<String> = QUERIES.iter().map(|(q, _)| q.to_string()).collect();
    let views = serde_json::json!({"lake": duckdb_view(&lake), "big": duckdb_view(&big)});
    let Some(theirs) = duckdb(views, &queries) else {
        return;
    };
    assert!(QUERIES.len() >= 30);
    for ((query, ordered), theirs) in QUERIES.iter().zip(theirs) {
        let theirs = theirs.unwrap_or_else(|e| panic!("{query}: DuckDB failed: {e}"));
        let (_, batches) = session
            .sql(query)
            .unwrap_or_else(|e| panic!("{query}: bazan-sql failed: {e}"));
        assert_same_rows(query, &rows(&batches), &theirs, *ordered);
    }
}
