//! Lakes in object stores (S3 and S3-compatible stores, GCS, Azure Blob, read-only HTTP):
//! create, load, update and check a lake by URL. The map is the same file as on a disk, kept
//! beside the data at `PREFIX/.br_map.bazan` (or anywhere with a map location); each entry
//! also stores its object's ETag, the remote fingerprint. See `docs/object-stores.md`.
//!
//! Indexing fetches what each format's index needs: a Parquet footer through ranged reads,
//! other files whole as a stream into a temporary file that is removed once indexed. Reads
//! fetch only the byte ranges of the blocks they touch ([`source`]).

pub(crate) mod source;
pub(crate) mod store;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use lake_locators::{IndexOptions, RangeRead};
use lake_map::{
    DiscoveredFile, Fingerprint, HandlerRegistry, LakeMap, MAP_FILE_NAME, MapConfig, MapEntry,
    assign_first_global_rows, classify_relative,
};
use rayon::prelude::*;

pub use source::FetchCounts;
use source::{RemoteSource, download};
use store::{Object, Store};
pub use store::{StorageOptions, is_url, local_path, set_default_storage_options};

use crate::error::{Error, ErrorKind, Result};

/// A private temporary folder (removed when dropped) whose name starts with `prefix`.
pub(crate) fn temp_dir(prefix: &str) -> Result<tempfile::TempDir> {
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir()
        .map_err(|e| {
            Error::new(
                ErrorKind::Io,
                format!("cannot make a temporary folder: {e}"),
            )
        })
}

/// Where a remote lake's map is, when not beside the data.
fn map_target(map: Option<&str>) -> Option<&str> {
    map.filter(|m| !m.is_empty())
}

/// A map file's bytes as Arrow IPC (what [`lake_map::write_map_to`] writes), through a
/// temporary file so that the one writer of map files is used.
fn map_bytes(map: &LakeMap, dir: &Path) -> Result<bytes::Bytes> {
    let tmp = dir.join(MAP_FILE_NAME);
    lake_map::write_map_to(map, &tmp)?;
    let data = std::fs::read(&tmp).map_err(|e| Error::io(&tmp, e))?;
    let _ = std::fs::remove_file(&tmp);
    Ok(bytes::Bytes::from(data))
}

/// The objects of a listing that are data files, in map order, with their handlers.
fn discover(listing: &[Object], registry: &HandlerRegistry) -> Vec<(DiscoveredFile, Object)> {
    let mut out: Vec<(DiscoveredFile, Object)> = listing
        .iter()
        .filter_map(|o| {
            let handler = classify_relative(&o.rel, registry).ok()?;
            Some((
                DiscoveredFile {
                    path: o.rel.clone(),
                    size_bytes: o.size,
                    mtime_ms: o.mtime_ms,
                    handler,
                },
                o.clone(),
            ))
        })
        .collect();
    out.sort_by(|a, b| a.0.path.cmp(&b.0.path));
    out
}

/// Indexes one object: through the locator's ranged index where it has one (and no digest
/// is wanted), else from the whole object streamed into a temporary file.
fn index_object(
    store: &Store,
    file: &DiscoveredFile,
    object: &Object,
    config: &MapConfig,
    scratch: &Path,
    counts: &FetchCounts,
) -> Result<MapEntry> {
    let url = store.url_of(&file.path);
    let name = PathBuf::from(&url);
    let handler = file
        .handler
        .clone()
        .with_text_encoding(config.text_encoding);
    let options = IndexOptions {
        stride: config.checkpoint_stride_rows,
        stats: config.stats_columns.clone(),
    };
    let etag = object.etag.clone();
    if config.fingerprint == Fingerprint::Metadata && !handler.dynamic {
        let reader_store = store.clone();
        let rel = file.path.clone();
        let tag = etag.clone();
        let requests = Arc::new(FetchCounts::default());
        let seen = Arc::clone(&requests);
        let read: RangeRead = Arc::new(move |r: std::ops::Range<u64>| {
            let got = reader_store
                .get_ranges(&rel, std::slice::from_ref(&r), tag.as_deref())
                .map_err(|e| std::io::Error::other(e.to_string()))?;
            seen.requests.fetch_add(1, Ordering::Relaxed);
            seen.bytes.fetch_add(r.end - r.start, Ordering::Relaxed);
            got.into_iter()
                .next()
                .ok_or_else(|| std::io::Error::other("no bytes arrived"))
        });
        if let Some(index) = handler
            .locator
            .index_ranged(&name, object.size, &read, &options)
        {
            counts
                .requests
                .fetch_add(requests.requests.load(Ordering::Relaxed), Ordering::Relaxed);
            counts
                .bytes
                .fetch_add(requests.bytes.load(Ordering::Relaxed), Ordering::Relaxed);
            let index = index?;
            return Ok(lake_map::entry_from_index(
                &name, file, index, None, config,
            )?);
        }
    }
    let tmp = scratch.join(format!(
        "{}.{}",
        file.path.replace('/', "%2F"),
        file.path.rsplit('.').next().unwrap_or("bin")
    ));
    let digest = download(
        store,
        &file.path,
        etag.as_deref(),
        &tmp,
        config.fingerprint == Fingerprint::Blake3,
    );
    counts.requests.fetch_add(1, Ordering::Relaxed);
    counts.bytes.fetch_add(object.size, Ordering::Relaxed);
    let result = digest.and_then(|digest| {
        let index = handler
            .locator
            .index(&tmp, &options)
            .map_err(|e| Error::from(e).at(&name))?;
        Ok(lake_map::entry_from_index(
            &name, file, index, digest, config,
        )?)
    });
    let _ = std::fs::remove_file(&tmp);
    result
}

/// Options of the remote operations, from the facade's.
#[derive(Clone, Default)]
pub(crate) struct RemoteOptions {
    pub(crate) storage: StorageOptions,
    pub(crate) map: Option<String>,
    pub(crate) config: MapConfig,
    pub(crate) skip_errors: bool,
    pub(crate) registry: HandlerRegistry,
    pub(crate) progress: Option<lake_map::ProgressFn>,
    pub(crate) cancel: Option<crate::CancelToken>,
}

/// What a remote build or update did.
pub(crate) struct Built {
    pub(crate) map: LakeMap,
    pub(crate) failures: Vec<lake_map::FileFailure>,
    pub(crate) added: Vec<String>,
    pub(crate) modified: Vec<String>,
    pub(crate) removed: Vec<String>,
    pub(crate) kept: u64,
    pub(crate) created: bool,
}

/// An object's ETag and version, what a conditional PUT names.
type Version = (Option<String>, Option<String>);

/// One file's outcome in a build: its entry, ETag, and whether it was indexed (not kept).
type Indexed = Result<(MapEntry, Option<String>, bool)>;

/// The map of a remote lake as it is stored now, with the version of the object holding it
/// (`None` when there is none yet).
fn read_map(
    store: &Store,
    options: &RemoteOptions,
    scratch: &Path,
) -> Result<Option<(LakeMap, Option<Version>)>> {
    let root = PathBuf::from(store.url());
    // The map object `name` of `at` (`shown` in errors), fetched and loaded.
    let fetch =
        |at: &Store, name: &str, shown: &str| -> Result<Option<(LakeMap, Option<Version>)>> {
            match at.get_all(name) {
                Ok((bytes, etag, version)) => {
                    let path = scratch.join(MAP_FILE_NAME);
                    std::fs::write(&path, &bytes).map_err(|e| Error::io(&path, e))?;
                    let map = lake_map::load_map_file(&root, &path)
                        .map_err(|e| Error::from(e).at(Path::new(shown)))?;
                    Ok(Some((map, Some((etag, version)))))
                }
                Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
                Err(e) => Err(e),
            }
        };
    match map_target(options.map.as_deref()) {
        None => fetch(store, MAP_FILE_NAME, &store.url_of(MAP_FILE_NAME)),
        Some(m) if is_url(m) && local_path(m).is_none() => {
            let (dir, name) = m.rsplit_once('/').unwrap_or((m, MAP_FILE_NAME));
            fetch(&Store::open(dir, &options.storage)?, name, m)
        }
        Some(m) => {
            let path = local_path(m).unwrap_or_else(|| PathBuf::from(m));
            if !path.exists() {
                return Ok(None);
            }
            Ok(Some((lake_map::load_map_file(&root, &path)?, None)))
        }
    }
}

/// Writes the map where it belongs: one conditional PUT beside the data (or at a map URL),
/// or an atomic local write.
fn write_map(
    store: &Store,
    map: &LakeMap,
    options: &RemoteOptions,
    expected: Option<Version>,
    scratch: &Path,
) -> Result<()> {
    match map_target(options.map.as_deref()) {
        None => store.put_if(MAP_FILE_NAME, map_bytes(map, scratch)?, expected),
        Some(m) if is_url(m) && local_path(m).is_none() => {
            let (dir, name) = m.rsplit_once('/').unwrap_or((m, MAP_FILE_NAME));
            let at = Store::open(dir, &options.storage)?;
            at.put_if(name, map_bytes(map, scratch)?, expected)
        }
        Some(m) => {
            let path = local_path(m).unwrap_or_else(|| PathBuf::from(m));
            Ok(lake_map::write_map_to(map, &path)?)
        }
    }
}

fn check_cancel(options: &RemoteOptions) -> Result<()> {
    if options.cancel.as_ref().is_some_and(|c| c.is_cancelled()) {
        return Err(Error::new(
            ErrorKind::Interrupted,
            "interrupted; nothing was written",
        ));
    }
    Ok(())
}

/// Builds (or, with `update`, brings up to date) the map of the lake at `url`.
pub(crate) fn build(url: &str, options: &RemoteOptions, update: bool) -> Result<Built> {
    let store = Store::open(url, &options.storage)?;
    let scratch = temp_dir("bazan-index-")?;
    let listing = store.list()?;
    let old = read_map(&store, options, scratch.path())?;
    let expected = match &old {
        Some((_, version)) => version.clone(),
        None => None,
    };
    // Without a map the PUT must create; with one it must replace exactly that one.
    let expected_put = match (&old, map_target(options.map.as_deref())) {
        (Some(_), _) => expected,
        (None, _) => None,
    };
    let config = match (&old, update) {
        (Some((map, _)), true) => map.config().clone(),
        _ => options.config.clone(),
    };
    config.validate()?;
    let files = discover(&listing, &options.registry);
    // Entries of the old map that still describe their object are kept as they are.
    let mut keep: HashMap<String, (MapEntry, Option<String>)> = HashMap::new();
    if update && let Some((map, _)) = &old {
        for (i, e) in map.entries().enumerate() {
            keep.insert(
                e.path.to_string(),
                (e.to_owned_entry(), map.etag(i).map(str::to_string)),
            );
        }
    }
    let counts = FetchCounts::default();
    let total_bytes: u64 = files.iter().map(|(f, _)| f.size_bytes).sum();
    let tally = lake_map::ProgressTally::new(
        options.progress.as_ref(),
        0,
        files.len() as u64,
        total_bytes,
    );
    // On the caller's thread pool (the facade sets its size).
    let results: Vec<(usize, Indexed)> = files
        .par_iter()
        .enumerate()
        .map(|(n, (file, object))| {
            let r = (|| {
                check_cancel(options)?;
                if let Some((entry, etag)) = keep.get(&file.path)
                    && entry.size_bytes == object.size
                    && etag.is_some()
                    && *etag == object.etag
                {
                    return Ok((entry.clone(), etag.clone(), false));
                }
                let entry = index_object(&store, file, object, &config, scratch.path(), &counts)?;
                Ok((entry, object.etag.clone(), true))
            })();
            tally.add(1, file.size_bytes);
            (n, r)
        })
        .collect();
    check_cancel(options)?;
    let mut entries = Vec::with_capacity(results.len());
    let mut etags = Vec::with_capacity(results.len());
    let mut failures = Vec::new();
    let (mut added, mut modified) = (Vec::new(), Vec::new());
    let mut kept = 0;
    for (n, r) in results {
        let path = files[n].0.path.clone();
        match r {
            Ok((entry, etag, indexed)) => {
                if !indexed {
                    kept += 1;
                } else if keep.contains_key(&path) {
                    modified.push(path);
                } else {
                    added.push(path);
                }
                entries.push(entry);
                etags.push(etag);
            }
            Err(e) if options.skip_errors && e.kind() != ErrorKind::Interrupted => {
                failures.push(lake_map::FileFailure {
                    path,
                    message: e.to_string(),
                });
            }
            Err(e) => return Err(e),
        }
    }
    let present: std::collections::HashSet<&str> =
        entries.iter().map(|e| e.path.as_str()).collect();
    let mut removed: Vec<String> = keep
        .keys()
        .filter(|p| !present.contains(p.as_str()))
        .cloned()
        .collect();
    removed.sort();
    assign_first_global_rows(&mut entries);
    let root = PathBuf::from(store.url());
    let map = LakeMap::from_entries_with_etags(&root, config, &entries, &etags)?;
    let unchanged =
        update && old.is_some() && added.is_empty() && modified.is_empty() && removed.is_empty();
    if !unchanged {
        write_map(&store, &map, options, expected_put, scratch.path())?;
    }
    let source = RemoteSource::new(store)?;
    Ok(Built {
        map: map.with_source(Arc::new(source)),
        failures,
        added,
        modified,
        removed,
        kept,
        created: old.is_none(),
    })
}

/// Loads the map of the lake at `url` (beside the data, or at `options.map`).
pub(crate) fn load(url: &str, options: &RemoteOptions) -> Result<LakeMap> {
    let store = Store::open(url, &options.storage)?;
    let source = RemoteSource::new(store.clone())?;
    let found = read_map(&store, options, source_dir(&source))?;
    let Some((map, _)) = found else {
        let at = options
            .map
            .clone()
            .unwrap_or_else(|| store.url_of(MAP_FILE_NAME));
        return Err(Error::new(
            ErrorKind::NotFound,
            format!("{at}: no map here (make one with `bazan map create {url}`)"),
        ));
    };
    Ok(map.with_source(Arc::new(source)))
}

fn source_dir(source: &RemoteSource) -> &Path {
    source.dir()
}

/// The doctor of a remote lake: one listing compared with the map (size and ETag; a map
/// without ETags, copied from a disk, by size), no GET per object.
pub(crate) fn doctor(
    map: &LakeMap,
    store: &Store,
    registry: &HandlerRegistry,
) -> Result<lake_doctor::DoctorReport> {
    let listing = store.list()?;
    let files = discover(&listing, registry);
    let by_path: HashMap<&str, &Object> = files.iter().map(|(f, o)| (f.path.as_str(), o)).collect();
    let mut report = lake_doctor::DoctorReport::new(map.config().fingerprint);
    let mut known = std::collections::HashSet::new();
    for (i, e) in map.entries().enumerate() {
        known.insert(e.path);
        match by_path.get(e.path) {
            None => report.missing.push(e.path.to_string()),
            Some(o) => {
                let same = o.size == e.size_bytes
                    && match map.etag(i) {
                        Some(t) => o.etag.as_deref() == Some(t),
                        None => true,
                    };
                if same {
                    report.healthy += 1;
                } else {
                    report.modified.push(e.path.to_string());
                }
            }
        }
    }
    for (f, _) in &files {
        if !known.contains(f.path.as_str()) {
            report.unindexed.push(f.path.clone());
        }
    }
    Ok(report)
}

/// Checks the entries `files` of a remote lake against one listing: a changed or missing
/// object is a stale error naming it.
pub(crate) fn check_fresh(map: &LakeMap, store: &Store, files: &[usize]) -> Result<()> {
    let listing = store.list()?;
    let by_path: HashMap<&str, &Object> = listing.iter().map(|o| (o.rel.as_str(), o)).collect();
    for &i in files {
        let e = map.entry(i);
        let url = store.url_of(e.path);
        let Some(o) = by_path.get(e.path) else {
            return Err(Error::from(lake_map::Error::Stale {
                path: PathBuf::from(url),
                message: "the object is missing".into(),
            }));
        };
        let stale = if o.size != e.size_bytes {
            Some(format!(
                "size is now {} bytes, the map says {}",
                o.size, e.size_bytes
            ))
        } else {
            match map.etag(i) {
                Some(t) if o.etag.as_deref() != Some(t) => Some(format!(
                    "ETag is now {}, the map says {t}",
                    o.etag.as_deref().unwrap_or("(none)")
                )),
                _ => None,
            }
        };
        if let Some(message) = stale {
            return Err(Error::from(lake_map::Error::Stale {
                path: PathBuf::from(url),
                message,
            }));
        }
    }
    Ok(())
}

/// The remote side of a loaded lake, when it has one.
pub(crate) fn remote_of(map: &LakeMap) -> Option<&RemoteSource> {
    map.source()?.as_any().downcast_ref::<RemoteSource>()
}

/// Request and byte counts of a loaded remote lake's reads.
pub(crate) fn counts_of(map: &LakeMap) -> Option<Arc<FetchCounts>> {
    remote_of(map).map(|s| Arc::clone(&s.counts))
}

/// A file given by URL, fetched whole into a private temporary folder under its own name
/// (a direct read without a map reads every byte: a schema is inferred from all of it).
/// The folder and the copy go when the returned guard is dropped.
pub(crate) fn fetch_file(url: &str) -> Result<(tempfile::TempDir, PathBuf)> {
    let (dir_url, name) = url
        .rsplit_once('/')
        .filter(|(d, n)| !n.is_empty() && d.contains("://"))
        .ok_or_else(|| Error::invalid(format!("{url}: a file URL ends with the file's name")))?;
    let store = Store::open(dir_url, &StorageOptions::new())?;
    let dir = temp_dir("bazan-file-")?;
    let local = dir.path().join(name);
    download(&store, name, None, &local, false)?;
    Ok((dir, local))
}
