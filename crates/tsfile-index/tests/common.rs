//! Helpers shared by the integration tests: where the conformance corpus lives.

use std::path::PathBuf;

/// `../shared/conformance/<sub>`, or `None` (with the reason printed) when it is absent.
pub(crate) fn corpus(sub: &str) -> Option<PathBuf> {
    let dir = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/conformance"
    ))
    .join(sub);
    if dir.is_dir() {
        Some(dir)
    } else {
        println!("skipped: no conformance corpus at {}", dir.display());
        None
    }
}

/// Every `.tsfile` of the corpus folders, sorted.
pub(crate) fn corpus_files() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for sub in ["tsfile", "tsfile-v3"] {
        let Some(dir) = corpus(sub) else { continue };
        for entry in std::fs::read_dir(dir).expect("corpus folder is readable") {
            let path = entry.expect("corpus entry").path();
            if path.extension().is_some_and(|e| e == "tsfile") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}
