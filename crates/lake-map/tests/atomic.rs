//! Atomicity of the map write: a child process (this test binary, re-invoked with an
//! environment variable) rewrites a map in a loop and is killed at a random moment; the map
//! on disk must always be the old complete map or the new complete one.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use lake_map::{
    LakeMap, MapConfig, MapEntry, assign_first_global_rows, load_map_file, write_map_to,
};

const CHILD_ENV: &str = "LAKE_MAP_ATOMIC_CHILD";

fn entries(prefix: &str, n: usize) -> Vec<MapEntry> {
    let mut v: Vec<MapEntry> = (0..n)
        .map(|i| MapEntry {
            path: format!("{prefix}/file{i:06}.lines"),
            format: "lines".into(),
            size_bytes: i as u64 * 3,
            mtime_ms: 1_700_000_000_000 + i as i64,
            row_count: (i % 17) as u64,
            first_global_row: 0,
            row_groups_json: format!(
                "[{{\"ordinal\":0,\"first_row\":0,\"row_count\":{},\"first_byte\":0,\
                 \"total_byte_size\":null,\"compressed_size\":null,\"columns\":null}}]",
                i % 17
            ),
            blake3: None,
            stats_json: Some(format!("{{\"v\":{{\"min\":{i},\"max\":{}}}}}", i * 2)),
            schema_json: None,
        })
        .collect();
    assign_first_global_rows(&mut v);
    v
}

fn old_map(root: &Path) -> LakeMap {
    LakeMap::from_entries(root, MapConfig::default(), &entries("old", 500)).unwrap()
}

fn new_map(root: &Path) -> LakeMap {
    let config = MapConfig {
        checkpoint_stride_rows: 7,
        ..MapConfig::default()
    };
    LakeMap::from_entries(root, config, &entries("new", 3000)).unwrap()
}

/// The child's side: rewrite the new map until killed (or for a bounded time).
#[test]
fn atomic_child_writer() {
    let Some(target) = std::env::var_os(CHILD_ENV) else {
        return;
    };
    let target = Path::new(&target);
    let root = target.parent().unwrap();
    let map = new_map(root);
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(10) {
        write_map_to(&map, target).unwrap();
    }
}

struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[test]
fn killed_writer_leaves_old_or_new_map() {
    if std::env::var_os(CHILD_ENV).is_some() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join(".br_map.bazan");
    let old = old_map(dir.path()).to_entries();
    let new = new_map(dir.path()).to_entries();
    let exe = std::env::current_exe().unwrap();
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15 ^ u64::from(std::process::id()));
    let (mut saw_old, mut saw_new) = (0, 0);
    for trial in 0..200 {
        write_map_to(&old_map(dir.path()), &target).unwrap();
        let mut child = Command::new(&exe)
            .args([
                "--exact",
                "atomic::atomic_child_writer",
                "--test-threads=1",
                "--quiet",
            ])
            .env(CHILD_ENV, &target)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Start-up of the test harness takes a few ms; kill anywhere from before the first
        // write to well into the rewrite loop.
        std::thread::sleep(Duration::from_micros(rng.next() % 40_000));
        child.kill().unwrap();
        child.wait().unwrap();
        let map = load_map_file(dir.path(), &target)
            .unwrap_or_else(|e| panic!("trial {trial}: the map on disk is torn: {e}"));
        let got = map.to_entries();
        if got == old {
            assert_eq!(map.config(), &MapConfig::default());
            saw_old += 1;
        } else if got == new {
            assert_eq!(map.config().checkpoint_stride_rows, 7);
            saw_new += 1;
        } else {
            panic!("trial {trial}: the map is neither the old nor the new map");
        }
        // Temporary files of killed writers are hidden names; clear them between trials.
        for e in std::fs::read_dir(dir.path()).unwrap() {
            let e = e.unwrap();
            if e.file_name().to_string_lossy().contains(".tmp-") {
                std::fs::remove_file(e.path()).unwrap();
            }
        }
    }
    assert!(saw_old > 0 && saw_new > 0, "old {saw_old}, new {saw_new}");
}
