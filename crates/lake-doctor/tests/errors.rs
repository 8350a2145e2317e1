//! Paths that cannot be checked are reported one by one, never counted healthy, and never
//! stop the run. Tests run as root in CI, where `chmod 000` does not deny anything, so the
//! error paths are provoked by what root cannot read past either: an entry that became a
//! directory or a FIFO, a directory on an entry's way replaced by a symbolic link, and a
//! file name that is not UTF-8. Permission denied itself is exercised only when the test
//! runs unprivileged (the test says so when it skips that part).

use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::process::Command;

use lake_doctor::{DoctorOptions, DoctorReport, ErrorKind, Verdict, diagnose_lake};
use lake_map::{Fingerprint, HandlerRegistry};

use crate::common::*;

/// The report with the temp lake's path in messages replaced by `[lake]`.
fn redacted(report: &DoctorReport, root: &std::path::Path) -> DoctorReport {
    let mut out = report.clone();
    let root = root.display().to_string();
    for e in &mut out.errors {
        e.message = e.message.replace(&root, "[lake]");
    }
    out
}

fn errors_are_per_path(fingerprint: Fingerprint) -> DoctorReport {
    let (tmp, lake) = lake_copy(testdata_lake());
    let map = make_map(&lake, fingerprint, &HandlerRegistry::builtin());
    // An entry that became a directory.
    fs::remove_file(lake.join("tabs.tsv")).unwrap();
    fs::create_dir(lake.join("tabs.tsv")).unwrap();
    // An entry that became a FIFO (opening it would block: the doctor must not).
    fs::remove_file(lake.join("pipes.psv")).unwrap();
    let status = Command::new("mkfifo")
        .arg(lake.join("pipes.psv"))
        .status()
        .unwrap();
    assert!(status.success());
    // A directory on an entry's way replaced by a symbolic link out of the lake.
    let outside = tmp.path().join("outside");
    fs::rename(lake.join("dir.csv"), &outside).unwrap();
    std::os::unix::fs::symlink(&outside, lake.join("dir.csv")).unwrap();
    // A name that is not UTF-8, with a data extension.
    fs::create_dir(lake.join("raw")).unwrap();
    fs::write(
        lake.join("raw").join(OsStr::from_bytes(b"bad\xff.csv")),
        "a\n1\n",
    )
    .unwrap();
    // And ordinary drift beside them, which must still be reported.
    touch(&lake.join("alpha.csv"));

    let report = doctor(&lake, &HandlerRegistry::builtin());
    let kinds: Vec<(&str, ErrorKind)> = report
        .errors
        .iter()
        .map(|e| (e.path.as_str(), e.kind))
        .collect();
    assert_eq!(
        kinds,
        [
            ("dir.csv/inner.ndjson", ErrorKind::Symlink),
            ("pipes.psv", ErrorKind::NotRegular),
            ("raw/bad\u{fffd}.csv", ErrorKind::NotUtf8),
            ("tabs.tsv", ErrorKind::NotRegular),
        ]
    );
    for e in &report.errors {
        assert!(e.message.contains(&lake.display().to_string()), "{e:?}");
    }
    assert_eq!(report.modified, strings(&["alpha.csv"]));
    assert!(report.missing.is_empty());
    assert!(report.unindexed.is_empty());
    // Three entries could not be checked and are not counted healthy.
    assert_eq!(report.healthy, map.total_files() as u64 - 1 - 3);
    assert_eq!(report.verdict(), Verdict::Errors);
    redacted(&report, &lake)
}

#[test]
fn errors_metadata() {
    insta::assert_json_snapshot!(
        "errors_metadata",
        errors_are_per_path(Fingerprint::Metadata)
    );
}

#[test]
fn errors_blake3() {
    insta::assert_json_snapshot!("errors_blake3", errors_are_per_path(Fingerprint::Blake3));
}

#[test]
fn unreadable_directory_when_unprivileged() {
    let (_tmp, lake) = lake_copy(testdata_lake());
    make_map(&lake, Fingerprint::Metadata, &HandlerRegistry::builtin());
    let locked = lake.join("data");
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o000)).unwrap();
    let denied = fs::read_dir(&locked).is_err();
    let report = doctor(&lake, &HandlerRegistry::builtin());
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o755)).unwrap();
    if !denied {
        eprintln!(
            "skipping the permission-denied check: this process (root?) can read a mode-000 \
             directory; the per-path error handling is covered by the errors_* tests"
        );
        assert_eq!(report.verdict(), Verdict::Healthy, "{report:?}");
        return;
    }
    // The listing fails and the entry below it cannot be looked up: both are errors, the
    // rest of the lake is still checked.
    let paths: Vec<&str> = report.errors.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(paths, ["data/", "data/part1.csv"]);
    assert!(
        report
            .errors
            .iter()
            .all(|e| e.kind == ErrorKind::Unreadable)
    );
    assert_eq!(report.verdict(), Verdict::Errors);
}

#[test]
fn a_missing_root_or_map_fails_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    let options = DoctorOptions::default();
    assert!(diagnose_lake(&tmp.path().join("absent"), &options).is_err());
    // A lake without a map.
    let err = diagnose_lake(tmp.path(), &options).unwrap_err();
    assert!(err.to_string().contains(".br_map.bazan"), "{err}");
}
