//! `bazan map update`: only changed files are indexed again, the result equals `map create`,
//! and `--json` says what changed.

use std::path::Path;

use serde_json::Value;

use crate::common::{TESTDATA_LAKE, bazan, copy_tree};

fn json(args: &[&str]) -> Value {
    let out = bazan(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("json")
}

/// The map as `map show --json` prints it, without what may differ between two builds.
fn shown(root: &str) -> Value {
    let mut v = json(&["map", "show", root, "--json"]);
    if let Some(o) = v.as_object_mut() {
        o.remove("created_at");
    }
    v
}

#[test]
fn update_indexes_only_what_changed() {
    let dir = tempfile::tempdir().expect("temp dir");
    copy_tree(Path::new(TESTDATA_LAKE), dir.path(), &[".br_map.bazan"]);
    let root = dir.path().to_str().expect("utf-8 path");

    // Without a map, update creates one.
    let first = json(&["map", "update", root, "--json"]);
    assert_eq!(first["created"], true);
    assert_eq!(first["total_files"], 33);

    // Nothing changed: everything is kept.
    let same = json(&["map", "update", root, "--json"]);
    assert_eq!(same["created"], false);
    assert_eq!(same["kept"], 33);
    assert_eq!(same["added"], Value::Array(vec![]));

    // One edit, one new file, one deletion.
    std::fs::write(dir.path().join("alpha.csv"), "id,name\n1,a\n2,b\n").expect("edit");
    std::fs::write(dir.path().join("zz_new.ndjson"), "{\"k\":1}\n{\"k\":2}\n").expect("add");
    std::fs::remove_file(dir.path().join("Beta.csv")).expect("delete");
    let changed = json(&["map", "update", root, "--json"]);
    assert_eq!(changed["modified"], serde_json::json!(["alpha.csv"]));
    assert_eq!(changed["added"], serde_json::json!(["zz_new.ndjson"]));
    assert_eq!(changed["removed"], serde_json::json!(["Beta.csv"]));
    assert_eq!(changed["kept"], 31);
    let updated = shown(root);

    // The same tree mapped from scratch gives the same map.
    let created = bazan(&["map", "create", root]);
    assert!(created.status.success());
    assert_eq!(shown(root), updated);

    let human = bazan(&["map", "update", root]);
    let text = String::from_utf8(human.stdout).expect("utf-8");
    assert!(
        text.contains("0 added, 0 modified, 0 removed, 33 kept"),
        "{text}"
    );
}

#[test]
fn check_says_which_comparisons_were_relaxed() {
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/tsfile-official/float_ts2diff_snappy.tsfile"
    );
    let v = json(&["tsfile", "check", file, "--json"]);
    assert_eq!(v["valid"], true, "{v}");
    assert_eq!(v["problems"], Value::Array(vec![]));
    let relaxed = v["relaxed"].as_array().expect("relaxed list");
    assert!(!relaxed.is_empty());
    assert!(relaxed.iter().all(|r| {
        r["encodings"]
            .as_array()
            .is_some_and(|e| e.iter().any(|x| x == "TS_2DIFF"))
    }));
}

/// `--stats off` is not `--stats none`: it names a column `off`, which no file has, and the
/// user is told so; a list of columns the lake has gets no warning.
#[test]
fn stats_naming_no_column_warns() {
    let dir = match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => panic!("temp dir: {e}"),
    };
    if let Err(e) = std::fs::write(dir.path().join("a.csv"), "id,name\n1,a\n2,b\n") {
        panic!("writing a.csv: {e}");
    }
    let Some(root) = dir.path().to_str() else {
        panic!("a temp dir that is not UTF-8: {}", dir.path().display());
    };
    let off = bazan(&["map", "create", root, "--stats", "off", "--json"]);
    assert!(off.status.success());
    let err = String::from_utf8_lossy(&off.stderr);
    assert!(
        err.contains("warning: statistics columns that no file of the lake has: `off`"),
        "{err}"
    );
    let named = bazan(&["map", "create", root, "--stats", "id,name", "--json"]);
    assert!(named.status.success());
    let err = String::from_utf8_lossy(&named.stderr);
    assert!(!err.contains("warning"), "{err}");
}

/// `--verbose` prints the facade's debug lines (the map loaded or written, what an update
/// kept and re-indexed) on stderr; without it there are none.
#[test]
fn verbose_prints_debug_lines() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("a.csv"), "id,name\n1,a\n2,b\n").expect("a.csv");
    let root = dir.path().to_str().expect("utf-8 path");
    let quiet = bazan(&["map", "create", root]);
    assert!(quiet.status.success());
    let err = String::from_utf8_lossy(&quiet.stderr);
    assert!(!err.contains("debug:"), "{err}");

    std::fs::write(dir.path().join("a.csv"), "id,name\n1,a\n2,b\n3,c\n").expect("edit");
    let loud = bazan(&["map", "update", root, "--verbose"]);
    assert!(loud.status.success());
    let err = String::from_utf8_lossy(&loud.stderr);
    assert!(err.contains("debug: bazan::lake: map of "), "{err}");
    assert!(
        err.contains(
            "0 entries kept unchanged under the metadata fingerprint, 0 added, 1 re-indexed"
        ),
        "{err}"
    );
    assert!(err.contains("stale entry re-indexed: a.csv"), "{err}");
}
