//! Plan serialization with datafusion-proto and the bazan codec: plan → bytes → plan gives
//! the same rows, for lake and TsFile scans; a map that differs on the decoding side is
//! refused.

use std::sync::Arc;

use bazan_sql::SqlSession;
use bazan_sql::codec::BazanCodec;
use datafusion::physical_plan::collect;
use datafusion_proto::bytes::{
    physical_plan_from_bytes_with_extension_codec, physical_plan_to_bytes_with_extension_codec,
};

use crate::common::{assert_same_rows, mapped_copy, rows};

fn round_trip(s: &SqlSession, query: &str) {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let ctx = s.context();
    let plan = rt.block_on(s.plan_async(query)).expect("plan");
    let codec = BazanCodec::new();
    let bytes =
        physical_plan_to_bytes_with_extension_codec(Arc::clone(&plan), &codec).expect("encode");
    // A fresh context and codec decode it, as a remote worker would.
    let other = datafusion::prelude::SessionContext::new();
    let decoded = physical_plan_from_bytes_with_extension_codec(
        &bytes,
        &other.task_ctx(),
        &BazanCodec::new(),
    )
    .expect("decode");
    let a = rt
        .block_on(collect(plan, ctx.task_ctx()))
        .expect("run original");
    let b = rt
        .block_on(collect(decoded, other.task_ctx()))
        .expect("run decoded");
    assert!(!rows(&a).is_empty(), "{query}");
    assert_same_rows(query, &rows(&b), &rows(&a), false);
}

#[test]
fn lake_plans_round_trip() {
    let Some((_dir, lake)) = mapped_copy(&|_| true) else {
        return;
    };
    let s = SqlSession::with_threads(3).expect("session");
    s.register_lake_map("lake", lake).expect("register");
    for q in [
        "select _path, count(*), sum(v), max(price) from lake group by _path",
        "select _gid, name, _path from lake where _gid between 5000 and 5100",
        "select code, v from lake where v > 99000 and _path like 'big/%'",
    ] {
        round_trip(&s, q);
    }
}

#[test]
fn tsfile_plans_round_trip() {
    let Some(lake) = crate::common::conformance_lake() else {
        return;
    };
    let path = lake.join("../../tsfile/table_multi_chunk.tsfile");
    let s = SqlSession::with_threads(2).expect("session");
    s.register_tsfile("t", &path).expect("register");
    round_trip(&s, "select * from t where time >= to_timestamp_millis(0)");
}

#[test]
fn a_different_map_is_refused() {
    let Some((dir, lake)) = mapped_copy(&|r| r == "alpha.csv" || r == "data.csv") else {
        return;
    };
    let s = SqlSession::with_threads(1).expect("session");
    s.register_lake_map("lake", lake).expect("register");
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let plan = rt
        .block_on(s.plan_async("select name from lake"))
        .expect("plan");
    let bytes =
        physical_plan_to_bytes_with_extension_codec(plan, &BazanCodec::new()).expect("encode");
    // The lake changes and is mapped again before a worker decodes the plan.
    std::fs::write(
        dir.path().join("data.csv"),
        "gid,name,qty,price\n1,x,2,3.0\n",
    )
    .expect("rewrite");
    bazan::create_map(dir.path(), &bazan::CreateOptions::default()).expect("remap");
    let ctx = datafusion::prelude::SessionContext::new();
    let err =
        physical_plan_from_bytes_with_extension_codec(&bytes, &ctx.task_ctx(), &BazanCodec::new())
            .expect_err("the map differs");
    assert!(err.to_string().contains("data.csv"), "{err}");
}
