//! Per-device state of the writer: buffered rows since the last flush, the last timestamp
//! (to reject out-of-order and duplicate times), and the chunks written so far, from which
//! the TimeseriesMetadata are built at close.

use std::collections::BTreeMap;

use tsfile_format::device_id::DeviceId;
use tsfile_format::schema::MeasurementSchema;
use tsfile_format::statistics::Statistics;
use tsfile_format::timeseries::{ChunkMetadata, MULTI_CHUNK_TYPE, TimeseriesMetadata};
use tsfile_format::types::{TIME_COLUMN_MASK, TSDataType, VALUE_COLUMN_MASK};

use super::buffer::Values;
use super::chunk::EncodedPage;
use super::error::{WriteError, WriteResult};
use super::options::Flavor;
use super::stats;

/// Where a written chunk starts and its statistics.
#[derive(Debug, Clone)]
pub(crate) struct ChunkRecord {
    pub(crate) offset: i64,
    pub(crate) statistics: Statistics,
}

/// One series of a device.
#[derive(Debug)]
pub(crate) struct Series {
    pub(crate) schema: MeasurementSchema,
    /// Present values since the last flush.
    pub(crate) values: Values,
    /// Aligned: one flag per buffered row of the device.
    pub(crate) validity: Vec<bool>,
    /// Non-aligned: the timestamp of each buffered value.
    pub(crate) times: Vec<i64>,
    /// Non-aligned: the last timestamp written (buffered or flushed).
    pub(crate) last_time: Option<i64>,
    /// Aligned: pages already encoded for the chunk being built (sealed at write time).
    pub(crate) sealed: Vec<EncodedPage>,
    pub(crate) chunks: Vec<ChunkRecord>,
}

impl Series {
    pub(crate) fn new(schema: MeasurementSchema) -> Self {
        Self {
            values: Values::new(schema.data_type),
            schema,
            validity: Vec::new(),
            times: Vec::new(),
            last_time: None,
            sealed: Vec::new(),
            chunks: Vec::new(),
        }
    }

    pub(crate) fn memory(&self) -> usize {
        self.values.memory()
            + self.validity.len()
            + self.times.len() * 8
            + self.sealed.iter().map(EncodedPage::memory).sum::<usize>()
    }
}

/// One device: aligned (table model, aligned tree devices) or not.
#[derive(Debug)]
pub(crate) struct Device {
    pub(crate) id: DeviceId,
    pub(crate) aligned: bool,
    /// Aligned: the buffered rows' timestamps.
    pub(crate) times: Vec<i64>,
    /// Aligned: the last timestamp written.
    pub(crate) last_time: Option<i64>,
    /// Aligned: the time chunks written.
    pub(crate) time_chunks: Vec<ChunkRecord>,
    /// Aligned: time pages already encoded for the chunk being built.
    pub(crate) time_sealed: Vec<EncodedPage>,
    /// Series by measurement name; `BTreeMap<String>` orders by UTF-8 bytes, the index order.
    pub(crate) series: BTreeMap<String, Series>,
}

impl Device {
    pub(crate) fn new(id: DeviceId, aligned: bool) -> Self {
        Self {
            id,
            aligned,
            times: Vec::new(),
            last_time: None,
            time_chunks: Vec::new(),
            time_sealed: Vec::new(),
            series: BTreeMap::new(),
        }
    }

    /// True when rows or points are buffered.
    pub(crate) fn has_data(&self) -> bool {
        if self.aligned {
            !self.times.is_empty() || !self.time_sealed.is_empty()
        } else {
            self.series.values().any(|s| !s.times.is_empty())
        }
    }

    pub(crate) fn memory(&self) -> usize {
        self.times.len() * 8
            + self
                .time_sealed
                .iter()
                .map(EncodedPage::memory)
                .sum::<usize>()
            + self.series.values().map(Series::memory).sum::<usize>()
    }

    /// Checks that the times of `parts` (in order) continue the device (or `series`)
    /// strictly ascending.
    pub(crate) fn check_times(&self, series: Option<&str>, parts: &[&[i64]]) -> WriteResult<()> {
        let last = match series {
            None => self.last_time,
            Some(name) => self.series.get(name).and_then(|s| s.last_time),
        };
        // The usual answer, in a loop without early exit that the compiler vectorises.
        let mut prev = last;
        let mut ascending = true;
        for part in parts {
            if let (Some(&head), Some(&tail)) = (part.first(), part.last()) {
                ascending &= prev.is_none_or(|p| head > p)
                    && part.windows(2).fold(true, |ok, w| ok & (w[0] < w[1]));
                prev = Some(tail);
            }
        }
        if ascending {
            return Ok(());
        }
        // Find the first offending time for the message.
        let mut times = parts.iter().flat_map(|p| p.iter().copied());
        let Some(mut p) = last.or_else(|| times.next()) else {
            return Ok(());
        };
        for t in times {
            if t <= p {
                return Err(WriteError::TimeOrder {
                    kind: if t == p { "duplicate" } else { "out-of-order" },
                    device: self.id.to_string(),
                    series: series.map(|s| format!(", series {s}")).unwrap_or_default(),
                    time: t,
                    previous: p,
                });
            }
            p = t;
        }
        Ok(())
    }

    /// The TimeseriesMetadata of every series that has chunks, time column first, in
    /// measurement order.
    pub(crate) fn timeseries(&self, flavor: Flavor) -> Vec<TimeseriesMetadata> {
        let mut out = Vec::new();
        let (time_mask, value_mask) = match (flavor, self.aligned) {
            (Flavor::Java, true) => (TIME_COLUMN_MASK, VALUE_COLUMN_MASK),
            _ => (0, 0),
        };
        if self.aligned && !self.time_chunks.is_empty() {
            out.push(metadata(
                "",
                TSDataType::Vector,
                &self.time_chunks,
                time_mask,
            ));
        }
        for (name, s) in &self.series {
            if !s.chunks.is_empty() {
                out.push(metadata(name, s.schema.data_type, &s.chunks, value_mask));
            }
        }
        out
    }
}

fn metadata(
    name: &str,
    data_type: TSDataType,
    chunks: &[ChunkRecord],
    mask: u8,
) -> TimeseriesMetadata {
    let multi = chunks.len() > 1;
    let mut statistics = chunks[0].statistics.clone();
    for c in &chunks[1..] {
        stats::merge(&mut statistics, &c.statistics);
    }
    TimeseriesMetadata {
        timeseries_type: if multi { MULTI_CHUNK_TYPE } else { 0 } | mask,
        measurement_id: name.to_string(),
        data_type,
        statistics,
        chunk_metadata: chunks
            .iter()
            .map(|c| ChunkMetadata {
                offset_of_chunk_header: c.offset,
                statistics: multi.then(|| c.statistics.clone()),
            })
            .collect(),
    }
}
