//! The lake table beyond DuckDB: formats DuckDB cannot read against `Lake::scan`, exact
//! counts without reading, the stale check, pushdown counters, partitions, bad SQL.

use std::sync::Arc;

use bazan_sql::{Error, SqlSession};

use crate::common::{assert_same_rows, ext, mapped_copy, rows};

fn session(lake: &Arc<bazan::Lake>) -> SqlSession {
    let s = SqlSession::with_threads(4).expect("session");
    s.register_lake_map("lake", Arc::clone(lake))
        .expect("register");
    s
}

/// Every file of every format equals the facade's scan of its global rows.
#[test]
fn every_file_equals_lake_scan() {
    let Some((_dir, lake)) = mapped_copy(&|_| true) else {
        return;
    };
    let s = session(&lake);
    let map = lake.map();
    let mut formats = std::collections::BTreeSet::new();
    for i in 0..map.total_files() {
        let e = map.entry(i);
        let query = format!(
            "select * from lake where _path = '{}' order by _gid",
            e.path.replace('\'', "''")
        );
        let (_, ours) = s.sql(&query).unwrap_or_else(|err| panic!("{query}: {err}"));
        let range = e.first_global_row..e.first_global_row + e.row_count;
        let options = bazan::ScanOptions {
            with_gid: true,
            with_path: true,
            ..Default::default()
        };
        let theirs = lake
            .scan(range, &options)
            .expect("scan")
            .collect_batches()
            .expect("rows");
        // The facade's `_path` is dictionary-encoded: `rows` shows both as text.
        assert_same_rows(&query, &rows(&ours), &rows(&theirs), true);
        formats.insert(ext(e.path).to_string());
    }
    for f in [
        "orc", "avro", "arrow", "feather", "arrows", "xlsx", "msgpack", "txt",
    ] {
        assert!(formats.contains(f), "the lake has no .{f} file");
    }
}

/// `count(*)` comes from the map: with every file grown after mapping, a trusting session
/// (`set_trust_map`) still answers from the map and opens no file, while a query reading
/// values fails; a default session checks the files first and fails `Stale` naming one.
#[test]
fn count_star_reads_no_file() {
    let Some((dir, lake)) = mapped_copy(&|_| true) else {
        return;
    };
    let map = lake.map();
    for i in 0..map.total_files() {
        use std::io::Write as _;
        let path = dir.path().join(map.entry(i).path);
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .expect("open");
        f.write_all(b"\n").expect("grow");
    }
    let checked = session(&lake);
    for q in [
        "select count(*) from lake",
        "select count(*) from lake where _gid between 10 and 19 or _path = 'alpha.csv'",
        "select max(_gid) from lake where _gid < 50",
    ] {
        let err = checked.sql(q).expect_err("stale files");
        assert!(
            matches!(&err, Error::Bazan(e) if e.kind() == bazan::ErrorKind::Stale && e.path().is_some()),
            "{q}: {err:?}"
        );
    }
    let mut s = SqlSession::with_threads(4).expect("session");
    s.set_trust_map(true);
    s.register_lake_map("lake", Arc::clone(&lake))
        .expect("register");
    let out = s
        .sql_counted("select count(*) from lake")
        .expect("count(*)");
    assert_eq!(
        rows(&out.batches),
        vec![vec![serde_json::json!(lake.total_rows())]]
    );
    assert_eq!(out.counts.files_opened, 0);
    // Counts with exact filters are still answered from the map.
    let out = s
        .sql_counted(
            "select count(*) from lake where _gid between 10 and 19 or _path = 'alpha.csv'",
        )
        .expect("count with exact filters");
    let alpha = lake.map().find("alpha.csv").expect("alpha.csv").row_count;
    assert_eq!(
        rows(&out.batches),
        vec![vec![serde_json::json!(10 + alpha)]]
    );
    assert_eq!(out.counts.files_opened, 0);
    // Reading values opens files, and the first one refuses.
    let err = s.sql("select sum(v) from lake").expect_err("stale files");
    match &err {
        Error::Bazan(e) => {
            assert_eq!(e.kind(), bazan::ErrorKind::Stale, "{err}");
            assert!(e.path().is_some(), "{err}");
        }
        other => panic!("expected a stale error, got {other:?}"),
    }
}

/// One changed file after the map: `count(*)` and `_gid`-only queries over it fail `Stale`
/// naming it; queries whose scope leaves it out answer.
#[test]
fn map_answers_check_the_files_they_stand_for() {
    let Some((dir, lake)) = mapped_copy(&|r| r == "alpha.csv" || r == "data.csv") else {
        return;
    };
    let s = session(&lake);
    let alpha = lake.map().find("alpha.csv").expect("alpha.csv").row_count;
    std::fs::write(
        dir.path().join("data.csv"),
        "gid,name,qty,price\n1,x,2,3.0\n",
    )
    .expect("rewrite");
    for q in [
        "select count(*) from lake",
        "select _gid from lake where _gid >= 0",
        "select count(_gid), max(_gid) from lake",
        "select _path, count(*) from lake group by _path",
    ] {
        let err = s.sql(q).expect_err("stale");
        assert!(err.to_string().contains("data.csv"), "{q}: {err}");
        assert!(
            matches!(&err, Error::Bazan(e) if e.kind() == bazan::ErrorKind::Stale),
            "{q}: {err:?}"
        );
    }
    let (_, ok) = s
        .sql(&format!("select count(*) from lake where _gid < {alpha}"))
        .expect("alpha.csv alone is in scope");
    assert_eq!(rows(&ok), vec![vec![serde_json::json!(alpha)]]);
}

/// A changed file is an error naming it; other files still answer.
#[test]
fn stale_file_is_an_error_naming_it() {
    let Some((dir, lake)) = mapped_copy(&|r| r == "alpha.csv" || r == "data.csv") else {
        return;
    };
    let s = session(&lake);
    std::fs::write(
        dir.path().join("data.csv"),
        "gid,name,qty,price\n1,x,2,3.0\n",
    )
    .expect("rewrite");
    let err = s.sql("select count(name) from lake").expect_err("stale");
    let text = err.to_string();
    assert!(text.contains("data.csv"), "{text}");
    assert!(
        matches!(&err, Error::Bazan(e) if e.kind() == bazan::ErrorKind::Stale),
        "{err:?}"
    );
    let (_, ok) = s
        .sql("select count(name) from lake where _path = 'alpha.csv'")
        .expect("alpha.csv is unchanged");
    assert_eq!(ok[0].num_rows(), 1);
}

/// `_gid` ranges read only the blocks holding them; limits read only what they return;
/// statistics skip files; `_path` filters open only the files named.
#[test]
fn pushdown_reads_little() {
    let Some((_dir, lake)) = mapped_copy(&|_| true) else {
        return;
    };
    let s = session(&lake);
    let big = lake.map().find("big/stride_200k.csv").expect("big csv");
    let start = big.first_global_row + 150_000;
    let out = s
        .sql_counted(&format!(
            "select _gid, gid, code from lake where _gid between {start} and {}",
            start + 99
        ))
        .expect("gid range");
    assert_eq!(out.counts.rows_scanned, 100);
    assert_eq!(out.counts.files_opened, 1);
    assert!(out.counts.blocks_read <= 2, "{:?}", out.counts);

    let out = s
        .sql_counted("select name from lake limit 5")
        .expect("limit");
    assert_eq!(rows(&out.batches).len(), 5);
    assert!(out.counts.rows_scanned <= 5, "{:?}", out.counts);

    // One partition, so that each file is opened once.
    let one = SqlSession::with_threads(1).expect("session");
    one.register_lake_map("lake", Arc::clone(&lake))
        .expect("register");
    let out = one
        .sql_counted("select count(*) from lake where v > 99990")
        .expect("stats pruning");
    assert!(
        out.counts.files_opened <= 5,
        "files with v (the big/ ones and the msgpack stream) are the only candidates: {:?}",
        out.counts
    );

    // Block statistics skip the blocks of a kept file: `gid` rises through the big CSV.
    let out = one
        .sql_counted("select count(*), min(gid) from lake where gid between 540174 and 540183")
        .expect("block pruning");
    assert_eq!(rows_json(&out.batches), serde_json::json!([[10, 540174]]));
    let entry = (0..lake.total_files())
        .find(|&i| lake.map().entry(i).path == "big/stride_200k.csv")
        .expect("entry");
    let csv_blocks = lake.blocks(entry).expect("blocks").len() as u64;
    assert!(csv_blocks >= 4, "{csv_blocks}");
    assert!(
        out.counts.blocks_read < csv_blocks,
        "one of the big CSV's {csv_blocks} blocks holds those rows: {:?}",
        out.counts
    );

    let out = s
        .sql_counted("select sum(v) from lake where _path in ('alpha.csv', 'data.csv')")
        .expect("path filter");
    assert_eq!(out.counts.files_opened, 2);
}

/// One large file is read by several partitions, each a group of its blocks.
#[test]
fn one_large_file_is_split_across_partitions() {
    let Some((_dir, lake)) = mapped_copy(&|r| r == "big/stride_200k.csv") else {
        return;
    };
    let table = bazan_sql::LakeTable::new(Arc::clone(&lake)).expect("table");
    let scan = table.plan_scan(None, &[], None, 4).expect("plan");
    let parts = scan.partitions();
    assert_eq!(parts.len(), 4, "{parts:?}");
    let rows: u64 = parts.iter().flatten().map(|p| p.rows()).sum();
    assert_eq!(rows, 200_000);
    assert!(parts.iter().all(|p| p.len() == 1 && p[0].file == 0));
    // The partitions run in parallel and together return every row once.
    let s = session(&lake);
    let (_, b) = s
        .sql("select count(*), count(distinct gid), min(_gid), max(_gid) from lake where code is not null or code is null")
        .expect("query");
    assert_eq!(
        rows_json(&b),
        serde_json::json!([[200000, 200000, 0, 199999]])
    );
}

/// `sql_stream` hands out the first batch when the scan has read a few batches of a large
/// file, not the file, and then the rest of the rows; the stream's types are the table's
/// (strings and `_path` as Utf8View), the same `sql` returns.
#[test]
fn the_stream_yields_rows_before_the_scan_ends() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut text = String::from("id,name\n");
    for i in 0..400_000 {
        text.push_str(&format!("{i},n{}\n", i % 7));
    }
    std::fs::write(dir.path().join("a.csv"), &text).expect("write");
    let lake = bazan::create_map(dir.path(), &bazan::CreateOptions::default())
        .expect("map")
        .lake;
    let s = SqlSession::with_threads(2).expect("session");
    s.register_lake_map("lake", Arc::new(lake))
        .expect("register");
    let query = "select id, name, _path from lake";
    let mut stream = s.sql_stream(query).expect("stream");
    let first = stream.next_batch().expect("a batch").expect("rows");
    assert!(first.num_rows() > 0);
    let early = stream.counts().rows_scanned;
    assert!(
        early < 200_000,
        "{early} rows read before the first batch was taken"
    );
    let mut n = first.num_rows();
    while let Some(b) = stream.next_batch() {
        n += b.expect("rows").num_rows();
    }
    assert_eq!(n, 400_000);
    assert_eq!(stream.counts().rows_scanned, 400_000);
    let schema = stream.schema();
    for name in ["name", "_path"] {
        let field = schema.field_with_name(name).expect("column");
        assert_eq!(field.data_type(), &arrow_schema::DataType::Utf8View);
    }
    let (plain, _) = s.sql(query).expect("query");
    assert_eq!(plain, schema);
}

fn rows_json(b: &[arrow_array::RecordBatch]) -> serde_json::Value {
    serde_json::Value::Array(rows(b).into_iter().map(serde_json::Value::Array).collect())
}

/// Bad queries are errors with DataFusion's message, never panics.
#[test]
fn bad_sql_is_an_error() {
    let Some((_dir, lake)) = mapped_copy(&|r| r == "alpha.csv") else {
        return;
    };
    let s = session(&lake);
    for (query, needle) in [
        ("selec * from lake", "SQL error"),
        ("select nope from lake", "nope"),
        ("select * from missing_table", "missing_table"),
        ("select sum(name) from lake", "sum"),
        ("select * from lake where", "SQL error"),
    ] {
        let err = s.sql(query).expect_err(query);
        assert!(err.is_query(), "{query}: {err:?}");
        assert!(err.to_string().contains(needle), "{query}: {err}");
    }
}
