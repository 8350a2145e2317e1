//! A large JSON-lines file indexed on every thread of the caller's pool (see
//! [`crate::text::split`] for the plan). A line feed is never inside a valid JSON string, so
//! each range starts just past the first line feed after its nominal boundary and no guess
//! can be wrong; a range must still be read without an error, or the sequential scan runs
//! and reports the error.
//!
//! Files with nested values take arrow-json's inference ([`super::slow_schema_and_stats`]),
//! here per range: each range's inferred schema is turned back into sample rows whose
//! inference gives that schema ([`sample`]; a JSON text column's samples are a string and an
//! object, which conflict), and the samples of all ranges, in file order, are inferred
//! together by the byte walk ([`Inferrer`]). Its type coercion is a join (Null below
//! everything, Int64 below Float64, other scalars to Utf8, objects field by field in order of
//! first appearance, and a member whose values conflict anywhere in a range or between
//! ranges to JSON text, [`super::widen`]), so this is the schema of the whole file read at
//! once. Statistics are then decoded per range under that schema and their bounds joined.

use std::ops::Range;
use std::path::Path;

use arrow_schema::{DataType, Schema, SchemaRef};
use rayon::prelude::*;

use super::fast::Inferrer;
use super::walk::{ValueScan, scan_values_walk};
use super::{ArrayPart, Layout, layout, next_line, skip_lines};
use crate::error::Result;
use crate::locator::{FileIndex, IndexOptions, Stats, StatsColumns};
use crate::simd::{JSON, Kernel, Window};
use crate::stats::StatsBuilder;
use crate::text::blocks::{map_fine, regroup};
use crate::text::infer::null_to_utf8;
use crate::text::rowread::finish_blocks;
use crate::text::scan::{FileBytes, array_next, bom_len, json_value_end, skip_ws};
use crate::text::split::{
    self, RangeScanner, SAMPLE, Samples, Scanned, fine_stride, line_start, nominal_bounds,
    prefetch_bounds, ranges, release_around,
};

/// The index of the JSON file `path` built on every thread, or `None` when it is read whole
/// by one thread (see [`crate::formats::csv`]'s split for the same rules; an array whose
/// elements are not objects, or that has fewer than two, is read whole too).
pub(super) fn index_split(path: &Path, options: &IndexOptions) -> Result<Option<FileIndex>> {
    split::index_split(path, options, |file, chunk, threads| {
        let lay = layout(path, file);
        prefetch_bounds(file, &nominal_bounds(file.len(), 0, chunk));
        let plan = match lay {
            Layout::Lines => plan(file, chunk),
            Layout::Array(open) => match array_plan(file, open, chunk) {
                Some(plan) => plan,
                None => return Ok(None),
            },
        };
        Ok(run_plan(path, file, lay, options, &plan, threads))
    })
}

/// The ranges of an array file for nominal ranges of `chunk` bytes; `None` when its first
/// element is not an object or it has only one. Each later range starts at a guessed element:
/// the first place past its nominal boundary where the bytes between the first two elements
/// occur, from the first one's `}` to the second one's `{` (`},{`, or `},` and a line feed and
/// the indentation of a printed array). A guess may fall inside an element (an array of
/// objects inside one, printed alike, or a string holding those bytes): the range before it
/// then does not end exactly at it, the split fails and the file is read sequentially. A
/// wrong guess costs time, never a different index.
pub(super) fn array_plan(file: &FileBytes, open: usize, chunk: usize) -> Option<Vec<Range<usize>>> {
    let data: &[u8] = file;
    let first = skip_ws(data, open + 1);
    if data.get(first) != Some(&b'{') {
        return None;
    }
    let end = json_value_end(data, first)?;
    let second = array_next(data, end).ok()??;
    if data.get(second) != Some(&b'{') {
        return None;
    }
    let separator = &data[end - 1..=second];
    let finder = memchr::memmem::Finder::new(separator);
    let starts = nominal_bounds(data.len(), second, chunk)
        .into_iter()
        .map(|b| {
            if b == 0 {
                return 0;
            }
            let start = finder
                .find(&data[b..])
                .map_or(data.len(), |i| b + i + separator.len() - 1);
            release_around(file, b..start.max(b + 1));
            start
        })
        .collect();
    Some(ranges(starts, data.len()))
}

/// The start of the element `n` elements after the one at `at` (a range's checkpoint is the
/// first byte of its element); `None` when the array ends before.
fn skip_elements(data: &[u8], mut at: usize, n: u64) -> Option<usize> {
    for _ in 0..n {
        let end = json_value_end(data, at)?;
        at = array_next(data, end).ok()??;
    }
    Some(at)
}

/// The ranges of a line file for nominal ranges of `chunk` bytes.
pub(super) fn plan(file: &FileBytes, chunk: usize) -> Vec<Range<usize>> {
    let data: &[u8] = file;
    let starts = nominal_bounds(data.len(), 0, chunk)
        .into_iter()
        .map(|b| {
            if b == 0 {
                return 0;
            }
            let start = line_start(data, b - 1);
            release_around(file, b - 1..start.max(b));
            start
        })
        .collect();
    ranges(starts, data.len())
}

/// What the scan of a range of a JSON file finds besides its columns, rows and record starts.
struct Walked {
    nested: bool,
    /// The byte walk of the range's nested lines, when it took every row of the range.
    walked: Option<Inferrer>,
}

/// The ranges of a JSON file for [`split::scan_join`]: each scanned as a whole file is
/// ([`scan_values_walk`]), elements or lines skipped for the checkpoints.
struct Ranges<'a> {
    path: &'a Path,
    data: &'a [u8],
    lay: Layout,
    options: &'a IndexOptions,
}

impl RangeScanner for Ranges<'_> {
    type Extra = Walked;

    fn scan(&self, range: Range<usize>, lazy: bool) -> Option<Scanned<Walked>> {
        crate::simd::dispatch(RangeScan {
            path: self.path,
            data: self.data,
            lay: self.lay,
            range,
            options: self.options,
            lazy,
        })
    }

    fn skip(&self, at: usize, n: u64) -> Option<usize> {
        if let Layout::Array(_) = self.lay {
            return skip_elements(self.data, at, n);
        }
        let (pos, got) = skip_lines(self.data, at, n);
        if got != n {
            return None;
        }
        // A checkpoint is the first byte of its line's value.
        Some(next_line(self.data, pos).map_or(pos, |(s, _)| s))
    }
}

/// The scan of one range, run by [`crate::simd::dispatch`].
struct RangeScan<'a> {
    path: &'a Path,
    data: &'a [u8],
    lay: Layout,
    range: Range<usize>,
    options: &'a IndexOptions,
    lazy: bool,
}

impl Kernel<JSON> for RangeScan<'_> {
    type Output = Option<Scanned<Walked>>;

    #[inline(always)]
    fn run<W: Window<JSON>>(self) -> Option<Scanned<Walked>> {
        let Range { start, end } = self.range;
        let part = ArrayPart {
            first: start == 0,
            last: end == self.data.len(),
        };
        // A later range of an array starts at an element (read as from an array's `[` at
        // 0); a range of lines ends with a line feed.
        let lay = match self.lay {
            Layout::Array(_) if start > 0 => Layout::Array(0),
            Layout::Array(open) => Layout::Array(open),
            Layout::Lines => {
                if !part.last && self.data.get(end.wrapping_sub(1)) != Some(&b'\n') {
                    return None;
                }
                Layout::Lines
            }
        };
        // The first range is read as the file's start (its byte-order mark skipped); a
        // later range starting with those bytes is no valid line, which the sequential
        // scan reports.
        let (slice, base) = if start == 0 {
            (&self.data[..end], 0)
        } else {
            let slice = &self.data[start..end];
            if bom_len(slice) > 0 {
                return None;
            }
            (slice, start)
        };
        // Nested lines are walked here, while the range is hot in the cache, instead of
        // being delimited now and read again for the schema.
        let found = scan_values_walk::<W>(&ValueScan {
            path: self.path,
            data: slice,
            lay,
            part,
            options: self.options,
            lazy: self.lazy,
            walk: true,
            sample: SAMPLE,
        })
        .ok()?;
        Some(Scanned {
            cols: found.cols,
            rows: found.rows,
            range: start..end,
            samples: Samples::new(found.samples, base),
            extra: Walked {
                nested: found.nested,
                walked: found.walked,
            },
        })
    }
}

/// Scans the ranges of `plan` and joins them; `None` when any range fails.
pub(super) fn run_plan(
    path: &Path,
    file: &FileBytes,
    lay: Layout,
    options: &IndexOptions,
    plan: &[Range<usize>],
    threads: usize,
) -> Option<FileIndex> {
    let data: &[u8] = file;
    let fine = IndexOptions {
        stride: fine_stride(options.stride),
        stats: options.stats.clone(),
    };
    let scanner = Ranges {
        path,
        data,
        lay,
        options: &fine,
    };
    let mut nested = false;
    // Each range's walk, in plan order (the rescan below keeps no walks).
    let mut walks: Vec<Option<Inferrer>> = Vec::with_capacity(plan.len());
    let joined = split::scan_join(&scanner, file, plan, threads, options, |part, _| {
        nested |= part.extra.nested;
        walks.push(part.extra.walked.take());
    })?;
    let mut cols = joined.cols.unwrap_or_default();
    let rows = joined.checkpoints.rows;
    let map_fine = map_fine(options.stride);
    let (mut blocks, _) = regroup(
        joined.checkpoints.blocks,
        Vec::new(),
        options.stride,
        map_fine,
    );
    finish_blocks(&mut blocks, rows, data.len() as u64);
    let wanted = &options.stats;
    let (schema, stats) = if nested {
        nested_schema_and_stats(path, file, lay, plan, walks, wanted, threads)?
    } else {
        split::rescan_pending(&scanner, file, &mut cols, &joined.deferred, threads, wanted)?;
        let stats = (!wanted.is_none()).then(|| cols.stats());
        (cols.schema(), stats)
    };
    Some(FileIndex {
        format: lay.format().to_string(),
        row_count: rows,
        blocks,
        schema,
        stats,
    })
}

/// The value spans `(start, end)` of the rows of `data[range]`, a range of a file laid out
/// as `lay` that its scan read without an error.
fn rows_of(data: &[u8], lay: Layout, range: &Range<usize>) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    if let Layout::Array(open) = lay {
        let data = &data[..range.end];
        let mut p = if range.start == 0 {
            skip_ws(data, open + 1)
        } else {
            range.start
        };
        while data.get(p).is_some_and(|&b| b != b']') {
            let Some(end) = json_value_end(data, p) else {
                break;
            };
            out.push((p, end));
            match array_next(data, end) {
                Ok(Some(n)) => p = n,
                _ => break,
            }
        }
        return out;
    }
    let mut pos = range.start.max(bom_len(data));
    while pos < range.end {
        match next_line(&data[..range.end], pos) {
            Some((s, e)) => {
                out.push((s, e));
                pos = e + 1;
            }
            None => break,
        }
    }
    out
}

/// [`super::slow_schema_and_stats`] over the ranges of `plan`, on every thread; `None` when
/// a range fails (the sequential scan then runs and reports the error). `walks` holds, in
/// plan order, the walk each range's scan already made of it, if any; a range without one
/// is read again here.
fn nested_schema_and_stats(
    path: &Path,
    file: &FileBytes,
    lay: Layout,
    plan: &[Range<usize>],
    walks: Vec<Option<Inferrer>>,
    wanted: &StatsColumns,
    threads: usize,
) -> Option<(SchemaRef, Option<Stats>)> {
    let data: &[u8] = file;
    let format = lay.format();
    // A range's schema, and the byte walk's state when it took the range (for statistics).
    let infer =
        |(r, pre): &mut (Range<usize>, Option<Inferrer>)| -> Option<(Schema, Option<Inferrer>)> {
            // An array of nulls alone infers to a list of an empty set of types, which comes
            // out as List(Utf8) but joins as nothing: no sample row can stand for it.
            if let Some(state) = pre.take() {
                let inferred = state.finish();
                if !inferred.null_array {
                    return Some((inferred.schema, Some(state)));
                }
            }
            file.populate(r.clone());
            let spans = rows_of(data, lay, r);
            // The byte walk when it covers the range (it tells the same as below).
            if let Some(state) = super::fast::infer_state(data, &spans, wanted) {
                file.release(r.clone());
                let inferred = state.finish();
                return (!inferred.null_array).then_some((inferred.schema, Some(state)));
            }
            let null_array = spans.iter().any(|&(s, e)| {
                serde_json::from_slice::<serde_json::Value>(&data[s..e])
                    .is_ok_and(|v| has_null_array(&v))
            });
            // The reference (with the widening, fields in order of first appearance).
            let out = super::slow_schema(path, format, data, &spans).ok();
            file.release(r.clone());
            out.filter(|_| !null_array).map(|s| (s, None))
        };
    // The ranges' schemas joined by the byte walk over their samples.
    let mut all = Inferrer::new(&StatsColumns::None);
    // Each range's statistics from its walk, while every range has them.
    let mut walked: Option<Vec<Inferrer>> = Some(Vec::new());
    let mut items: Vec<(Range<usize>, Option<Inferrer>)> = plan
        .iter()
        .cloned()
        .zip(walks.into_iter().chain(std::iter::repeat_with(|| None)))
        .collect();
    for group in items.chunks_mut(threads * 4) {
        let schemas: Vec<Option<(Schema, Option<Inferrer>)>> =
            group.par_iter_mut().map(infer).collect();
        for s in schemas {
            let (s, state) = s?;
            match (state, &mut walked) {
                (Some(st), Some(w)) => w.push(st),
                _ => walked = None,
            }
            let mut rows = Vec::new();
            samples(s.fields(), &mut rows);
            for row in rows {
                all.text_row(&serde_json::to_string(&row).ok()?)?;
            }
        }
    }
    let schema = null_to_utf8(&all.finish().schema);
    if wanted.is_none() {
        return Some((schema, None));
    }
    if let Some(stats) = walked.and_then(|w| walked_stats(&w, &schema, wanted)) {
        return Some((schema, Some(stats)));
    }
    let stats_of = |r: &Range<usize>| -> Option<StatsBuilder> {
        file.populate(r.clone());
        let spans = rows_of(data, lay, r);
        let mut builder = StatsBuilder::new(&schema, wanted);
        let mut buf = Vec::new();
        for chunk in spans.chunks(8192) {
            buf.clear();
            for &(s, e) in chunk {
                buf.extend_from_slice(&data[s..e]);
                buf.push(b'\n');
            }
            let batch =
                super::widen::decode(path, format, &schema, &buf, chunk.len(), None).ok()?;
            if let Some(batch) = batch {
                builder.update(&batch);
            }
        }
        file.release(r.clone());
        Some(builder)
    };
    let mut total: Option<StatsBuilder> = None;
    for group in plan.chunks(threads * 4) {
        let builders: Vec<Option<StatsBuilder>> = group.par_iter().map(stats_of).collect();
        for b in builders {
            let b = b?;
            match &mut total {
                Some(t) => t.merge(b),
                None => total = Some(b),
            }
        }
    }
    let stats = total.map_or_else(Stats::new, StatsBuilder::finish);
    Some((schema, Some(stats)))
}

/// The statistics of the ranges walked as `states`, in file order, under the file's
/// `schema`: each range's as [`super::fast::Inferrer::stats`] gives them, joined as
/// [`StatsBuilder::merge`] joins the ranges' decoded bounds; `None` when a range's walk
/// leaves its statistics to the decoder.
pub(crate) fn walked_stats(
    states: &[Inferrer],
    schema: &Schema,
    wanted: &StatsColumns,
) -> Option<Stats> {
    use crate::locator::ColumnStats;
    let mut out = Stats::new();
    for st in states {
        for (name, b) in st.stats(schema, wanted)? {
            let Some(have) = out.get_mut(&name) else {
                out.insert(name, b);
                continue;
            };
            match (have, b) {
                (ColumnStats::Int { min, max }, ColumnStats::Int { min: lo, max: hi }) => {
                    *min = (*min).min(lo);
                    *max = (*max).max(hi);
                }
                (ColumnStats::Float { min, max }, ColumnStats::Float { min: lo, max: hi }) => {
                    // Zeros are unsigned already (`ColumnStats::float`).
                    *min = min.min(lo);
                    *max = max.max(hi);
                }
                (
                    ColumnStats::Str { min_str, max_str },
                    ColumnStats::Str {
                        min_str: lo,
                        max_str: hi,
                    },
                ) => {
                    if lo < *min_str {
                        *min_str = lo;
                    }
                    if hi > *max_str {
                        *max_str = hi;
                    }
                }
                _ => return None,
            }
        }
    }
    Some(out)
}

/// Rows whose arrow-json inference, in order, is a struct of `fields` in this order: one
/// row per leaf, each an object of one member (nested objects likewise), so that the order
/// of first appearance is the fields' order whatever order a JSON object keeps its members
/// in.
pub(crate) fn samples(fields: &arrow_schema::Fields, out: &mut Vec<serde_json::Value>) {
    for f in fields {
        let mut leaves = Vec::new();
        if super::widen::is_json(f) {
            // A string and an object conflict: JSON text again.
            leaves.push(serde_json::Value::from("s"));
            leaves.push(serde_json::Value::Object(serde_json::Map::new()));
        } else {
            sample(f.data_type(), &mut leaves);
        }
        for leaf in leaves {
            let mut map = serde_json::Map::new();
            map.insert(f.name().clone(), leaf);
            out.push(serde_json::Value::Object(map));
        }
    }
}

/// True when `v` holds a non-empty array whose elements are all null.
fn has_null_array(v: &serde_json::Value) -> bool {
    use serde_json::Value;
    match v {
        Value::Array(a) => {
            (!a.is_empty() && a.iter().all(Value::is_null)) || a.iter().any(has_null_array)
        }
        Value::Object(m) => m.values().any(has_null_array),
        _ => false,
    }
}

/// JSON values whose arrow-json inference, together, is `t` (the types inference makes).
fn sample(t: &DataType, out: &mut Vec<serde_json::Value>) {
    use serde_json::Value;
    match t {
        DataType::Null => out.push(Value::Null),
        DataType::Boolean => out.push(Value::Bool(true)),
        DataType::Int64 => out.push(Value::from(1i64)),
        DataType::Float64 => out.push(Value::from(1.5f64)),
        // `[]` infers to a list of any type (List(Null) when nothing else comes).
        DataType::List(f) if f.data_type() == &DataType::Null => out.push(Value::Array(vec![])),
        DataType::List(f) => {
            let mut inner = Vec::new();
            sample(f.data_type(), &mut inner);
            out.extend(inner.into_iter().map(|v| Value::Array(vec![v])));
        }
        DataType::Struct(fields) if fields.is_empty() => {
            out.push(Value::Object(serde_json::Map::new()));
        }
        DataType::Struct(fields) => samples(fields, out),
        _ => out.push(Value::from("s")),
    }
}

/// The fuzz check of the JSON-lines scanners ([`crate::fuzzing::json`]): as the delimited
/// one, for a line file.
pub(crate) fn fuzz_check(path: &Path, chunk: usize, options: &IndexOptions) {
    let Ok(file) = FileBytes::open(path) else {
        return;
    };
    let data: &[u8] = &file;
    let show = |r: &Result<FileIndex>| match r {
        Ok(i) => format!("{i:?}"),
        Err(e) => format!("error: {e}"),
    };
    let portable = super::index_lazy::<crate::simd::NoWindow>(path, data, options, false);
    // Every loop this CPU has: the one it picks, and those it could (the runs with either
    // `pdep`, the lean masks, AVX-512); all equal the portable scan from here on.
    for l in crate::simd::available_loops() {
        let other = crate::simd::with_loop(l, || super::index_bytes(path, data, options));
        assert_eq!(
            show(&other),
            show(&portable),
            "the {l:?} and portable scans differ"
        );
    }
    let lay = layout(path, data);
    let plan = match lay {
        Layout::Lines => plan(&file, chunk.max(1)),
        Layout::Array(open) => match array_plan(&file, open, chunk.max(1)) {
            Some(plan) => plan,
            None => return,
        },
    };
    if let Some(split) = run_plan(path, &file, lay, options, &plan, 2) {
        assert_eq!(
            format!("{split:?}"),
            show(&portable),
            "the split scan differs from the sequential scan"
        );
    }
}

#[cfg(test)]
mod tests;
