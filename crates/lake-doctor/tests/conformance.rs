//! The public conformance lake (`../shared/conformance/lake/lake`): a fresh map of a copy is
//! all healthy; after a scripted set of changes the report lists exactly them. The edits pick
//! entries by their position in the map, not by name, so the script fits any corpus made by
//! the same generator.

use std::fs;
use std::path::{Path, PathBuf};

use lake_doctor::{DoctorReport, Verdict};
use lake_map::{Fingerprint, HandlerRegistry};

use crate::common::*;

fn corpus_lake() -> Option<PathBuf> {
    let dir = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/conformance/lake/lake"
    ));
    if dir.is_dir() {
        Some(dir.to_path_buf())
    } else {
        eprintln!("skipping: the conformance lake {} is absent", dir.display());
        None
    }
}

fn run(fingerprint: Fingerprint) -> Option<DoctorReport> {
    let src = corpus_lake()?;
    let (_tmp, lake) = lake_copy(&src);
    let registry = HandlerRegistry::builtin();
    let map = make_map(&lake, fingerprint, &registry);
    let fresh = doctor(&lake, &registry);
    assert_eq!(fresh.verdict(), Verdict::Healthy, "{fresh:?}");
    assert_eq!(fresh.healthy, map.total_files() as u64);

    // Pick four distinct non-empty entries spread over the map.
    let non_empty: Vec<String> = map
        .entries()
        .filter(|e| e.size_bytes > 0)
        .map(|e| e.path.to_string())
        .collect();
    assert!(non_empty.len() >= 8, "{}", non_empty.len());
    let pick = |k: usize| non_empty[k * (non_empty.len() - 1) / 3].clone();
    let (appended, touched, rewritten, deleted) = (pick(0), pick(1), pick(2), pick(3));
    append(&lake.join(&appended));
    touch(&lake.join(&touched));
    rewrite_same_size(&lake.join(&rewritten), entry_mtime(&map, &rewritten));
    fs::remove_file(lake.join(&deleted)).unwrap();
    // New files: two data files (one beside the first entry's directory), and ignored ones.
    fs::create_dir_all(lake.join("zz_added")).unwrap();
    fs::write(lake.join("zz_added/new.csv"), "gid,v\n1,2\n").unwrap();
    fs::write(lake.join("added.jsonl"), "{\"gid\": 1}\n").unwrap();
    fs::write(lake.join("ADDED"), "gid,v\n1,2\n").unwrap();
    fs::write(lake.join(".added.csv"), "gid,v\n1,2\n").unwrap();
    fs::write(lake.join("added.csv.tmp"), "gid,v\n1,2\n").unwrap();

    let report = doctor(&lake, &registry);
    let mut modified = vec![appended.clone(), touched.clone()];
    if fingerprint == Fingerprint::Blake3 {
        modified.push(rewritten.clone());
    }
    modified.sort();
    assert_eq!(report.modified, modified);
    assert_eq!(report.missing, vec![deleted]);
    assert_eq!(
        report.unindexed,
        strings(&["added.jsonl", "zz_added/new.csv"])
    );
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert_eq!(
        report.healthy,
        (map.total_files() - modified.len() - 1) as u64
    );
    Some(report)
}

#[test]
fn conformance_lake_metadata() {
    if let Some(report) = run(Fingerprint::Metadata) {
        insta::assert_json_snapshot!("conformance_scripted_metadata", report);
    }
}

#[test]
fn conformance_lake_blake3() {
    if let Some(report) = run(Fingerprint::Blake3) {
        insta::assert_json_snapshot!("conformance_scripted_blake3", report);
    }
}
