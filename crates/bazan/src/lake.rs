//! The lake: create, load and check a Lake Map, and the [`Lake`] handle that locates and reads
//! global rows (see `docs/lake-map.md` for the map file and its rules).

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
/// Why a path could not be checked ([`PathError::kind`]).
pub use lake_doctor::ErrorKind as DoctorErrorKind;
pub use lake_doctor::{DoctorReport, PathError, Verdict};
use lake_locators::Block;
use lake_locators::Stats;
pub use lake_map::config::{parse_stats_option, stats_columns_to_json};
pub use lake_map::{
    DEFAULT_STRIDE, FileFailure, FileSlice, Fingerprint, LakeMap, MapConfig, Progress, ProgressFn,
    Segment, StatsColumns, TextEncoding,
};

use crate::cancel::CancelToken;
use crate::error::{Error, Result};
use crate::handlers::handlers;

/// How to build a map. `Default` is the map's defaults: stride 65,536, fingerprint by size
/// and mtime, statistics of every supported column, all cores.
#[derive(Clone)]
pub struct CreateOptions {
    /// Rows per checkpoint of the row formats (> 0).
    pub stride: u64,
    /// How files are fingerprinted.
    pub fingerprint: Fingerprint,
    /// Which columns get min/max statistics.
    pub stats: StatsColumns,
    /// How CSV, TSV, PSV and TXT files are read (stored in the map: every later read and
    /// update of it uses the same). Parse a name with [`crate::text_encoding`].
    pub text_encoding: TextEncoding,
    /// Leave unreadable files out of the map (listed in [`Created::failures`]) instead of
    /// failing the whole build.
    pub skip_errors: bool,
    /// Worker threads (`None`: every core).
    pub threads: Option<usize>,
    /// Called after each indexed file (from worker threads).
    pub progress: Option<ProgressFn>,
    /// Stops the build from another thread; nothing is written then.
    pub cancel: Option<CancelToken>,
    /// Options of the object store of a lake given by URL (object_store's key names, e.g.
    /// `aws_endpoint`, `aws_allow_http`); the store's standard environment variables apply
    /// first. Unused for a local lake.
    pub storage_options: crate::remote::StorageOptions,
    /// Where the map of a lake given by URL is kept, when not beside the data at
    /// `PREFIX/.br_map.bazan`: a local path or a URL (for a read-only bucket, say).
    pub map: Option<String>,
}

impl Default for CreateOptions {
    fn default() -> Self {
        CreateOptions {
            stride: DEFAULT_STRIDE,
            fingerprint: Fingerprint::Metadata,
            stats: StatsColumns::All,
            text_encoding: TextEncoding::Utf8,
            skip_errors: false,
            threads: None,
            progress: None,
            cancel: None,
            storage_options: Default::default(),
            map: None,
        }
    }
}

impl std::fmt::Debug for CreateOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CreateOptions")
            .field("stride", &self.stride)
            .field("fingerprint", &self.fingerprint)
            .field("stats", &self.stats)
            .field("text_encoding", &self.text_encoding)
            .field("skip_errors", &self.skip_errors)
            .field("threads", &self.threads)
            .field("progress", &self.progress.is_some())
            .field("cancel", &self.cancel)
            // Keys only: the values may be credentials.
            .field(
                "storage_options",
                &self.storage_options.keys().collect::<Vec<_>>(),
            )
            .field("map", &self.map)
            .finish()
    }
}

impl CreateOptions {
    /// Checks the options every build and update checks first: the stride (at least 1) and
    /// the thread count ([`check_threads`]). Their errors are
    /// [`crate::ErrorKind::InvalidArgument`]s that name the option.
    pub fn validate(&self) -> Result<()> {
        if self.stride == 0 {
            return Err(Error::invalid("stride must be at least 1"));
        }
        check_threads(self.threads)
    }

    /// The configuration stored in the map.
    pub fn config(&self) -> MapConfig {
        MapConfig {
            checkpoint_stride_rows: self.stride,
            fingerprint: self.fingerprint,
            stats_columns: self.stats.clone(),
            text_encoding: self.text_encoding,
        }
    }
}

/// A map just built.
#[derive(Debug)]
pub struct Created {
    /// The lake, ready to read (the map is already on disk).
    pub lake: Lake,
    /// Files left out with `skip_errors`, each with its error.
    pub failures: Vec<FileFailure>,
    /// What the caller should hear about the options, one sentence each (a statistics
    /// column that no file of the lake has); the map is written all the same. Front ends
    /// show them as they are (the CLI as `warning:` lines, Python as `UserWarning`s).
    pub warnings: Vec<String>,
    /// Wall time of the build.
    pub elapsed: Duration,
}

impl Created {
    /// The `bazan map create --json` object: the new map as [`Lake::to_json`] gives it.
    pub fn to_json(&self) -> Result<serde_json::Value> {
        self.lake.to_json()
    }
}

/// The warning of a statistics list naming columns that no file of the lake has (`--stats
/// off`, or a misspelt name, would otherwise keep no statistics without a word), if any.
fn unknown_stats_warning(stats: &StatsColumns, lake: &Lake) -> Option<String> {
    let StatsColumns::Only(list) = stats else {
        return None;
    };
    // A lake whose schemas do not unify fails on its first read, which says why.
    let schema = lake.schema().ok()?;
    let unknown: Vec<String> = list
        .iter()
        .filter(|c| schema.field_with_name(c).is_err())
        .map(|c| format!("`{c}`"))
        .collect();
    (!unknown.is_empty()).then(|| {
        format!(
            "statistics columns that no file of the lake has: {} (the map keeps no statistics \
             for them)",
            unknown.join(", ")
        )
    })
}

/// Checks a worker thread count: `None` (every core) or at least 1. Every call of the
/// facade taking `threads` checks it so, and so does every front end that runs threads of
/// its own (the SQL session), so that `0` is refused with this one error everywhere.
pub fn check_threads(threads: Option<usize>) -> Result<()> {
    match threads {
        Some(0) => Err(Error::invalid(
            "threads must be at least 1 (or unset: every core)",
        )),
        _ => Ok(()),
    }
}

/// Runs `f` on a pool of `threads` workers, or on the global pool when `None`.
pub(crate) fn with_threads<T: Send>(
    threads: Option<usize>,
    f: impl FnOnce() -> Result<T> + Send,
) -> Result<T> {
    check_threads(threads)?;
    match threads {
        None => f(),
        Some(n) => {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .build()
                .map_err(|e| Error::new(crate::ErrorKind::Other, format!("thread pool: {e}")))?;
            pool.install(f)
        }
    }
}

/// The text encoding named `name`: `utf-8` (or `utf8`) or `latin-1` (or `latin1`,
/// `iso-8859-1`), in any case; any other name is an [`crate::ErrorKind::InvalidArgument`].
pub fn text_encoding(name: &str) -> Result<TextEncoding> {
    Ok(name.parse::<TextEncoding>()?)
}

/// Builds the map of the lake at `root` with every handler of this process (built-in,
/// `.tsfile`, registered) and writes `root/.br_map.bazan` atomically.
pub fn create_map(root: &Path, options: &CreateOptions) -> Result<Created> {
    options.validate()?;
    let root = match Location::of(root) {
        Location::Remote(url) => {
            let started = std::time::Instant::now();
            let built = with_threads(options.threads, || {
                crate::remote::build(&url, &options.remote(), false)
            })?;
            let lake = Lake::new(built.map);
            let warnings = unknown_stats_warning(&options.stats, &lake)
                .into_iter()
                .collect();
            return Ok(Created {
                lake,
                failures: built.failures,
                warnings,
                elapsed: started.elapsed(),
            });
        }
        Location::Local(root) => root,
    };
    let root = root.as_path();
    let engine = lake_map::CreateOptions {
        config: options.config(),
        registry: handlers(),
        skip_errors: options.skip_errors,
        progress: options.progress.clone(),
        dry_run: false,
        cancel: options.cancel.as_ref().map(CancelToken::flag),
    };
    let report = with_threads(options.threads, || {
        lake_map::create_map_with(root, &engine).map_err(Error::from)
    })?;
    let lake = Lake::new(report.map);
    log::debug!(
        "map {} written: {} files indexed ({} rows, {} bytes), {} left out, in {:.3} s",
        lake.map_path().display(),
        lake.total_files(),
        lake.total_rows(),
        lake.total_bytes(),
        report.failures.len(),
        report.elapsed.as_secs_f64()
    );
    let warnings = unknown_stats_warning(&options.stats, &lake)
        .into_iter()
        .collect();
    Ok(Created {
        lake,
        failures: report.failures,
        warnings,
        elapsed: report.elapsed,
    })
}

/// A map just brought up to date by [`update_map`]: the lake in `map` (ready to read, the map
/// already on disk) and what changed. [`Updated::to_json`] is the `bazan map update --json`
/// object, which Python's `UpdateReport.to_dict` returns too.
pub type Updated = lake_map::UpdateReport<Lake>;

/// Brings the map of the lake at `root` up to date: entries whose file is unchanged under
/// the map's own fingerprint mode are kept without reading the file, changed and new files
/// are indexed, entries of missing files are dropped, and the map is written atomically. The
/// result is the map [`create_map`] would write for the same tree (only the creation time
/// may differ). The map keeps its own stride, fingerprint and statistics options; those of
/// `options` apply only when the lake has no map yet (it is then created).
pub fn update_map(root: &Path, options: &CreateOptions) -> Result<Updated> {
    options.validate()?;
    let root = match Location::of(root) {
        Location::Remote(url) => {
            let started = std::time::Instant::now();
            let built = with_threads(options.threads, || {
                crate::remote::build(&url, &options.remote(), true)
            })?;
            return Ok(lake_map::UpdateReport {
                map: Lake::new(built.map),
                created: built.created,
                added: built.added,
                modified: built.modified,
                removed: built.removed,
                kept: built.kept as usize,
                failures: built.failures,
                elapsed: started.elapsed(),
            });
        }
        Location::Local(root) => root,
    };
    let root = root.as_path();
    let engine = lake_map::UpdateOptions {
        registry: handlers(),
        skip_errors: options.skip_errors,
        progress: options.progress.clone(),
        dry_run: false,
        new_config: options.config(),
        cancel: options.cancel.as_ref().map(CancelToken::flag),
    };
    let report = with_threads(options.threads, || {
        lake_map::update_map_with(root, &engine).map_err(Error::from)
    })?;
    let updated = report.with_map(Lake::new);
    log::debug!(
        "map {} {}: {} entries kept unchanged under the {} fingerprint, {} added, {} \
         re-indexed (changed), {} removed, {} left out, in {:.3} s",
        updated.map.map_path().display(),
        if updated.created {
            "created"
        } else {
            "updated"
        },
        updated.kept,
        updated.map.config().fingerprint,
        updated.added.len(),
        updated.modified.len(),
        updated.removed.len(),
        updated.failures.len(),
        updated.elapsed.as_secs_f64()
    );
    for path in &updated.modified {
        log::debug!("stale entry re-indexed: {path}");
    }
    Ok(updated)
}

/// Loads the map of the lake at `root` (memory-mapped; the map's size, not the lake's, sets
/// the cost).
pub fn load_map(root: &Path) -> Result<Lake> {
    load_map_with(root, &LoadOptions::default())
}

/// Options of [`load_map_with`].
#[derive(Clone, Default)]
pub struct LoadOptions {
    /// Options of the object store of a lake given by URL (see
    /// [`CreateOptions::storage_options`]).
    pub storage_options: crate::remote::StorageOptions,
    /// Where the map is, when not beside the data: a local path or a URL.
    pub map: Option<String>,
}

impl std::fmt::Debug for LoadOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadOptions")
            .field(
                "storage_options",
                &self.storage_options.keys().collect::<Vec<_>>(),
            )
            .field("map", &self.map)
            .finish()
    }
}

/// Loads the map of the lake at `location`: a local folder (its map memory-mapped), a
/// `file://` URL, or an object-store URL (`s3://bucket/prefix`, `gs://…`, `az://…`,
/// `http(s)://…`; the map is fetched once, the data later by ranges).
pub fn load_map_with(location: &Path, options: &LoadOptions) -> Result<Lake> {
    match Location::of(location) {
        Location::Remote(url) => Ok(Lake::new(crate::remote::load(
            &url,
            &crate::remote::RemoteOptions {
                storage: options.storage_options.clone(),
                map: options.map.clone(),
                ..Default::default()
            },
        )?)),
        Location::Local(root) => match options.map.as_deref() {
            None => Ok(Lake::new(lake_map::load_map(&root)?)),
            Some(m) => {
                let path = crate::remote::local_path(m).unwrap_or_else(|| PathBuf::from(m));
                Ok(Lake::new(lake_map::load_map_file(&root, &path)?))
            }
        },
    }
}

/// A lake location: a local folder or an object-store URL.
enum Location {
    Local(PathBuf),
    Remote(String),
}

impl Location {
    fn of(location: &Path) -> Location {
        match location.to_str() {
            Some(s) if crate::remote::is_url(s) => match crate::remote::local_path(s) {
                Some(p) => Location::Local(p),
                None => Location::Remote(s.to_string()),
            },
            _ => Location::Local(location.to_path_buf()),
        }
    }
}

impl CreateOptions {
    fn remote(&self) -> crate::remote::RemoteOptions {
        crate::remote::RemoteOptions {
            storage: self.storage_options.clone(),
            map: self.map.clone(),
            config: self.config(),
            skip_errors: self.skip_errors,
            registry: handlers(),
            progress: self.progress.clone(),
            cancel: self.cancel.clone(),
        }
    }
}

/// Options of [`Lake::doctor`].
#[derive(Clone, Default)]
pub struct DoctorOptions {
    /// Called as entries are checked.
    pub progress: Option<ProgressFn>,
    /// Worker threads for hashing (`None`: every core).
    pub threads: Option<usize>,
}

impl std::fmt::Debug for DoctorOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DoctorOptions")
            .field("progress", &self.progress.is_some())
            .field("threads", &self.threads)
            .finish()
    }
}

/// Where a global row lives.
#[derive(Debug, Clone, PartialEq)]
pub struct RowLocation {
    /// The global row asked for.
    pub global_row: u64,
    /// The entry's index in map order.
    pub index: usize,
    /// The file's path relative to the lake root.
    pub path: String,
    /// The file's handler name.
    pub format: String,
    /// The row within the file.
    pub local_row: u64,
    /// The block (row group, stripe, batch, checkpoint) holding it, when the map stores blocks.
    pub block: Option<Block>,
}

/// A loaded Lake Map: locate, read and check global rows of the lake.
pub struct Lake {
    pub(crate) map: LakeMap,
    pub(crate) unified: OnceLock<Result<crate::unified::Unified, String>>,
    pub(crate) cache: crate::block_cache::BlockCache,
}

impl std::fmt::Debug for Lake {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lake").field("map", &self.map).finish()
    }
}

impl std::borrow::Borrow<LakeMap> for Lake {
    fn borrow(&self) -> &LakeMap {
        &self.map
    }
}

impl Lake {
    /// Wraps a map.
    pub fn new(map: LakeMap) -> Self {
        log::debug!(
            "map of {} (schema {}): {} files, {} rows, {} bytes, fingerprint {}",
            map.root().display(),
            map.map_schema(),
            map.total_files(),
            map.total_rows(),
            map.total_bytes(),
            map.config().fingerprint
        );
        Lake {
            map,
            unified: OnceLock::new(),
            cache: crate::block_cache::BlockCache::new(crate::block_cache::DEFAULT_CACHE_BYTES),
        }
    }

    /// Sets the budget of the decoded-block cache that [`Lake::take`] fills (bytes of Arrow
    /// memory; [`DEFAULT_CACHE_BYTES`](crate::DEFAULT_CACHE_BYTES) at load, 0 turns it off and
    /// empties it). Kept blocks over a smaller budget leave at once, least recently used first.
    pub fn set_cache_bytes(&self, budget: u64) {
        self.cache.set_budget(budget);
    }

    /// The budget of the decoded-block cache (see [`Lake::set_cache_bytes`]).
    pub fn cache_bytes(&self) -> u64 {
        self.cache.budget()
    }

    /// The bytes of Arrow memory the decoded-block cache holds now.
    pub fn cached_bytes(&self) -> u64 {
        self.cache.bytes()
    }

    /// For a lake in an object store, the GET requests and bytes its reads have fetched so
    /// far (indexing and the map itself not included); `None` for a local lake.
    pub fn fetch_counts(&self) -> Option<(u64, u64)> {
        crate::remote::counts_of(&self.map).map(|c| {
            use std::sync::atomic::Ordering::Relaxed;
            (c.requests.load(Relaxed), c.bytes.load(Relaxed))
        })
    }

    /// True for a lake in an object store (loaded or created by URL).
    pub fn is_remote(&self) -> bool {
        crate::remote::remote_of(&self.map).is_some()
    }

    /// The lake root.
    pub fn root(&self) -> &Path {
        self.map.root()
    }

    /// The path of the map file.
    pub fn map_path(&self) -> PathBuf {
        lake_map::resolve_map_path(self.map.root())
    }

    /// Rows in the lake.
    pub fn total_rows(&self) -> u64 {
        self.map.total_rows()
    }

    /// Files in the map.
    pub fn total_files(&self) -> usize {
        self.map.total_files()
    }

    /// Bytes of the mapped files.
    pub fn total_bytes(&self) -> u64 {
        self.map.total_bytes()
    }

    /// The configuration stored in the map.
    pub fn config(&self) -> &MapConfig {
        self.map.config()
    }

    /// The map itself: entries, blocks, statistics as stored.
    pub fn map(&self) -> &LakeMap {
        &self.map
    }

    /// The map as stored, one row per file (`path`, `format`, `size_bytes`, …).
    pub fn entries_batch(&self) -> Result<RecordBatch> {
        Ok(self.map.to_record_batch()?)
    }

    /// The min/max statistics of entry `i` (Int64, Float64 and Utf8 columns), when the map
    /// stores statistics.
    pub fn file_stats(&self, i: usize) -> Result<Option<Stats>> {
        self.check_index(i)?;
        Ok(self.map.entry(i).stats()?)
    }

    /// The blocks of entry `i` as stored (empty for handlers that store none).
    pub fn blocks(&self, i: usize) -> Result<Arc<Vec<Block>>> {
        self.check_index(i)?;
        Ok(self.map.blocks(i)?)
    }

    /// The locator that reads entry `i`: the handler of this process (registered, `.tsfile`
    /// or built-in) for its extension when it produces the entry's format, else the built-in
    /// one that does. Its methods tell the format's properties (e.g.
    /// [`Locator::decodes_inline`](lake_locators::Locator::decodes_inline)). An entry no
    /// handler reads is an [`crate::ErrorKind::UnsupportedFormat`].
    pub fn locator(&self, i: usize) -> Result<Arc<dyn lake_locators::Locator>> {
        self.check_index(i)?;
        let e = self.map.entry(i);
        handlers()
            .for_entry(e.path, e.format)
            .map(|h| h.locator)
            .ok_or_else(|| {
                Error::new(
                    crate::ErrorKind::UnsupportedFormat,
                    format!("no handler reads format {:?} of {}", e.format, e.path),
                )
            })
    }

    pub(crate) fn check_index(&self, i: usize) -> Result<()> {
        if i >= self.map.total_files() {
            return Err(Error::new(
                crate::ErrorKind::OutOfRange,
                format!(
                    "file index {i} is past the end of the map ({} files)",
                    self.map.total_files()
                ),
            ));
        }
        Ok(())
    }

    /// The file, local row and block of global row `g`, from the map alone.
    pub fn locate_row(&self, g: u64) -> Result<RowLocation> {
        let l = self.map.locate_row(g)?;
        let e = l.head();
        Ok(RowLocation {
            global_row: g,
            index: l.index,
            path: e.path.to_string(),
            format: e.format.to_string(),
            local_row: l.local_row,
            block: l.block.cloned(),
        })
    }

    /// The map's `locate --json` object for global row `g`.
    pub fn locate_json(&self, g: u64) -> Result<serde_json::Value> {
        Ok(lake_map::show::location_json(&self.map.locate_row(g)?))
    }

    /// The whole map as the `map show --json` object.
    pub fn to_json(&self) -> Result<serde_json::Value> {
        Ok(lake_map::show::map_json(&self.map)?)
    }

    /// Global rows `[start, start + len)` (clamped at the end of the lake), file by file, in
    /// each file's own schema (projected to `columns`). Every touched file is checked against
    /// its entry first; a changed file is an error naming it.
    pub fn slice_files(
        &self,
        start: u64,
        len: u64,
        columns: Option<&[String]>,
    ) -> Result<Vec<FileSlice>> {
        Ok(self.map.slice(start, len, columns, &handlers())?)
    }

    /// The files of a slice, for front ends that read them one by one.
    pub fn plan_slice(&self, start: u64, len: u64) -> Vec<Segment> {
        self.map.plan_slice(start, len)
    }

    /// The rows of one segment of [`Lake::plan_slice`] in the file's own schema, after the
    /// stale check of the file.
    pub fn read_segment(
        &self,
        segment: &Segment,
        columns: Option<&[String]>,
    ) -> Result<lake_locators::BatchIter> {
        Ok(self.map.read_segment(segment, columns, &handlers())?)
    }

    /// Compares the map with the disk: healthy, modified, unindexed and missing files, with
    /// the map's own fingerprint mode and the handlers of this process.
    pub fn doctor(&self, options: &DoctorOptions) -> Result<DoctorReport> {
        if let Some(remote) = crate::remote::remote_of(&self.map) {
            return crate::remote::doctor(&self.map, &remote.store, &handlers());
        }
        let engine = lake_doctor::DoctorOptions {
            registry: handlers(),
            progress: options.progress.clone(),
        };
        with_threads(options.threads, || {
            lake_doctor::diagnose(&self.map, &engine).map_err(Error::from)
        })
    }
}

/// The unified schema (the rule is in [`crate::unified`]).
impl Lake {
    pub(crate) fn unified(&self) -> Result<&crate::unified::Unified> {
        let cached = self
            .unified
            .get_or_init(|| crate::unified::compute(&self.map).map_err(|e| e.to_string()));
        cached
            .as_ref()
            .map_err(|m| Error::new(crate::ErrorKind::Corrupt, m.clone()))
    }

    /// The unified schema of the lake (the rule is in [`crate::unified`]), without
    /// the virtual `_gid` and `_path` columns.
    pub fn schema(&self) -> Result<SchemaRef> {
        Ok(Arc::clone(&self.unified()?.schema))
    }

    /// The schema entry `i` returns as it is stored (before unification).
    pub fn file_schema(&self, i: usize) -> Result<SchemaRef> {
        self.check_index(i)?;
        Ok(Arc::clone(&self.unified()?.files[i]))
    }
}
