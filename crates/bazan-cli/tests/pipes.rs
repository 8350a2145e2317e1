//! A reader that closes the pipe early (`bazan … | head -1`) is normal use: every command
//! that writes rows exits 0 without an error line.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

/// Runs `bazan args`, reads one line of its output, closes the pipe and returns the exit code
/// and stderr.
fn head_1(args: &[&str]) -> (Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_bazan"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("bazan runs");
    let stdout = child.stdout.take().expect("stdout");
    let mut line = Vec::new();
    BufReader::new(stdout)
        .read_until(b'\n', &mut line)
        .expect("a line");
    assert!(!line.is_empty(), "{args:?} printed nothing");
    // The reader is dropped here: the pipe is closed with most of the output unread.
    let out = child.wait_with_output().expect("exit");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A CSV of `rows` rows (far more output than a pipe buffer holds).
fn big_csv(path: &Path, rows: usize) {
    let mut text = String::from("time,dev,value,note\n");
    for i in 0..rows {
        text.push_str(&format!(
            "{i},d{},{}.5,\"row {i}, quoted\"\n",
            i % 7,
            i % 1000
        ));
    }
    std::fs::write(path, text).expect("csv");
}

#[test]
fn closed_pipes_are_not_errors() {
    let dir = tempfile::tempdir().expect("temp dir");
    let lake = dir.path().join("lake");
    std::fs::create_dir(&lake).expect("lake dir");
    let csv = lake.join("big.csv");
    big_csv(&csv, 200_000);
    let csv = csv.to_str().expect("utf-8 path");
    let lake = lake.to_str().expect("utf-8 path");
    let ts = dir.path().join("big.tsfile");
    let ts = ts.to_str().expect("utf-8 path");
    let made = crate::common::bazan(&["map", "create", lake]);
    assert!(made.status.success(), "{made:?}");
    let imported = crate::common::bazan(&[
        "tsfile", "import", csv, ts, "--table", "t", "--time", "time", "--tags", "dev",
    ]);
    assert!(imported.status.success(), "{imported:?}");
    let cases: Vec<Vec<&str>> = vec![
        vec!["read", csv],
        vec!["read", csv, "--format", "csv"],
        vec![
            "slice", lake, "--start", "0", "--len", "200000", "--format", "ndjson",
        ],
        vec!["slice", lake, "--start", "0", "--len", "200000"],
        vec!["tsfile", "query", ts, "--table", "t", "--format", "csv"],
        vec!["tsfile", "query", ts, "--table", "t", "--format", "arrow"],
    ];
    for args in cases {
        let (code, stderr) = head_1(&args);
        assert_eq!(code, Some(0), "{args:?}: {stderr}");
        assert!(stderr.is_empty(), "{args:?}: {stderr}");
    }
}
