//! `check`: validates every structure of a TsFile and decodes every page, collecting
//! problems instead of stopping at the first one where the rest can still be checked.
//!
//! Checked: both magics and the exact metadata length (by opening), the data section's
//! marker sequence up to the separator, every index node (the five node rules, ranges inside
//! the index area, children before parents), devices in strictly ascending order, per series
//! ChunkMetadata offsets ascending and pointing at chunk headers of the right series and type,
//! statistics consistency (a multi-chunk series' count is the sum of its chunks' counts, a
//! multi-page chunk's the sum of its pages', and time bounds cover theirs), every page
//! decoding to as many values as its statistics count, and the statistics recomputed from
//! the decoded values. Series stored with a lossy float encoding (TS_2DIFF/RLE on
//! FLOAT/DOUBLE, CAMEL) have their value statistics compared within the encoding's
//! precision, and [`CheckReport::relaxed`] says which and why; a valid file written by the
//! official writers has no problem.

use std::cmp::Ordering;
use std::collections::HashSet;
use std::path::Path;

use tsfile_format::device_id::DeviceKey;

pub use crate::check_lossy::Relaxed;
use crate::check_lossy::{Precision, series_precision};
use crate::error::{Error, Result};
use crate::index::DeviceEntry;
use crate::query::TreeQuery;
use crate::reader::TsFileReader;
use crate::series_index::SeriesEntry;

/// One problem found by [`check`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The structure concerned (`file`, `data section`, `device root.sg.d1`, …).
    pub structure: String,
    /// Absolute offset, when known.
    pub offset: Option<u64>,
    /// What is wrong (the error's message).
    pub message: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.offset {
            Some(o) => write!(f, "{} (at byte {o}): {}", self.structure, self.message),
            None => write!(f, "{}: {}", self.structure, self.message),
        }
    }
}

/// What [`check_report`] found: the problems, and the comparisons it relaxed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CheckReport {
    /// Problems; empty for a valid file.
    pub problems: Vec<Problem>,
    /// Series whose statistics were compared within the precision of a lossy encoding
    /// rather than exactly (one per series).
    pub relaxed: Vec<Relaxed>,
}

impl CheckReport {
    /// True when no problem was found.
    pub fn is_valid(&self) -> bool {
        self.problems.is_empty()
    }

    /// The `relaxed` list as JSON (an array of [`Relaxed::to_json`] objects).
    pub fn relaxed_json(&self) -> serde_json::Value {
        serde_json::Value::Array(self.relaxed.iter().map(Relaxed::to_json).collect())
    }
}

/// Opens and checks the file at `path`; a file that cannot be opened as a TsFile is one
/// problem (an I/O error opening it is an `Err`).
pub fn check_path(path: &Path) -> Result<Vec<Problem>> {
    check_path_report(path).map(|r| r.problems)
}

/// Like [`check_path`], with the relaxed comparisons.
pub fn check_path_report(path: &Path) -> Result<CheckReport> {
    match TsFileReader::open(path) {
        Ok(reader) => Ok(check_report(&reader)),
        Err(e @ Error::Open { .. }) => Err(e),
        Err(e) => Ok(CheckReport {
            problems: vec![problem("file", &e)],
            relaxed: Vec::new(),
        }),
    }
}

fn problem(structure: impl Into<String>, e: &Error) -> Problem {
    Problem {
        structure: structure.into(),
        offset: error_offset(e),
        message: e.to_string(),
    }
}

/// The byte offset an error names, when it names one.
pub fn error_offset(e: &Error) -> Option<u64> {
    use tsfile_format::Error as F;
    match e {
        Error::Io { offset, .. }
        | Error::OutOfRange { offset, .. }
        | Error::Corrupt { offset, .. } => Some(*offset),
        Error::Format(
            F::Truncated { offset, .. }
            | F::UnknownCode { offset, .. }
            | F::Invalid { offset, .. }
            | F::LengthOutOfBounds { offset, .. }
            | F::LengthMismatch { offset, .. }
            | F::InvalidUtf8 { offset, .. }
            | F::Decompress { offset, .. }
            | F::BadMagic { offset, .. }
            | F::IndexNode { offset, .. },
        ) => Some(*offset),
        _ => None,
    }
}

/// Checks an open file; an empty list means it is valid.
pub fn check(reader: &TsFileReader) -> Vec<Problem> {
    check_report(reader).problems
}

/// Checks an open file; see [`CheckReport`].
pub fn check_report(reader: &TsFileReader) -> CheckReport {
    let mut report = CheckReport::default();
    let problems = &mut report.problems;
    let section = match reader.scan_data_section() {
        Ok(s) => Some(s),
        Err(e) => {
            problems.push(problem("data section", &e));
            None
        }
    };
    let chunk_offsets: Option<HashSet<u64>> =
        section.map(|s| s.chunk_offsets.into_iter().collect());
    let mut previous: Option<DeviceKey> = None;
    let devices = match reader.devices() {
        Ok(d) => d,
        Err(e) => {
            problems.push(problem("device index", &e));
            return report;
        }
    };
    for device in devices {
        let device = match device {
            Ok(d) => d,
            Err(e) => {
                problems.push(problem("device index", &e));
                break;
            }
        };
        if let Some(prev) = &previous
            && prev.cmp(&device.key) != Ordering::Less
        {
            problems.push(Problem {
                structure: format!("device {}", device.path()),
                offset: Some(device.parent_at),
                message: format!(
                    "devices out of order: {} does not sort after {}",
                    device.key, prev
                ),
            });
        }
        previous = Some(device.key.clone());
        if let Err(e) = check_device(
            reader,
            &device,
            chunk_offsets.as_ref(),
            problems,
            &mut report.relaxed,
        ) {
            problems.push(problem(format!("device {}", device.path()), &e));
        }
    }
    report
}

fn check_device(
    reader: &TsFileReader,
    device: &DeviceEntry,
    chunk_offsets: Option<&HashSet<u64>>,
    problems: &mut Vec<Problem>,
    relaxed: &mut Vec<Relaxed>,
) -> Result<()> {
    let series = reader.timeseries(device)?;
    let structure = |s: &SeriesEntry| format!("series {}.{}", device.path(), s.name());
    for pair in series.windows(2) {
        if pair[0].name().as_bytes() >= pair[1].name().as_bytes() {
            problems.push(Problem {
                structure: structure(&pair[1]),
                offset: Some(pair[1].offset),
                message: format!(
                    "measurements out of order: {:?} after {:?}",
                    pair[1].name(),
                    pair[0].name()
                ),
            });
        }
    }
    for s in &series {
        check_series(reader, s, chunk_offsets, &structure(s), problems);
    }
    // Decoding every page: read the whole device and compare per-column non-null counts
    // with the statistics.
    let raw = reader.clone_with_options(crate::reader::ReadOptions {
        time: crate::arrow_types::TimeRepr::Int64,
    });
    let batch = raw.read_device(device, &TreeQuery::default())?;
    let times: Vec<i64> = batch
        .column(0)
        .as_any()
        .downcast_ref::<arrow_array::Int64Array>()
        .map(|a| a.values().to_vec())
        .unwrap_or_default();
    let time = series.iter().find(|s| s.meta.is_time_column());
    let values: Vec<&SeriesEntry> = series.iter().filter(|s| !s.meta.is_time_column()).collect();
    let aligned = time.is_some();
    if let Some(t) = time
        && batch.num_rows() as u64 != u64::from(t.meta.statistics.count)
    {
        problems.push(Problem {
            structure: format!("series {}.(time)", device.path()),
            offset: Some(t.offset),
            message: format!(
                "{} rows decoded, statistics count {}",
                batch.num_rows(),
                t.meta.statistics.count
            ),
        });
    }
    for (i, s) in values.iter().enumerate() {
        let Some(col) = batch.columns().get(i + 1) else {
            continue;
        };
        let present = (col.len() - col.null_count()) as u64;
        // Non-aligned series merged by time lose nothing unless a series repeats a timestamp,
        // which the statistics would not show either; compare present values in both cases.
        if present != u64::from(s.meta.statistics.count)
            && (aligned || present < u64::from(s.meta.statistics.count))
        {
            problems.push(Problem {
                structure: structure(s),
                offset: Some(s.offset),
                message: format!(
                    "{present} values decoded, statistics count {}",
                    s.meta.statistics.count
                ),
            });
            continue;
        }
        // A chunk that does not read was reported by `check_series`; compare exactly then.
        let (precision, relax) =
            series_precision(reader, s, &structure(s)).unwrap_or((Precision::EXACT, None));
        relaxed.extend(relax);
        if let Some(why) =
            crate::check_stats::mismatch(&times, col.as_ref(), &s.meta.statistics, precision)
        {
            problems.push(Problem {
                structure: structure(s),
                offset: Some(s.offset),
                message: why,
            });
        }
    }
    Ok(())
}

fn check_series(
    reader: &TsFileReader,
    s: &SeriesEntry,
    chunk_offsets: Option<&HashSet<u64>>,
    structure: &str,
    problems: &mut Vec<Problem>,
) {
    let mut push = |offset: u64, message: String| {
        problems.push(Problem {
            structure: structure.to_string(),
            offset: Some(offset),
            message,
        });
    };
    let list = &s.meta.chunk_metadata;
    if list.is_empty() {
        push(s.offset, "no chunk metadata".into());
        return;
    }
    if s.meta.has_multiple_chunks() {
        let mut sum: u64 = 0;
        let mut lo = i64::MAX;
        let mut hi = i64::MIN;
        for cm in list {
            if let Some(st) = &cm.statistics {
                sum += u64::from(st.count);
                if st.count > 0 {
                    lo = lo.min(st.start_time);
                    hi = hi.max(st.end_time);
                }
            }
        }
        if sum != u64::from(s.meta.statistics.count) {
            push(
                s.offset,
                format!(
                    "series count {} is not the sum {sum} of its chunks' counts",
                    s.meta.statistics.count
                ),
            );
        }
        if sum > 0 && (s.meta.statistics.start_time > lo || s.meta.statistics.end_time < hi) {
            push(
                s.offset,
                format!(
                    "series time range [{}, {}] does not cover its chunks' [{lo}, {hi}]",
                    s.meta.statistics.start_time, s.meta.statistics.end_time
                ),
            );
        }
    }
    for (i, cm) in list.iter().enumerate() {
        if i > 0 && cm.offset_of_chunk_header <= list[i - 1].offset_of_chunk_header {
            push(
                s.offset,
                format!(
                    "chunk offsets not ascending: {} after {}",
                    cm.offset_of_chunk_header,
                    list[i - 1].offset_of_chunk_header
                ),
            );
        }
        let at = cm.offset_of_chunk_header.max(0) as u64;
        if let Some(known) = chunk_offsets
            && !known.contains(&at)
        {
            push(
                at,
                "chunk metadata does not point at a chunk header of the data section".into(),
            );
            continue;
        }
        match reader.read_chunk_header(cm.offset_of_chunk_header) {
            Ok(h) => {
                if h.measurement_id != s.meta.measurement_id {
                    push(
                        at,
                        format!(
                            "chunk of measurement {:?} listed under {:?}",
                            h.measurement_id, s.meta.measurement_id
                        ),
                    );
                }
                if h.data_type != s.meta.data_type {
                    push(
                        at,
                        format!(
                            "chunk type {} differs from series type {}",
                            h.data_type, s.meta.data_type
                        ),
                    );
                }
            }
            Err(e) => push(at, e.to_string()),
        }
        if let Some(stats) = s.meta.chunk_statistics(i)
            && let Err(e) = check_pages(reader, cm.offset_of_chunk_header, stats, &mut push)
        {
            push(at, e.to_string());
        }
    }
}

/// In a multi-page chunk, the chunk's count is the sum of its pages' counts and its time
/// range covers theirs.
fn check_pages(
    reader: &TsFileReader,
    offset: i64,
    stats: &tsfile_format::statistics::Statistics,
    push: &mut impl FnMut(u64, String),
) -> Result<()> {
    let chunk = reader.read_chunk(offset)?;
    if !chunk.header.pages_have_statistics() {
        return Ok(());
    }
    let mut pages = crate::data::Pages::new(&chunk);
    let mut sum: u64 = 0;
    while let Some(page) = pages.next_page()? {
        let Some(ps) = &page.header.statistics else {
            continue;
        };
        sum += u64::from(ps.count);
        if ps.count > 0
            && stats.count > 0
            && (ps.start_time < stats.start_time || ps.end_time > stats.end_time)
        {
            push(
                page.offset,
                format!(
                    "page time range [{}, {}] lies outside its chunk's [{}, {}]",
                    ps.start_time, ps.end_time, stats.start_time, stats.end_time
                ),
            );
        }
    }
    if sum != u64::from(stats.count) {
        push(
            chunk.offset,
            format!(
                "chunk count {} is not the sum {sum} of its pages' counts",
                stats.count
            ),
        );
    }
    Ok(())
}
