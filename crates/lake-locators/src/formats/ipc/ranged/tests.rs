//! The ranged Arrow IPC index against the local one, on the same bytes: the conformance
//! corpus's IPC files, generated files of many batches (statistics of some columns, of all,
//! of none; compressed), and damaged files; what the ranged index reads is counted.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use arrow_array::{
    ArrayRef, BinaryArray, BooleanArray, Float64Array, Int32Array, Int64Array, ListArray,
    RecordBatch, StringArray,
};
use arrow_ipc::writer::{FileWriter, IpcWriteOptions};
use arrow_schema::{DataType, Field, Schema};
use bytes::Bytes;

use super::{TAIL, index_with_tail};
use crate::formats::ipc::ArrowFileLocator;
use crate::locator::bytes::testing::counting;
use crate::locator::{FileIndex, IndexOptions, Locator, StatsColumns};

/// The ranged index of the file at `path` with a first request of `tail` bytes: the index,
/// requests and bytes read.
fn ranged(
    path: &Path,
    options: &IndexOptions,
    tail: u64,
) -> (crate::error::Result<FileIndex>, u64, u64) {
    let data = Bytes::from(std::fs::read(path).unwrap());
    let (read, counts) = counting(data.clone());
    let got = crate::columnar::guard(path, "arrow_ipc", || {
        index_with_tail(path, data.len() as u64, &read, options, tail)
    });
    (
        got,
        counts.requests.load(Ordering::Relaxed),
        counts.bytes.load(Ordering::Relaxed),
    )
}

fn assert_same(path: &Path, local: &FileIndex, ranged: &FileIndex) {
    assert_eq!(local.format, ranged.format, "{}", path.display());
    assert_eq!(local.row_count, ranged.row_count, "{}", path.display());
    assert_eq!(local.blocks, ranged.blocks, "{}", path.display());
    assert_eq!(local.schema, ranged.schema, "{}", path.display());
    assert_eq!(local.stats, ranged.stats, "{}", path.display());
}

/// Local and ranged indexes of `path` under `options` agree (equal, or both refused) with
/// every first-request size; the bytes read with the default one.
fn compare(path: &Path, options: &IndexOptions) -> (bool, u64, u64) {
    let local = ArrowFileLocator.index(path, options);
    let mut read = (0, 0);
    for tail in [TAIL, 64, 10] {
        let (got, requests, bytes) = ranged(path, options, tail);
        match (&local, &got) {
            (Ok(l), Ok(r)) => assert_same(path, l, r),
            (Err(_), Err(_)) => {}
            _ => panic!(
                "{} (tail {tail}): local {:?}, ranged {:?}",
                path.display(),
                local.as_ref().map(|i| i.row_count),
                got.as_ref().map(|i| i.row_count)
            ),
        }
        if tail == TAIL {
            read = (requests, bytes);
        }
    }
    (local.is_ok(), read.0, read.1)
}

/// Every IPC file of the corpus: by extension, and everything under `arrow-ipc-file`.
fn ipc_files(dir: &Path, in_file_dir: bool, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            let file_dir = in_file_dir || p.file_name().is_some_and(|n| n == "arrow-ipc-file");
            ipc_files(&p, file_dir, out);
        } else if in_file_dir
            || p.extension().is_some_and(|x| {
                ["arrow", "feather", "ipc", "arrow_file"].contains(&&*x.to_string_lossy())
            })
        {
            out.push(p);
        }
    }
    out.sort();
}

#[test]
fn conformance_files_index_as_the_local_index() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance");
    if !root.is_dir() {
        eprintln!("skipped: no conformance corpus at {}", root.display());
        return;
    }
    let mut files = Vec::new();
    ipc_files(&root, false, &mut files);
    assert!(!files.is_empty(), "no IPC file under {}", root.display());
    let options = [
        IndexOptions::default(),
        IndexOptions {
            stats: StatsColumns::None,
            ..IndexOptions::default()
        },
    ];
    let (mut indexed, mut refused) = (0, 0);
    for path in &files {
        for o in &options {
            let (ok, requests, bytes) = compare(path, o);
            if ok {
                indexed += 1;
            } else {
                refused += 1;
            }
            eprintln!(
                "{:>8} bytes, {requests:>3} requests, {bytes:>8} read, stats {:<5} ok {ok:<5}: {}",
                std::fs::metadata(path).map_or(0, |m| m.len()),
                !o.stats.is_none(),
                path.strip_prefix(&root).unwrap_or(path).display()
            );
        }
    }
    eprintln!("{indexed} indexes equal, {refused} refused both ways");
    assert!(indexed > 0 && refused > 0);
}

/// A file of `batches` batches of 1,000 rows: an Int64, a Utf8, a Boolean, a list, a Float64
/// and a binary payload of 200 bytes a row.
fn many_batches(dir: &Path, batches: usize, options: IpcWriteOptions) -> PathBuf {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("name", DataType::Utf8, true),
        Field::new("flag", DataType::Boolean, true),
        Field::new(
            "tags",
            DataType::List(Arc::new(Field::new("item", DataType::Int32, true))),
            true,
        ),
        Field::new("price", DataType::Float64, true),
        Field::new("payload", DataType::Binary, false),
    ]));
    let path = dir.join("many.arrow");
    let file = std::fs::File::create(&path).unwrap();
    let mut w = FileWriter::try_new_with_options(file, &schema, options).unwrap();
    for b in 0..batches {
        let ids: Vec<i64> = (0..1000).map(|i| (b * 1000 + i) as i64).collect();
        let names: Vec<Option<String>> = ids
            .iter()
            .map(|i| (i % 7 != 0).then(|| format!("name {}", i * 7919 % 100_003)))
            .collect();
        let flags: Vec<Option<bool>> = ids.iter().map(|i| Some(i % 3 == 0)).collect();
        let tags = ListArray::from_iter_primitive::<arrow_array::types::Int32Type, _, _>(
            ids.iter().map(|i| Some(vec![Some(*i as i32), None])),
        );
        let prices: Vec<Option<f64>> = ids
            .iter()
            .map(|i| (i % 5 != 0).then_some(*i as f64 * 0.25 - 1000.0))
            .collect();
        // Bytes that do not compress.
        let payload: Vec<Vec<u8>> = ids
            .iter()
            .map(|i| {
                let mut x = (*i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
                (0..200)
                    .map(|_| {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        x as u8
                    })
                    .collect()
            })
            .collect();
        let columns: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from(ids)),
            Arc::new(StringArray::from(names)),
            Arc::new(BooleanArray::from(flags)),
            Arc::new(tags),
            Arc::new(Float64Array::from(prices)),
            Arc::new(BinaryArray::from_iter_values(payload.iter())),
        ];
        w.write(&RecordBatch::try_new(schema.clone(), columns).unwrap())
            .unwrap();
    }
    w.finish().unwrap();
    path
}

#[test]
fn many_batches_read_headers_and_the_stats_columns_only() {
    let dir = tempfile::tempdir().unwrap();
    let plain = IpcWriteOptions::default();
    let lz4 = IpcWriteOptions::default()
        .try_with_compression(Some(arrow_ipc::CompressionType::LZ4_FRAME))
        .unwrap();
    for (what, write) in [("plain", plain), ("lz4", lz4)] {
        let path = many_batches(dir.path(), 300, write);
        let size = std::fs::metadata(&path).unwrap().len();
        // No statistics: the footer and the headers, under 1% of the file.
        let none = IndexOptions {
            stats: StatsColumns::None,
            ..IndexOptions::default()
        };
        let (ok, requests, bytes) = compare(&path, &none);
        assert!(ok, "{what}");
        assert!(bytes * 100 <= size, "{what}: {bytes} of {size} bytes");
        assert!(requests <= 302, "{what}: {requests} requests");
        // Statistics of every column that has them: their buffers, not the payload's.
        let (ok, _, bytes) = compare(&path, &IndexOptions::default());
        assert!(ok, "{what}");
        assert!(bytes * 2 <= size, "{what}: {bytes} of {size} bytes");
        let local = ArrowFileLocator
            .index(&path, &IndexOptions::default())
            .unwrap();
        let stats = local.stats.unwrap();
        assert_eq!(stats.len(), 3, "{what}: {stats:?}");
        // Statistics of one column.
        let one = IndexOptions {
            stats: StatsColumns::Only(vec!["price".into()]),
            ..IndexOptions::default()
        };
        let (ok, _, one_bytes) = compare(&path, &one);
        assert!(ok && one_bytes < bytes, "{what}: {one_bytes} vs {bytes}");
        eprintln!("{what}: {size} bytes; with statistics {bytes} read");
    }
}

#[test]
fn every_column_wanted_fetches_whole_batches_once() {
    let dir = tempfile::tempdir().unwrap();
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("s", DataType::Utf8, true),
        Field::new("x", DataType::Float64, true),
    ]));
    let path = dir.path().join("all.arrow");
    let mut w = FileWriter::try_new(std::fs::File::create(&path).unwrap(), &schema).unwrap();
    for b in 0..50i64 {
        let columns: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from_iter_values(b * 100..b * 100 + 100)),
            Arc::new(StringArray::from_iter_values(
                (0..100).map(|i| format!("s{}", (b * 37 + i) % 1000)),
            )),
            Arc::new(Float64Array::from_iter((0..100).map(|i| {
                if i == 3 {
                    Some(f64::NAN)
                } else {
                    Some((b - 25) as f64 * 0.5)
                }
            }))),
        ];
        w.write(&RecordBatch::try_new(schema.clone(), columns).unwrap())
            .unwrap();
    }
    w.finish().unwrap();
    let size = std::fs::metadata(&path).unwrap().len();
    let (ok, requests, bytes) = compare(&path, &IndexOptions::default());
    assert!(ok);
    // The tail, the magic, then the batches in one request.
    assert!(requests <= 4, "{requests} requests");
    assert!(bytes <= size + TAIL, "{bytes} of {size}");
    let _ = Int32Array::from(vec![1]);
}

#[test]
fn damaged_files_are_typed_errors() {
    let dir = tempfile::tempdir().unwrap();
    let good = many_batches(dir.path(), 20, IpcWriteOptions::default());
    let data = std::fs::read(&good).unwrap();
    let n = data.len();
    let mut cases: Vec<(&str, Vec<u8>)> = vec![
        ("empty", Vec::new()),
        ("short", b"ARROW1\0\0ARROW1".to_vec()),
        ("truncated", data[..n - 100].to_vec()),
        ("no end magic", data[..n - 1].to_vec()),
        ("garbage", (0..20_000u32).map(|i| (i * 13) as u8).collect()),
    ];
    let mut huge_footer = data.clone();
    huge_footer[n - 10..n - 6].copy_from_slice(&i32::MAX.to_le_bytes());
    cases.push(("footer length past the file", huge_footer));
    let mut zeroed = data.clone();
    // The first batch's header (after the schema message) zeroed.
    for b in &mut zeroed[400..1400] {
        *b = 0xff;
    }
    cases.push(("headers overwritten", zeroed));
    for (what, bytes) in cases {
        let path = dir.path().join("bad.arrow");
        std::fs::write(&path, &bytes).unwrap();
        for options in [
            IndexOptions::default(),
            IndexOptions {
                stats: StatsColumns::None,
                ..IndexOptions::default()
            },
        ] {
            for tail in [TAIL, 64] {
                let (got, _, _) = ranged(&path, &options, tail);
                assert!(got.is_err(), "{what}: {:?}", got.map(|i| i.row_count));
            }
            // Through the trait, as the facade calls it.
            let (read, _) = counting(Bytes::from(bytes.clone()));
            let got = ArrowFileLocator
                .index_ranged(&path, bytes.len() as u64, &read, &options)
                .unwrap();
            assert!(got.is_err(), "{what}");
        }
    }
}
