//! A large MessagePack file indexed on every thread. MessagePack has no record separator to
//! search for, so one pass first walks the value headers alone (lengths, no UTF-8 check, no
//! types: [`Cursor::skip_value`]) to find the row starts: a checkpoint every `stride` rows,
//! as the sequential scan places them, and one range start at the first row past each
//! nominal boundary. The ranges are then read on every thread as a whole file is
//! ([`observe_row`]) and their columns joined in file order (unions, as the delimited and
//! JSON splits join theirs). A file with nested values joins each range's byte walk as a
//! split JSON-lines file does (sample rows of each range's schema inferred together, and the
//! walks' statistics); a walk that leaves a range, widens a member or holds an array of nulls
//! alone sends the schema to the sequential path. Any error sends the whole file to the
//! sequential scan, which reports it.

use std::ops::Range;
use std::path::Path;

use rayon::prelude::*;

use super::{Cursor, FORMAT, body, decoded_stats, nested_schema_and_stats, observe_row, walk_row};
use crate::error::Result;
use crate::formats::json::fast::Inferrer;
use crate::formats::json::split::{samples, walked_stats};
use crate::locator::{Block, FileIndex, IndexOptions, Stats, StatsColumns};
use crate::text::infer::{Columns, null_to_utf8};
use crate::text::rowread::finish_blocks;
use crate::text::scan::FileBytes;
use crate::text::split::{self, RangeScanner, Samples, Scanned, ranges};

/// The pages behind the header walk are dropped from the mapping every this many bytes.
const RELEASE: usize = 8 << 20;

/// The index of the MessagePack file `path` built on every thread, or `None` when it is read
/// whole by one thread (the delimited split's rules) or when the split fails.
pub(super) fn index_split(path: &Path, options: &IndexOptions) -> Result<Option<FileIndex>> {
    split::index_split(path, options, |file, chunk, threads| {
        Ok(run_split(path, file, options, chunk, threads))
    })
}

/// Where the header walk found the rows.
struct Heads {
    /// The first byte of every `stride`-th row.
    checkpoints: Vec<usize>,
    rows: u64,
    /// The ranges, each starting at a row.
    plan: Vec<Range<usize>>,
    /// The first byte of the first row.
    start: usize,
}

/// Walks the headers of every row; `None` when the file is not well formed (the sequential
/// scan then reports where).
fn walk_heads(file: &FileBytes, stride: u64, chunk: usize) -> Option<Heads> {
    let data: &[u8] = file;
    let (start, outer) = body(data).ok()?;
    let mut c = Cursor { data, pos: start };
    let (mut rows, mut next_checkpoint) = (0u64, 0u64);
    let mut checkpoints = Vec::new();
    let mut starts = vec![0];
    let mut next_range = start + chunk.max(1);
    let mut released = 0;
    while c.pos < data.len() && outer.is_none_or(|n| rows < n) {
        if rows == next_checkpoint {
            next_checkpoint += stride;
            checkpoints.push(c.pos);
        }
        if c.pos >= next_range {
            starts.push(c.pos);
            next_range = c.pos + chunk.max(1);
        }
        if c.pos - released >= RELEASE {
            file.release(released..c.pos);
            released = c.pos;
        }
        c.skip_value().ok()?;
        rows += 1;
    }
    file.release(released..c.pos);
    if outer.is_some_and(|n| rows < n) || c.pos < data.len() {
        return None;
    }
    Some(Heads {
        checkpoints,
        rows,
        plan: ranges(starts, data.len()),
        start,
    })
}

/// The ranges of a MessagePack file for [`split::scan_join`]: each read row by row as a
/// whole file is ([`observe_row`]); the checkpoints come from the header walk
/// ([`walk_heads`]), so the ranges note no record starts.
struct Ranges<'a> {
    data: &'a [u8],
    /// The first byte of the first row.
    start: usize,
    wanted: &'a StatsColumns,
}

impl RangeScanner for Ranges<'_> {
    /// True when the range holds nested values.
    type Extra = bool;

    const PLACES: bool = false;

    fn scan(&self, r: Range<usize>, _lazy: bool) -> Option<Scanned<bool>> {
        // The first range holds the outer array's header, if any.
        let from = if r.start == 0 { self.start } else { r.start };
        let mut c = Cursor {
            data: self.data,
            pos: from,
        };
        let (mut cols, mut nested, mut rows) = (Columns::default(), false, 0);
        let mut text = Vec::new();
        while c.pos < r.end {
            observe_row(&mut c, &mut cols, self.wanted, &mut text, &mut nested).ok()?;
            rows += 1;
        }
        (c.pos == r.end).then_some(Scanned {
            cols,
            rows,
            range: r,
            samples: Samples::default(),
            extra: nested,
        })
    }
}

/// The split index of `file` with ranges of about `chunk` bytes on `threads` threads;
/// `None` when the sequential scan must run.
pub(super) fn run_split(
    path: &Path,
    file: &FileBytes,
    options: &IndexOptions,
    chunk: usize,
    threads: usize,
) -> Option<FileIndex> {
    let data: &[u8] = file;
    let wanted = &options.stats;
    let heads = walk_heads(file, options.stride, chunk)?;
    let scanner = Ranges {
        data,
        start: heads.start,
        wanted,
    };
    let mut nested = false;
    let joined = split::scan_join(&scanner, file, &heads.plan, threads, options, |part, _| {
        nested |= part.extra;
    })?;
    let mut blocks: Vec<Block> = heads
        .checkpoints
        .iter()
        .enumerate()
        .map(|(k, &at)| Block::checkpoint(k as u64, k as u64 * options.stride, at as u64))
        .collect();
    finish_blocks(&mut blocks, heads.rows, data.len() as u64);
    let (schema, stats) = if nested {
        match nested_split(path, file, &heads, wanted) {
            Some(found) => found,
            None => nested_schema_and_stats(path, data, heads.start, heads.rows, wanted).ok()?,
        }
    } else {
        let cols = joined.cols.unwrap_or_default();
        let stats = (!wanted.is_none()).then(|| cols.stats());
        (cols.schema(), stats)
    };
    Some(FileIndex {
        format: FORMAT.to_string(),
        row_count: heads.rows,
        blocks,
        schema,
        stats,
    })
}

/// The schema and statistics of a nested file from the byte walk of each range (run on
/// every thread); `None` when a range's walk cannot stand for it (see the module's notes).
fn nested_split(
    path: &Path,
    file: &FileBytes,
    heads: &Heads,
    wanted: &StatsColumns,
) -> Option<(arrow_schema::SchemaRef, Option<Stats>)> {
    let data: &[u8] = file;
    let walk = |r: &Range<usize>| -> Option<Inferrer> {
        file.populate(r.clone());
        let from = if r.start == 0 { heads.start } else { r.start };
        let mut c = Cursor { data, pos: from };
        let mut inf = Inferrer::new(wanted);
        let mut line = Vec::new();
        let mut ok = true;
        while ok && c.pos < r.end {
            ok = walk_row(&mut c, &mut line, &mut inf).unwrap_or(false);
        }
        file.release(r.clone());
        ok.then_some(inf)
    };
    let states: Vec<Inferrer> = heads.plan.par_iter().map(walk).collect::<Option<_>>()?;
    let mut rows = Vec::new();
    for st in &states {
        let inferred = st.finish();
        if inferred.widened || inferred.null_array {
            return None;
        }
        samples(inferred.schema.fields(), &mut rows);
    }
    let joined = arrow_json::reader::infer_json_schema_from_iterator(rows.into_iter().map(Ok));
    let schema = null_to_utf8(&joined.ok()?);
    if wanted.is_none() {
        return Some((schema, None));
    }
    let stats = match walked_stats(&states, &schema, wanted) {
        Some(stats) => stats,
        None => decoded_stats(path, data, heads.start, heads.rows, &schema, wanted).ok()?,
    };
    Some((schema, Some(stats)))
}

#[cfg(test)]
mod tests {

    use super::*;
    use crate::formats::msgpack::index_bytes;
    use crate::formats::msgpack::tests::random_rows;
    use crate::testutil::{XorShift, stress_cases};

    fn mapped(data: &[u8]) -> (tempfile::NamedTempFile, FileBytes) {
        crate::text::scan::mapped_file(data, ".msgpack")
    }

    /// Random files, flat and nested, as concatenated maps or an outer array, split at random
    /// range lengths on one or two threads: the index equals the sequential scan's for every
    /// stride and statistics setting; a nested split may only fall back.
    #[test]
    fn split_scans_equal_the_sequential_scan() {
        let path = Path::new("t.msgpack");
        let mut rng = XorShift(0x5eed_3a9c_0000_0001);
        let (mut held, mut nested_held) = (0, 0);
        for case in 0..stress_cases(80) {
            let nested = case % 3 == 2;
            // Fewer nested rows: more of them join (kinds that do not fail both scans).
            let rows = 1 + rng.below(if nested { 60 } else { 400 });
            let body = random_rows(&mut rng, rows, case % 5, nested);
            let data = if case % 4 == 1 {
                let mut out = Vec::new();
                if let Err(e) = rmp::encode::write_array_len(&mut out, rows as u32) {
                    panic!("writing the outer array: {e}");
                }
                out.extend_from_slice(&body);
                out
            } else {
                body
            };
            let (_f, file) = mapped(&data);
            for stride in [1, 3, 64, 1000] {
                for stats in [StatsColumns::None, StatsColumns::All] {
                    let options = IndexOptions { stride, stats };
                    // Nested values of kinds arrow-json cannot join fail the sequential scan:
                    // the split must then fall back.
                    let want = index_bytes(path, &data, &options).map(|i| format!("{i:?}"));
                    let chunk = 1 + rng.below(data.len());
                    match (run_split(path, &file, &options, chunk, 1 + chunk % 2), want) {
                        (Some(got), Ok(want)) => {
                            assert_eq!(format!("{got:?}"), want, "case {case} stride {stride}");
                            held += 1;
                            nested_held += usize::from(nested);
                        }
                        (Some(got), Err(e)) => {
                            panic!("case {case}: split gave {got:?}, sequential {e}")
                        }
                        (None, Ok(_)) => assert!(nested, "case {case}: a flat file fell back"),
                        (None, Err(_)) => {}
                    }
                }
            }
        }
        eprintln!("{held} splits held, {nested_held} of nested files");
        assert!(
            held > 400 && nested_held > 50,
            "{held} splits held, {nested_held} nested"
        );
    }

    /// Broken files (truncated, bytes changed): the split falls back or gives the sequential
    /// scan's index; never an index where the sequential scan fails.
    #[test]
    fn split_scans_of_broken_files_fall_back_or_agree() {
        let path = Path::new("t.msgpack");
        let mut rng = XorShift(0x5eed_3a9c_0000_0002);
        for case in 0..stress_cases(200) {
            let rows = 1 + rng.below(100);
            let mut data = random_rows(&mut rng, rows, case % 5, case % 2 == 0);
            if case % 3 == 0 {
                data.truncate(rng.below(data.len() + 1));
            } else {
                let at = rng.below(data.len());
                data[at] = rng.next() as u8;
            }
            let (_f, file) = mapped(&data);
            let options = IndexOptions {
                stride: 2,
                stats: StatsColumns::All,
            };
            let want = index_bytes(path, &data, &options);
            for chunk in [1, 7, 60] {
                match (&want, run_split(path, &file, &options, chunk, 2)) {
                    (Ok(w), Some(g)) => {
                        assert_eq!(format!("{g:?}"), format!("{w:?}"), "case {case}")
                    }
                    (Err(e), Some(g)) => panic!("case {case}: split gave {g:?}, sequential {e}"),
                    (_, None) => {}
                }
            }
        }
    }
}
