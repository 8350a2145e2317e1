//! One object store and a prefix in it, from a lake URL (`s3://bucket/prefix`, `gs://…`,
//! `az://…`, `abfs[s]://…`, `http(s)://…`) and storage options, with the few operations a
//! lake needs: list, ranged and conditional GETs, a conditional PUT. Every call runs on one
//! process-wide tokio runtime, made again in a child process after `fork`.

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use futures::{StreamExt, TryStreamExt};
use object_store::path::Path as StorePath;
use object_store::{
    GetOptions, GetRange, ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload,
    UpdateVersion,
};

use crate::error::{Error, ErrorKind, Result};

/// Storage options by object_store's own key names (`aws_access_key_id`, `aws_endpoint`,
/// `allow_http`, `google_service_account`, `azure_storage_account_name`, …), as polars and
/// deltalake accept them. The standard environment variables apply first; these override.
pub type StorageOptions = BTreeMap<String, String>;

/// Storage options every store of this process starts from (a front end's
/// `--storage-option` flags), under the options of each call.
static DEFAULTS: std::sync::RwLock<StorageOptions> = std::sync::RwLock::new(BTreeMap::new());

/// Sets the storage options every object store of this process starts from; the options of
/// a call add to them and win where both name a key.
pub fn set_default_storage_options(options: StorageOptions) {
    *DEFAULTS.write().unwrap_or_else(|p| p.into_inner()) = options;
}

/// True when `location` names a lake by URL (`scheme://…`) rather than a local path.
/// `file://` URLs count too: [`local_path`] turns them into paths.
pub fn is_url(location: &str) -> bool {
    match location.split_once("://") {
        Some((scheme, _)) => {
            !scheme.is_empty()
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        }
        None => false,
    }
}

/// The local path of a `file://` URL, `None` for any other location.
pub fn local_path(location: &str) -> Option<std::path::PathBuf> {
    let rest = location.strip_prefix("file://")?;
    // `file:///abs/path` and `file://localhost/abs/path`.
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    Some(std::path::PathBuf::from(rest))
}

/// A store builder with the retry settings and the storage options applied (each key by the
/// builder's own names; for S3 also without its `aws_` prefix; a key the store does not know is
/// skipped, as polars and deltalake skip the keys of other stores), then built.
macro_rules! configured {
    ($builder:expr, $opts:expr) => {{
        let mut b = $builder.with_retry(retry());
        for (k, v) in $opts {
            if let Ok(key) = k.parse() {
                b = b.with_config(key, v);
            } else if let Ok(key) = format!("aws_{k}").parse() {
                b = b.with_config(key, v);
            }
        }
        b.build().map(|s| Arc::new(s) as Arc<dyn ObjectStore>)
    }};
}

/// One listed object of a lake.
#[derive(Debug, Clone)]
pub(crate) struct Object {
    /// The key relative to the lake prefix, `/`-separated.
    pub(crate) rel: String,
    pub(crate) size: u64,
    pub(crate) etag: Option<String>,
    pub(crate) mtime_ms: i64,
}

/// A lake's prefix in an object store.
#[derive(Clone)]
pub(crate) struct Store {
    store: Arc<dyn ObjectStore>,
    prefix: StorePath,
    /// The URL without credentials, query or fragment: what errors and maps name.
    url: String,
    /// HTTP(S) stores cannot list.
    pub(crate) can_list: bool,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("url", &self.url).finish()
    }
}

/// The URL as shown to users: no user info, query or fragment, no trailing `/`.
pub(crate) fn display_url(url: &url::Url) -> String {
    let mut shown = url.clone();
    let _ = shown.set_username("");
    let _ = shown.set_password(None);
    shown.set_query(None);
    shown.set_fragment(None);
    shown.to_string().trim_end_matches('/').to_string()
}

fn parse(location: &str) -> Result<url::Url> {
    url::Url::parse(location).map_err(|e| {
        Error::invalid(format!(
            "{}: not a valid lake URL ({e})",
            location.split('?').next().unwrap_or(location)
        ))
    })
}

impl Store {
    /// Opens the store a lake URL names, with the standard environment variables of its
    /// kind and `options` on top.
    pub(crate) fn open(location: &str, options: &StorageOptions) -> Result<Store> {
        let url = parse(location)?;
        let shown = display_url(&url);
        let scheme = url.scheme().to_ascii_lowercase();
        let mut merged = DEFAULTS.read().unwrap_or_else(|p| p.into_inner()).clone();
        merged.extend(options.iter().map(|(k, v)| (k.clone(), v.clone())));
        let opts = merged.into_iter().map(|(k, v)| (k.to_ascii_lowercase(), v));
        let built: std::result::Result<Arc<dyn ObjectStore>, object_store::Error> = match scheme
            .as_str()
        {
            #[cfg(feature = "aws")]
            "s3" | "s3a" => configured!(
                object_store::aws::AmazonS3Builder::from_env().with_url(url.as_str()),
                opts
            ),
            #[cfg(feature = "gcp")]
            "gs" | "gcs" => configured!(
                object_store::gcp::GoogleCloudStorageBuilder::from_env().with_url(url.as_str()),
                opts
            ),
            #[cfg(feature = "azure")]
            "az" | "adl" | "azure" | "abfs" | "abfss" => configured!(
                object_store::azure::MicrosoftAzureBuilder::from_env().with_url(url.as_str()),
                opts
            ),
            #[cfg(feature = "http")]
            "http" | "https" => configured!(
                object_store::http::HttpBuilder::new().with_url(&url[..url::Position::BeforePath]),
                opts
            ),
            other => {
                return Err(Error::invalid(format!(
                    "{shown}: lakes at {other}:// URLs are not supported by this build \
                         (s3, gs, az, abfs, http and https are, with their cargo features)"
                )));
            }
        };
        let store = built.map_err(|e| store_error(&shown, e))?;
        let path = match scheme.as_str() {
            "http" | "https" => url.path().trim_matches('/').to_string(),
            // The bucket or container is in the host (or, for abfs, in the user info).
            _ => url.path().trim_matches('/').to_string(),
        };
        let prefix = StorePath::parse(&path)
            .map_err(|e| Error::invalid(format!("{shown}: not a valid object path ({e})")))?;
        Ok(Store {
            store,
            prefix,
            url: shown,
            can_list: !matches!(scheme.as_str(), "http" | "https"),
        })
    }

    /// The lake's URL, without credentials.
    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    /// The URL of `rel` under the lake prefix.
    pub(crate) fn url_of(&self, rel: &str) -> String {
        format!("{}/{rel}", self.url)
    }

    fn key(&self, rel: &str) -> StorePath {
        // `parse` keeps a listed key's characters as they are (`PathPart::from` would
        // percent-encode non-ASCII ones and name another object).
        let joined = match self.prefix.as_ref() {
            "" => rel.to_string(),
            p => format!("{p}/{rel}"),
        };
        StorePath::parse(&joined).unwrap_or_else(|_| {
            let mut key = self.prefix.clone();
            for part in rel.split('/').filter(|p| !p.is_empty()) {
                key = key.join(part);
            }
            key
        })
    }

    /// Every object under the prefix (paginated by the store's client), with keys relative
    /// to it; zero-byte "folder" markers (keys ending in `/`) are left out.
    pub(crate) fn list(&self) -> Result<Vec<Object>> {
        if !self.can_list {
            return Err(Error::invalid(format!(
                "{}: an HTTP lake cannot be listed; it needs a map made elsewhere (give \
                 its location with --map / map=)",
                self.url
            )));
        }
        let store = Arc::clone(&self.store);
        let prefix = self.prefix.clone();
        let shown = self.url.clone();
        let metas: Vec<object_store::ObjectMeta> = block_on(async move {
            let p = (!prefix.as_ref().is_empty()).then_some(&prefix);
            store.list(p).try_collect::<Vec<_>>().await
        })?
        .map_err(|e| store_error(&shown, e))?;
        let base: Vec<&str> = self.prefix.parts().map(|_| "").collect();
        let depth = base.len();
        let mut out = Vec::with_capacity(metas.len());
        for m in metas {
            let parts: Vec<String> = m.location.parts().map(|p| p.as_ref().to_string()).collect();
            if parts.len() <= depth {
                continue;
            }
            let rel = parts[depth..].join("/");
            if m.size == 0 && m.location.as_ref().ends_with('/') {
                continue;
            }
            out.push(Object {
                rel,
                size: m.size,
                etag: m.e_tag,
                mtime_ms: m.last_modified.timestamp_millis(),
            });
        }
        Ok(out)
    }

    /// The size, ETag and version of one object (a HEAD request).
    pub(crate) fn head(&self, rel: &str) -> Result<Object> {
        let key = self.key(rel);
        let store = Arc::clone(&self.store);
        let url = self.url_of(rel);
        let m =
            block_on(async move { store.head(&key).await })?.map_err(|e| store_error(&url, e))?;
        Ok(Object {
            rel: rel.to_string(),
            size: m.size,
            etag: m.e_tag,
            mtime_ms: m.last_modified.timestamp_millis(),
        })
    }

    /// The bytes `ranges` of `rel`, each one GET (at most [`IN_FLIGHT`] at once), on the
    /// condition that the object still has `etag` (a replaced object is a stale error).
    /// Without `etag`, the object's size and ETag as every response gave them come back too
    /// (the responses must agree: an object replaced between two of them is a stale error),
    /// so that a caller checks an object by the GETs it makes anyway, not by a HEAD first.
    pub(crate) fn get_ranges(
        &self,
        rel: &str,
        ranges: &[Range<u64>],
        etag: Option<&str>,
    ) -> Result<Vec<Bytes>> {
        Ok(self.get_ranges_meta(rel, ranges, etag)?.0)
    }

    /// [`Store::get_ranges`] with the object's size and ETag as the responses gave them.
    pub(crate) fn get_ranges_meta(
        &self,
        rel: &str,
        ranges: &[Range<u64>],
        etag: Option<&str>,
    ) -> Result<(Vec<Bytes>, Option<SizeAndTag>)> {
        let key = self.key(rel);
        let store = Arc::clone(&self.store);
        let url = self.url_of(rel);
        let etag = etag.map(str::to_string);
        let ranges = ranges.to_vec();
        let url2 = url.clone();
        let got = block_on(async move {
            // Unordered: a slow answer holds no slot from the requests behind it (ordered
            // buffering counts answered but not yet yielded requests as in flight); the
            // parts are put back in order below.
            futures::stream::iter(ranges.into_iter().enumerate().map(|(n, r)| {
                let store = Arc::clone(&store);
                let key = key.clone();
                let options = GetOptions {
                    if_match: etag.clone(),
                    range: Some(GetRange::Bounded(r.clone())),
                    ..Default::default()
                };
                let url = url2.clone();
                async move {
                    let got = store.get_opts(&key, options).await;
                    let got = got.map_err(|e| store_error(&url, e))?;
                    let meta = (got.meta.size, got.meta.e_tag.clone());
                    let bytes = got.bytes().await.map_err(|e| store_error(&url, e))?;
                    if bytes.len() as u64 != r.end - r.start {
                        return Err(Error::new(
                            ErrorKind::Stale,
                            format!(
                                "{url}: bytes {}..{} asked, {} arrived (the object is shorter \
                                 than its map entry says)",
                                r.start,
                                r.end,
                                bytes.len()
                            ),
                        ));
                    }
                    Ok((n, bytes, meta))
                }
            }))
            .buffer_unordered(IN_FLIGHT)
            .try_collect::<Vec<(usize, Bytes, SizeAndTag)>>()
            .await
        })??;
        let mut got = got;
        got.sort_unstable_by_key(|(n, _, _)| *n);
        let mut meta: Option<SizeAndTag> = None;
        let mut parts = Vec::with_capacity(got.len());
        for (_, bytes, m) in got {
            match &meta {
                Some(first) if *first != m => {
                    return Err(Error::new(
                        ErrorKind::Stale,
                        format!(
                            "{url}: the object changed during the read (size {} and ETag {} in \
                             one response, {} and {} in another)",
                            first.0,
                            first.1.as_deref().unwrap_or("(none)"),
                            m.0,
                            m.1.as_deref().unwrap_or("(none)")
                        ),
                    )
                    .at(std::path::Path::new(&url)));
                }
                Some(_) => {}
                None => meta = Some(m),
            }
            parts.push(bytes);
        }
        Ok((parts, meta))
    }

    /// Streams the whole object `rel` (on the condition that it still has `etag`) into
    /// `sink` chunk by chunk, so memory does not grow with the object.
    pub(crate) fn get_streamed(
        &self,
        rel: &str,
        etag: Option<&str>,
        sink: &mut dyn FnMut(&[u8]) -> Result<()>,
    ) -> Result<()> {
        let key = self.key(rel);
        let store = Arc::clone(&self.store);
        let url = self.url_of(rel);
        let options = GetOptions {
            if_match: etag.map(str::to_string),
            ..Default::default()
        };
        // The body streams on the runtime; the chunks come here through a short queue, so
        // at most a few chunks are in memory whatever the object's size.
        let (tx, mut rx) = tokio::sync::mpsc::channel::<Result<Bytes>>(4);
        runtime()?.spawn(async move {
            match store.get_opts(&key, options).await {
                Err(e) => {
                    let _ = tx.send(Err(store_error(&url, e))).await;
                }
                Ok(got) => {
                    let mut stream = got.into_stream();
                    while let Some(chunk) = stream.next().await {
                        let chunk = chunk.map_err(|e| store_error(&url, e));
                        let failed = chunk.is_err();
                        if tx.send(chunk).await.is_err() || failed {
                            break;
                        }
                    }
                }
            }
        });
        while let Some(chunk) = rx.blocking_recv() {
            sink(&chunk?)?;
        }
        Ok(())
    }

    /// The whole object `rel`, with its ETag and version.
    pub(crate) fn get_all(&self, rel: &str) -> Result<(Bytes, Option<String>, Option<String>)> {
        let key = self.key(rel);
        let store = Arc::clone(&self.store);
        let url = self.url_of(rel);
        block_on(async move {
            let got = store.get(&key).await.map_err(|e| store_error(&url, e))?;
            let (etag, version) = (got.meta.e_tag.clone(), got.meta.version.clone());
            let bytes = got.bytes().await.map_err(|e| store_error(&url, e))?;
            Ok((bytes, etag, version))
        })?
    }

    /// Writes `bytes` to `rel` in one PUT: only if no object is there (`expected` `None`) or
    /// only if the object there still has the ETag and version `expected` names. Another
    /// writer's object in between fails the PUT, and nothing is written.
    pub(crate) fn put_if(
        &self,
        rel: &str,
        bytes: Bytes,
        expected: Option<(Option<String>, Option<String>)>,
    ) -> Result<()> {
        let key = self.key(rel);
        let store = Arc::clone(&self.store);
        let url = self.url_of(rel);
        let mode = match expected {
            None => PutMode::Create,
            Some((e_tag, version)) => PutMode::Update(UpdateVersion { e_tag, version }),
        };
        let options = PutOptions {
            mode,
            ..Default::default()
        };
        block_on(async move {
            store
                .put_opts(&key, PutPayload::from_bytes(bytes), options)
                .await
                .map_err(|e| match e {
                    object_store::Error::AlreadyExists { .. }
                    | object_store::Error::Precondition { .. } => Error::new(
                        ErrorKind::Stale,
                        format!(
                            "{url}: another writer changed the map while this one was built; \
                             nothing was written (run the command again)"
                        ),
                    ),
                    other => store_error(&url, other),
                })
                .map(|_| ())
        })?
    }
}

/// An object's size and ETag as a response gave them.
pub(crate) type SizeAndTag = (u64, Option<String>);

/// GETs in flight at once for one read.
pub(crate) const IN_FLIGHT: usize = 8;

/// The retry settings of every store: [`RETRIES`] retries with exponential backoff, for at
/// most [`RETRY_SECONDS`] seconds (object_store's defaults are 10 and 3 minutes, too long
/// for a command line that must say an endpoint is down).
fn retry() -> object_store::RetryConfig {
    object_store::RetryConfig {
        max_retries: RETRIES,
        retry_timeout: std::time::Duration::from_secs(RETRY_SECONDS),
        ..Default::default()
    }
}

/// Retries of a failed request (connection errors, throttling, 5xx), with exponential
/// backoff from 100 ms.
pub(crate) const RETRIES: usize = 4;
/// The longest a request is retried, in seconds.
pub(crate) const RETRY_SECONDS: u64 = 15;

/// An object store error as a Bazan error naming `url`. The messages of object_store's
/// clients name the request, never the credentials.
pub(crate) fn store_error(url: &str, e: object_store::Error) -> Error {
    use object_store::Error as E;
    let kind = match &e {
        E::NotFound { .. } => ErrorKind::NotFound,
        E::Precondition { .. } | E::NotModified { .. } => ErrorKind::Stale,
        E::PermissionDenied { .. } | E::Unauthenticated { .. } => ErrorKind::PermissionDenied,
        E::InvalidPath { .. } | E::UnknownConfigurationKey { .. } => ErrorKind::InvalidArgument,
        E::NotSupported { .. } | E::NotImplemented { .. } => ErrorKind::UnsupportedFormat,
        _ => ErrorKind::Io,
    };
    let text = crate::error::one_line(&e);
    let message = match kind {
        ErrorKind::Stale => format!(
            "{url}: the object changed after the map was made (its ETag no longer matches): \
             {text}"
        ),
        _ => format!("{url}: {text}"),
    };
    Error::new(kind, message).at(std::path::Path::new(url))
}

/// The process's runtime for store calls, made on first use and made again in a child
/// process after `fork` (a runtime's threads do not survive a fork; the parent's is left
/// alone, never dropped in the child).
fn runtime() -> Result<Arc<tokio::runtime::Runtime>> {
    static RUNTIME: Mutex<Option<(u32, Arc<tokio::runtime::Runtime>)>> = Mutex::new(None);
    let pid = std::process::id();
    let mut slot = RUNTIME.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((owner, rt)) = slot.as_ref()
        && *owner == pid
    {
        return Ok(Arc::clone(rt));
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("bazan-store")
        .enable_all()
        .build()
        .map_err(|e| {
            Error::new(
                ErrorKind::Other,
                format!("cannot start the I/O runtime: {e}"),
            )
        })?;
    let rt = Arc::new(rt);
    if let Some(old) = slot.replace((pid, Arc::clone(&rt))) {
        // The parent's runtime: its threads are not in this process.
        std::mem::forget(old);
    }
    Ok(rt)
}

/// Runs `f` to completion on the store runtime from synchronous code.
pub(crate) fn block_on<F>(f: F) -> Result<F::Output>
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    let rt = runtime()?;
    // Inside a runtime already (an async caller): run on the store runtime's own threads.
    if tokio::runtime::Handle::try_current().is_ok() {
        let handle = rt.handle().clone();
        return std::thread::scope(|s| {
            s.spawn(move || handle.block_on(f))
                .join()
                .map_err(|_| Error::new(ErrorKind::Other, "an object store call panicked"))
        });
    }
    Ok(rt.block_on(f))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_and_paths_are_told_apart() {
        assert!(is_url("s3://bucket/prefix"));
        assert!(is_url("file:///tmp/x"));
        assert!(!is_url("/tmp/lake"));
        assert!(!is_url("relative/dir"));
        assert!(!is_url("C:\\data"));
        assert_eq!(
            local_path("file:///tmp/x"),
            Some(std::path::PathBuf::from("/tmp/x"))
        );
    }

    #[test]
    fn shown_urls_carry_no_credentials() {
        let url = url::Url::parse("s3://key:secret@bucket/pre/fix/?token=abc").unwrap();
        assert_eq!(display_url(&url), "s3://bucket/pre/fix");
    }
}
