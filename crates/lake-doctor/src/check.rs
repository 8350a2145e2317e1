//! The comparison itself: discovery (lake-map's, with the caller's handler registry), one
//! verdict per map entry, the unindexed files, and the paths that could not be checked.
//!
//! Metadata mode never opens a data file: the size and mtime come from the one `stat` that
//! discovery makes of every data file it takes. Only an entry that discovery did not take
//! (gone, or no longer a regular file) is looked up on its own, one path component at a time
//! without following symbolic links. Blake3 mode hashes the entries whose size and mtime still
//! match, in parallel across files (rayon) and within large files (blake3's `update_rayon`).

use std::collections::HashMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use lake_map::discovery::{WalkError, check_entry_path, discover_lenient, mtime_ms};
use lake_map::{Fingerprint, HandlerRegistry, LakeMap, ProgressTally, hash_file, load_map};
use rayon::prelude::*;

use crate::error::Result;
use crate::report::{DoctorReport, ErrorKind, PathError};

/// Progress of a run (the type map creation reports too), passed to the callback as entries
/// are checked: files are map entries, bytes are the bytes hashed (blake3 mode; 0 to do in
/// metadata mode).
pub use lake_map::{Progress, ProgressFn};

/// Everything [`diagnose`] needs besides the map.
#[derive(Clone, Default)]
pub struct DoctorOptions {
    /// Built-in and dynamic handlers: the same registry map creation used, so that
    /// "unindexed" means what a new map would add.
    pub registry: HandlerRegistry,
    /// Called as entries are checked.
    pub progress: Option<ProgressFn>,
}

impl std::fmt::Debug for DoctorOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DoctorOptions")
            .field("registry", &self.registry)
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

/// Loads `<root>/.br_map.bazan` and compares it with the lake.
pub fn diagnose_lake(root: &Path, options: &DoctorOptions) -> Result<DoctorReport> {
    let map = load_map(root)?;
    diagnose(&map, options)
}

/// The state of one entry once it is known.
#[derive(Debug)]
enum State {
    Healthy,
    Modified,
    Missing,
    Error(PathError),
}

/// An entry whose size and mtime match and whose digest must be compared.
struct ToHash<'a> {
    index: usize,
    full: PathBuf,
    size: u64,
    expected: &'a str,
}

/// Compares `map` with the files under its root now.
///
/// Fails only when the root itself cannot be walked (missing, not a directory); every other
/// problem is a [`PathError`] in the report.
pub fn diagnose(map: &LakeMap, options: &DoctorOptions) -> Result<DoctorReport> {
    let root = map.root();
    let fingerprint = map.config().fingerprint;
    let (found, walk_errors) = discover_lenient(root, &options.registry)?;
    let on_disk: HashMap<&str, usize> = found
        .files
        .iter()
        .enumerate()
        .map(|(i, f)| (f.path.as_str(), i))
        .collect();
    let mut indexed = vec![false; found.files.len()];
    let total_files = map.total_files() as u64;

    let mut states: Vec<Option<State>> = Vec::with_capacity(map.total_files());
    let mut to_hash: Vec<ToHash<'_>> = Vec::new();
    // The entries' paths, sizes, mtimes and digests only: their blocks, statistics and
    // schemas stay compressed in the map file.
    for index in 0..map.total_files() {
        let entry = map.head(index);
        let now = match on_disk.get(entry.path) {
            Some(&i) => {
                indexed[i] = true;
                let f = &found.files[i];
                // The full path is only built when the file is hashed.
                Ok((None, f.size_bytes, f.mtime_ms))
            }
            None => look_up(root, entry.path),
        };
        let state = match now {
            Err(state) => Some(state),
            Ok((_, size, mtime)) if size != entry.size_bytes || mtime != entry.mtime_ms => {
                Some(State::Modified)
            }
            Ok(_) if fingerprint == Fingerprint::Metadata => Some(State::Healthy),
            Ok((full, size, _)) => match entry.blake3 {
                Some(expected) => {
                    to_hash.push(ToHash {
                        index,
                        full: full.unwrap_or_else(|| root.join(entry.path)),
                        size,
                        expected,
                    });
                    None
                }
                None => Some(State::Error(no_digest(root, entry.path))),
            },
        };
        states.push(state);
    }

    let total_bytes: u64 = to_hash.iter().map(|h| h.size).sum();
    let tally = ProgressTally::new(
        options.progress.as_ref(),
        total_files - to_hash.len() as u64,
        total_files,
        total_bytes,
    );
    tally.report();
    let hashed: Vec<(usize, State, u64)> = to_hash
        .par_iter()
        .map(|h| {
            let (state, read) = match hash_file(&h.full) {
                Ok(digest) if digest.eq_ignore_ascii_case(h.expected) => (State::Healthy, h.size),
                Ok(_) => (State::Modified, h.size),
                // Deleted between discovery and hashing.
                Err(lake_map::Error::Io { source, .. })
                    if source.kind() == io::ErrorKind::NotFound =>
                {
                    (State::Missing, 0)
                }
                Err(e) => {
                    // The operating system's error alone: the message names the path itself.
                    let cause = match &e {
                        lake_map::Error::Io { source, .. } => source.to_string(),
                        other => other.to_string(),
                    };
                    (
                        State::Error(PathError {
                            path: map.head(h.index).path.to_string(),
                            kind: ErrorKind::Unreadable,
                            message: format!("{}: cannot hash: {cause}", h.full.display()),
                        }),
                        0,
                    )
                }
            };
            tally.add(1, h.size);
            (h.index, state, read)
        })
        .collect();
    let mut report = DoctorReport::new(fingerprint);
    for (index, state, read) in hashed {
        states[index] = Some(state);
        report.hashed_bytes += read;
    }

    for (index, state) in states.into_iter().enumerate() {
        let entry = map.head(index);
        match state {
            Some(State::Healthy) => report.healthy += 1,
            Some(State::Modified) => report.modified.push(entry.path.to_string()),
            Some(State::Missing) => report.missing.push(entry.path.to_string()),
            Some(State::Error(e)) => report.errors.push(e),
            // Every entry left for hashing got its state above.
            None => report.errors.push(PathError {
                path: entry.path.to_string(),
                kind: ErrorKind::Unreadable,
                message: format!("{}: not checked", root.join(entry.path).display()),
            }),
        }
    }
    report.unindexed = found
        .files
        .iter()
        .zip(&indexed)
        .filter(|(_, indexed)| !**indexed)
        .map(|(f, _)| f.path.clone())
        .collect();
    report
        .errors
        .extend(walk_errors.into_iter().map(walk_error));
    report.errors.sort_by(|a, b| a.path.cmp(&b.path));
    // A path can fail both in the walk and in its own look-up; report it once.
    report.errors.dedup_by(|a, b| a.path == b.path);
    Ok(report)
}

fn no_digest(root: &Path, path: &str) -> PathError {
    PathError {
        path: path.to_string(),
        kind: ErrorKind::NoDigest,
        message: format!(
            "{}: the map's fingerprint is blake3 but the entry has no digest",
            root.join(path).display()
        ),
    }
}

fn walk_error(e: WalkError) -> PathError {
    let kind = match &e.error {
        // The walk's only InvalidData error is a name that is not UTF-8.
        lake_map::Error::Io { source, .. } if source.kind() == io::ErrorKind::InvalidData => {
            ErrorKind::NotUtf8
        }
        _ => ErrorKind::Unreadable,
    };
    PathError {
        path: if e.path.is_empty() {
            ".".to_string()
        } else {
            e.path
        },
        kind,
        message: e.error.to_string(),
    }
}

/// Looks up an entry that discovery did not take: each component with `lstat`, so that a
/// directory replaced by a symbolic link is not followed out of the lake. Returns the full
/// path, size and mtime of a regular file, or the entry's state.
fn look_up(root: &Path, path: &str) -> std::result::Result<(Option<PathBuf>, u64, i64), State> {
    let error = |kind, message: String| {
        State::Error(PathError {
            path: path.to_string(),
            kind,
            message,
        })
    };
    // Loading the map already refuses such paths; checked again because the map may come
    // from elsewhere than `load_map`.
    if let Err(why) = check_entry_path(path) {
        return Err(error(
            ErrorKind::PathEscape,
            format!("entry path {path:?} escapes the lake root: {why}"),
        ));
    }
    let mut full = root.to_path_buf();
    let segments: Vec<&str> = path.split('/').collect();
    for (n, seg) in segments.iter().enumerate() {
        full.push(seg);
        let meta = match fs::symlink_metadata(&full) {
            Ok(m) => m,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
                ) =>
            {
                return Err(State::Missing);
            }
            Err(e) => {
                return Err(error(
                    ErrorKind::Unreadable,
                    format!("{}: {e}", full.display()),
                ));
            }
        };
        let file_type = meta.file_type();
        if file_type.is_symlink() {
            return Err(error(
                ErrorKind::Symlink,
                format!(
                    "{} is a symbolic link, which the doctor does not follow",
                    full.display()
                ),
            ));
        }
        let last = n + 1 == segments.len();
        if !last {
            if !file_type.is_dir() {
                // A directory on the way became a file: the entry is gone.
                return Err(State::Missing);
            }
            continue;
        }
        if !file_type.is_file() {
            let what = if file_type.is_dir() {
                "a directory"
            } else {
                "a FIFO, socket or device"
            };
            return Err(error(
                ErrorKind::NotRegular,
                format!("{} is now {what}, not a regular file", full.display()),
            ));
        }
        return Ok((Some(full), meta.len(), mtime_ms(&meta)));
    }
    Err(State::Missing)
}
