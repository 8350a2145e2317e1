//! `create_map`: discovery, then every file indexed by its handler in parallel (rayon), then
//! the map written atomically. An unreadable or malformed file fails the build with its path
//! and the reason, unless `skip_errors` is set: then it is left out and reported in
//! [`CreateReport::failures`], never silently.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use lake_locators::IndexOptions;
use lake_locators::types::schema_to_json;
use rayon::prelude::*;

use crate::config::{Fingerprint, MapConfig};
use crate::discovery::{DiscoveredFile, discover, mtime_ms};
use crate::error::{Error, Result};
use crate::handlers::HandlerRegistry;
use crate::lake_map::{LakeMap, MapEntry, assign_first_global_rows};
use crate::map_file::write_map;

/// Progress of a long run over the files of a lake, passed to a callback: after each indexed
/// file when a map is built (bytes are the files' sizes), and by the Lake Doctor as map
/// entries are checked (bytes are the bytes hashed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// Files done so far.
    pub done_files: u64,
    /// Files to do.
    pub total_files: u64,
    /// Bytes done so far.
    pub done_bytes: u64,
    /// Bytes to do.
    pub total_bytes: u64,
}

/// A progress callback (called from worker threads, one call at a time, with counts that
/// never go down from one call to the next).
pub type ProgressFn = Arc<dyn Fn(Progress) + Send + Sync>;

/// Counts of work done by several threads, reported to a [`ProgressFn`] in order.
///
/// Files and bytes are added together under one lock and the callback is called under it:
/// with two separate atomic counters, a thread that finished first could report after one
/// that finished later, so the last report would not be the final one (the files of one
/// thread's count with the bytes of another's).
pub struct ProgressTally<'a> {
    callback: Option<&'a ProgressFn>,
    done: std::sync::Mutex<(u64, u64)>,
    total_files: u64,
    total_bytes: u64,
}

impl<'a> ProgressTally<'a> {
    /// A tally of `total_files` files and `total_bytes` bytes, starting from `done_files`
    /// files and no bytes done.
    pub fn new(
        callback: Option<&'a ProgressFn>,
        done_files: u64,
        total_files: u64,
        total_bytes: u64,
    ) -> Self {
        ProgressTally {
            callback,
            done: std::sync::Mutex::new((done_files, 0)),
            total_files,
            total_bytes,
        }
    }

    /// Reports the counts as they stand, without adding to them.
    pub fn report(&self) {
        self.add(0, 0);
    }

    /// Adds `files` files and `bytes` bytes done and reports the new counts.
    pub fn add(&self, files: u64, bytes: u64) {
        let Some(cb) = self.callback else { return };
        let mut done = self
            .done
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        done.0 += files;
        done.1 += bytes;
        cb(Progress {
            done_files: done.0,
            total_files: self.total_files,
            done_bytes: done.1,
            total_bytes: self.total_bytes,
        });
    }
}

/// Everything `create_map_with` needs besides the root.
#[derive(Clone, Default)]
pub struct CreateOptions {
    /// The configuration stored in the map.
    pub config: MapConfig,
    /// Built-in and dynamic handlers.
    pub registry: HandlerRegistry,
    /// Leave unreadable files out (and report them) instead of failing.
    pub skip_errors: bool,
    /// Called after each indexed file.
    pub progress: Option<ProgressFn>,
    /// Build the map in memory only, without writing `.br_map.bazan`.
    pub dry_run: bool,
    /// Set from another thread to stop the build: files not yet started are not indexed,
    /// the run ends with [`Error::Interrupted`] and no map (nor temporary file) is written.
    pub cancel: Option<Arc<AtomicBool>>,
}

impl std::fmt::Debug for CreateOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CreateOptions")
            .field("config", &self.config)
            .field("registry", &self.registry)
            .field("skip_errors", &self.skip_errors)
            .field("dry_run", &self.dry_run)
            .field("cancel", &self.cancel)
            .finish()
    }
}

/// A file left out of the map with `skip_errors`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileFailure {
    /// Relative path.
    pub path: String,
    /// The error, naming the file.
    pub message: String,
}

/// The result of a build.
#[derive(Debug)]
pub struct CreateReport {
    /// The map (already written unless `dry_run`).
    pub map: LakeMap,
    /// Files left out because they failed (only with `skip_errors`).
    pub failures: Vec<FileFailure>,
    /// Wall time of the build.
    pub elapsed: Duration,
}

/// Builds and writes the map of the lake at `root` with the built-in handlers.
pub fn create_map(root: &Path, config: &MapConfig) -> Result<LakeMap> {
    let options = CreateOptions {
        config: config.clone(),
        ..CreateOptions::default()
    };
    create_map_with(root, &options).map(|r| r.map)
}

/// Builds (and, unless `dry_run`, writes) the map of the lake at `root`.
pub fn create_map_with(root: &Path, options: &CreateOptions) -> Result<CreateReport> {
    let started = Instant::now();
    options.config.validate()?;
    let found = discover(root, &options.registry)?;
    let todo: Vec<usize> = (0..found.files.len()).collect();
    let mut slots: Vec<Option<Result<MapEntry>>> = (0..found.files.len()).map(|_| None).collect();
    for (i, r) in index_files(
        root,
        &found.files,
        todo,
        &options.config,
        options.progress.as_ref(),
        options.cancel.as_deref(),
    ) {
        slots[i] = Some(r);
    }
    if is_cancelled(options.cancel.as_deref()) {
        return Err(Error::Interrupted);
    }
    let (entries, failures) = assemble(&found.files, slots, options.skip_errors)?;
    let map = LakeMap::from_entries(root, options.config.clone(), &entries)?;
    if !options.dry_run {
        write_map(&map)?;
    }
    Ok(CreateReport {
        map,
        failures,
        elapsed: started.elapsed(),
    })
}

/// Bytes of the files read whole that [`index_files`] keeps asked of the OS ahead of the
/// files the workers have started, at most.
const PREFETCH_AHEAD: u64 = 256 << 20;

/// A lake of one file read whole smaller than this is not read ahead (its own scan asks).
const PREFETCH_MIN: u64 = 16 << 20;

/// How long the read-ahead thread of [`index_files`] waits before it looks again whether
/// the workers have come close enough to the next file.
const PREFETCH_POLL: Duration = Duration::from_millis(2);

/// Sets its flag when dropped.
struct SetOnDrop<'a>(&'a AtomicBool);

impl Drop for SetOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Indexes the discovered files `todo` (indices into `files`) in parallel with
/// [`index_file`] and returns each one's result with its index, in index order. `progress`
/// counts only these files. Map creation indexes every file; an update only the new and
/// modified ones.
pub(crate) fn index_files(
    root: &Path,
    files: &[DiscoveredFile],
    mut todo: Vec<usize>,
    config: &MapConfig,
    progress: Option<&ProgressFn>,
    cancel: Option<&AtomicBool>,
) -> Vec<(usize, Result<MapEntry>)> {
    let total_files = todo.len() as u64;
    let total_bytes: u64 = todo.iter().map(|&i| files[i].size_bytes).sum();
    let tally = ProgressTally::new(progress, 0, total_files, total_bytes);
    // Largest files first, handed out one at a time as workers free up: the work of a lake
    // is dominated by its few large files, and a large file started last would leave the
    // other cores idle while it finishes (longest-processing-time-first scheduling).
    todo.sort_by_key(|&i| std::cmp::Reverse(files[i].size_bytes));
    // Files read whole are asked of the OS in that order from a thread of its own (the
    // requests may wait for the disk's queue), each once the workers have started files up
    // to [`PREFETCH_AHEAD`] bytes before it: the disk reads the next files while the cores
    // scan these, instead of each scan waiting for its pages, and the page cache is not
    // filled far ahead of them. Files their locator reads in ranges ask for those itself.
    let mut before = 0u64;
    let ahead: Vec<(std::path::PathBuf, u64, u64)> = todo
        .iter()
        .map(|&i| &files[i])
        .filter_map(|f| {
            let at = before;
            before += f.size_bytes;
            let asked = f.handler.locator.reads_whole_file()
                && !lake_locators::reads_ahead_itself(f.size_bytes);
            asked.then(|| (root.join(&f.path), f.size_bytes, at))
        })
        .collect();
    // Bytes of the files the workers have started, in `todo` order.
    let started = AtomicU64::new(0);
    let done = AtomicBool::new(false);
    let mut indexed: Vec<(usize, Result<MapEntry>)> = std::thread::scope(|scope| {
        if ahead.len() > 1 || ahead.first().is_some_and(|(_, n, _)| *n > PREFETCH_MIN) {
            let read_ahead = || {
                for (path, len, at) in &ahead {
                    while *at
                        > started
                            .load(Ordering::Relaxed)
                            .saturating_add(PREFETCH_AHEAD)
                    {
                        if done.load(Ordering::Relaxed) || is_cancelled(cancel) {
                            return;
                        }
                        std::thread::sleep(PREFETCH_POLL);
                    }
                    if done.load(Ordering::Relaxed) || is_cancelled(cancel) {
                        return;
                    }
                    lake_locators::prefetch_file(path, *len);
                }
            };
            // Only a hint: with no thread to be had, the files are read as they come.
            let _ = std::thread::Builder::new()
                .name("bazan-prefetch".into())
                .spawn_scoped(scope, read_ahead);
        }
        // Set when the workers are done, or unwind: the read-ahead thread then ends (the
        // scope waits for it).
        let _finished = SetOnDrop(&done);
        todo.into_iter()
            .par_bridge()
            .map(|i| {
                let f = &files[i];
                started.fetch_add(f.size_bytes, Ordering::Relaxed);
                if is_cancelled(cancel) {
                    return (i, Err(Error::Interrupted));
                }
                let r = index_file(root, f, config);
                tally.add(1, f.size_bytes);
                (i, r)
            })
            .collect()
    });
    indexed.sort_unstable_by_key(|(i, _)| *i);
    indexed
}

/// The map's entries in discovery order from one slot per discovered file (`None`: the
/// file is left out), with `first_global_row` assigned. A failed file fails the whole
/// build, or with `skip_errors` is left out and listed in the failures.
pub(crate) fn assemble(
    files: &[DiscoveredFile],
    slots: Vec<Option<Result<MapEntry>>>,
    skip_errors: bool,
) -> Result<(Vec<MapEntry>, Vec<FileFailure>)> {
    let mut entries = Vec::with_capacity(slots.len());
    let mut failures = Vec::new();
    for (file, slot) in files.iter().zip(slots) {
        match slot {
            None => {}
            Some(Ok(e)) => entries.push(e),
            Some(Err(err)) if skip_errors => failures.push(FileFailure {
                path: file.path.clone(),
                message: err.to_string(),
            }),
            Some(Err(err)) => return Err(err),
        }
    }
    assign_first_global_rows(&mut entries);
    Ok((entries, failures))
}

/// True once `cancel` was set.
pub(crate) fn is_cancelled(cancel: Option<&AtomicBool>) -> bool {
    cancel.is_some_and(|c| c.load(Ordering::Relaxed))
}

/// Indexes one discovered file into a map entry.
pub fn index_file(root: &Path, file: &DiscoveredFile, config: &MapConfig) -> Result<MapEntry> {
    let full = root.join(&file.path);
    let options = IndexOptions {
        stride: config.checkpoint_stride_rows,
        stats: config.stats_columns.clone(),
    };
    let handler = file
        .handler
        .clone()
        .with_text_encoding(config.text_encoding);
    let index = handler.locator.index(&full, &options)?;
    let blake3 = match config.fingerprint {
        Fingerprint::Metadata => None,
        Fingerprint::Blake3 => Some(hash_file(&full)?),
    };
    // A file that changed while it was read would be stored with a fingerprint that does
    // not match its index.
    let meta = std::fs::metadata(&full).map_err(|e| Error::io(&full, e))?;
    if meta.len() != file.size_bytes || mtime_ms(&meta) != file.mtime_ms {
        return Err(Error::Stale {
            path: full,
            message: "the file changed while it was indexed".into(),
        });
    }
    entry_from_index(&full, file, index, blake3, config)
}

/// The map entry of `file` from its locator's `index` and its BLAKE3 digest (when the
/// fingerprint mode wants one); `full` names the file in errors. The blocks must add up to
/// the row count; statistics a map cannot store are left out.
pub fn entry_from_index(
    full: &Path,
    file: &DiscoveredFile,
    index: lake_locators::FileIndex,
    blake3: Option<String>,
    config: &MapConfig,
) -> Result<MapEntry> {
    let row_groups_json = if file.handler.dynamic {
        "[]".to_string()
    } else {
        let block_rows: u64 = index.blocks.iter().map(|b| b.row_count).sum();
        if !index.blocks.is_empty() && block_rows != index.row_count {
            return Err(Error::Index {
                path: full.to_path_buf(),
                message: format!(
                    "the {} locator's blocks hold {block_rows} rows but the file has {}",
                    file.handler.locator.name(),
                    index.row_count
                ),
            });
        }
        to_json(&index.blocks, full)?
    };
    let stats_json = if config.stats_columns.is_none() {
        None
    } else {
        Some(to_json(
            &storable_stats(index.stats.unwrap_or_default()),
            full,
        )?)
    };
    Ok(MapEntry {
        path: file.path.clone(),
        format: index.format,
        size_bytes: file.size_bytes,
        mtime_ms: file.mtime_ms,
        row_count: index.row_count,
        first_global_row: 0,
        row_groups_json,
        blake3,
        stats_json,
        schema_json: Some(schema_to_json(&index.schema).to_string()),
    })
}

/// The statistics a map can store: JSON has no infinities (they would be written as `null`,
/// which no longer reads back as a bound), so a float column with an infinite bound gets no
/// statistics at all. That is safe: a column without statistics is never pruned, whereas
/// leaving the infinity out of its bounds would wrongly prune it.
fn storable_stats(mut stats: lake_locators::Stats) -> lake_locators::Stats {
    stats.retain(|_, s| match s {
        lake_locators::ColumnStats::Float { min, max } => min.is_finite() && max.is_finite(),
        _ => true,
    });
    stats
}

fn to_json<T: serde::Serialize>(value: &T, path: &Path) -> Result<String> {
    serde_json::to_string(value).map_err(|e| Error::Index {
        path: path.to_path_buf(),
        message: format!("cannot serialise the index: {e}"),
    })
}

/// The lowercase hex BLAKE3 digest of a whole file (memory-mapped).
pub fn hash_file(path: &Path) -> Result<String> {
    let mut hasher = blake3::Hasher::new();
    hasher
        .update_mmap_rayon(path)
        .map_err(|e| Error::io(path, e))?;
    Ok(hasher.finalize().to_hex().to_string())
}

#[cfg(test)]
mod stats_tests {
    use lake_locators::ColumnStats;

    #[test]
    fn infinite_float_bounds_are_not_stored() {
        let mut stats = lake_locators::Stats::new();
        stats.insert(
            "a".into(),
            ColumnStats::Float {
                min: 1.0,
                max: f64::INFINITY,
            },
        );
        stats.insert(
            "b".into(),
            ColumnStats::Float {
                min: -2.5,
                max: 3.0,
            },
        );
        stats.insert("c".into(), ColumnStats::Int { min: 1, max: 2 });
        let kept = super::storable_stats(stats);
        assert_eq!(kept.keys().collect::<Vec<_>>(), vec!["b", "c"]);
        let text = serde_json::to_string(&kept).expect("json");
        let back: lake_locators::Stats = serde_json::from_str(&text).expect("reads back");
        assert_eq!(back, kept);
    }
}

#[cfg(test)]
mod hash_tests {
    use super::hash_file;
    use crate::error::Error;

    #[test]
    fn digests_match_one_shot_hash() {
        let dir = tempfile::tempdir().expect("temp dir");
        // Below and above blake3's 16 KiB mmap threshold, and past one 1 KiB chunk boundary.
        for len in [0usize, 1, 1025, 16 * 1024 - 1, 16 * 1024, 300_000] {
            let data: Vec<u8> = (0..len).map(|i| (i * 31 % 251) as u8).collect();
            let p = dir.path().join(format!("f{len}.bin"));
            std::fs::write(&p, &data).expect("write");
            assert_eq!(
                hash_file(&p).expect("hash"),
                blake3::hash(&data).to_hex().to_string(),
                "{len}"
            );
        }
        // The doctor tells a file deleted before hashing by this error kind.
        match hash_file(&dir.path().join("absent")) {
            Err(Error::Io { source, .. }) => {
                assert_eq!(source.kind(), std::io::ErrorKind::NotFound)
            }
            other => panic!("{other:?}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn a_tally_fed_by_many_threads_reports_in_order_and_ends_at_the_totals() {
        for _ in 0..50 {
            let seen = Arc::new(Mutex::new(Vec::new()));
            let sink = Arc::clone(&seen);
            let cb: ProgressFn = Arc::new(move |p| sink.lock().unwrap().push(p));
            let sizes: Vec<u64> = (1..=64).collect();
            let total: u64 = sizes.iter().sum();
            let tally = ProgressTally::new(Some(&cb), 3, 67, total);
            tally.report();
            sizes.par_iter().for_each(|&s| tally.add(1, s));
            let seen = seen.lock().unwrap();
            assert_eq!(seen.len(), 65);
            assert_eq!((seen[0].done_files, seen[0].done_bytes), (3, 0));
            for w in seen.windows(2) {
                assert!(w[1].done_files > w[0].done_files && w[1].done_bytes > w[0].done_bytes);
            }
            let last = seen[seen.len() - 1];
            assert_eq!(
                last,
                Progress {
                    done_files: 67,
                    total_files: 67,
                    done_bytes: total,
                    total_bytes: total,
                }
            );
        }
    }

    #[test]
    fn a_tally_without_a_callback_does_nothing() {
        let tally = ProgressTally::new(None, 0, 1, 1);
        tally.add(1, 1);
        tally.report();
    }
}

impl LakeMap {
    /// Builds a map of a lake in an object store: [`LakeMap::from_entries`] plus each
    /// object's ETag (`etags[i]` for `entries[i]`), stored in the optional `etag` column.
    pub fn from_entries_with_etags(
        root: &Path,
        config: MapConfig,
        entries: &[MapEntry],
        etags: &[Option<String>],
    ) -> Result<Self> {
        if etags.len() != entries.len() {
            return Err(Error::invalid(
                root,
                format!("{} ETags for {} entries", etags.len(), entries.len()),
            ));
        }
        let batch = crate::lake_map::entries_to_batch(entries, &config)?;
        let etag: arrow_array::ArrayRef = Arc::new(arrow_array::StringArray::from_iter(
            etags.iter().map(Option::as_deref),
        ));
        let (schema, columns) =
            crate::etag::with_etag_column(&batch.schema(), batch.columns().to_vec(), etag);
        let batch =
            arrow_array::RecordBatch::try_new(schema, columns).map_err(|source| Error::Arrow {
                path: root.to_path_buf(),
                source,
            })?;
        Self::from_batch(root, config, crate::lake_map::MAP_SCHEMA, batch, root)
    }
}
