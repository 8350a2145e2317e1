//! `update_map`: after edits, additions, deletions and touched-but-unchanged files the
//! updated map equals what `create` writes for the same tree (column by column, with the same
//! configuration), only changed files are indexed again, a lake without a map gets one, and
//! a failure leaves the old map and no temporary file.

use std::fs;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use lake_map::{
    CreateOptions, Fingerprint, LakeMap, MapConfig, ProgressFn, StatsColumns, TextEncoding,
    UpdateOptions, UpdateReport, create_map_with, load_map, resolve_map_path, update_map_with,
};

use crate::common::lines_registry;

fn configs() -> Vec<MapConfig> {
    vec![
        MapConfig {
            checkpoint_stride_rows: 3,
            fingerprint: Fingerprint::Metadata,
            stats_columns: StatsColumns::All,
            text_encoding: TextEncoding::Utf8,
        },
        MapConfig {
            checkpoint_stride_rows: 2,
            fingerprint: Fingerprint::Blake3,
            stats_columns: StatsColumns::Only(vec!["v".into()]),
            text_encoding: TextEncoding::Latin1,
        },
        MapConfig {
            checkpoint_stride_rows: 5,
            fingerprint: Fingerprint::Metadata,
            stats_columns: StatsColumns::None,
            text_encoding: TextEncoding::Utf8,
        },
    ]
}

fn write(root: &Path, path: &str, values: &[i64]) {
    let full = root.join(path);
    fs::create_dir_all(full.parent().unwrap()).unwrap();
    let text: String = values.iter().map(|v| format!("{v}\n")).collect();
    fs::write(full, text).unwrap();
}

/// Sets a file's mtime to `ms` after the epoch.
fn set_mtime(root: &Path, path: &str, ms: u64) {
    let f = fs::File::options()
        .write(true)
        .open(root.join(path))
        .unwrap();
    f.set_modified(SystemTime::UNIX_EPOCH + Duration::from_millis(ms))
        .unwrap();
}

fn lake(root: &Path) {
    write(root, "a.lines", &[1, 2, 3, 4, 5]);
    write(root, "b/c.lines", &[10, 20, 30]);
    write(root, "b/d.lines", &[7; 9]);
    write(root, "e.lines", &[]);
    write(root, "z.lines", &[-4, 8]);
}

fn create(root: &Path, config: &MapConfig, write: bool) -> LakeMap {
    create_map_with(
        root,
        &CreateOptions {
            config: config.clone(),
            registry: lines_registry(),
            dry_run: !write,
            ..CreateOptions::default()
        },
    )
    .unwrap()
    .map
}

/// Runs an update and counts the files it indexed (through the progress callback).
fn update(root: &Path, skip_errors: bool) -> (lake_map::Result<UpdateReport>, u64) {
    let indexed = Arc::new(AtomicU64::new(0));
    let seen = Arc::clone(&indexed);
    let progress: ProgressFn = Arc::new(move |p| {
        seen.fetch_add(1, Ordering::SeqCst);
        assert!(p.done_files <= p.total_files);
    });
    let r = update_map_with(
        root,
        &UpdateOptions {
            registry: lines_registry(),
            skip_errors,
            progress: Some(progress),
            ..UpdateOptions::default()
        },
    );
    (r, indexed.load(Ordering::SeqCst))
}

/// The two maps hold the same configuration and the same entries, column by column (the map
/// stores no creation time).
fn assert_same_map(updated: &LakeMap, created: &LakeMap) {
    assert_eq!(updated.config(), created.config());
    let (u, c) = (
        updated.to_record_batch().unwrap(),
        created.to_record_batch().unwrap(),
    );
    assert_eq!(u.schema(), c.schema());
    for (i, field) in u.schema().fields().iter().enumerate() {
        assert_eq!(
            u.column(i).as_ref(),
            c.column(i).as_ref(),
            "column {}",
            field.name()
        );
    }
    // And what was written is what was returned.
    let loaded = load_map(updated.root()).unwrap();
    assert_eq!(loaded.to_entries(), updated.to_entries());
    assert_eq!(loaded.config(), updated.config());
}

#[test]
fn edits_additions_and_deletions_match_create() {
    for config in configs() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        lake(root);
        create(root, &config, true);
        // An edit that changes the size, a new file in a new folder, a new file sorting
        // first, a deleted file.
        write(root, "b/c.lines", &[10, 20, 30, 40, 50, 60, 70]);
        write(root, "n/new.lines", &[100, 200]);
        write(root, "0.lines", &[0]);
        fs::remove_file(root.join("z.lines")).unwrap();
        let (r, indexed) = update(root, false);
        let r = r.unwrap();
        assert!(!r.created);
        assert_eq!(r.added, ["0.lines", "n/new.lines"], "{config:?}");
        assert_eq!(r.modified, ["b/c.lines"]);
        assert_eq!(r.removed, ["z.lines"]);
        assert_eq!(r.kept, 3);
        assert_eq!(indexed, 3, "only the new and changed files are indexed");
        assert!(r.failures.is_empty());
        assert_eq!(r.map.total_rows(), 1 + 5 + 7 + 9 + 2);
        assert_same_map(&r.map, &create(root, &config, false));
        // Nothing changed since: everything is kept, nothing indexed, same map.
        let (r2, indexed) = update(root, false);
        let r2 = r2.unwrap();
        assert_eq!((r2.kept, indexed), (6, 0));
        assert!(r2.added.is_empty() && r2.modified.is_empty() && r2.removed.is_empty());
        assert_same_map(&r2.map, &r.map);
    }
}

#[test]
fn touched_but_unchanged_files() {
    for config in configs() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        lake(root);
        let before = create(root, &config, true);
        set_mtime(root, "b/d.lines", 1_600_000_000_123);
        let (r, indexed) = update(root, false);
        let r = r.unwrap();
        let old = before.find("b/d.lines").unwrap().to_owned_entry();
        let new = r.map.find("b/d.lines").unwrap().to_owned_entry();
        assert_eq!(new.mtime_ms, 1_600_000_000_123);
        // The entry is the old one with the new mtime, whether it was indexed again or kept.
        assert_eq!(
            lake_map::MapEntry {
                mtime_ms: old.mtime_ms,
                ..new
            },
            old
        );
        match config.fingerprint {
            // Metadata: a new mtime is a change; the file is indexed again.
            Fingerprint::Metadata => {
                assert_eq!((r.modified.len(), r.kept, indexed), (1, 4, 1));
            }
            // Blake3: the digest still matches; the entry is kept, only its mtime refreshed.
            Fingerprint::Blake3 => {
                assert!(r.modified.is_empty());
                assert_eq!((r.kept, indexed), (5, 0));
            }
        }
        assert_same_map(&r.map, &create(root, &config, false));
    }
}

#[test]
fn same_size_edit_keeping_the_mtime() {
    for config in configs() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        lake(root);
        set_mtime(root, "a.lines", 1_650_000_000_000);
        create(root, &config, true);
        write(root, "a.lines", &[9, 8, 7, 6, 5]);
        set_mtime(root, "a.lines", 1_650_000_000_000);
        let (r, _) = update(root, false);
        let r = r.unwrap();
        match config.fingerprint {
            // Metadata cannot see it (lake-map.md §8): the old entry stays.
            Fingerprint::Metadata => assert!(r.modified.is_empty()),
            // Blake3 sees it and indexes the file again: the map equals a new one.
            Fingerprint::Blake3 => {
                assert_eq!(r.modified, ["a.lines"]);
                assert_same_map(&r.map, &create(root, &config, false));
            }
        }
    }
}

#[test]
fn without_a_map_update_creates_one() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    lake(root);
    let (r, indexed) = update(root, false);
    let r = r.unwrap();
    assert!(r.created);
    assert_eq!(
        r.added,
        ["a.lines", "b/c.lines", "b/d.lines", "e.lines", "z.lines"]
    );
    assert_eq!((r.kept, indexed), (0, 5));
    assert!(resolve_map_path(root).is_file());
    assert_same_map(&r.map, &create(root, &MapConfig::default(), false));
}

/// Every name in the lake root that is not a data file or the map: temporary files.
fn leftovers(root: &Path) -> Vec<String> {
    fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.') && n != ".br_map.bazan")
        .collect()
}

#[test]
fn a_failing_file_leaves_the_old_map_and_no_temporary_file() {
    for config in configs() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        lake(root);
        create(root, &config, true);
        let map_bytes = fs::read(resolve_map_path(root)).unwrap();
        // One good change, one malformed file: the update fails as a whole.
        write(root, "a.lines", &[1, 2, 3, 4, 5, 6]);
        fs::write(root.join("bad.lines"), "1\nnot a number\n").unwrap();
        let (r, _) = update(root, false);
        let err = r.unwrap_err().to_string();
        assert!(err.contains("bad.lines"), "{err}");
        assert_eq!(fs::read(resolve_map_path(root)).unwrap(), map_bytes);
        assert_eq!(leftovers(root), Vec::<String>::new());
        // With skip_errors the file is left out and reported, as create would.
        let (r, _) = update(root, true);
        let r = r.unwrap();
        assert_eq!(r.failures.len(), 1);
        assert_eq!(r.failures[0].path, "bad.lines");
        assert!(r.added.is_empty());
        assert_eq!(r.modified, ["a.lines"]);
        assert!(r.map.find("bad.lines").is_none());
        assert_same_map(&r.map, &create_skipping(root, &config));
        assert_eq!(leftovers(root), Vec::<String>::new());
    }
}

fn create_skipping(root: &Path, config: &MapConfig) -> LakeMap {
    create_map_with(
        root,
        &CreateOptions {
            config: config.clone(),
            registry: lines_registry(),
            skip_errors: true,
            dry_run: true,
            ..CreateOptions::default()
        },
    )
    .unwrap()
    .map
}

#[test]
fn a_cancelled_update_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    lake(root);
    let config = &configs()[1];
    create(root, config, true);
    let map_bytes = fs::read(resolve_map_path(root)).unwrap();
    write(root, "a.lines", &[1, 2, 3, 4, 5, 6]);
    set_mtime(root, "b/c.lines", 1_600_000_000_000);
    let cancel = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let r = update_map_with(
        root,
        &UpdateOptions {
            registry: lines_registry(),
            cancel: Some(Arc::clone(&cancel)),
            ..UpdateOptions::default()
        },
    );
    assert!(matches!(r, Err(lake_map::Error::Interrupted)), "{r:?}");
    assert_eq!(fs::read(resolve_map_path(root)).unwrap(), map_bytes);
    assert_eq!(leftovers(root), Vec::<String>::new());
    // Without a map, the cancelled creation writes none either.
    fs::remove_file(resolve_map_path(root)).unwrap();
    let r = update_map_with(
        root,
        &UpdateOptions {
            registry: lines_registry(),
            cancel: Some(cancel),
            ..UpdateOptions::default()
        },
    );
    assert!(matches!(r, Err(lake_map::Error::Interrupted)), "{r:?}");
    assert!(!resolve_map_path(root).exists());
    assert_eq!(leftovers(root), Vec::<String>::new());
}

/// The last 1,024 bytes of record batch `k` of the map file `bytes`.
fn batch_tail(bytes: &[u8], k: usize) -> Vec<u8> {
    let n = bytes.len();
    let footer_len = i32::from_le_bytes(bytes[n - 10..n - 6].try_into().unwrap()) as usize;
    let footer = arrow_ipc::root_as_footer(&bytes[n - 10 - footer_len..n - 10]).unwrap();
    let b = footer.recordBatches().unwrap().get(k);
    let end = (b.offset() + i64::from(b.metaDataLength()) + b.bodyLength()) as usize;
    bytes[end - 1024..end].to_vec()
}

/// A map of several record batches (2,048 entries each): an update that adds rows to the
/// first file and adds files copies the record batches it leaves untouched from the old map
/// file (a window of their compressed bytes is found unchanged in the new file, which is not
/// what `create` writes), and the map equals the one `create` writes.
#[test]
fn untouched_record_batches_are_copied() {
    let config = configs()[0].clone();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for k in 0..6_500i64 {
        write(
            root,
            &format!("f/{k:05}.lines"),
            &vec![k; (k % 3 + 1) as usize],
        );
    }
    create(root, &config, true);
    let old = fs::read(resolve_map_path(root)).unwrap();
    write(root, "f/00000.lines", &[0, 1, 2, 3]);
    write(root, "f/03000a.lines", &[5, 6]);
    write(root, "g/last.lines", &[7]);
    let (r, indexed) = update(root, false);
    let r = r.unwrap();
    assert_eq!(r.modified, ["f/00000.lines"]);
    assert_eq!(r.added, ["f/03000a.lines", "g/last.lines"]);
    assert_eq!(indexed, 3);
    let created = create(root, &config, false);
    assert_same_map(&r.map, &created);
    let new = fs::read(resolve_map_path(root)).unwrap();
    // The last 1,024 bytes of the third record batch (after its `first_global_row`, which
    // the update writes anew since the first file gained rows).
    let window = &batch_tail(&old, 2);
    assert!(
        new.windows(window.len()).any(|w| w == window),
        "the third record batch is copied"
    );
    lake_map::write_map(&created).unwrap();
    assert_ne!(fs::read(resolve_map_path(root)).unwrap(), new);
    fs::write(resolve_map_path(root), &new).unwrap();
    // Every entry of the first two record batches gone: they are written again with no
    // entries, and a later update reads and splices such a map too.
    for k in 0..4_096 {
        fs::remove_file(root.join(format!("f/{k:05}.lines"))).unwrap();
    }
    fs::remove_file(root.join("f/03000a.lines")).unwrap();
    let (r, indexed) = update(root, false);
    let r = r.unwrap();
    assert_eq!((r.removed.len(), r.kept, indexed), (4_097, 2_405, 0));
    assert_same_map(&r.map, &create(root, &config, false));
    assert!(
        fs::read(resolve_map_path(root))
            .unwrap()
            .windows(window.len())
            .any(|w| w == window),
        "the third record batch is copied again"
    );
    write(root, "a.lines", &[1]);
    let (r, indexed) = update(root, false);
    let r = r.unwrap();
    assert_eq!((r.added.len(), r.removed.len(), indexed), (1, 0, 1));
    assert_same_map(&r.map, &create(root, &config, false));
}
