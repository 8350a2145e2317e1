//! Bad input: every corpus file truncated at 50 positions and overwritten at 200 random
//! places of its index area (separator to end of file). Opening, walking, reading every row
//! and checking must return (never panic, never hang), every error must name where it
//! happened, and no single allocation may exceed a bound tied to the file size.

use std::sync::Arc;

use bytes::Bytes;
use tsfile_index::check::{check, error_offset};
use tsfile_index::query::{TableQuery, TreeQuery};
use tsfile_index::{Error, TimeRange, TsFileReader};

use crate::alloc_peak;
use crate::common::corpus_files;

/// A deterministic xorshift generator, so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// What one mutated file did.
#[derive(Debug, Default)]
struct Tally {
    rejected_at_open: usize,
    failed_later: usize,
    read_fine: usize,
    check_problems: usize,
}

/// The error must say where: an offset, or (for a file too short to hold a TsFile) its size.
fn assert_locates(e: &Error, what: &str) {
    let msg = e.to_string();
    assert!(!msg.is_empty(), "{what}: empty error message");
    let located =
        error_offset(e).is_some() || matches!(e, Error::NotTsFile { .. }) || msg.contains("byte");
    assert!(located, "{what}: error does not say where: {msg}");
}

/// Runs what the commands run: open (`info`), the device and series walk with every chunk
/// header, the first batch of each table (`query`), and, when `full`, `check` (which decodes
/// every page, as `dump` does). Large files decode fully for a sample of the mutations only,
/// so that the test stays quick in debug builds; every mutation still goes through the walk.
fn exercise(bytes: Bytes, what: &str, full: bool, tally: &mut Tally) {
    let reader = match TsFileReader::from_reader(Arc::new(bytes)) {
        Ok(r) => r,
        Err(e) => {
            assert_locates(&e, what);
            tally.rejected_at_open += 1;
            return;
        }
    };
    let read = || -> tsfile_index::Result<()> {
        // The earliest time of the file: a query of just that instant decodes the first page
        // of every column without reading whole files again and again.
        let mut first: Option<i64> = None;
        for device in reader.devices()? {
            let device = device?;
            for s in reader.timeseries(&device)? {
                if s.meta.statistics.count > 0 {
                    first = Some(first.map_or(s.meta.statistics.start_time, |f: i64| {
                        f.min(s.meta.statistics.start_time)
                    }));
                }
                for cm in &s.meta.chunk_metadata {
                    reader.read_chunk_header(cm.offset_of_chunk_header)?;
                }
            }
        }
        let range = TimeRange::new(first, first);
        for t in reader.table_schemas() {
            let query = TableQuery {
                time_range: range,
                ..TableQuery::default()
            };
            for batch in reader.query_table(&t.table_name, &query)? {
                batch?;
            }
        }
        if !reader.is_table_model() {
            for device in reader.devices()? {
                let query = TreeQuery {
                    time_range: range,
                    ..TreeQuery::default()
                };
                reader.read_device(&device?, &query)?;
            }
        }
        Ok(())
    };
    match read() {
        Ok(()) => tally.read_fine += 1,
        Err(e) => {
            assert_locates(&e, what);
            tally.failed_later += 1;
        }
    }
    if !full {
        return;
    }
    let problems = check(&reader);
    if !problems.is_empty() {
        tally.check_problems += 1;
    }
    for p in &problems {
        assert!(!p.message.is_empty(), "{what}: empty problem");
        assert!(
            p.offset.is_some() || p.message.contains("byte"),
            "{what}: problem without a place: {p}"
        );
    }
}

#[test]
fn truncations_and_index_overwrites_never_panic() {
    let files = corpus_files();
    if files.is_empty() {
        return;
    }
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut total = Tally::default();
    for path in &files {
        let original = std::fs::read(path).unwrap();
        let len = original.len() as u64;
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let reader = TsFileReader::from_reader(Arc::new(Bytes::from(original.clone()))).unwrap();
        let index_from = reader.meta_offset();
        // Allocations may reach a few times the file (decompressed pages, Arrow arrays of
        // the largest file); anything far beyond that came from a lying length.
        let bound = (64 << 20).max(len as usize * 16);
        alloc_peak::reset();
        for i in 0..50u64 {
            // Spread over the file, denser near the tail where the footer lives.
            let cut = if i < 25 {
                len * i / 25
            } else {
                len - 1 - rng.below(len.min(4096))
            };
            let what = format!("{name} truncated to {cut} bytes");
            exercise(
                Bytes::copy_from_slice(&original[..cut as usize]),
                &what,
                true,
                &mut total,
            );
        }
        for m in 0..200 {
            let mut bytes = original.clone();
            let at = index_from + rng.below(len - index_from);
            let n = 1 + rng.below(4);
            for k in 0..n {
                if let Some(b) = bytes.get_mut((at + k) as usize) {
                    *b = rng.next() as u8;
                }
            }
            let what = format!("{name} with {n} bytes overwritten at {at}");
            let full = if len <= 100_000 {
                m % 4 == 0
            } else {
                m % 20 == 0
            };
            exercise(Bytes::from(bytes), &what, full, &mut total);
        }
        let peak = alloc_peak::peak();
        assert!(
            peak <= bound,
            "{name}: a single allocation of {peak} bytes (bound {bound})"
        );
    }
    println!("{total:?}");
    // Overwrites that only change statistics values or names can leave a valid file, but most
    // mutations must be caught somewhere.
    assert!(
        total.rejected_at_open + total.failed_later + total.check_problems > total.read_fine / 2
    );
}
