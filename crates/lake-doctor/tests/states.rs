//! Every state on a copy of `testdata/lake`, in both fingerprint modes: a fresh map is all
//! healthy; then a scripted set of edits is reported exactly (append, touch, same-size
//! rewrite with the mtime restored, delete, new data file, ignored new files, a dynamic
//! handler's extension).

use std::fs;
use std::path::Path;

use lake_doctor::{DoctorOptions, Progress, Verdict, diagnose};
use lake_map::{Fingerprint, HandlerRegistry, LakeMap, load_map};

use crate::common::*;

const APPENDED: &str = "alpha.csv";
const TOUCHED: &str = "data/part1.csv";
const REWRITTEN: &str = "file2.csv";
const DELETED: &str = "nested/a/b/deep.parquet";
const NEW_DATA: &str = "new/fresh.ndjson";
const NEW_DYN: &str = "extra.dyn";

/// The scripted edits, after the map was made.
fn script(lake: &Path, map: &LakeMap) {
    append(&lake.join(APPENDED));
    touch(&lake.join(TOUCHED));
    rewrite_same_size(&lake.join(REWRITTEN), entry_mtime(map, REWRITTEN));
    fs::remove_file(lake.join(DELETED)).unwrap();
    fs::create_dir_all(lake.join("new")).unwrap();
    fs::write(lake.join(NEW_DATA), "{\"gid\": 1}\n").unwrap();
    // Ignored by discovery: no extension, hidden file, file in a hidden directory, unknown
    // extension, and the dynamic extension while no handler is registered for it.
    fs::write(lake.join("NEWFILE"), "a,b\n1,2\n").unwrap();
    fs::write(lake.join(".scratch.csv"), "a,b\n1,2\n").unwrap();
    fs::create_dir_all(lake.join(".tmp")).unwrap();
    fs::write(lake.join(".tmp/hidden_dir.csv"), "a,b\n1,2\n").unwrap();
    fs::write(lake.join("new/data.csv.orig"), "a,b\n1,2\n").unwrap();
    fs::write(lake.join(NEW_DYN), "{\"gid\": 2}\n").unwrap();
}

fn fresh_is_healthy(fingerprint: Fingerprint) {
    let (_tmp, lake) = lake_copy(testdata_lake());
    let map = make_map(&lake, fingerprint, &HandlerRegistry::builtin());
    assert!(map.total_files() > 30, "{}", map.total_files());
    let report = doctor(&lake, &HandlerRegistry::builtin());
    assert_eq!(report.fingerprint, fingerprint);
    assert_eq!(report.healthy, map.total_files() as u64);
    assert_eq!(report.drift_count(), 0, "{report:?}");
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert_eq!(report.verdict(), Verdict::Healthy);
    let expected_hashed = match fingerprint {
        Fingerprint::Metadata => 0,
        Fingerprint::Blake3 => map.total_bytes(),
    };
    assert_eq!(report.hashed_bytes, expected_hashed);
}

#[test]
fn fresh_map_is_healthy_metadata() {
    fresh_is_healthy(Fingerprint::Metadata);
}

#[test]
fn fresh_map_is_healthy_blake3() {
    fresh_is_healthy(Fingerprint::Blake3);
}

fn scripted(fingerprint: Fingerprint) -> lake_doctor::DoctorReport {
    let (_tmp, lake) = lake_copy(testdata_lake());
    let map = make_map(&lake, fingerprint, &HandlerRegistry::builtin());
    script(&lake, &map);
    let report = doctor(&lake, &HandlerRegistry::builtin());
    let mut modified = vec![APPENDED, TOUCHED];
    if fingerprint == Fingerprint::Blake3 {
        // Same size, mtime restored: only the digest sees it.
        modified.push(REWRITTEN);
    }
    modified.sort();
    assert_eq!(report.modified, strings(&modified));
    assert_eq!(report.missing, strings(&[DELETED]));
    assert_eq!(report.unindexed, strings(&[NEW_DATA]));
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert_eq!(
        report.healthy,
        (map.total_files() - modified.len() - 1) as u64
    );
    assert_eq!(report.verdict(), Verdict::Drift);

    // With the dynamic handler registered, its extension is unindexed too.
    let with = doctor(&lake, &with_dyn());
    assert_eq!(with.unindexed, strings(&[NEW_DYN, NEW_DATA]));
    assert_eq!(with.modified, report.modified);
    assert_eq!(with.missing, report.missing);
    assert_eq!(with.healthy, report.healthy);
    report
}

#[test]
fn scripted_changes_metadata() {
    let report = scripted(Fingerprint::Metadata);
    assert_eq!(report.hashed_bytes, 0);
    insta::assert_json_snapshot!("testdata_scripted_metadata", &report);
}

#[test]
fn scripted_changes_blake3() {
    let report = scripted(Fingerprint::Blake3);
    // Only the files whose size and mtime still match are hashed.
    assert!(report.hashed_bytes > 0);
    insta::assert_json_snapshot!("testdata_scripted_blake3", &report);
}

#[test]
fn dynamic_handler_files_in_the_map() {
    // A map made with the dynamic handler holds the `.dyn` file; the same registry sees it
    // healthy, then modified after an edit. Without the handler, discovery does not take
    // the file, but its entry is still checked by its own look-up (never left unchecked).
    let (_tmp, lake) = lake_copy(testdata_lake());
    fs::write(lake.join(NEW_DYN), "{\"gid\": 2}\n{\"gid\": 3}\n").unwrap();
    let map = make_map(&lake, Fingerprint::Blake3, &with_dyn());
    assert!(map.find(NEW_DYN).is_some());
    let report = doctor(&lake, &with_dyn());
    assert_eq!(report.verdict(), Verdict::Healthy, "{report:?}");
    let report = doctor(&lake, &HandlerRegistry::builtin());
    assert_eq!(report.verdict(), Verdict::Healthy, "{report:?}");
    rewrite_same_size(&lake.join(NEW_DYN), entry_mtime(&map, NEW_DYN));
    for registry in [with_dyn(), HandlerRegistry::builtin()] {
        let report = doctor(&lake, &registry);
        assert_eq!(report.modified, strings(&[NEW_DYN]));
        assert_eq!(report.healthy, map.total_files() as u64 - 1);
    }
    fs::remove_file(lake.join(NEW_DYN)).unwrap();
    assert_eq!(doctor(&lake, &with_dyn()).missing, strings(&[NEW_DYN]));
}

#[test]
fn metadata_mode_compares_size_and_mtime_only() {
    // A same-size rewrite with the mtime restored is invisible to metadata mode: the proof
    // that only size and mtime are compared. Also checks the progress callback's totals.
    let (_tmp, lake) = lake_copy(testdata_lake());
    make_map(&lake, Fingerprint::Metadata, &HandlerRegistry::builtin());
    let map = load_map(&lake).unwrap();
    rewrite_same_size(&lake.join(REWRITTEN), entry_mtime(&map, REWRITTEN));
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::<Progress>::new()));
    let sink = std::sync::Arc::clone(&seen);
    let options = DoctorOptions {
        registry: HandlerRegistry::builtin(),
        progress: Some(std::sync::Arc::new(move |p| sink.lock().unwrap().push(p))),
    };
    let report = diagnose(&map, &options).unwrap();
    assert_eq!(report.verdict(), Verdict::Healthy);
    let seen = seen.lock().unwrap();
    let last = seen.last().unwrap();
    assert_eq!(last.done_files, map.total_files() as u64);
    assert_eq!(last.total_files, map.total_files() as u64);
    assert_eq!(last.total_bytes, 0);
}

#[test]
fn blake3_progress_counts_every_hashed_byte() {
    let (_tmp, lake) = lake_copy(testdata_lake());
    let map = make_map(&lake, Fingerprint::Blake3, &HandlerRegistry::builtin());
    touch(&lake.join(TOUCHED));
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::<Progress>::new()));
    let sink = std::sync::Arc::clone(&seen);
    let options = DoctorOptions {
        registry: HandlerRegistry::builtin(),
        progress: Some(std::sync::Arc::new(move |p| sink.lock().unwrap().push(p))),
    };
    let report = diagnose(&map, &options).unwrap();
    assert_eq!(report.modified, strings(&[TOUCHED]));
    let touched_size = map.find(TOUCHED).unwrap().size_bytes;
    assert_eq!(report.hashed_bytes, map.total_bytes() - touched_size);
    let seen = seen.lock().unwrap();
    let max = seen.iter().map(|p| p.done_bytes).max().unwrap();
    assert_eq!(max, report.hashed_bytes);
    assert_eq!(
        seen.iter().map(|p| p.done_files).max().unwrap(),
        map.total_files() as u64
    );
    assert!(seen.iter().all(|p| p.total_bytes == report.hashed_bytes));
}
