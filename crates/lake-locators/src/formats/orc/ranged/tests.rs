//! The ranged ORC index against the local one, on the same bytes: the conformance corpus's
//! ORC files and damaged tails; what the ranged index reads is counted.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use bytes::Bytes;

use crate::formats::orc::OrcLocator;
use crate::locator::bytes::RangeRead;
use crate::locator::bytes::testing::counting;
use crate::locator::{FileIndex, IndexOptions, Locator, StatsColumns};

/// Every `.orc` file under `dir`, sorted.
fn orc_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            orc_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "orc") {
            out.push(p);
        }
    }
    out.sort();
}

fn assert_same(path: &Path, local: &FileIndex, ranged: &FileIndex) {
    assert_eq!(local.format, ranged.format, "{}", path.display());
    assert_eq!(local.row_count, ranged.row_count, "{}", path.display());
    assert_eq!(local.blocks, ranged.blocks, "{}", path.display());
    assert_eq!(local.schema, ranged.schema, "{}", path.display());
    assert_eq!(local.stats, ranged.stats, "{}", path.display());
}

/// The ranged index of `data` under `options`, with what it read.
fn ranged(
    path: &Path,
    data: &Bytes,
    options: &IndexOptions,
) -> (crate::error::Result<FileIndex>, u64, u64) {
    let (read, counts) = counting(data.clone());
    let got = OrcLocator
        .index_ranged(path, data.len() as u64, &read, options)
        .expect("ORC has a ranged index");
    let c = &counts;
    (
        got,
        c.requests.load(Ordering::Relaxed),
        c.bytes.load(Ordering::Relaxed),
    )
}

#[test]
fn conformance_files_index_as_the_local_index() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance");
    if !root.is_dir() {
        eprintln!("skipped: no conformance corpus at {}", root.display());
        return;
    }
    let mut files = Vec::new();
    orc_files(&root, &mut files);
    assert!(!files.is_empty(), "no ORC file under {}", root.display());
    let no_stats = IndexOptions {
        stats: StatsColumns::None,
        ..IndexOptions::default()
    };
    let (mut same, mut refused, mut data_only) = (0, 0, 0);
    for path in &files {
        let data = Bytes::from(std::fs::read(path).unwrap());
        for options in [IndexOptions::default(), no_stats.clone()] {
            let local = OrcLocator.index(path, &options);
            let (got, requests, bytes) = ranged(path, &data, &options);
            match (&local, &got) {
                (Ok(l), Ok(r)) => {
                    assert_same(path, l, r);
                    same += 1;
                }
                (Err(_), Err(_)) => refused += 1,
                // The data is not read: a file whose footer is sound but whose streams are
                // damaged is indexed from its footer (its reads fail as they do locally).
                (Err(e), Ok(_)) => {
                    eprintln!("data-only damage, indexed from the footer: {e}");
                    data_only += 1;
                }
                _ => panic!(
                    "{}: local {:?}, ranged {:?}",
                    path.display(),
                    local.as_ref().map(|i| i.row_count),
                    got.as_ref().map(|i| i.row_count)
                ),
            }
            // Without statistics only the tail is read, in at most two requests.
            if options.stats.is_none() && got.is_ok() {
                assert!(requests <= 2, "{}: {requests} requests", path.display());
                assert!(
                    bytes <= data.len() as u64,
                    "{}: {bytes} bytes",
                    path.display()
                );
            }
            eprintln!(
                "{:>9} bytes, {requests:>4} requests, {bytes:>9} read, stats {:<5}: {}",
                data.len(),
                !options.stats.is_none(),
                path.strip_prefix(&root).unwrap_or(path).display()
            );
        }
    }
    eprintln!("{same} indexes equal, {refused} refused both ways, {data_only} data-only damage");
    assert!(same > 0);
}

/// A file of many stripes whose footer carries exact statistics: the tail is all that is
/// read, with statistics on.
#[test]
fn a_file_with_footer_statistics_is_indexed_from_its_tail() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/conformance/external/orc/examples/demo-12-zlib.orc");
    let Ok(data) = std::fs::read(&path) else {
        eprintln!("skipped: no {}", path.display());
        return;
    };
    let data = Bytes::from(data);
    let (got, requests, bytes) = ranged(&path, &data, &IndexOptions::default());
    let got = got.unwrap();
    let local = OrcLocator.index(&path, &IndexOptions::default()).unwrap();
    assert_same(&path, &local, &got);
    assert!(got.stats.as_ref().is_some_and(|s| !s.is_empty()));
    assert!(requests <= 2, "{requests} requests");
    assert!(bytes <= super::TAIL, "{bytes} of {} bytes", data.len());
}

#[test]
fn damaged_tails_are_typed_errors() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/conformance/external/orc/examples/TestOrcFile.test1.orc");
    let Ok(data) = std::fs::read(&path) else {
        eprintln!("skipped: no {}", path.display());
        return;
    };
    let options = IndexOptions::default();
    let n = data.len();
    let mut cases: Vec<(String, Vec<u8>)> = vec![
        ("empty".into(), Vec::new()),
        ("one byte".into(), vec![3]),
        (
            "garbage".into(),
            (0..5000u32).map(|i| (i * 7) as u8).collect(),
        ),
        ("no last byte".into(), data[..n - 1].to_vec()),
        ("half".into(), data[n / 2..].to_vec()),
        ("tail only".into(), data[n - 300..].to_vec()),
    ];
    // Postscript length past the file; a footer length of 2^40 in the postscript.
    let mut long_ps = data.clone();
    long_ps[n - 1] = 255;
    cases.push(("postscript length 255".into(), long_ps));
    let mut zeroed = data.clone();
    for b in &mut zeroed[n - 200..n - 1] {
        *b = 0xff;
    }
    cases.push(("tail of 0xff".into(), zeroed));
    for (what, bytes) in cases {
        let (got, _, _) = ranged(&path, &Bytes::from(bytes), &options);
        assert!(got.is_err(), "{what}: {:?}", got.map(|i| i.row_count));
    }
}

/// A read that fails (the store went away) is an I/O error naming the file.
#[test]
fn a_failing_read_is_an_io_error() {
    let read: RangeRead = Arc::new(|_| Err(std::io::Error::other("connection refused")));
    let path = Path::new("s3://bucket/x.orc");
    let got = OrcLocator
        .index_ranged(path, 10_000, &read, &IndexOptions::default())
        .unwrap();
    let err = got.unwrap_err().to_string();
    assert!(err.contains("s3://bucket/x.orc"), "{err}");
}
