//! Two datafusion-distributed workers (in this process, plans and batches serialized between
//! coordinator and workers) run the same queries as one node, with the same rows, and both
//! workers take part.

use std::sync::atomic::Ordering;

use bazan_sql::SqlSession;
use bazan_sql::distributed::InProcessCluster;

use crate::common::{assert_same_rows, mapped_copy, rows};

#[test]
fn two_workers_return_what_one_node_returns() {
    // Every format, but of the large files only the Parquet one (debug builds are slow).
    let keep = |r: &str| {
        (r.ends_with(".parquet") || !r.starts_with("big/")) && r != "msgpack/stream.msgpack"
    };
    let Some((_dir, lake)) = mapped_copy(&keep) else {
        return;
    };
    let single = SqlSession::with_threads(2).expect("session");
    single
        .register_lake_map("lake", lake.clone())
        .expect("register");
    let cluster = InProcessCluster::new(2).expect("cluster");
    let dist =
        SqlSession::from_context(cluster.session_context(2), 2).expect("distributed session");
    dist.register_lake_map("lake", lake).expect("register");
    let queries = [
        "select _path, count(*), sum(v), count(qty), min(price), max(price) from lake group by _path",
        "select code, count(*), sum(v) from lake where code is not null group by code",
        "select count(*), sum(v), count(name) from lake where _gid between 1000 and 100000",
        "select a.code, count(*) from lake a join lake b on a._gid = b._gid + 1 where a._gid between 40000 and 60000 and b._path like 'big/%' group by a.code",
    ];
    for q in queries {
        let (_, one) = single.sql(q).unwrap_or_else(|e| panic!("{q}: {e}"));
        let (_, two) = dist
            .sql(q)
            .unwrap_or_else(|e| panic!("{q} (distributed): {e}"));
        assert_same_rows(q, &rows(&two), &rows(&one), false);
    }
    let plan = dist.explain(queries[0]).expect("explain");
    assert!(plan.contains("DistributedExec"), "{plan}");
    for (i, w) in cluster.counts().iter().enumerate() {
        assert!(
            w.tasks.load(Ordering::Relaxed) > 0,
            "worker {i} ran no task: {:?}",
            cluster
        );
        assert!(w.plan_bytes.load(Ordering::Relaxed) > 0);
        assert!(w.batch_bytes.load(Ordering::Relaxed) > 0);
    }
}
