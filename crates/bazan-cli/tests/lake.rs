//! `bazan map create|show`, `locate` and `slice` on a copy of `testdata/lake`: the JSON
//! contract of `cli.md`, the output formats, and exit 2 with the path for stale files.

use std::path::Path;
use std::process::Output;

use serde_json::Value;

use crate::common::{TESTDATA_LAKE, bazan, copy_tree};

fn lake() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(Path::new(TESTDATA_LAKE), dir.path(), &[".br_map.bazan"]);
    dir
}

fn json(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn map_create_show_locate_slice() {
    let dir = lake();
    let root = dir.path().to_str().unwrap();
    let created = json(&bazan(&[
        "map", "create", root, "--json", "--stride", "100",
    ]));
    assert_eq!(created["map_schema"], 3);
    assert_eq!(created["checkpoint_stride_rows"], 100);
    assert_eq!(created["total_files"], 33);
    assert_eq!(created["total_rows"], 9151);
    let shown = json(&bazan(&["map", "show", root, "--json"]));
    assert_eq!(shown, created);
    let first = &shown["files"][0];
    for key in [
        "path",
        "format",
        "size_bytes",
        "mtime_ms",
        "row_count",
        "first_global_row",
        "columns",
        "blocks",
        "blake3",
        "stats",
    ] {
        assert!(first.get(key).is_some(), "files[0] has no {key}");
    }
    let human = bazan(&["map", "show", root]);
    let text = String::from_utf8(human.stdout).unwrap();
    assert!(text.contains("33 files, 9151 rows"), "{text}");

    let l = json(&bazan(&["locate", root, "4300", "--json"]));
    assert_eq!(l["path"], "nested/a/b/deep.parquet");
    assert_eq!(l["local_row"], 83);
    assert_eq!(l["format"], "parquet");
    assert_eq!(l["block"]["ordinal"], 0);
    let past = bazan(&["locate", root, "9151"]);
    assert_eq!(past.status.code(), Some(2));

    // 20 rows across the boundary of two files, as ndjson: gid is the global row.
    let out = bazan(&[
        "slice", root, "--start", "260", "--len", "20", "--format", "ndjson",
    ]);
    assert!(out.status.success());
    let lines: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let gids: Vec<i64> = lines.iter().map(|r| r["gid"].as_i64().unwrap()).collect();
    assert_eq!(gids, (260..280).collect::<Vec<i64>>());
    assert_eq!(lines[0].as_object().unwrap().len(), 4);
    let out = bazan(&[
        "slice",
        root,
        "--start",
        "265",
        "--len",
        "3",
        "--columns",
        "price,gid",
        "--format",
        "csv",
    ]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("price,gid\n"), "{text}");
    assert_eq!(text.lines().count(), 4);
}

#[test]
fn slice_of_a_changed_file_exits_2_naming_it() {
    let dir = lake();
    let root = dir.path().to_str().unwrap();
    assert!(bazan(&["map", "create", root]).status.success());
    std::fs::write(dir.path().join("alpha.csv"), "gid,name\n1,changed\n").unwrap();
    let out = bazan(&[
        "slice", root, "--start", "118", "--len", "5", "--format", "ndjson",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.starts_with("error: ") && err.contains("alpha.csv"),
        "{err}"
    );
    // The two rows of Beta.csv before it are printed, none of alpha.csv.
    assert_eq!(String::from_utf8(out.stdout).unwrap().lines().count(), 2);
    let none = tempfile::tempdir().unwrap();
    let out = bazan(&["map", "show", none.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
}

/// The `.tsfile` dynamic handler: a lake with two corpus TsFiles (one table; three tables in
/// name order) maps them with `[]` blocks and slices their table-model rows.
#[test]
fn tsfile_dynamic_handler() {
    let corpus = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/conformance/tsfile"
    ));
    if !corpus.is_dir() {
        println!("skipped: no TsFile corpus at {}", corpus.display());
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        corpus.join("table_multi_tables.tsfile"),
        dir.path().join("m.tsfile"),
    )
    .unwrap();
    std::fs::copy(
        corpus.join("table_all_types.tsfile"),
        dir.path().join("a.tsfile"),
    )
    .unwrap();
    std::fs::write(dir.path().join("z.csv"), "v\n1\n2\n").unwrap();
    let root = dir.path().to_str().unwrap();
    let map = json(&bazan(&["map", "create", root, "--json"]));
    let files = map["files"].as_array().unwrap();
    let expected = |case: &str| -> Value {
        serde_json::from_slice(
            &std::fs::read(corpus.join(format!("{case}.expected.json"))).unwrap(),
        )
        .unwrap()
    };
    let rows_of = |e: &Value| -> u64 {
        e["data"]["tables"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["row_count"].as_u64().unwrap())
            .sum()
    };
    let multi = expected("table_multi_tables");
    let single = expected("table_all_types");
    assert_eq!(files[0]["path"], "a.tsfile");
    assert_eq!(files[0]["format"], "tsfile");
    assert_eq!(files[0]["blocks"], serde_json::json!([]));
    assert_eq!(files[0]["row_count"].as_u64().unwrap(), rows_of(&single));
    assert_eq!(files[1]["path"], "m.tsfile");
    assert_eq!(files[1]["row_count"].as_u64().unwrap(), rows_of(&multi));
    assert_eq!(files[1]["columns"][0]["name"], "table");
    // The first rows of m.tsfile: table alpha's first row, with the table column.
    let start = files[1]["first_global_row"].as_u64().unwrap().to_string();
    let out = bazan(&[
        "slice",
        root,
        "--start",
        &start,
        "--len",
        "2",
        "--columns",
        "table,time,id",
        "--format",
        "ndjson",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let first: Value = serde_json::from_str(
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    let alpha = &multi["data"]["tables"][0];
    assert_eq!(first["table"], alpha["table"]);
    assert_eq!(first["time"], alpha["rows"][0][0]);
    assert_eq!(first["id"], alpha["rows"][0][1]);
    // Across the boundary into table beta (rows of alpha end at 112 in the corpus).
    let n_alpha = alpha["row_count"].as_u64().unwrap();
    let at = (files[1]["first_global_row"].as_u64().unwrap() + n_alpha - 1).to_string();
    let out = bazan(&[
        "slice",
        root,
        "--start",
        &at,
        "--len",
        "2",
        "--columns",
        "table",
        "--format",
        "csv",
    ]);
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "table\nalpha\nbeta\n"
    );
}

#[test]
fn a_bad_file_names_itself_and_how_to_skip_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("good.csv"), "a,b\n1,2\n3,4\n").unwrap();
    std::fs::write(
        dir.path().join("bad.parquet"),
        b"PAR1 this is not parquet PAR1",
    )
    .unwrap();
    let root = dir.path().to_str().unwrap();
    let out = bazan(&["map", "create", root]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("bad.parquet") && err.contains("--skip-errors"),
        "{err}"
    );
    assert!(!dir.path().join(".br_map.bazan").exists());

    let out = bazan(&["map", "create", root, "--skip-errors", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("error: skipped bad.parquet"), "{err}");
    let map: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(map["total_files"], 1);
    assert_eq!(map["total_rows"], 2);
}
