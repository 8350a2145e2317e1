//! Helpers: temp copies of lakes, maps built with a chosen fingerprint and registry, and the
//! file edits the tests script (append, touch, same-size rewrite with the mtime restored).

use std::fs;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use lake_doctor::{DoctorOptions, DoctorReport, diagnose_lake};
use lake_map::{CreateOptions, Fingerprint, HandlerRegistry, LakeMap, MapConfig, create_map_with};

/// `testdata/lake`, written by `cargo xtask fixtures`.
pub(crate) fn testdata_lake() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/lake"))
}

/// Copies a tree (files, directories and symbolic links as links).
pub(crate) fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        let t = e.file_type().unwrap();
        if t.is_dir() {
            copy_tree(&e.path(), &dest);
        } else if t.is_symlink() {
            std::os::unix::fs::symlink(fs::read_link(e.path()).unwrap(), dest).unwrap();
        } else {
            fs::copy(e.path(), dest).unwrap();
        }
    }
}

/// A temp copy of a lake; the copy lives in `<tmp>/lake`, so tests can put things beside it.
pub(crate) fn lake_copy(src: &Path) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let lake = dir.path().join("lake");
    copy_tree(src, &lake);
    (dir, lake)
}

/// A registry with the built-in handlers plus the JSON locator as the dynamic handler of
/// `.dyn`.
pub(crate) fn with_dyn() -> HandlerRegistry {
    let mut r = HandlerRegistry::builtin();
    let json = lake_locators::registry::for_extension("ndjson").unwrap();
    r.register_extension("dyn", json);
    r
}

/// Builds and writes the map of `lake`.
pub(crate) fn make_map(
    lake: &Path,
    fingerprint: Fingerprint,
    registry: &HandlerRegistry,
) -> LakeMap {
    let options = CreateOptions {
        config: MapConfig {
            fingerprint,
            ..MapConfig::default()
        },
        registry: registry.clone(),
        ..CreateOptions::default()
    };
    create_map_with(lake, &options).unwrap().map
}

/// Runs the doctor on `lake` (loading its map from disk) with `registry`.
pub(crate) fn doctor(lake: &Path, registry: &HandlerRegistry) -> DoctorReport {
    let options = DoctorOptions {
        registry: registry.clone(),
        progress: None,
    };
    diagnose_lake(lake, &options).unwrap()
}

/// The file's modification time.
pub(crate) fn mtime(p: &Path) -> SystemTime {
    fs::metadata(p).unwrap().modified().unwrap()
}

/// Sets a file's modification time.
pub(crate) fn set_mtime(p: &Path, t: SystemTime) {
    fs::File::options()
        .write(true)
        .open(p)
        .unwrap()
        .set_modified(t)
        .unwrap();
}

/// Appends a line (size and, usually, mtime change).
pub(crate) fn append(p: &Path) {
    use std::io::Write;
    let before = mtime(p);
    let mut f = fs::OpenOptions::new().append(true).open(p).unwrap();
    f.write_all(b"\n").unwrap();
    drop(f);
    // Keep the mtime so that only the size tells the change.
    set_mtime(p, before);
}

/// Moves the mtime 5 s forward without touching the content.
pub(crate) fn touch(p: &Path) {
    set_mtime(p, mtime(p) + Duration::from_secs(5));
}

/// Rewrites the file with one byte changed (same size), then restores the mtime the map
/// stored (milliseconds), so that only the content differs.
pub(crate) fn rewrite_same_size(p: &Path, map_mtime_ms: i64) {
    let mut bytes = fs::read(p).unwrap();
    assert!(!bytes.is_empty(), "{}", p.display());
    let i = bytes.len() / 2;
    bytes[i] = if bytes[i] == b'7' { b'8' } else { b'7' };
    fs::write(p, &bytes).unwrap();
    let t = UNIX_EPOCH + Duration::from_millis(u64::try_from(map_mtime_ms).unwrap());
    set_mtime(p, t);
    assert_eq!(fs::metadata(p).unwrap().len() as usize, bytes.len());
}

/// The map's mtime of an entry.
pub(crate) fn entry_mtime(map: &LakeMap, path: &str) -> i64 {
    map.find(path).unwrap().mtime_ms
}

/// Owned strings from literals.
pub(crate) fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}
