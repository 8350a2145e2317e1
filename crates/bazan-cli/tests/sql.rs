//! `bazan sql` (feature `sql`): counts from the map, `_gid` ranges, joins with a TsFile,
//! every output format, and exit 2 with DataFusion's message for a bad query.

use std::path::Path;

use serde_json::Value;

use crate::common::{TESTDATA_LAKE, bazan, copy_tree};

fn ndjson(stdout: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON row"))
        .collect()
}

#[test]
fn sql_over_a_lake_and_a_tsfile() {
    let dir = tempfile::tempdir().expect("temp dir");
    copy_tree(Path::new(TESTDATA_LAKE), dir.path(), &[".br_map.bazan"]);
    let root = dir.path().to_str().expect("utf-8 path");
    let made = bazan(&["map", "create", root, "--json"]);
    assert!(made.status.success());
    let map: Value = serde_json::from_slice(&made.stdout).expect("json");

    let out = bazan(&[
        "sql",
        root,
        "select count(*) as n from lake",
        "--format",
        "ndjson",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        ndjson(&out.stdout),
        vec![serde_json::json!({"n": map["total_rows"]})]
    );

    // A _gid range names the same rows as `slice`.
    let out = bazan(&[
        "sql",
        root,
        "select _gid, _path from lake where _gid between 4200 and 4204 order by _gid",
        "--format",
        "ndjson",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows = ndjson(&out.stdout);
    assert_eq!(rows.len(), 5);
    assert_eq!(rows[0]["_gid"], 4200);
    let located: Value = serde_json::from_slice(&bazan(&["locate", root, "4200", "--json"]).stdout)
        .expect("locate json");
    assert_eq!(rows[0]["_path"], located["path"]);

    // A TsFile beside the lake, by name.
    let ts = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/tsfile/table.tsfile"
    );
    let spec = format!("t={ts}");
    let out = bazan(&[
        "sql",
        root,
        "select count(*) as n from t",
        "--table",
        &spec,
        "--format",
        "csv",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("n\n"), "{text}");

    // Arrow IPC output reads back.
    let out = bazan(&[
        "sql",
        root,
        "select _gid from lake limit 3",
        "--format",
        "arrow",
    ]);
    assert!(out.status.success());
    let reader = arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(out.stdout), None)
        .expect("an IPC stream");
    let rows: usize = reader.map(|b| b.expect("batch").num_rows()).sum();
    assert_eq!(rows, 3);

    // A bad query: DataFusion's message on one error line, exit 2.
    let out = bazan(&["sql", root, "select nope from lake"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with("error: ") && err.contains("nope"), "{err}");
    let out = bazan(&["sql", root, "selec 1"]);
    assert_eq!(out.status.code(), Some(2));
    // A type error of the planner has a several-line message: still one error line.
    let out = bazan(&["sql", root, "select count(*) from lake where _gid >= now()"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
}
