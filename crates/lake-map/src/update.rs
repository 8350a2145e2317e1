//! `update_map`: refresh a lake's map by re-indexing only what changed.
//!
//! The existing map is loaded and the lake discovered again with the caller's handler
//! registry. Each discovered file whose entry is still healthy under the map's own
//! fingerprint mode keeps its entry; new files, changed files and entries that cannot be
//! reused are indexed with the same per-file function map creation uses
//! ([`crate::create::index_files`]); entries whose file is gone are dropped. The map's stride,
//! fingerprint and statistics options are kept, `first_global_row` is renumbered and the
//! map is published with the atomic writer, so the result is the map `create` would write
//! for the same tree with the same options. A lake without a map gets one created.
//!
//! Health, per fingerprint mode:
//! - `metadata`: same size and mtime. A file touched without a change of content (new
//!   mtime) is re-indexed; its new entry equals the old one but for `mtime_ms`.
//! - `blake3`: same size and the same BLAKE3 digest of the content, whatever the mtime. A
//!   touched but unchanged file keeps its entry (only `mtime_ms` is refreshed, which is what
//!   indexing it again would store); a same-size edit that kept the mtime is caught by the
//!   digest and re-indexed. Every kept file is hashed, as the Lake Doctor does.
//!
//! An entry is also re-indexed when the handler discovery now picks for its path could not
//! have produced it (another format, or a dynamic handler over an entry with blocks), or
//! when it lacks what the map's options require (schema, statistics, digest): the entries
//! of a legacy map (schema 1 or 2) are therefore all rebuilt.
//!
//! A failure or a cancellation leaves the old map untouched: nothing is written before every
//! file is indexed, and the writer replaces the map by renaming a complete temporary file.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use rayon::prelude::*;

use crate::config::{Fingerprint, MapConfig};
use crate::create::{
    CreateOptions, FileFailure, ProgressFn, create_map_with, hash_file, index_files, is_cancelled,
};
use crate::discovery::{DiscoveredFile, discover, resolve_map_path};
use crate::error::{Error, Result};
use crate::handlers::HandlerRegistry;
use crate::lake_map::{Entry, EntryFrom, LakeMap, MapEntry, assign_first_global_rows};
use crate::map_file::{MAP_SCHEMA, load_map, write_bytes_checked, write_map, write_options};

/// Everything [`update_map_with`] needs besides the root.
#[derive(Clone, Default)]
pub struct UpdateOptions {
    /// Built-in and dynamic handlers (the ones the map was created with, so that discovery
    /// takes the same files).
    pub registry: HandlerRegistry,
    /// Leave files that fail to index out (and report them) instead of failing.
    pub skip_errors: bool,
    /// Called after each file indexed (only the files re-indexed are counted).
    pub progress: Option<ProgressFn>,
    /// Compute the updated map without writing `.br_map.bazan`.
    pub dry_run: bool,
    /// The configuration of the map created when the lake has none (an existing map keeps
    /// its own).
    pub new_config: MapConfig,
    /// Set from another thread to stop the update before its next file: it then fails with
    /// [`Error::Interrupted`] and writes nothing (the old map stays).
    pub cancel: Option<Arc<AtomicBool>>,
}

impl std::fmt::Debug for UpdateOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UpdateOptions")
            .field("registry", &self.registry)
            .field("skip_errors", &self.skip_errors)
            .field("progress", &self.progress.is_some())
            .field("dry_run", &self.dry_run)
            .field("new_config", &self.new_config)
            .field("cancel", &self.cancel)
            .finish()
    }
}

/// What an update did. `M` is what holds the updated map: the [`LakeMap`] itself here, the
/// facade's lake handle above (one report type for every layer, [`UpdateReport::with_map`]
/// turns one into the other).
#[derive(Debug)]
pub struct UpdateReport<M = LakeMap> {
    /// The updated map (already written unless `dry_run`).
    pub map: M,
    /// True when the lake had no map and one was created.
    pub created: bool,
    /// Files indexed that the old map did not have (all files when `created`), in map order.
    pub added: Vec<String>,
    /// Files of the old map that were re-indexed (changed, or their entry could not be
    /// reused), in map order.
    pub modified: Vec<String>,
    /// Entries of the old map dropped because discovery no longer finds their file, in map
    /// order.
    pub removed: Vec<String>,
    /// Entries reused without re-indexing.
    pub kept: usize,
    /// Files left out because they failed to index (only with `skip_errors`); such a file
    /// is in neither `added` nor `modified`, and its old entry (if any) is dropped.
    pub failures: Vec<FileFailure>,
    /// Wall time of the update.
    pub elapsed: Duration,
}

impl<M> UpdateReport<M> {
    /// The same report with its map turned into `f(map)` (the facade wraps it in its lake
    /// handle).
    pub fn with_map<N>(self, f: impl FnOnce(M) -> N) -> UpdateReport<N> {
        UpdateReport {
            map: f(self.map),
            created: self.created,
            added: self.added,
            modified: self.modified,
            removed: self.removed,
            kept: self.kept,
            failures: self.failures,
            elapsed: self.elapsed,
        }
    }
}

impl<M: Borrow<LakeMap>> UpdateReport<M> {
    /// The report as the `bazan map update --json` object (keys in alphabetical order):
    /// `map` (the map file's path), `created`, `added`, `modified`, `removed`, `kept`,
    /// `failures` (`{path, message}`) and the updated map's `total_files`, `total_rows` and
    /// `total_bytes`. The wall time is left out, so that two runs compare equal.
    pub fn to_json(&self) -> serde_json::Value {
        let map: &LakeMap = self.map.borrow();
        let failures: Vec<serde_json::Value> = self
            .failures
            .iter()
            .map(|f| serde_json::json!({"path": f.path, "message": f.message}))
            .collect();
        serde_json::json!({
            "map": resolve_map_path(map.root()).display().to_string(),
            "created": self.created,
            "added": self.added,
            "modified": self.modified,
            "removed": self.removed,
            "kept": self.kept,
            "failures": failures,
            "total_files": map.total_files(),
            "total_rows": map.total_rows(),
            "total_bytes": map.total_bytes(),
        })
    }
}

/// Updates (or creates) the map of the lake at `root` with the built-in handlers.
pub fn update_map(root: &Path) -> Result<UpdateReport> {
    update_map_with(root, &UpdateOptions::default())
}

/// What to do with one discovered file.
enum Plan {
    /// Reuse the old entry (its `mtime_ms` replaced by the file's current one).
    Keep(usize),
    /// Keep the old entry if the file's digest still equals it, else re-index.
    Hash(usize),
    /// Index the file (new: `None`; re-index of an old entry: `Some`).
    Index(Option<usize>),
}

/// Updates (or, unless `dry_run`, writes) the map of the lake at `root`; see the module
/// documentation for what is reused.
pub fn update_map_with(root: &Path, options: &UpdateOptions) -> Result<UpdateReport> {
    let started = Instant::now();
    let map_path = resolve_map_path(root);
    match std::fs::symlink_metadata(&map_path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return create_instead(root, options, started);
        }
        Err(e) => return Err(Error::io(&map_path, e)),
        Ok(_) => {}
    }
    let cancel = options.cancel.as_deref();
    // The map is loaded while the lake is walked: neither needs the other.
    // Every record batch of the map is decoded and checked, as an update reads every entry.
    let (old, found) = rayon::join(
        || load_map(root).and_then(|m| m.check_entries().map(|()| m)),
        || discover(root, &options.registry),
    );
    let old = old?;
    let config = old.config().clone();
    config.validate()?;
    let found = found?;

    let mut seen = vec![false; old.total_files()];
    let plans: Vec<Plan> = old_entries_of(&old, &found.files)
        .into_iter()
        .zip(&found.files)
        .map(|(i, f)| {
            let Some(i) = i else {
                return Plan::Index(None);
            };
            seen[i] = true;
            let e = old.head(i);
            if !reusable(&old, i, f, &config) || f.size_bytes != e.size_bytes {
                return Plan::Index(Some(i));
            }
            match config.fingerprint {
                Fingerprint::Metadata if f.mtime_ms == e.mtime_ms => Plan::Keep(i),
                Fingerprint::Metadata => Plan::Index(Some(i)),
                Fingerprint::Blake3 => Plan::Hash(i),
            }
        })
        .collect();

    // Blake3: hash in parallel; a file whose digest no longer matches is re-indexed.
    let digests: Vec<(usize, bool)> = plans
        .par_iter()
        .enumerate()
        .filter_map(|(k, p)| match p {
            Plan::Hash(_) if is_cancelled(cancel) => None,
            Plan::Hash(i) => {
                let expected = old.head(*i).blake3.unwrap_or_default();
                let same = hash_file(&root.join(&found.files[k].path))
                    .is_ok_and(|d| d.eq_ignore_ascii_case(expected));
                Some((k, same))
            }
            _ => None,
        })
        .collect();
    let mut plans = plans;
    for (k, same) in digests {
        if let Plan::Hash(i) = plans[k] {
            plans[k] = if same {
                Plan::Keep(i)
            } else {
                Plan::Index(Some(i))
            };
        }
    }

    let todo: Vec<usize> = plans
        .iter()
        .enumerate()
        .filter(|(_, p)| matches!(p, Plan::Index(_)))
        .map(|(k, _)| k)
        .collect();
    // Nothing to index, nothing gone and every mtime as stored: the map on disk is the one
    // this update would write, so it is neither rebuilt nor written again.
    let unchanged = todo.is_empty()
        && seen.iter().all(|&s| s)
        && plans
            .iter()
            .zip(&found.files)
            .all(|(p, f)| matches!(p, Plan::Keep(i) if old.head(*i).mtime_ms == f.mtime_ms));
    if unchanged {
        return Ok(UpdateReport {
            kept: old.total_files(),
            map: old,
            created: false,
            added: Vec::new(),
            modified: Vec::new(),
            removed: Vec::new(),
            failures: Vec::new(),
            elapsed: started.elapsed(),
        });
    }
    let kept = found.files.len() - todo.len();
    let mut indexed: Vec<Option<Result<MapEntry>>> = (0..found.files.len()).map(|_| None).collect();
    for (k, r) in index_files(
        root,
        &found.files,
        todo,
        &config,
        options.progress.as_ref(),
        cancel,
    ) {
        indexed[k] = Some(r);
    }
    if is_cancelled(cancel) {
        return Err(Error::Interrupted);
    }

    let mut added = Vec::new();
    let mut modified = Vec::new();
    for ((plan, f), slot) in plans.iter().zip(&found.files).zip(&indexed) {
        match (plan, slot) {
            (Plan::Index(None), Some(Ok(_))) => added.push(f.path.clone()),
            (Plan::Index(Some(_)), Some(Ok(_))) => modified.push(f.path.clone()),
            _ => {}
        }
    }
    let removed: Vec<String> = (0..old.total_files())
        .filter(|&i| !seen[i])
        .map(|i| old.head(i).path.to_string())
        .collect();
    // Kept entries come column by column from the old map, the others from their new
    // entries; a file that failed fails the update, or with `skip_errors` is left out.
    let mut from = Vec::with_capacity(found.files.len());
    let mut fresh = Vec::new();
    let mut failures = Vec::new();
    for ((plan, f), slot) in plans.iter().zip(&found.files).zip(indexed) {
        match (plan, slot) {
            (Plan::Keep(i), _) => from.push(EntryFrom::Old {
                index: *i,
                mtime_ms: f.mtime_ms,
            }),
            (_, Some(Ok(e))) => {
                from.push(EntryFrom::New(fresh.len()));
                fresh.push(e);
            }
            (_, Some(Err(err))) if options.skip_errors => failures.push(FileFailure {
                path: f.path.clone(),
                message: err.to_string(),
            }),
            (_, Some(Err(err))) => return Err(err),
            (_, None) => {}
        }
    }
    if !options.dry_run
        && let Some(map) = write_spliced(root, &old, &from, &fresh)?
    {
        return Ok(UpdateReport {
            map,
            created: false,
            added,
            modified,
            removed,
            kept,
            failures,
            elapsed: started.elapsed(),
        });
    }
    let map = match old.rebuilt(&from, &fresh)? {
        Some(map) => map,
        None => {
            let mut entries: Vec<MapEntry> = from
                .iter()
                .map(|f| match *f {
                    EntryFrom::Old { index, mtime_ms } => kept_entry(&old.entry(index), mtime_ms),
                    EntryFrom::New(j) => fresh[j].clone(),
                })
                .collect();
            assign_first_global_rows(&mut entries);
            LakeMap::from_entries(root, config, &entries)?
        }
    };
    if !options.dry_run {
        write_map(&map)?;
    }
    Ok(UpdateReport {
        map,
        created: false,
        added,
        modified,
        removed,
        kept,
        failures,
        elapsed: started.elapsed(),
    })
}

/// Writes the updated map by splicing the old map file ([`crate::splice`]): its record
/// batches of kept entries copied, the others encoded again. The file is published only
/// once it loads with the entries `from` names (paths, sizes, mtimes and row counts) and the
/// old configuration; `None` when the old file cannot be spliced or the result does not
/// check, and nothing is written then.
fn write_spliced(
    root: &Path,
    old: &LakeMap,
    from: &[EntryFrom],
    fresh: &[MapEntry],
) -> Result<Option<LakeMap>> {
    // The old file's size stands for the body: a small map spliced stays uncompressed.
    let old_bytes = old.mapped_bytes().map_or(usize::MAX, <[u8]>::len);
    let Ok(options) = write_options(old_bytes) else {
        return Ok(None);
    };
    let Some(bytes) = crate::splice::spliced(old, from, fresh, &options) else {
        return Ok(None);
    };
    let expected = |f: &EntryFrom| match *f {
        EntryFrom::Old { index, mtime_ms } => {
            let e = old.head(index);
            (e.path, e.size_bytes, mtime_ms, e.row_count)
        }
        EntryFrom::New(j) => {
            let e = &fresh[j];
            (e.path.as_str(), e.size_bytes, e.mtime_ms, e.row_count)
        }
    };
    let check = |map: &LakeMap| {
        map.total_files() == from.len()
            && map.config() == old.config()
            && from.iter().enumerate().all(|(i, f)| {
                let e = map.head(i);
                expected(f) == (e.path, e.size_bytes, e.mtime_ms, e.row_count)
            })
    };
    write_bytes_checked(root, &resolve_map_path(root), &bytes, check)
}

/// No map yet: create one with `new_config`; every file is added.
fn create_instead(root: &Path, options: &UpdateOptions, started: Instant) -> Result<UpdateReport> {
    let created = create_map_with(
        root,
        &CreateOptions {
            config: options.new_config.clone(),
            registry: options.registry.clone(),
            skip_errors: options.skip_errors,
            progress: options.progress.clone(),
            dry_run: options.dry_run,
            cancel: options.cancel.clone(),
        },
    )?;
    let added = created.map.entries().map(|e| e.path.to_string()).collect();
    Ok(UpdateReport {
        map: created.map,
        created: true,
        added,
        modified: Vec::new(),
        removed: Vec::new(),
        kept: 0,
        failures: created.failures,
        elapsed: started.elapsed(),
    })
}

/// The index in `old` of each discovered file's entry, if it has one. Both lists are in
/// path order (discovery sorts, and so does every writer of a map), so one merge pass pairs
/// them; a map whose paths are not strictly increasing is matched through a hash table.
fn old_entries_of(old: &LakeMap, files: &[DiscoveredFile]) -> Vec<Option<usize>> {
    let n = old.total_files();
    let sorted = (1..n).all(|i| old.path(i - 1) < old.path(i));
    if !sorted {
        let index: HashMap<&str, usize> = (0..n).map(|i| (old.path(i), i)).collect();
        return files
            .iter()
            .map(|f| index.get(f.path.as_str()).copied())
            .collect();
    }
    let mut j = 0;
    files
        .iter()
        .map(|f| {
            while j < n && old.path(j) < f.path.as_str() {
                j += 1;
            }
            (j < n && old.path(j) == f.path).then_some(j)
        })
        .collect()
}

/// True when entry `i` of `old` holds what indexing `f` with `config` would store apart from
/// the fingerprint: the handler discovery picks now produces its format (and stores no
/// blocks if it is dynamic), and the entry has the schema, statistics and digest the
/// options ask for. Its blocks, statistics and schema are not read (only whether they are
/// there), unless the handler is dynamic.
fn reusable(old: &LakeMap, i: usize, f: &DiscoveredFile, config: &MapConfig) -> bool {
    let e = old.head(i);
    let locator = &f.handler.locator;
    let same_handler = locator.name() == e.format || locator.formats().contains(&e.format);
    let stats_ok = e.has_stats != config.stats_columns.is_none();
    let digest_ok = (config.fingerprint == Fingerprint::Blake3) == e.blake3.is_some();
    old.map_schema() == MAP_SCHEMA
        && same_handler
        && stats_ok
        && digest_ok
        && e.has_schema
        && (!f.handler.dynamic || old.entry(i).row_groups_json == "[]")
}

/// The old entry as this update stores it: as read, with the file's current mtime.
fn kept_entry(e: &Entry<'_>, mtime_ms: i64) -> MapEntry {
    let mut entry = e.to_owned_entry();
    entry.mtime_ms = mtime_ms;
    entry
}
