//! Helpers shared by the integration test modules: running the `bazan` binary and copying
//! the checked-in test lake into a temp dir.

use std::path::Path;
use std::process::{Command, Output};

/// The checked-in test lake (`testdata/lake`), which tests copy before changing anything.
pub(crate) const TESTDATA_LAKE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/lake");

/// Runs the `bazan` binary built for these tests with `args`.
pub(crate) fn bazan(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bazan"))
        .args(args)
        .output()
        .expect("bazan runs")
}

/// Copies the tree `from` into `to`, leaving out every file whose name is in `skip`.
pub(crate) fn copy_tree(from: &Path, to: &Path, skip: &[&str]) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &dest, skip);
        } else if !skip.iter().any(|s| e.file_name() == *s) {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}
