//! Discovery (`docs/lake-map.md` §4): which files of a lake are data files, in map order.
//!
//! A recursive walk of the root that never follows symbolic links. A regular file is taken
//! when the text after the last `.` of its name has a handler; names starting with `.` (files
//! and directories), the map files `.br_map.bazan` / `.br_map.ipc` and files without an
//! extension are skipped. Paths are stored relative to the root with `/` separators and sorted
//! by the bytes of that string, so `data-2024.csv` < `data.csv` < `data/x.csv`.

use std::fs;
use std::path::{Component, Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use arrow_array::Array;

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
    let walked = walk(root, "", registry);
    let mut out = Discovery {
        files: walked.files,
        skipped: walked.skipped,
    };
    out.files.sort_unstable_by(|a, b| a.path.cmp(&b.path));
    out.skipped.sort_by(|a, b| a.path.cmp(&b.path));
    Ok((out, walked.errors))
}

/// What the walk of one directory found (its subdirectories included).
#[derive(Default)]
struct Walked {
    files: Vec<DiscoveredFile>,
    skipped: Vec<Skipped>,
    /// In walk order.
    errors: Vec<WalkError>,
}

impl Walked {
    fn append(&mut self, mut other: Walked) {
        self.files.append(&mut other.files);
        self.skipped.append(&mut other.skipped);
        self.errors.append(&mut other.errors);
    }

    fn push(&mut self, visit: Visit) {
        match visit {
            Visit::File(f) => self.files.push(f),
            Visit::Skip(s) => self.skipped.push(s),
            Visit::Error(e) => self.errors.push(e),
            Visit::Dir(w) => self.append(w),
        }
    }
}

/// What one entry of a directory turned out to be.
enum Visit {
    File(DiscoveredFile),
    Skip(Skipped),
    Error(WalkError),
    /// A subdirectory, walked.
    Dir(Walked),
}

/// Below this many entries a directory's entries are looked at on the calling thread.
const PARALLEL_ENTRIES: usize = 16;

/// Walks `dir` (whose relative path is `prefix`, empty or ending with `/`).
///
/// The directory is listed first; then its entries are looked at (the file type, and a
/// data file's size and mtime, each a `statx` relative to the directory's descriptor) and
/// its subdirectories walked on the threads of the caller's rayon pool, so that a lake of
/// 100,000 files does not wait for 100,000 system calls one after the other. The entries
/// are taken in the byte order of their paths and the results put together in that order,
/// so the files come out sorted and errors in the order a one-thread walk meets them. Nothing is allocated per entry but what the entry is (its relative path, and its
/// full path only for a subdirectory or an error).
fn walk(dir: &Path, prefix: &str, registry: &HandlerRegistry) -> Walked {
    use rayon::prelude::*;
    let mut head = Walked::default();
    let listing = match fs::read_dir(dir) {
        Ok(listing) => listing,
        Err(e) => {
            head.errors.push(WalkError {
                path: prefix.to_string(),
                error: Error::io(dir, e),
            });
            return head;
        }
    };
    let mut entries = Vec::new();
    let mut stream_error = None;
    for entry in listing {
        match entry {
            Ok(entry) => {
                // A directory sorts as its name and a `/`, as the paths below it do.
                let dir = entry.file_type().is_ok_and(|t| t.is_dir());
                entries.push((entry.file_name(), dir, entry));
            }
            Err(e) => {
                // A failing directory stream does not recover; stop listing this directory.
                stream_error = Some(WalkError {
                    path: prefix.to_string(),
                    error: Error::io(dir, e),
                });
                break;
            }
        }
    }
    // In the byte order of the paths: the walk's files come out sorted, so the final sort
    // only checks them.
    entries.sort_unstable_by(|(a, a_dir, _), (b, b_dir, _)| {
        path_order(a.as_encoded_bytes(), *a_dir, b.as_encoded_bytes(), *b_dir)
    });
    let visit = |(name, _, entry): &(std::ffi::OsString, bool, fs::DirEntry)| {
        visit_entry(entry, name, dir, prefix, registry)
    };
    let parts: Vec<Visit> = if entries.len() < PARALLEL_ENTRIES {
        entries.iter().map(visit).collect()
    } else {
        entries.par_iter().with_min_len(8).map(visit).collect()
    };
    head.files.reserve(parts.len());
    for part in parts {
        head.push(part);
    }
    head.errors.extend(stream_error);
    head
}

/// How two entries of a directory sort as the paths they hold do: a directory as its name
/// followed by `/`.
fn path_order(a: &[u8], a_dir: bool, b: &[u8], b_dir: bool) -> std::cmp::Ordering {
    if !a_dir && !b_dir {
        return a.cmp(b);
    }
    let slash = |dir: bool| if dir { &b"/"[..] } else { &b""[..] };
    a.iter()
        .chain(slash(a_dir))
        .cmp(b.iter().chain(slash(b_dir)))
}

/// The extension of a file name as [`Path::extension`] takes it: the text after the last
/// `.`, none when the only `.` starts the name.
fn extension(name: &str) -> Option<&str> {
    match name.rfind('.') {
        Some(0) | None => None,
        Some(i) => Some(&name[i + 1..]),
    }
}

/// One entry of the directory `dir`, whose relative path is `prefix`: a data file, a
/// skipped entry, an error, or a subdirectory's walk.
fn visit_entry(
    entry: &fs::DirEntry,
    name: &std::ffi::OsStr,
    dir: &Path,
    prefix: &str,
    registry: &HandlerRegistry,
) -> Visit {
    let Some(name) = name.to_str() else {
        return Visit::Error(WalkError {
            path: format!("{prefix}{}", name.to_string_lossy()),
            error: Error::io(
                entry.path(),
                std::io::Error::new(std::io::ErrorKind::InvalidData, "file name is not UTF-8"),
            ),
        });
    };
    let mut rel = String::with_capacity(prefix.len() + name.len() + 1);
    rel.push_str(prefix);
    rel.push_str(name);
    // `DirEntry::file_type` does not follow symbolic links.
    let file_type = match entry.file_type() {
        Ok(t) => t,
        Err(e) => {
            return Visit::Error(WalkError {
                path: rel,
                error: Error::io(dir.join(name), e),
            });
        }
    };
    let skip = |reason, path: String| Visit::Skip(Skipped { path, reason });
    if file_type.is_symlink() {
        return skip(SkipReason::Symlink, rel);
    }
    if file_type.is_dir() {
        rel.push('/');
        if name.starts_with('.') {
            return skip(SkipReason::Hidden, rel);
        }
        return Visit::Dir(walk(&dir.join(name), &rel, registry));
    }
    if !file_type.is_file() {
        return skip(SkipReason::NotRegular, rel);
    }
    if name == MAP_FILE_NAME {
        return skip(SkipReason::MapFile, rel);
    }
    if name == LEGACY_MAP_FILE_NAME {
        return skip(SkipReason::LegacyMapFile, rel);
    }
    let ext = extension(name);
    if ext.is_some() && name.starts_with('.') {
        return skip(SkipReason::Hidden, rel);
    }
    match ext {
        None => skip(SkipReason::NoExtension, rel),
        Some(ext) => match (!ext.is_empty())
            .then(|| registry.for_extension(ext))
            .flatten()
        {
            None => skip(SkipReason::UnknownExtension, rel),
            Some(handler) => match entry.metadata() {
                Ok(meta) => Visit::File(DiscoveredFile {
                    path: rel,
                    size_bytes: meta.len(),
                    mtime_ms: mtime_ms(&meta),
                    handler,
                }),
                Err(e) => Visit::Error(WalkError {
                    path: rel,
                    error: Error::io(dir.join(name), e),
                }),
            },
        },
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
    // This runs for every entry when a map is loaded, so it uses memchr's vectorised scans
    // for the few bytes that matter instead of a loop over every byte.
    let bytes = path.as_bytes();
    if bytes.is_empty() {
        return Err("empty path");
    }
    if bytes[0] == b'/' || memchr::memchr2(b'\\', 0, bytes).is_some() {
        return Err("absolute path, backslash or NUL");
    }
    for i in memchr::memchr_iter(b'/', bytes) {
        if bytes.get(i + 1).is_none_or(|&b| b == b'/') {
            return Err("empty path segment");
        }
    }
    for i in memchr::memchr_iter(b'.', bytes) {
        // A `.` that starts a segment and is followed by the segment's end, or by one more
        // `.` and the end, is a `.` or `..` segment.
        let starts = i == 0 || bytes[i - 1] == b'/';
        let ends_at = |j: usize| j == bytes.len() || bytes[j] == b'/';
        if starts && (ends_at(i + 1) || (bytes.get(i + 1) == Some(&b'.') && ends_at(i + 2))) {
            return Err("`.` or `..` segment");
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

/// Checks every path of a map's `path` column at once (the rules of [`check_entry_path`]):
/// one vectorised scan over the concatenated values for forbidden bytes, `/` and `.`, with a
/// cursor over the offsets to know which entry each hit belongs to. Returns the index of the
/// first refused entry and why.
pub fn check_entry_paths(
    paths: &arrow_array::StringArray,
) -> std::result::Result<(), (usize, &'static str)> {
    let offsets = paths.value_offsets();
    let n = paths.len();
    if n == 0 {
        return Ok(());
    }
    let base = offsets[0] as usize;
    let values = &paths.value_data()[base..offsets[n] as usize];
    let entry_of = |pos: usize, cursor: &mut usize| {
        // Offsets are non-decreasing and hits come in order, so the cursor only moves on.
        while (offsets[*cursor + 1] as usize - base) <= pos {
            *cursor += 1;
        }
        *cursor
    };
    for i in 0..n {
        let (a, b) = (offsets[i] as usize - base, offsets[i + 1] as usize - base);
        if a == b {
            return Err((i, "empty path"));
        }
        if values[a] == b'/' {
            return Err((i, "absolute path, backslash or NUL"));
        }
    }
    if let Some(pos) = memchr::memchr2(b'\\', 0, values) {
        return Err((entry_of(pos, &mut 0), "absolute path, backslash or NUL"));
    }
    let mut cursor = 0;
    for pos in memchr::memchr_iter(b'/', values) {
        let i = entry_of(pos, &mut cursor);
        let end = offsets[i + 1] as usize - base;
        if pos + 1 == end || values[pos + 1] == b'/' {
            return Err((i, "empty path segment"));
        }
    }
    let mut cursor = 0;
    for pos in memchr::memchr_iter(b'.', values) {
        let i = entry_of(pos, &mut cursor);
        let (start, end) = (offsets[i] as usize - base, offsets[i + 1] as usize - base);
        let starts = pos == start || values[pos - 1] == b'/';
        let ends_at = |j: usize| j == end || values[j] == b'/';
        if starts
            && (ends_at(pos + 1) || (pos + 1 < end && values[pos + 1] == b'.' && ends_at(pos + 2)))
        {
            return Err((i, "`.` or `..` segment"));
        }
    }
    if cfg!(windows) {
        for i in 0..n {
            check_entry_path(paths.value(i)).map_err(|why| (i, why))?;
        }
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
    // On Unix the checks above already keep the file inside the root: a relative path of
    // plain segments (no `.`, `..` or empty one), none of them a symbolic link. The two
    // `realpath`s below (a `readlink` per component of the root, on every slice) are left to
    // other systems, whose links and junctions come in more kinds.
    if cfg!(unix) {
        return Ok(full);
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

    /// Entries sorted by `path_order` are in the byte order of the paths below them.
    #[test]
    fn entries_sort_as_their_paths() {
        let mut entries = [
            ("data", true),
            ("data.csv", false),
            ("data-2024.csv", false),
            ("data0", false),
            ("a", true),
            ("a.b", false),
            ("a0", true),
            ("Z", false),
        ];
        entries.sort_by(|(a, ad), (b, bd)| path_order(a.as_bytes(), *ad, b.as_bytes(), *bd));
        let paths: Vec<String> = entries
            .iter()
            .map(|(n, d)| if *d { format!("{n}/x") } else { n.to_string() })
            .collect();
        let mut sorted = paths.clone();
        sorted.sort();
        assert_eq!(paths, sorted);
    }

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
    fn column_check_agrees_with_the_single_path_check() {
        let cases = [
            "a/b.csv",
            "x",
            "données/été 2024.csv",
            "",
            "/etc/passwd",
            "../x.csv",
            "a/../b.csv",
            "a//b",
            "./a",
            "a\\b",
            "a/.",
            "a/..",
            ".hidden/x",
            "a/.b",
            "a/b.",
            "..a",
            "a..",
            "a/",
            "a\0b",
            "...",
            "a/.../b",
        ];
        for bad_pos in 0..3 {
            for case in cases {
                // The case at several positions among good paths.
                let mut v = vec!["ok/one.csv", "two.parquet", "t/h/r/e/e.json"];
                v.insert(bad_pos, case);
                let arr = arrow_array::StringArray::from(v.clone());
                let want = v
                    .iter()
                    .enumerate()
                    .find_map(|(i, p)| check_entry_path(p).err().map(|_| i));
                let got = check_entry_paths(&arr).err().map(|(i, _)| i);
                assert_eq!(got.is_some(), want.is_some(), "{case:?}");
                if let Some(i) = got {
                    assert!(
                        check_entry_path(v[i]).is_err(),
                        "{case:?} flagged {:?}",
                        v[i]
                    );
                }
            }
        }
        // Sliced arrays (non-zero first offset) too.
        let arr = arrow_array::StringArray::from(vec!["../x", "a/b", "c"]);
        assert!(check_entry_paths(&arr.slice(1, 2)).is_ok());
        assert_eq!(
            check_entry_paths(&arr.slice(0, 2)).err().map(|e| e.0),
            Some(0)
        );
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

/// Discovery's rule for one file known by its path relative to the root (`a/b/c.csv`), as an
/// object store lists it: the handler of a data file, or why the file is left out (a hidden
/// folder on the way, the map files, a hidden name with an extension, no extension, an
/// extension without a handler). The same rules as the walk of a local root.
pub fn classify_relative(
    rel: &str,
    registry: &HandlerRegistry,
) -> std::result::Result<Handler, SkipReason> {
    let (dirs, name) = match rel.rsplit_once('/') {
        Some((dirs, name)) => (Some(dirs), name),
        None => (None, rel),
    };
    if dirs.is_some_and(|d| d.split('/').any(|c| c.starts_with('.'))) {
        return Err(SkipReason::Hidden);
    }
    if name == MAP_FILE_NAME {
        return Err(SkipReason::MapFile);
    }
    if name == LEGACY_MAP_FILE_NAME {
        return Err(SkipReason::LegacyMapFile);
    }
    let path = Path::new(name);
    let ext = path.extension().and_then(|e| e.to_str());
    if ext.is_some() && name.starts_with('.') {
        return Err(SkipReason::Hidden);
    }
    match ext {
        None => Err(SkipReason::NoExtension),
        Some(_) => registry.for_path(path).ok_or(SkipReason::UnknownExtension),
    }
}

#[cfg(test)]
mod classify_tests {
    use super::*;

    #[test]
    fn listed_keys_follow_the_walk_rules() {
        let registry = HandlerRegistry::builtin();
        assert!(classify_relative("a/b/c.csv", &registry).is_ok());
        assert_eq!(
            classify_relative(".hidden/c.csv", &registry).err(),
            Some(SkipReason::Hidden)
        );
        assert_eq!(
            classify_relative("a/.x.csv", &registry).err(),
            Some(SkipReason::Hidden)
        );
        assert_eq!(
            classify_relative(".br_map.bazan", &registry).err(),
            Some(SkipReason::MapFile)
        );
        assert_eq!(
            classify_relative("README", &registry).err(),
            Some(SkipReason::NoExtension)
        );
        assert_eq!(
            classify_relative("notes.bak", &registry).err(),
            Some(SkipReason::UnknownExtension)
        );
    }
}
