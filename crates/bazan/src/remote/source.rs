//! The bytes of a remote lake's entries: each entry gets a sparse file of its object's size
//! in a private temporary folder, and a read fetches into it only the ranges it needs (the
//! map's blocks, narrowed by the format's [`lake_locators::ByteLayout`]), each GET on the
//! condition that the object still has the ETag the map stored. A range fetched once is not
//! fetched again by the same loaded lake.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::ops::Range;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use lake_locators::locator::bytes::{merge_ranges, read_ranges};
use lake_map::{EntrySource, ReadNeed, SourceEntry};

use super::store::Store;
use crate::error::{Error, ErrorKind};

/// Ranges closer than this are fetched as one (a round trip costs more than the gap's bytes).
const COALESCE_GAP: u64 = 64 * 1024;

/// What has been fetched of one entry.
#[derive(Debug, Default)]
struct Local {
    file: Option<Arc<File>>,
    present: Vec<Range<u64>>,
    /// The ETag to send (the map's; for an entry without one, the object's as the first
    /// GET's responses gave it, or a HEAD's when the entry is checked before any read).
    etag: Option<Option<String>>,
}

/// A stale error for `url` unless the object's `size` is the entry's `want`.
fn check_size(url: &str, size: u64, want: u64) -> lake_map::Result<()> {
    if size == want {
        return Ok(());
    }
    Err(lake_map::Error::Stale {
        path: PathBuf::from(url),
        message: format!("size is now {size} bytes, the map says {want}"),
    })
}

/// Request and byte counts of a lake's reads (for tests and benchmarks).
#[derive(Debug, Default)]
pub struct FetchCounts {
    /// GET requests made.
    pub requests: AtomicU64,
    /// Bytes those GETs returned.
    pub bytes: AtomicU64,
}

/// A remote lake's entries, fetched by range into sparse local files.
#[derive(Debug)]
pub(crate) struct RemoteSource {
    pub(crate) store: Store,
    dir: tempfile::TempDir,
    files: Mutex<HashMap<usize, Arc<Mutex<Local>>>>,
    pub(crate) counts: Arc<FetchCounts>,
}

impl RemoteSource {
    pub(crate) fn new(store: Store) -> crate::Result<Self> {
        let dir = super::temp_dir("bazan-remote-")?;
        Ok(RemoteSource {
            store,
            dir,
            files: Mutex::new(HashMap::new()),
            counts: Arc::default(),
        })
    }

    /// The private folder of the local copies.
    pub(crate) fn dir(&self) -> &Path {
        self.dir.path()
    }

    fn slot(&self, i: usize) -> Arc<Mutex<Local>> {
        let mut files = self.files.lock().unwrap_or_else(|p| p.into_inner());
        Arc::clone(files.entry(i).or_default())
    }
}

/// A facade error as the map's error type, keeping its kind: stale stays stale, the rest
/// become I/O errors of the same kind naming `url`.
pub(crate) fn to_map_error(url: &str, e: Error) -> lake_map::Error {
    let path = PathBuf::from(url);
    match e.kind() {
        ErrorKind::Stale => lake_map::Error::Stale {
            path,
            message: e.to_string(),
        },
        kind => {
            let io = match kind {
                ErrorKind::NotFound => std::io::ErrorKind::NotFound,
                ErrorKind::PermissionDenied => std::io::ErrorKind::PermissionDenied,
                ErrorKind::InvalidArgument => std::io::ErrorKind::InvalidInput,
                ErrorKind::Interrupted => std::io::ErrorKind::Interrupted,
                _ => std::io::ErrorKind::Other,
            };
            lake_map::Error::io(path, std::io::Error::new(io, e.to_string()))
        }
    }
}

/// `wanted` less the ranges in `present` (both sorted and disjoint).
fn missing(wanted: &[Range<u64>], present: &[Range<u64>]) -> Vec<Range<u64>> {
    let mut out = Vec::new();
    for w in wanted {
        let mut start = w.start;
        for p in present {
            if p.end <= start || p.start >= w.end {
                continue;
            }
            if p.start > start {
                out.push(start..p.start);
            }
            start = start.max(p.end);
            if start >= w.end {
                break;
            }
        }
        if start < w.end {
            out.push(start..w.end);
        }
    }
    out
}

impl EntrySource for RemoteSource {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn prepare(&self, e: SourceEntry<'_>, need: Option<ReadNeed<'_>>) -> lake_map::Result<PathBuf> {
        let url = self.store.url_of(e.path);
        let local_path = self.dir.path().join(e.path);
        let slot = self.slot(e.index);
        let mut local = slot.lock().unwrap_or_else(|p| p.into_inner());
        if local.etag.is_none() {
            match (e.etag, need.is_some()) {
                (Some(t), _) => local.etag = Some(Some(t.to_string())),
                // A map made on a disk and copied here: the object must have the entry's
                // size; its ETag at first use then guards every later read. A read learns
                // both from its own GETs' responses (below); a check without a read asks
                // for them with a HEAD.
                (None, true) => {}
                (None, false) => {
                    let head = self
                        .store
                        .head(e.path)
                        .map_err(|err| to_map_error(&url, err))?;
                    check_size(&url, head.size, e.size_bytes)?;
                    local.etag = Some(head.etag);
                }
            }
        }
        if local.file.is_none() {
            if let Some(parent) = local_path.parent() {
                std::fs::create_dir_all(parent).map_err(|err| lake_map::Error::io(parent, err))?;
            }
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(true)
                .open(&local_path)
                .map_err(|err| lake_map::Error::io(&local_path, err))?;
            file.set_len(e.size_bytes)
                .map_err(|err| lake_map::Error::io(&local_path, err))?;
            local.file = Some(Arc::new(file));
        }
        let Some(need) = need else {
            return Ok(local_path);
        };
        let size = e.size_bytes;
        let wanted = match need.layout {
            Some(layout) => {
                let mut all = Vec::new();
                let spans: Vec<Range<u64>> = if need.rows.is_empty() {
                    std::iter::once(0..0).collect()
                } else {
                    need.rows.to_vec()
                };
                let mut whole = false;
                for rows in spans {
                    match read_ranges(&layout, size, need.blocks, rows) {
                        Some(r) => all.extend(r),
                        None => {
                            whole = true;
                            break;
                        }
                    }
                }
                if whole {
                    std::iter::once(0..size).collect()
                } else {
                    merge_ranges(all, COALESCE_GAP)
                }
            }
            None => std::iter::once(0..size).collect(),
        };
        let fetch = merge_ranges(missing(&wanted, &local.present), COALESCE_GAP);
        if fetch.is_empty() {
            return Ok(local_path);
        }
        let etag = local.etag.clone().flatten();
        let (got, meta) = self
            .store
            .get_ranges_meta(e.path, &fetch, etag.as_deref())
            .map_err(|err| to_map_error(&url, err))?;
        if local.etag.is_none() {
            // The first read of an entry without an ETag: its GETs went without a
            // precondition, so their responses are checked against the entry here.
            let (size, tag) = meta.ok_or_else(|| lake_map::Error::Stale {
                path: PathBuf::from(&url),
                message: "no response told the object's size".into(),
            })?;
            check_size(&url, size, e.size_bytes)?;
            local.etag = Some(tag);
        }
        let file = local.file.clone().ok_or_else(|| {
            lake_map::Error::io(&local_path, std::io::Error::other("local copy not open"))
        })?;
        for (r, bytes) in fetch.iter().zip(&got) {
            file.write_all_at(bytes, r.start)
                .map_err(|err| lake_map::Error::io(&local_path, err))?;
            self.counts.requests.fetch_add(1, Ordering::Relaxed);
            self.counts
                .bytes
                .fetch_add(bytes.len() as u64, Ordering::Relaxed);
        }
        let mut present = std::mem::take(&mut local.present);
        present.extend(fetch);
        local.present = merge_ranges(present, 0);
        Ok(local_path)
    }
}

/// Writes a whole object into `path` as it streams in (memory stays at one chunk), hashing
/// it with BLAKE3 on the way when `hash` is set; returns the digest.
pub(crate) fn download(
    store: &Store,
    rel: &str,
    etag: Option<&str>,
    path: &Path,
    hash: bool,
) -> crate::Result<Option<String>> {
    let file = File::create(path).map_err(|e| Error::io(path, e))?;
    let mut writer = std::io::BufWriter::with_capacity(1 << 20, file);
    let mut hasher = hash.then(blake3::Hasher::new);
    store.get_streamed(rel, etag, &mut |chunk: &[u8]| {
        use std::io::Write;
        if let Some(h) = hasher.as_mut() {
            h.update(chunk);
        }
        writer.write_all(chunk).map_err(|e| Error::io(path, e))
    })?;
    use std::io::Write;
    writer.flush().map_err(|e| Error::io(path, e))?;
    Ok(hasher.map(|h| h.finalize().to_hex().to_string()))
}

#[cfg(test)]
mod tests {
    use super::missing;

    #[test]
    #[allow(clippy::single_range_in_vec_init)]
    fn missing_subtracts_present_ranges() {
        assert_eq!(
            missing(&[0..100], &[10..20, 50..60]),
            vec![0..10, 20..50, 60..100]
        );
        assert_eq!(
            missing(&[0..10], &[0..10]),
            Vec::<std::ops::Range<u64>>::new()
        );
        assert_eq!(missing(&[5..15], &[0..10]), vec![10..15]);
    }
}
