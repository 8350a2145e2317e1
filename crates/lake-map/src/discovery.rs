//! Discovery (§4): which files of a lake are data files, in map order.
//!
//! A recursive walk of the root that never follows symbolic links. A regular file is taken
//! when the text after the last `.` of its name has a handler; names starting with `.` (files
//! and directories), the map files `.br_map.bazan` / `.br_map.ipc` and files without an
//! extension are skipped. Paths are stored relative to the root with `/` separators and sorted
//! by the bytes of that string, so `data-2024.csv` < `data.csv` < `data/x.csv`.

use std::fs;
use std::path::{Component, Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::error::{Error, Result};
use crate::handlers::{Handler, HandlerRegistry};

/// The map file's name at the lake root.
pub const MAP_FILE_NAME: &str = ".br_map.bazan";
/// The reserved legacy sidecar name, skipped and never written.
pub const LEGACY_MAP_FILE_NAME: &str = ".br_map.ipc";

/// The map file of a lake: `<root>/.br_map.bazan`.
pub fn resolve_map_path(root: &Path) -> PathBuf {
    root.join(MAP_FILE_NAME)
}

/// One data file found by discovery.
#[derive(Debug, Clone)]
pub struct DiscoveredFile {
    /// Path relative to the root, `/`-separated.
    pub path: String,
    /// Size in bytes at discovery.
    pub size_bytes: u64,
    /// Modification time in milliseconds since the Unix epoch at discovery.
    pub mtime_ms: i64,
    /// The handler of its extension.
    pub handler: Handler,
}

/// Why discovery left a file (or a hidden directory) out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkipReason {
    /// No extension (`README`, `csv`, `.csv`).
    NoExtension,
    /// An extension without a handler (`.bak`, `weird.`).
    UnknownExtension,
    /// `.br_map.ipc`.
    LegacyMapFile,
    /// `.br_map.bazan`.
    MapFile,
    /// The name starts with `.` (for a directory, nothing below it is visited).
    Hidden,
    /// A symbolic link (never followed).
    Symlink,
    /// Neither a regular file nor a directory (socket, FIFO, device).
    NotRegular,
}

impl SkipReason {
    /// The reason's name, as the conformance corpus spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            SkipReason::NoExtension => "no_extension",
            SkipReason::UnknownExtension => "unknown_extension",
            SkipReason::LegacyMapFile => "legacy_map_file",
            SkipReason::MapFile => "map_file",
            SkipReason::Hidden => "hidden",
            SkipReason::Symlink => "symlink",
            SkipReason::NotRegular => "not_regular",
        }
    }
}

/// A file or directory discovery skipped.
#[derive(Debug, Clone)]
pub struct Skipped {
    /// Relative path (`/`-separated; a directory ends with `/`).
    pub path: String,
    /// Why.
    pub reason: SkipReason,
}

/// The result of a walk: the data files in map order, and what was skipped.
#[derive(Debug, Clone, Default)]
pub struct Discovery {
    /// Data files, sorted by the bytes of their relative path.
    pub files: Vec<DiscoveredFile>,
    /// Skipped files and hidden directories, sorted by path.
    pub skipped: Vec<Skipped>,
}

/// Walks `root` and returns its data files in map order.
pub fn discover(root: &Path, registry: &HandlerRegistry) -> Result<Discovery> {
    let (out, mut errors) = discover_lenient(root, registry)?;
    // The walk order is deterministic, so this is the error a walk stopping at it would give.
    if !errors.is_empty() {
        return Err(errors.swap_remove(0).error);
    }
    Ok(out)
}

/// A directory or file the walk could not read, reported by [`discover_lenient`].
#[derive(Debug)]
pub struct WalkError {
    /// Relative path (`/`-separated; a directory ends with `/`, the root itself is `""`).
    pub path: String,
    /// What went wrong, naming the full path.
    pub error: Error,
}

/// Like [`discover`], but a directory that cannot be listed, a name that is not UTF-8 or a
/// file that cannot be inspected is reported in the second list (in walk order) and the walk
/// goes on. Only a root that is missing or not a directory fails the whole walk. Lake Doctor
/// uses it so that one unreadable path does not hide the state of the rest of the lake.
pub fn discover_lenient(
    root: &Path,
    registry: &HandlerRegistry,
) -> Result<(Discovery, Vec<WalkError>)> {
    let meta = fs::metadata(root).map_err(|e| Error::io(root, e))?;
    if !meta.is_dir() {
        return Err(Error::io(
            root,
            std::io::Error::new(
                std::io::ErrorKind::NotADirectory,
                "lake root is not a directory",
            ),
        ));
    }
    let mut out = Discovery::default();
    let mut errors = Vec::new();
    walk(root, "", registry, &mut out, &mut errors);
    out.files.sort_by(|a, b| a.path.cmp(&b.path));
    out.skipped.sort_by(|a, b| a.path.cmp(&b.path));
    Ok((out, errors))
}

fn walk(
    dir: &Path,
    prefix: &str,
    registry: &HandlerRegistry,
    out: &mut Discovery,
    errors: &mut Vec<WalkError>,
) {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) => {
            errors.push(WalkError {
                path: prefix.to_string(),
                error: Error::io(dir, e),
            });
            return;
        }
    };
    for entry in entries {
        let entry = match entry {
            Ok(entry) => entry,
            Err(e) => {
                errors.push(WalkError {
                    path: prefix.to_string(),
                    error: Error::io(dir, e),
                });
                // A failing directory stream does not recover; stop listing this directory.
                return;
            }
        };
        let full = entry.path();
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            errors.push(WalkError {
                path: format!("{prefix}{}", name.to_string_lossy()),
                error: Error::io(
                    &full,
                    std::io::Error::new(std::io::ErrorKind::InvalidData, "file name is not UTF-8"),
                ),
            });
            continue;
        };
        let rel = format!("{prefix}{name}");
        // `DirEntry::file_type` does not follow symbolic links.
        let file_type = match entry.file_type() {
            Ok(t) => t,
            Err(e) => {
                errors.push(WalkError {
                    path: rel,
                    error: Error::io(&full, e),
                });
                continue;
            }
        };
        let skip = |reason, out: &mut Discovery, rel: String| {
            out.skipped.push(Skipped { path: rel, reason });
        };
        if file_type.is_symlink() {
            skip(SkipReason::Symlink, out, rel);
            continue;
        }
        if file_type.is_dir() {
            if name.starts_with('.') {
                skip(SkipReason::Hidden, out, format!("{rel}/"));
            } else {
                walk(&full, &format!("{rel}/"), registry, out, errors);
            }
            continue;
        }
        if !file_type.is_file() {
            skip(SkipReason::NotRegular, out, rel);
            continue;
        }
        if name == MAP_FILE_NAME {
            skip(SkipReason::MapFile, out, rel);
            continue;
        }
        if name == LEGACY_MAP_FILE_NAME {
            skip(SkipReason::LegacyMapFile, out, rel);
            continue;
        }
        let path = Path::new(name);
        let ext = path.extension().and_then(|e| e.to_str());
        if ext.is_some() && name.starts_with('.') {
            skip(SkipReason::Hidden, out, rel);
            continue;
        }
        match ext {
            None => skip(SkipReason::NoExtension, out, rel),
            Some(_) => match registry.for_path(path) {
                None => skip(SkipReason::UnknownExtension, out, rel),
                Some(handler) => {
                    let meta = match entry.metadata() {
                        Ok(m) => m,
                        Err(e) => {
                            errors.push(WalkError {
                                path: rel,
                                error: Error::io(&full, e),
                            });
                            continue;
                        }
                    };
                    out.files.push(DiscoveredFile {
                        path: rel,
                        size_bytes: meta.len(),
                        mtime_ms: mtime_ms(&meta),
                        handler,
                    });
                }
            },
        }
    }
}

/// A file's modification time in milliseconds since the Unix epoch (negative before it).
pub fn mtime_ms(meta: &fs::Metadata) -> i64 {
    match meta.modified() {
        Ok(t) => system_time_ms(t),
        Err(_) => 0,
    }
}

fn system_time_ms(t: SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_millis()).unwrap_or(i64::MAX),
        Err(e) => -i64::try_from(e.duration().as_millis()).unwrap_or(i64::MAX),
    }
}

/// Checks an entry path lexically: relative, `/`-separated, no empty, `.` or `..` segment,
/// no backslash or NUL. Returns the reason when it is refused.
pub fn check_entry_path(path: &str) -> std::result::Result<(), &'static str> {
    // One pass over the bytes: this runs for every entry when a map is loaded.
    let bytes = path.as_bytes();
    if bytes.is_empty() {
        return Err("empty path");
    }
    if bytes[0] == b'/' {
        return Err("absolute path, backslash or NUL");
    }
    let mut seg_start = 0;
    for i in 0..=bytes.len() {
        let b = if i < bytes.len() { bytes[i] } else { b'/' };
        match b {
            b'\\' | 0 => return Err("absolute path, backslash or NUL"),
            b'/' => {
                match &bytes[seg_start..i] {
                    b"" => return Err("empty path segment"),
                    b"." | b".." => return Err("`.` or `..` segment"),
                    _ => {}
                }
                seg_start = i + 1;
            }
            _ => {}
        }
    }
    // A Windows-style prefix (`C:`) would make `Path::join` replace the root there.
    if cfg!(windows)
        && Path::new(path)
            .components()
            .any(|c| !matches!(c, Component::Normal(_)))
    {
        return Err("not a plain relative path");
    }
    Ok(())
}

/// Resolves an entry of the map below `root`, refusing escapes: the path must pass
/// [`check_entry_path`], no component may be a symbolic link, and the resolved file must lie
/// inside the canonical root.
pub fn resolve_entry(root: &Path, entry: &str) -> Result<PathBuf> {
    check_entry_path(entry).map_err(|why| Error::PathEscape {
        map: root.to_path_buf(),
        entry: entry.to_string(),
        message: why.to_string(),
    })?;
    let full = root.join(entry);
    let mut cur = root.to_path_buf();
    for seg in entry.split('/') {
        cur.push(seg);
        match fs::symlink_metadata(&cur) {
            Ok(m) if m.file_type().is_symlink() => {
                return Err(Error::PathEscape {
                    map: root.to_path_buf(),
                    entry: entry.to_string(),
                    message: format!("{} is a symbolic link", cur.display()),
                });
            }
            Ok(_) => {}
            // A missing file is reported by the caller's stale check, naming it.
            Err(_) => return Ok(full),
        }
    }
    let canon_root = fs::canonicalize(root).map_err(|e| Error::io(root, e))?;
    let canon = fs::canonicalize(&full).map_err(|e| Error::io(&full, e))?;
    if !canon.starts_with(&canon_root) {
        return Err(Error::PathEscape {
            map: root.to_path_buf(),
            entry: entry.to_string(),
            message: format!("resolves to {}", canon.display()),
        });
    }
    Ok(full)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_paths() {
        assert!(check_entry_path("a/b.csv").is_ok());
        assert!(check_entry_path("données/été 2024.csv").is_ok());
        for bad in [
            "",
            "/etc/passwd",
            "../x.csv",
            "a/../b.csv",
            "a//b",
            "./a",
            "a\\b",
            "a/.",
        ] {
            assert!(check_entry_path(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn byte_order() {
        let mut v = vec![
            "data/x.csv",
            "data.csv",
            "data-2024.csv",
            "alpha.csv",
            "Beta.csv",
        ];
        v.sort();
        assert_eq!(
            v,
            [
                "Beta.csv",
                "alpha.csv",
                "data-2024.csv",
                "data.csv",
                "data/x.csv"
            ]
        );
    }
}
