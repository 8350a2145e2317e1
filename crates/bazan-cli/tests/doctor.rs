//! `bazan doctor`: the `--json` contract of `cli.md`, the human summary, and the exit codes
//! (0 healthy, 1 drift, 2 a path that could not be checked or no map).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::{TESTDATA_LAKE, bazan, copy_tree};

/// A copy of `testdata/lake` with a fresh map of the given fingerprint mode.
fn lake(fingerprint: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let lake = tmp.path().join("lake");
    // The checked-in map is copied too: `map create` below replaces it.
    copy_tree(Path::new(TESTDATA_LAKE), &lake, &[]);
    let out = bazan(&[
        "map",
        "create",
        lake.to_str().unwrap(),
        "--fingerprint",
        fingerprint,
    ]);
    assert!(out.status.success(), "{out:?}");
    (tmp, lake)
}

fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn doctor_exit_codes_and_json() {
    for fingerprint in ["metadata", "blake3"] {
        let (_tmp, lake) = lake(fingerprint);
        let root = lake.to_str().unwrap();
        let out = bazan(&["doctor", root, "--json"]);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let report = json(&out);
        assert_eq!(report["fingerprint"], fingerprint);
        assert!(report["healthy"].as_u64().unwrap() > 30);
        for key in ["modified", "unindexed", "missing", "errors"] {
            assert_eq!(report[key], serde_json::json!([]), "{key}");
        }
        let human = bazan(&["doctor", root]);
        assert_eq!(human.status.code(), Some(0));
        assert!(String::from_utf8_lossy(&human.stdout).contains("the map matches the lake"));

        fs::write(lake.join("zz.csv"), "a\n1\n").unwrap();
        fs::remove_file(lake.join("alpha.csv")).unwrap();
        let out = bazan(&["doctor", root, "--json"]);
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let report = json(&out);
        assert_eq!(report["unindexed"], serde_json::json!(["zz.csv"]));
        assert_eq!(report["missing"], serde_json::json!(["alpha.csv"]));
        let human = bazan(&["doctor", root]);
        assert_eq!(human.status.code(), Some(1));
        let text = String::from_utf8_lossy(&human.stdout);
        assert!(text.contains("unindexed  zz.csv\n"), "{text}");
        assert!(text.contains("missing    alpha.csv\n"), "{text}");

        // An entry that became a directory cannot be checked: exit 2, the report is still
        // printed and the path is named on stderr.
        fs::remove_file(lake.join("tabs.tsv")).unwrap();
        fs::create_dir(lake.join("tabs.tsv")).unwrap();
        let out = bazan(&["doctor", root, "--json"]);
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        assert_eq!(json(&out)["errors"][0]["path"], "tabs.tsv");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.lines().all(|l| l.starts_with("error: ")), "{err}");
        assert!(err.contains("tabs.tsv"), "{err}");
    }
}

#[test]
fn doctor_without_a_map_is_an_input_error() {
    let tmp = tempfile::tempdir().unwrap();
    let out = bazan(&["doctor", tmp.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("error: ") && err.contains("bazan map create"),
        "{err}"
    );
}
