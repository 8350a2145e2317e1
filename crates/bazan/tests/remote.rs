//! Lakes in an object store, against a real S3-compatible server: `moto` (PyPI
//! `moto[server]`) started on a free loopback port by each test, stopped by its PID. Nothing
//! here talks to any address but 127.0.0.1.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow_array::RecordBatch;
use bazan::{CreateOptions, ErrorKind, LoadOptions, ScanOptions, StorageOptions};
use object_store::aws::AmazonS3Builder;
use object_store::path::Path as StorePath;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};

/// A moto S3 server on 127.0.0.1, killed (by PID) when dropped.
struct Moto {
    child: Child,
    port: u16,
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    l.local_addr().expect("local address").port()
}

impl Moto {
    fn start() -> Moto {
        let port = free_port();
        let child = Command::new("python3")
            .args([
                "-m",
                "moto.server",
                "-H",
                "127.0.0.1",
                "-p",
                &port.to_string(),
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("python3 -m moto.server (pip install 'moto[server]')");
        let moto = Moto { child, port };
        let deadline = Instant::now() + Duration::from_secs(30);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "moto did not start on port {port}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        moto
    }

    fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Creates `bucket` with a plain HTTP PUT (moto checks no signature).
    fn bucket(&self, bucket: &str) {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).expect("connect to moto");
        write!(
            s,
            "PUT /{bucket} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            self.port
        )
        .expect("send");
        let mut reply = String::new();
        let _ = s.read_to_string(&mut reply);
        assert!(reply.starts_with("HTTP/1.1 200"), "create bucket: {reply}");
    }

    /// Writes `key` without credentials (moto lets anyone read such an object, as an HTTP
    /// lake needs).
    fn put_anonymous(&self, key: &str, body: &[u8]) {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).expect("connect to moto");
        write!(
            s,
            "PUT /{key} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/octet-stream\r\nx-amz-acl: public-read\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            self.port,
            body.len()
        )
        .expect("send");
        s.write_all(body).expect("send body");
        let mut reply = String::new();
        let _ = s.read_to_string(&mut reply);
        assert!(reply.starts_with("HTTP/1.1 200"), "anonymous PUT: {reply}");
    }

    fn options(&self) -> StorageOptions {
        [
            ("aws_endpoint", self.endpoint()),
            ("aws_allow_http", "true".to_string()),
            ("aws_access_key_id", "testing".to_string()),
            ("aws_secret_access_key", "testing-secret".to_string()),
            ("aws_region", "us-east-1".to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }

    fn store(&self, bucket: &str) -> Arc<dyn ObjectStore> {
        Arc::new(
            AmazonS3Builder::new()
                .with_bucket_name(bucket)
                .with_endpoint(self.endpoint())
                .with_allow_http(true)
                .with_access_key_id("testing")
                .with_secret_access_key("testing-secret")
                .with_region("us-east-1")
                .build()
                .expect("S3 client"),
        )
    }
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

fn put(store: &Arc<dyn ObjectStore>, key: &str, bytes: Vec<u8>) {
    let key = StorePath::parse(key).expect("key");
    rt().block_on(store.put(&key, PutPayload::from(bytes)))
        .expect("put");
}

/// Every regular file below `dir` (no links), relative `/`-separated paths.
fn files(dir: &Path, prefix: &str, out: &mut Vec<(String, PathBuf)>) {
    for e in std::fs::read_dir(dir).expect("read_dir") {
        let e = e.expect("entry");
        let t = e.file_type().expect("type");
        let name = e.file_name().to_string_lossy().into_owned();
        let rel = format!("{prefix}{name}");
        if t.is_dir() {
            files(&e.path(), &format!("{rel}/"), out);
        } else if t.is_file() {
            out.push((rel, e.path()));
        }
    }
}

fn upload_dir(store: &Arc<dyn ObjectStore>, dir: &Path, prefix: &str) -> usize {
    let mut all = Vec::new();
    files(dir, "", &mut all);
    for (rel, path) in &all {
        put(
            store,
            &format!("{prefix}/{rel}"),
            std::fs::read(path).expect("read"),
        );
    }
    all.len()
}

fn conformance_lake() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/conformance/lake/lake"
    ))
}

fn scan_all(lake: &Arc<bazan::Lake>) -> Vec<RecordBatch> {
    let options = ScanOptions {
        with_gid: true,
        with_path: true,
        ..Default::default()
    };
    lake.scan(0..lake.total_rows(), &options)
        .expect("scan")
        .collect_batches()
        .expect("batches")
}

fn create(url: &str, moto: &Moto) -> bazan::Result<bazan::Created> {
    let options = CreateOptions {
        storage_options: moto.options(),
        ..Default::default()
    };
    bazan::create_map(Path::new(url), &options)
}

fn load(url: &str, moto: &Moto) -> bazan::Result<bazan::Lake> {
    let options = LoadOptions {
        storage_options: moto.options(),
        ..Default::default()
    };
    bazan::load_map_with(Path::new(url), &options)
}

#[test]
fn the_conformance_lake_in_a_bucket_maps_and_reads_as_on_disk() {
    let moto = Moto::start();
    moto.bucket("lake");
    let store = moto.store("lake");
    upload_dir(&store, &conformance_lake(), "conf");

    // The same files on a disk, mapped locally.
    let dir = tempfile::tempdir().expect("tempdir");
    let mut all = Vec::new();
    files(&conformance_lake(), "", &mut all);
    for (rel, path) in &all {
        let to = dir.path().join(rel);
        std::fs::create_dir_all(to.parent().expect("parent")).expect("mkdir");
        std::fs::copy(path, &to).expect("copy");
    }
    let local = bazan::create_map(
        dir.path(),
        &CreateOptions {
            skip_errors: true,
            ..Default::default()
        },
    )
    .expect("local map");

    let url = "s3://lake/conf";
    let remote = bazan::create_map(
        Path::new(url),
        &CreateOptions {
            storage_options: moto.options(),
            skip_errors: true,
            ..Default::default()
        },
    )
    .expect("remote map");
    let (l, r) = (local.lake.map(), remote.lake.map());
    let paths = |m: &bazan::engine::lake_map::LakeMap| -> Vec<String> {
        m.entries().map(|e| e.path.to_string()).collect()
    };
    assert!(
        remote.failures.is_empty() || remote.failures.len() == local.failures.len(),
        "{:?}",
        remote.failures
    );
    assert_eq!(paths(l), paths(r));
    assert_eq!(l.total_rows(), r.total_rows());
    for i in 0..l.total_files() {
        let (a, b) = (l.entry(i), r.entry(i));
        assert_eq!(a.path, b.path);
        assert_eq!(
            (a.format, a.size_bytes, a.row_count, a.first_global_row),
            (b.format, b.size_bytes, b.row_count, b.first_global_row),
            "{}",
            a.path
        );
        assert_eq!(a.row_groups_json, b.row_groups_json, "blocks of {}", a.path);
        assert_eq!(a.stats_json, b.stats_json, "statistics of {}", a.path);
        assert_eq!(a.schema_json, b.schema_json, "schema of {}", a.path);
        assert!(r.etag(i).is_some(), "{} has no ETag", b.path);
    }
    assert_eq!(
        local.failures.iter().map(|f| &f.path).collect::<Vec<_>>(),
        remote.failures.iter().map(|f| &f.path).collect::<Vec<_>>()
    );

    // Reads from a freshly loaded map equal the local reads, batch for batch.
    let local = Arc::new(local.lake);
    let remote = Arc::new(load(url, &moto).expect("load"));
    assert!(remote.is_remote());
    let want = scan_all(&local);
    let got = scan_all(&remote);
    let concat = |b: &[RecordBatch]| {
        arrow_select::concat::concat_batches(&b[0].schema(), b).expect("concat")
    };
    // `_path` holds the same relative paths.
    assert_eq!(concat(&want), concat(&got));
    // Random rows through take.
    let n = local.total_rows();
    let rows: Vec<u64> = (0..n).step_by(7).collect();
    let a = local
        .take(&rows, &ScanOptions::default())
        .expect("local take");
    let b = remote
        .take(&rows, &ScanOptions::default())
        .expect("remote take");
    assert_eq!(a, b);
    // Every short slice, file by file, through ranged reads of a new lake each time.
    let fresh = Arc::new(load(url, &moto).expect("load"));
    // About 200 slices spread over the lake, each read through ranged GETs.
    for start in (0..n).step_by((n as usize / 200).max(37)) {
        let options = ScanOptions::default();
        let a = local
            .scan(start..(start + 5).min(n), &options)
            .expect("scan")
            .collect_batches();
        let b = fresh
            .scan(start..(start + 5).min(n), &options)
            .expect("scan")
            .collect_batches();
        let (a, b) = (a.expect("local rows"), b.expect("remote rows"));
        assert_eq!(concat(&a), concat(&b), "rows {start}..");
    }
}

/// A CSV of `rows` quoted records.
fn quoted_csv(rows: usize) -> Vec<u8> {
    let mut out = b"id,name,note\n".to_vec();
    for i in 0..rows {
        out.extend(
            format!("{i},\"name {i}\",\"a note, with a comma and \"\"quotes\"\" {i}\"\n").bytes(),
        );
    }
    out
}

#[test]
fn a_deep_slice_fetches_one_narrow_range() {
    let moto = Moto::start();
    moto.bucket("deep");
    let store = moto.store("deep");
    let csv = quoted_csv(300_000);
    let size = csv.len() as u64;
    put(&store, "lake/big.csv", csv);
    create("s3://deep/lake", &moto).expect("create");
    let lake = Arc::new(load("s3://deep/lake", &moto).expect("load"));
    let batches = lake
        .scan(250_000..250_100, &ScanOptions::default())
        .expect("scan")
        .collect_batches()
        .expect("rows");
    let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
    assert_eq!(rows, 100);
    let (requests, bytes) = lake.fetch_counts().expect("remote");
    let blocks = lake.blocks(0).expect("blocks");
    let biggest = blocks
        .windows(2)
        .map(|w| w[1].first_byte.unwrap_or(0) - w[0].first_byte.unwrap_or(0))
        .max()
        .unwrap_or(size);
    assert!(requests <= 2, "{requests} GETs");
    assert!(
        bytes <= 2 * biggest,
        "{bytes} bytes fetched, a block is {biggest}"
    );
    assert!(bytes * 100 <= size, "{bytes} of {size} bytes fetched");

    // The same lake over plain HTTP (read-only: the map is already there), copied to a
    // bucket written without credentials, which moto lets anyone read.
    moto.put_anonymous("open", b"");
    for key in ["lake/big.csv", "lake/.br_map.bazan"] {
        let path = StorePath::parse(key).expect("key");
        let body = rt()
            .block_on(async { store.get(&path).await?.bytes().await })
            .expect("get");
        // Same bytes, same ETag: the map still describes the object.
        moto.put_anonymous(&format!("open/{key}"), &body);
    }
    let http = format!("{}/open/lake", moto.endpoint());
    let options = LoadOptions {
        storage_options: [("allow_http".to_string(), "true".to_string())].into(),
        map: None,
    };
    let over_http = Arc::new(bazan::load_map_with(Path::new(&http), &options).expect("http lake"));
    let again = over_http
        .scan(250_000..250_100, &ScanOptions::default())
        .expect("scan")
        .collect_batches()
        .expect("rows");
    assert_eq!(batches, again);
    let err = bazan::create_map(
        Path::new(&http),
        &CreateOptions {
            storage_options: options.storage_options.clone(),
            ..Default::default()
        },
    )
    .expect_err("an HTTP lake cannot be listed");
    assert!(err.to_string().contains("cannot be listed"), "{err}");
}

#[test]
fn a_changed_object_is_stale_and_update_fixes_it() {
    let moto = Moto::start();
    moto.bucket("drift");
    let store = moto.store("drift");
    put(&store, "l/a.csv", b"x,y\n1,2\n3,4\n".to_vec());
    put(&store, "l/b.csv", b"x,y\n5,6\n".to_vec());
    // More than one listing page.
    for i in 0..1005 {
        put(
            &store,
            &format!("l/many/{i:04}.csv"),
            format!("x,y\n{i},{i}\n").into_bytes(),
        );
    }
    // A folder marker, hidden files and the rules of discovery.
    put(&store, "l/folder/", Vec::new());
    put(&store, "l/.hidden/c.csv", b"x,y\n9,9\n".to_vec());
    put(&store, "l/README", b"not data".to_vec());
    let created = create("s3://drift/l", &moto).expect("create");
    assert_eq!(created.lake.total_files(), 1007);
    assert_eq!(created.lake.total_rows(), 3 + 1005);
    let lake = Arc::new(load("s3://drift/l", &moto).expect("load"));
    assert_eq!(
        lake.doctor(&Default::default()).expect("doctor").healthy,
        1007
    );

    // Same size, other bytes: only the ETag tells.
    put(&store, "l/a.csv", b"x,y\n7,2\n3,4\n".to_vec());
    let err = lake
        .scan(0..2, &ScanOptions::default())
        .and_then(|s| s.collect_batches())
        .expect_err("a replaced object must not be read");
    assert_eq!(err.kind(), ErrorKind::Stale, "{err}");
    assert!(err.to_string().contains("s3://drift/l/a.csv"), "{err}");
    let report = lake.doctor(&Default::default()).expect("doctor");
    assert_eq!(report.modified, vec!["a.csv".to_string()]);

    rt().block_on(store.delete(&StorePath::parse("l/b.csv").expect("key")))
        .expect("delete");
    let report = lake.doctor(&Default::default()).expect("doctor");
    assert_eq!(report.missing, vec!["b.csv".to_string()]);

    let updated = bazan::update_map(
        Path::new("s3://drift/l"),
        &CreateOptions {
            storage_options: moto.options(),
            ..Default::default()
        },
    )
    .expect("update");
    assert_eq!(updated.modified, vec!["a.csv".to_string()]);
    assert_eq!(updated.removed, vec!["b.csv".to_string()]);
    assert_eq!(updated.kept, 1005);
    let lake = Arc::new(load("s3://drift/l", &moto).expect("load"));
    let rows = lake
        .scan(0..1, &ScanOptions::default())
        .expect("scan")
        .collect_batches()
        .expect("rows");
    let x = rows[0].column(0);
    assert_eq!(
        arrow_cast::display::array_value_to_string(x, 0).expect("x"),
        "7"
    );
}

#[test]
fn a_map_copied_with_its_lake_from_disk_stays_valid() {
    let moto = Moto::start();
    moto.bucket("copy");
    let store = moto.store("copy");
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("a.csv"), quoted_csv(1000)).expect("write");
    std::fs::write(dir.path().join("b.ndjson"), "{\"id\":1}\n{\"id\":2}\n").expect("write");
    bazan::create_map(dir.path(), &CreateOptions::default()).expect("local map");
    upload_dir(&store, dir.path(), "p");
    let local = Arc::new(bazan::load_map(dir.path()).expect("local"));
    let remote = Arc::new(load("s3://copy/p", &moto).expect("copied map"));
    assert_eq!(scan_all(&local), scan_all(&remote));

    // The map has no ETags: a read checks the object's size by its own GETs' responses
    // (no HEAD first), so an object of another size fails the read as stale.
    put(&store, "p/a.csv", quoted_csv(999));
    let changed = Arc::new(load("s3://copy/p", &moto).expect("copied map"));
    let err = changed
        .scan(0..10, &ScanOptions::default())
        .and_then(|s| s.collect_batches())
        .expect_err("a.csv changed");
    assert_eq!(err.kind(), bazan::ErrorKind::Stale, "{err}");
    assert!(err.to_string().contains("a.csv"), "{err}");
    put(&store, "p/a.csv", quoted_csv(1000));

    // A local map of a remote lake.
    let map = dir.path().join("elsewhere.bazan");
    let options = CreateOptions {
        storage_options: moto.options(),
        map: Some(map.to_string_lossy().into_owned()),
        ..Default::default()
    };
    bazan::create_map(Path::new("s3://copy/p"), &options).expect("map kept locally");
    assert!(map.exists());
    let far = bazan::load_map_with(
        Path::new("s3://copy/p"),
        &LoadOptions {
            storage_options: moto.options(),
            map: Some(map.to_string_lossy().into_owned()),
        },
    )
    .expect("load the local map of the remote lake");
    assert_eq!(far.total_rows(), 1002);
}

#[test]
fn store_failures_are_clear_and_bounded() {
    let moto = Moto::start();
    // No such bucket.
    let started = Instant::now();
    let err = create("s3://no-such-bucket/x", &moto).expect_err("missing bucket");
    assert!(err.to_string().contains("s3://no-such-bucket"), "{err}");
    assert!(!err.to_string().contains("testing-secret"), "{err}");
    // No map there.
    moto.bucket("empty");
    let err = load("s3://empty/none", &moto).expect_err("no map");
    assert_eq!(err.kind(), ErrorKind::NotFound, "{err}");
    assert!(started.elapsed() < Duration::from_secs(60));
    // The server stopped: an error within the retry budget, never a hang.
    let options = moto.options();
    drop(moto);
    let started = Instant::now();
    let err = bazan::load_map_with(
        Path::new("s3://empty/none"),
        &LoadOptions {
            storage_options: options,
            map: None,
        },
    )
    .expect_err("server down");
    assert!(err.to_string().contains("s3://empty/none"), "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "took {:?}",
        started.elapsed()
    );
}
