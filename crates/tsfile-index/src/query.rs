//! Queries into Arrow: the rows of a table (table model) or of one device (tree model).
//!
//! Table model: `time`, then the table's columns in schema order (TAG columns from the
//! DeviceID segments, FIELD columns from the value series, ATTRIBUTE columns null because
//! their values are not stored, a named TIME column equal to `time`); rows grouped by device in
//! index order, ascending time within a device. Tree model: `time` plus the device's
//! measurements in index order, one row per distinct timestamp.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{
    ArrayRef, Int64Array, RecordBatch, RecordBatchOptions, StringArray, new_null_array,
};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use tsfile_format::schema::ColumnCategory;
use tsfile_format::types::TSDataType;

use crate::arrow_types::arrow_type;
use crate::column::{ColumnBuilder, time_array};
use crate::data::TimeRange;
use crate::error::{Error, Result};
use crate::index::{DeviceEntry, Devices};
use crate::reader::TsFileReader;
use crate::series_index::SeriesEntry;

/// Default number of rows per batch.
pub const DEFAULT_BATCH_SIZE: usize = 65536;

/// A table-model query.
#[derive(Debug, Clone, Default)]
pub struct TableQuery {
    /// Columns to return, in this order (`time` may be listed); `None` = all.
    pub columns: Option<Vec<String>>,
    /// Inclusive time range.
    pub time_range: TimeRange,
    /// TAG equality filters: `(tag column, value)`, `None` matching a null tag.
    pub tags: Vec<(String, Option<String>)>,
    /// Maximum rows per batch (0 = [`DEFAULT_BATCH_SIZE`]).
    pub batch_size: usize,
}

/// A tree-model query of one device.
#[derive(Debug, Clone, Default)]
pub struct TreeQuery {
    /// Measurements to return, in this order (`time` may be listed); `None` = all. Names the
    /// device does not have are left out, as the Java reader does.
    pub columns: Option<Vec<String>>,
    /// Inclusive time range.
    pub time_range: TimeRange,
    /// Maximum rows per batch of [`TsFileReader::query_device`] (0 = [`DEFAULT_BATCH_SIZE`]).
    pub batch_size: usize,
}

/// One output column of a table query.
#[derive(Debug, Clone)]
enum TableColumn {
    Time,
    Tag(usize),
    Field(TSDataType),
    Null,
}

/// The plan of a table query: output schema and where each column comes from.
#[derive(Debug, Clone)]
struct TablePlan {
    schema: SchemaRef,
    columns: Vec<(String, TableColumn)>,
    /// `(tag segment index, wanted value)` filters.
    tag_filters: Vec<(usize, Option<String>)>,
}

impl TsFileReader {
    /// The Arrow schema of a table (all columns, `time` first).
    pub fn table_arrow_schema(&self, table: &str) -> Result<SchemaRef> {
        Ok(self.plan_table(table, &TableQuery::default())?.schema)
    }

    fn plan_table(&self, table: &str, query: &TableQuery) -> Result<TablePlan> {
        let schema = self.table_schema(table).ok_or_else(|| Error::NotFound {
            what: "table",
            name: table.to_string(),
        })?;
        let time = self.options().time;
        let mut all: Vec<(String, TableColumn, DataType)> =
            vec![("time".into(), TableColumn::Time, time.data_type())];
        let mut tag_index = 0;
        let mut tags: HashMap<&str, usize> = HashMap::new();
        for col in &schema.columns {
            let name = col.schema.name.clone();
            let (kind, dt) = match col.category {
                ColumnCategory::Tag => {
                    tag_index += 1;
                    tags.insert(col.schema.name.as_str(), tag_index);
                    (TableColumn::Tag(tag_index), DataType::Utf8)
                }
                ColumnCategory::Field => {
                    let dt = arrow_type(col.schema.data_type, time).ok_or_else(|| {
                        Error::Request(format!("column {name:?} has type {}", col.schema.data_type))
                    })?;
                    (TableColumn::Field(col.schema.data_type), dt)
                }
                ColumnCategory::Attribute => (TableColumn::Null, DataType::Utf8),
                ColumnCategory::Time => (TableColumn::Time, time.data_type()),
            };
            all.push((name, kind, dt));
        }
        let chosen: Vec<(String, TableColumn, DataType)> = match &query.columns {
            None => all,
            Some(names) => {
                let mut out = Vec::with_capacity(names.len());
                for n in names {
                    let found = all.iter().find(|(name, _, _)| name == n).ok_or_else(|| {
                        Error::NotFound {
                            what: "column",
                            name: format!("{table}.{n}"),
                        }
                    })?;
                    out.push(found.clone());
                }
                out
            }
        };
        let mut tag_filters = Vec::new();
        for (tag, value) in &query.tags {
            let idx = tags.get(tag.as_str()).ok_or_else(|| Error::NotFound {
                what: "tag column",
                name: format!("{table}.{tag}"),
            })?;
            tag_filters.push((*idx, value.clone()));
        }
        let fields: Vec<Field> = chosen
            .iter()
            .map(|(n, _, dt)| Field::new(n, dt.clone(), true))
            .collect();
        Ok(TablePlan {
            schema: Arc::new(Schema::new(fields)),
            columns: chosen.into_iter().map(|(n, k, _)| (n, k)).collect(),
            tag_filters,
        })
    }

    /// The rows of a table as a lazy iterator of batches (device by device, at most
    /// `batch_size` rows each).
    pub fn query_table(&self, table: &str, query: &TableQuery) -> Result<TableBatches<'_>> {
        let plan = self.plan_table(table, query)?;
        let devices = match self.table_devices(table) {
            Ok(d) => Some(d),
            // A table with a schema but no device (no data written) has no index root.
            Err(Error::NotFound { .. }) => None,
            Err(e) => return Err(e),
        };
        let batch_size = if query.batch_size == 0 {
            DEFAULT_BATCH_SIZE
        } else {
            query.batch_size
        };
        Ok(TableBatches {
            reader: self,
            plan,
            devices,
            range: query.time_range,
            batch_size,
            pending: None,
            done: false,
        })
    }

    /// All rows of a table query in one batch.
    pub fn read_table(&self, table: &str, query: &TableQuery) -> Result<RecordBatch> {
        let batches = self.query_table(table, query)?;
        let schema = batches.schema();
        let batches: Vec<RecordBatch> = batches.collect::<Result<_>>()?;
        arrow_select_concat(&schema, &batches)
    }

    /// Reads the rows of one device of a table.
    fn read_table_device(
        &self,
        plan: &TablePlan,
        device: &DeviceEntry,
        range: TimeRange,
    ) -> Result<RecordBatch> {
        let series = self.timeseries(device)?;
        let mut by_name: HashMap<&str, &SeriesEntry> = HashMap::new();
        for s in &series {
            by_name.insert(s.name(), s);
        }
        let time_series = series.iter().find(|s| s.meta.is_time_column());
        let segments = device.segments();
        let expected = time_series.map_or(0, |t| self.expected_rows(t, range));
        let mut field_series: Vec<Option<&SeriesEntry>> = Vec::new();
        let mut builders: Vec<ColumnBuilder> = Vec::new();
        for (name, kind) in &plan.columns {
            if let TableColumn::Field(ty) = kind {
                let s = by_name.get(name.as_str()).copied();
                if let Some(s) = s
                    && s.meta.data_type != *ty
                {
                    return Err(Error::corrupt(
                        "timeseries metadata",
                        s.offset,
                        format!(
                            "series {name:?} has type {}, the table schema says {ty}",
                            s.meta.data_type
                        ),
                    ));
                }
                field_series.push(s);
                builders.push(ColumnBuilder::new(*ty, self.options().time, expected)?);
            }
        }
        let mut times = Vec::with_capacity(expected);
        match time_series {
            Some(t) => self.read_aligned(t, &field_series, range, &mut times, &mut builders)?,
            None if series.is_empty() => {}
            None => {
                return Err(Error::corrupt(
                    "device index",
                    device.root_range.0,
                    format!("table device {} has no time column", device.path()),
                ));
            }
        }
        let rows = times.len();
        let time_col = time_array(Int64Array::from(times), self.options().time);
        let mut fields = builders.into_iter();
        let mut columns: Vec<ArrayRef> = Vec::with_capacity(plan.columns.len());
        for ((_, kind), field) in plan.columns.iter().zip(plan.schema.fields()) {
            columns.push(match kind {
                TableColumn::Time => {
                    if field.data_type() == time_col.data_type() {
                        time_col.clone()
                    } else {
                        new_null_array(field.data_type(), rows)
                    }
                }
                TableColumn::Tag(i) => {
                    tag_column(segments.get(*i).and_then(Option::as_deref), rows)?
                }
                TableColumn::Field(_) => match fields.next() {
                    Some(mut b) => b.finish(),
                    None => new_null_array(field.data_type(), rows),
                },
                TableColumn::Null => new_null_array(field.data_type(), rows),
            });
        }
        let options = RecordBatchOptions::new().with_row_count(Some(rows));
        Ok(RecordBatch::try_new_with_options(
            plan.schema.clone(),
            columns,
            &options,
        )?)
    }

    /// The rows of one device as batches of at most `query.batch_size` rows (zero-copy
    /// slices of [`TsFileReader::read_device`]'s batch).
    pub fn query_device(
        &self,
        device: &DeviceEntry,
        query: &TreeQuery,
    ) -> Result<Vec<RecordBatch>> {
        let batch = self.read_device(device, query)?;
        let size = if query.batch_size == 0 {
            DEFAULT_BATCH_SIZE
        } else {
            query.batch_size
        };
        let mut out = Vec::with_capacity(batch.num_rows().div_ceil(size));
        let mut offset = 0;
        while offset < batch.num_rows() {
            let len = size.min(batch.num_rows() - offset);
            out.push(batch.slice(offset, len));
            offset += len;
        }
        Ok(out)
    }

    /// Reads one device (tree model, or one device of a table without its tags): `time`
    /// plus its measurements, one row per distinct timestamp.
    pub fn read_device(&self, device: &DeviceEntry, query: &TreeQuery) -> Result<RecordBatch> {
        // With named columns, look each one up (reading only its index path, or nothing
        // when the Bloom filter rules it out) instead of walking the whole device.
        let (time_series, chosen): (Option<SeriesEntry>, Vec<SeriesEntry>) = match &query.columns {
            None => {
                let series = self.timeseries(device)?;
                let time = series.iter().find(|s| s.meta.is_time_column()).cloned();
                (
                    time,
                    series
                        .into_iter()
                        .filter(|s| !s.meta.is_time_column())
                        .collect(),
                )
            }
            Some(names) => {
                let time = self
                    .timeseries_named(device, "")?
                    .filter(|s| s.meta.is_time_column());
                let mut chosen = Vec::with_capacity(names.len());
                for n in names
                    .iter()
                    .filter(|n| !n.is_empty() && n.as_str() != "time")
                {
                    if let Some(s) = self.timeseries_named(device, n)?
                        && !s.meta.is_time_column()
                    {
                        chosen.push(s);
                    }
                }
                (time, chosen)
            }
        };
        let time_series = time_series.as_ref();
        let time = self.options().time;
        let mut fields = vec![Field::new("time", time.data_type(), true)];
        for s in &chosen {
            let dt = arrow_type(s.meta.data_type, time).ok_or_else(|| {
                Error::corrupt(
                    "timeseries metadata",
                    s.offset,
                    format!("series of type {}", s.meta.data_type),
                )
            })?;
            fields.push(Field::new(s.name(), dt, true));
        }
        let schema = Arc::new(Schema::new(fields));
        let range = query.time_range;
        let mut columns: Vec<ArrayRef> = Vec::with_capacity(chosen.len() + 1);
        let rows;
        if let Some(t) = time_series {
            let expected = self.expected_rows(t, range);
            let mut builders = chosen
                .iter()
                .map(|s| ColumnBuilder::new(s.meta.data_type, time, expected))
                .collect::<Result<Vec<_>>>()?;
            let opt: Vec<Option<&SeriesEntry>> = chosen.iter().map(Some).collect();
            let mut times = Vec::with_capacity(expected);
            self.read_aligned(t, &opt, range, &mut times, &mut builders)?;
            rows = times.len();
            columns.push(time_array(Int64Array::from(times), time));
            columns.extend(builders.iter_mut().map(ColumnBuilder::finish));
        } else {
            let mut parts = Vec::with_capacity(chosen.len());
            for s in &chosen {
                let expected = self.expected_rows(s, range);
                let mut b = ColumnBuilder::new(s.meta.data_type, time, expected)?;
                let mut times = Vec::with_capacity(expected);
                self.read_plain_series(s, range, &mut times, &mut b)?;
                parts.push((times, b.finish()));
            }
            let (all_times, arrays) = crate::merge::merge_by_time(parts)?;
            rows = all_times.len();
            columns.push(time_array(Int64Array::from(all_times), time));
            columns.extend(arrays);
        }
        let options = RecordBatchOptions::new().with_row_count(Some(rows));
        Ok(RecordBatch::try_new_with_options(
            schema, columns, &options,
        )?)
    }
}

impl TsFileReader {
    /// The rows a read of `series` within `range` will keep, to size its columns once
    /// instead of growing them by doubling (each growth of a large buffer is a fresh
    /// allocation, a copy and new page faults). Only a hint: the series' statistics count,
    /// capped by the file size against a lying count, and 0 under a time range (which may
    /// keep far fewer rows).
    fn expected_rows(&self, series: &SeriesEntry, range: TimeRange) -> usize {
        if !range.is_all() {
            return 0;
        }
        u64::from(series.meta.statistics.count).min(self.file_len()) as usize
    }
}

/// A TAG column: the device's value `value` (`None` = null) repeated `rows` times, built
/// whole rather than row by row.
fn tag_column(value: Option<&str>, rows: usize) -> Result<ArrayRef> {
    let Some(value) = value else {
        return Ok(new_null_array(&DataType::Utf8, rows));
    };
    // `new_repeated` panics when the values outgrow 32-bit offsets.
    let total = rows.checked_mul(value.len());
    if total.is_none_or(|t| i32::try_from(t).is_err()) {
        return Err(Error::Request(format!(
            "{rows} rows of a {}-byte tag exceed 2 GiB",
            value.len()
        )));
    }
    Ok(Arc::new(StringArray::new_repeated(value, rows)))
}

fn arrow_select_concat(schema: &SchemaRef, batches: &[RecordBatch]) -> Result<RecordBatch> {
    Ok(arrow_select::concat::concat_batches(schema, batches)?)
}

/// Lazy batches of a table query; see [`TsFileReader::query_table`].
pub struct TableBatches<'a> {
    reader: &'a TsFileReader,
    plan: TablePlan,
    devices: Option<Devices<'a>>,
    range: TimeRange,
    batch_size: usize,
    /// Rows of the current device not yet handed out: the batch and the next offset.
    pending: Option<(RecordBatch, usize)>,
    done: bool,
}

impl std::fmt::Debug for TableBatches<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableBatches")
            .field("schema", &self.plan.schema)
            .finish_non_exhaustive()
    }
}

impl TableBatches<'_> {
    /// The schema of every batch.
    pub fn schema(&self) -> SchemaRef {
        self.plan.schema.clone()
    }

    fn step(&mut self) -> Result<Option<RecordBatch>> {
        loop {
            if let Some((batch, offset)) = &mut self.pending {
                if *offset < batch.num_rows() {
                    let len = self.batch_size.min(batch.num_rows() - *offset);
                    let out = batch.slice(*offset, len);
                    *offset += len;
                    return Ok(Some(out));
                }
                self.pending = None;
            }
            let Some(devices) = self.devices.as_mut() else {
                return Ok(None);
            };
            let Some(device) = devices.next() else {
                return Ok(None);
            };
            let device = device?;
            let segments = device.segments();
            let keep = self.plan.tag_filters.iter().all(|(i, want)| {
                let have = segments.get(*i).cloned().flatten();
                have == *want
            });
            if !keep {
                continue;
            }
            let batch = self
                .reader
                .read_table_device(&self.plan, &device, self.range)?;
            if batch.num_rows() > 0 {
                self.pending = Some((batch, 0));
            }
        }
    }
}

impl Iterator for TableBatches<'_> {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        // The iterator fuses after its end and after its first error.
        let item = self.step().transpose();
        self.done = !matches!(item, Some(Ok(_)));
        item
    }
}
