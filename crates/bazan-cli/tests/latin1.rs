//! `bazan map create --encoding latin-1`: a lake of Latin-1 CSV mapped, shown and sliced
//! with the characters Python's csv module reads with `encoding="latin-1"`, kept by
//! `map update`; the default UTF-8 refuses the file with row and byte offset, and an
//! unknown encoding is an error.

use serde_json::Value;

use crate::common::bazan;

fn ndjson(out: &std::process::Output) -> Vec<Value> {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn map_create_encoding_latin1() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    // Python's csv with encoding="latin-1": ["José", "München"], ["Zoë", "São Paulo"].
    std::fs::write(
        dir.path().join("a.csv"),
        b"caf\xe9,city\nJos\xe9,M\xfcnchen\nZo\xeb,S\xe3o Paulo\n",
    )
    .unwrap();

    let refused = bazan(&["map", "create", root]);
    assert_ne!(refused.status.code(), Some(0));
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        err.contains("a.csv") && err.contains("invalid UTF-8"),
        "{err}"
    );

    let unknown = bazan(&["map", "create", root, "--encoding", "cp1252"]);
    assert_ne!(unknown.status.code(), Some(0));
    let err = String::from_utf8_lossy(&unknown.stderr);
    assert!(err.contains("unknown text encoding \"cp1252\""), "{err}");

    let created = bazan(&["map", "create", root, "--encoding", "latin-1", "--json"]);
    assert!(
        created.status.success(),
        "{}",
        String::from_utf8_lossy(&created.stderr)
    );
    let created: Value = serde_json::from_slice(&created.stdout).unwrap();
    assert_eq!(created["text_encoding"], "latin-1");
    assert_eq!(created["total_rows"], 2);
    let human = String::from_utf8(bazan(&["map", "show", root]).stdout).unwrap();
    assert!(human.contains("text encoding latin-1"), "{human}");

    let rows = ndjson(&bazan(&[
        "slice", root, "--start", "0", "--len", "2", "--format", "ndjson",
    ]));
    let cities: Vec<&str> = rows.iter().map(|r| r["city"].as_str().unwrap()).collect();
    assert_eq!(cities, ["München", "São Paulo"]);
    assert_eq!(rows[0]["café"], "José");

    // A new file after `map update`: read as Latin-1 too.
    std::fs::write(dir.path().join("b.csv"), b"caf\xe9,city\nx,\xd8sl\xf8\n").unwrap();
    let update = bazan(&["map", "update", root]);
    assert!(
        update.status.success(),
        "{}",
        String::from_utf8_lossy(&update.stderr)
    );
    let rows = ndjson(&bazan(&[
        "slice", root, "--start", "2", "--len", "1", "--format", "ndjson",
    ]));
    assert_eq!(rows[0]["city"], "Øslø");
    let shown: Value =
        serde_json::from_slice(&bazan(&["map", "show", root, "--json"]).stdout).unwrap();
    assert_eq!(shown["text_encoding"], "latin-1");
}

#[test]
fn encoding_in_help() {
    let help = String::from_utf8(bazan(&["map", "create", "--help"]).stdout).unwrap();
    assert!(
        help.contains("--encoding <ENCODING>") && help.contains("latin-1"),
        "{help}"
    );
}
