//! The writer itself: the temporary file, registration of tables and tree-model series,
//! Arrow batches in, chunk groups out at each flush, and the index, TsFileMetadata and tail
//! at close, followed by the rename to the final name.

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};

use arrow_array::{Array, RecordBatch};
use tsfile_format::chunk::{ChunkGroupHeader, OperationIndexRange};
use tsfile_format::cursor::Writer;
use tsfile_format::device_id::{DeviceId, DeviceKey};
use tsfile_format::file::{self as tsf, FileTail, NamedTableSchema, TsFileMetadata};
use tsfile_format::schema::{MeasurementSchema, TableSchema};
use tsfile_format::types::{ColumnCategory, FormatVersion, Marker, TSDataType};

use super::arrow::{self as conv, compatible};
use super::chunk::{self, codec_of};
use super::device::{ChunkRecord, Device, Series};
use super::error::{WriteError, WriteResult};
use super::index;
use super::options::{Flavor, WriterOptions, encoding_is_writable};
use super::seal;

/// The rows of one device in a batch (runs of row indices) and, when the device had nothing
/// buffered and the rows are one run, their times (left in the batch).
type NewRuns<'a> = (Vec<Range<usize>>, Option<&'a [i64]>);

/// Writes of at least this many bytes bypass the output buffer (one copy fewer).
const DIRECT_WRITE: usize = 64 * 1024;

/// Writes one TsFile V4. Create it, register tables (table model) or series (tree model),
/// write Arrow batches, then [`TsFileWriter::close`]. Dropping it without closing deletes the
/// temporary file and leaves nothing under the final name.
#[derive(Debug)]
pub struct TsFileWriter {
    path: PathBuf,
    tmp_path: PathBuf,
    out: Option<BufWriter<File>>,
    pos: u64,
    opts: WriterOptions,
    tables: BTreeMap<String, TableSchema>,
    devices: BTreeMap<DeviceId, Device>,
    /// Tree-model registrations: device → (aligned, measurements).
    tree: HashMap<DeviceId, (bool, Vec<MeasurementSchema>)>,
    buffered: usize,
}

impl TsFileWriter {
    /// Starts a file that will be named `path` once closed; until then the data goes to a
    /// temporary file beside it.
    pub fn create(path: impl AsRef<Path>, opts: WriterOptions) -> WriteResult<Self> {
        let path = path.as_ref().to_path_buf();
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "out.tsfile".into());
        let tmp_path = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
        let file = File::create(&tmp_path).map_err(|source| WriteError::Io {
            action: "create",
            path: tmp_path.clone(),
            source,
        })?;
        let mut w = Self {
            path,
            tmp_path,
            out: Some(BufWriter::with_capacity(1 << 20, file)),
            pos: 0,
            opts,
            tables: BTreeMap::new(),
            devices: BTreeMap::new(),
            tree: HashMap::new(),
            buffered: 0,
        };
        let mut head = Writer::new();
        tsf::encode_head(FormatVersion::V4, &mut head);
        w.emit(head.as_bytes())?;
        Ok(w)
    }

    /// The options in force.
    pub fn options(&self) -> &WriterOptions {
        &self.opts
    }

    /// Writes an encoded chunk; its record for the index.
    fn emit_chunk(&mut self, c: chunk::ChunkBytes) -> WriteResult<ChunkRecord> {
        let offset = self.pos as i64;
        self.emit(&c.bytes)?;
        Ok(ChunkRecord {
            offset,
            statistics: c.statistics,
        })
    }

    fn emit(&mut self, bytes: &[u8]) -> WriteResult<()> {
        let out = self.out.as_mut().ok_or(WriteError::Closed)?;
        let io = |source| WriteError::Io {
            action: "write",
            path: self.tmp_path.clone(),
            source,
        };
        if bytes.len() >= DIRECT_WRITE {
            // A chunk this large goes to the file as it is rather than through the buffer.
            out.flush().map_err(io)?;
            out.get_mut().write_all(bytes).map_err(io)?;
        } else {
            out.write_all(bytes).map_err(io)?;
        }
        self.pos += bytes.len() as u64;
        Ok(())
    }

    /// Registers a table-model table. TAG columns must be STRING (or TEXT); FIELD columns
    /// must use an encoding the official readers decode for their type.
    pub fn register_table(&mut self, name: &str, schema: TableSchema) -> WriteResult<()> {
        if self.tables.contains_key(name) {
            return Err(WriteError::schema(format!(
                "table {name:?} registered twice"
            )));
        }
        let mut seen = std::collections::HashSet::new();
        for c in &schema.columns {
            let s = &c.schema;
            if !seen.insert(s.name.as_str()) {
                return Err(WriteError::schema(format!(
                    "column {:?} appears twice in table {name:?}",
                    s.name
                )));
            }
            match c.category {
                ColumnCategory::Tag
                    if !matches!(s.data_type, TSDataType::String | TSDataType::Text) =>
                {
                    return Err(WriteError::schema(format!(
                        "TAG column {:?} must be STRING, not {}",
                        s.name,
                        s.data_type.name()
                    )));
                }
                ColumnCategory::Field => check_codec(s)?,
                _ => {}
            }
        }
        self.tables.insert(name.to_string(), schema);
        Ok(())
    }

    /// Registers a tree-model device path with its measurements, aligned or not. A device
    /// may be registered again to add measurements, with the same alignment.
    pub fn register_device(
        &mut self,
        path: &str,
        aligned: bool,
        measurements: Vec<MeasurementSchema>,
    ) -> WriteResult<()> {
        if path.is_empty() || path.split('.').any(str::is_empty) {
            return Err(WriteError::schema(format!(
                "tree-model device path {path:?} has an empty level"
            )));
        }
        let id = DeviceId::from_tree_path(path);
        for m in &measurements {
            check_codec(m)?;
        }
        let entry = self.tree.entry(id).or_insert((aligned, Vec::new()));
        if entry.0 != aligned {
            return Err(WriteError::schema(format!(
                "device {path:?} registered both aligned and non-aligned"
            )));
        }
        for m in measurements {
            if entry.1.iter().any(|e| e.name == m.name) {
                return Err(WriteError::schema(format!(
                    "measurement {:?} of device {path:?} registered twice",
                    m.name
                )));
            }
            entry.1.push(m);
        }
        Ok(())
    }

    /// Writes the rows of `batch` into table `table`. `time_column` names the INT64 or
    /// timestamp column holding the time; TAG columns give the device; FIELD columns missing
    /// from the batch are null; ATTRIBUTE columns are not stored (as the official writers).
    /// Within each device the times must be strictly ascending and after any time already
    /// written for it; otherwise nothing of the batch is written.
    pub fn write_table(
        &mut self,
        table: &str,
        time_column: &str,
        batch: &RecordBatch,
    ) -> WriteResult<()> {
        let schema = self
            .tables
            .get(table)
            .ok_or_else(|| WriteError::schema(format!("table {table:?} is not registered")))?
            .clone();
        let times = time_values(batch, time_column)?;
        for c in &schema.columns {
            if let Some(a) = batch.column_by_name(&c.schema.name) {
                let ok = match c.category {
                    ColumnCategory::Tag => matches!(
                        a.data_type(),
                        arrow_schema::DataType::Utf8
                            | arrow_schema::DataType::LargeUtf8
                            | arrow_schema::DataType::Utf8View
                    ),
                    ColumnCategory::Field => compatible(a.data_type(), c.schema.data_type),
                    _ => true,
                };
                if !ok {
                    return Err(WriteError::schema(format!(
                        "column {:?} of table {table:?}: an Arrow {} column cannot be stored as {} {}",
                        c.schema.name,
                        a.data_type(),
                        c.category.name(),
                        c.schema.data_type.name()
                    )));
                }
            }
        }
        // Group rows by device, in first-seen order.
        let tags: Vec<conv::TagColumn<'_>> = schema
            .tag_columns()
            .map(|c| conv::TagColumn::new(batch.column_by_name(&c.schema.name).map(|a| a.as_ref())))
            .collect();
        let mut groups: HashMap<Vec<Option<&str>>, usize> = HashMap::new();
        let mut order: Vec<(DeviceId, Vec<Range<usize>>)> = Vec::new();
        let mut row = 0;
        while row < batch.num_rows() {
            // Rows usually come in runs of one device: find where this one ends first, so
            // that the device is looked up once per run.
            let end = tags
                .iter()
                .fold(batch.num_rows(), |end, a| a.run_end(row, end));
            let mut key: Vec<Option<&str>> = tags.iter().map(|a| a.get(row)).collect();
            if self.opts.trim_trailing_null_tags {
                while key.last() == Some(&None) {
                    key.pop();
                }
            }
            let slot = match groups.get(&key) {
                Some(&slot) => slot,
                None => {
                    let mut segs = vec![Some(table.to_string())];
                    segs.extend(key.iter().map(|s| s.map(str::to_string)));
                    order.push((DeviceId::new(segs), Vec::new()));
                    groups.insert(key, order.len() - 1);
                    order.len() - 1
                }
            };
            let runs = &mut order[slot].1;
            match runs.last_mut() {
                Some(r) if r.end == row => r.end = end,
                _ => runs.push(row..end),
            }
            row = end;
        }
        // Check every device before buffering anything.
        for (id, runs) in &order {
            let t: Vec<&[i64]> = runs.iter().map(|r| &times[r.clone()]).collect();
            match self.devices.get(id) {
                Some(d) => d.check_times(None, &t)?,
                None => Device::new(id.clone(), true).check_times(None, &t)?,
            }
        }
        let fields: Vec<&MeasurementSchema> = schema
            .columns
            .iter()
            .filter(|c| c.category == ColumnCategory::Field)
            .map(|c| &c.schema)
            .collect();
        // The times of every device are buffered first; then every column of every device
        // takes its new rows and encodes its full pages, on parallel threads (when pages are
        // cut by the point count, at most one page of rows stays buffered per column).
        let mut new_rows: BTreeMap<DeviceId, NewRuns<'_>> = BTreeMap::new();
        let mut before = 0;
        for (id, rows) in order {
            let dev = self.devices.entry(id.clone()).or_insert_with(|| {
                let mut d = Device::new(id.clone(), true);
                for f in &fields {
                    d.series.insert(f.name.clone(), Series::new((*f).clone()));
                }
                d
            });
            before += dev.memory();
            // With nothing buffered and the rows one run, the times stay in the batch (the
            // full pages are encoded from there).
            let direct = match rows.as_slice() {
                [r] if dev.times.is_empty() => Some(&times[r.clone()]),
                _ => None,
            };
            if direct.is_none() {
                let n: usize = rows.iter().map(ExactSizeIterator::len).sum();
                dev.times.reserve(n);
                for r in &rows {
                    dev.times.extend_from_slice(&times[r.clone()]);
                }
            }
            if let Some(r) = rows.last() {
                dev.last_time = Some(times[r.end - 1]);
            }
            new_rows.insert(id, (rows, direct));
        }
        // Only FIELD columns are stored; a FIELD column missing from the batch is null.
        let column = |name: &str| {
            fields
                .iter()
                .any(|f| f.name == name)
                .then(|| batch.column_by_name(name))
                .flatten()
        };
        let mut devs: Vec<(&mut Device, Option<seal::NewRows<'_>>)> = self
            .devices
            .iter_mut()
            .filter_map(|(id, d)| {
                let (rows, times) = new_rows.get(id)?;
                Some((
                    d,
                    Some(seal::NewRows {
                        rows,
                        times: *times,
                        column: &column,
                    }),
                ))
            })
            .collect();
        seal::append_and_seal(&mut devs, &self.opts)?;
        let after: usize = devs.iter().map(|(d, _)| d.memory()).sum();
        self.buffered = (self.buffered + after).saturating_sub(before);
        self.maybe_flush()
    }

    /// Writes the rows of `batch` into the registered tree-model device `path`. Each other
    /// column is a registered measurement; a null is a missing point (non-aligned) or a null
    /// value (aligned). Times must be strictly ascending per device (aligned) or per series.
    pub fn write_tree(
        &mut self,
        path: &str,
        time_column: &str,
        batch: &RecordBatch,
    ) -> WriteResult<()> {
        let id = DeviceId::from_tree_path(path);
        let (aligned, measurements) = self
            .tree
            .get(&id)
            .ok_or_else(|| WriteError::schema(format!("device {path:?} is not registered")))?
            .clone();
        let times = time_values(batch, time_column)?;
        let mut cols = Vec::new();
        for field in batch.schema().fields() {
            if field.name() == time_column {
                continue;
            }
            let m = measurements
                .iter()
                .find(|m| &m.name == field.name())
                .ok_or_else(|| {
                    WriteError::schema(format!(
                        "column {:?} is not a registered measurement of device {path:?}",
                        field.name()
                    ))
                })?;
            if !compatible(field.data_type(), m.data_type) {
                return Err(WriteError::schema(format!(
                    "measurement {:?} of device {path:?}: an Arrow {} column cannot be stored as {}",
                    m.name,
                    field.data_type(),
                    m.data_type.name()
                )));
            }
            cols.push((m.clone(), batch.column_by_name(field.name()).cloned()));
        }
        let dev = self.devices.entry(id.clone()).or_insert_with(|| {
            let mut d = Device::new(id, aligned);
            for m in &measurements {
                d.series.insert(m.name.clone(), Series::new(m.clone()));
            }
            d
        });
        let all = 0..batch.num_rows();
        let rows = std::slice::from_ref(&all);
        let before = dev.memory();
        if aligned {
            dev.check_times(None, &[times])?;
            dev.times.extend_from_slice(times);
            dev.last_time = dev.times.last().copied();
            for m in &measurements {
                let s = dev
                    .series
                    .entry(m.name.clone())
                    .or_insert_with(|| Series::new(m.clone()));
                match cols
                    .iter()
                    .find(|(c, _)| c.name == m.name)
                    .and_then(|(_, a)| a.as_ref())
                {
                    Some(a) => conv::append(
                        &mut s.values,
                        a,
                        rows,
                        m.data_type,
                        Some(&mut s.validity),
                        None,
                    )?,
                    None => s.validity.extend(std::iter::repeat_n(false, times.len())),
                }
            }
            seal::seal_full_pages(&mut [&mut *dev], &self.opts)?;
        } else {
            for (m, a) in &cols {
                let Some(a) = a else { continue };
                let present: Vec<i64> = (0..times.len())
                    .filter(|&r| a.is_valid(r))
                    .map(|r| times[r])
                    .collect();
                if !dev.series.contains_key(&m.name) {
                    dev.series.insert(m.name.clone(), Series::new(m.clone()));
                }
                dev.check_times(Some(&m.name), &[&present])?;
            }
            for (m, a) in cols {
                let Some(a) = a else { continue };
                let Some(s) = dev.series.get_mut(&m.name) else {
                    continue;
                };
                let mut kept = Vec::new();
                conv::append(&mut s.values, &a, rows, m.data_type, None, Some(&mut kept))?;
                s.times.extend(kept.iter().map(|&r| times[r]));
                if let Some(&t) = s.times.last() {
                    s.last_time = Some(t);
                }
            }
        }
        self.buffered = (self.buffered + dev.memory()).saturating_sub(before);
        self.maybe_flush()
    }

    /// The TAG column names of table `table`, in schema order.
    pub(crate) fn tag_names(&self, table: &str) -> WriteResult<Vec<String>> {
        let schema = self
            .tables
            .get(table)
            .ok_or_else(|| WriteError::schema(format!("table {table:?} is not registered")))?;
        Ok(schema
            .tag_columns()
            .map(|c| c.schema.name.clone())
            .collect())
    }

    fn maybe_flush(&mut self) -> WriteResult<()> {
        if self.buffered >= self.opts.chunk_group_size_threshold {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes every device with buffered data as one chunk group, in DeviceID order; the
    /// time chunk first, then one chunk per series in measurement order (every value column
    /// of an aligned device gets a chunk, empty if all null).
    pub fn flush(&mut self) -> WriteResult<()> {
        if self.out.is_none() {
            return Err(WriteError::Closed);
        }
        let ids: Vec<DeviceId> = self
            .devices
            .iter()
            .filter(|(_, d)| d.has_data())
            .map(|(id, _)| id.clone())
            .collect();
        for id in ids {
            let Some(mut dev) = self.devices.remove(&id) else {
                continue;
            };
            let res = self.flush_device(&mut dev);
            self.devices.insert(id, dev);
            res?;
        }
        self.buffered = 0;
        Ok(())
    }

    fn flush_device(&mut self, dev: &mut Device) -> WriteResult<()> {
        let mut head = Writer::new();
        ChunkGroupHeader {
            device: DeviceKey::Id(dev.id.clone()),
        }
        .encode(&mut head);
        self.emit(head.as_bytes())?;
        if dev.aligned {
            let cols: Vec<(&super::buffer::Values, &[bool])> = dev
                .series
                .values()
                .map(|s| (&s.values, s.validity.as_slice()))
                .collect();
            let pages = chunk::aligned_pages(dev.times.len(), &cols, &self.opts);
            let mut encoded = seal::encode_aligned(dev, &pages, &self.opts)?.into_iter();
            let mut time_pages = std::mem::take(&mut dev.time_sealed);
            time_pages.extend(encoded.next().unwrap_or_default());
            let c = chunk::time_chunk(time_pages, &self.opts);
            dev.time_chunks.push(self.emit_chunk(c)?);
            for (s, more) in dev.series.values_mut().zip(encoded) {
                let mut pages = std::mem::take(&mut s.sealed);
                pages.extend(more);
                let c = chunk::value_chunk(codec_of(&s.schema), pages);
                s.chunks.push(self.emit_chunk(c)?);
                s.values.clear();
                s.validity.clear();
            }
            dev.times.clear();
        } else {
            for s in dev.series.values_mut() {
                if s.times.is_empty() {
                    continue;
                }
                let codec = codec_of(&s.schema);
                let c = chunk::series_chunk(codec, &s.values, &s.times, &self.opts)?;
                s.chunks.push(self.emit_chunk(c)?);
                s.values.clear();
                s.times.clear();
            }
        }
        Ok(())
    }

    /// Flushes, writes the index section, TsFileMetadata and the tail, and renames the
    /// temporary file to the final name. Returns the final path.
    pub fn close(mut self) -> WriteResult<PathBuf> {
        self.flush()?;
        let flavor = self.opts.flavor;
        let mut w = Writer::new();
        if flavor == Flavor::Cpp {
            OperationIndexRange {
                min_plan_index: 0,
                max_plan_index: 0,
            }
            .encode(&mut w);
        }
        let meta_offset = self.pos + w.len() as u64;
        w.write_u8(Marker::Separator.code());
        self.emit(w.as_bytes())?;
        let series: Vec<index::DeviceSeries> = self
            .devices
            .values()
            .map(|d| index::DeviceSeries {
                id: d.id.clone(),
                series: d.timeseries(flavor),
            })
            .filter(|d| !d.series.is_empty())
            .collect();
        let (section, table_roots) = index::build(&series, self.pos, self.opts.max_degree);
        self.emit(&section)?;
        let metadata = TsFileMetadata {
            table_roots,
            table_schemas: self
                .tables
                .iter()
                .map(|(name, schema)| NamedTableSchema {
                    table_name: name.clone(),
                    schema: schema.clone(),
                })
                .collect(),
            meta_offset: meta_offset as i64,
            bloom_filter: index::bloom(
                &series,
                self.opts.bloom_error_rate,
                flavor,
                self.opts.bloom_hashing,
            ),
            properties: index::properties(flavor, &self.opts.properties),
        };
        let mut m = Writer::new();
        metadata.encode(&mut m);
        let len = m.len() as u32;
        FileTail {
            metadata_length: len,
        }
        .encode(&mut m);
        self.emit(m.as_bytes())?;
        let out = self.out.take().ok_or(WriteError::Closed)?;
        let io = |action: &'static str, path: &Path| {
            let path = path.to_path_buf();
            move |source| WriteError::Io {
                action,
                path,
                source,
            }
        };
        let file = out
            .into_inner()
            .map_err(|e| e.into_error())
            .map_err(io("write", &self.tmp_path))?;
        if self.opts.sync_on_close {
            file.sync_all().map_err(io("sync", &self.tmp_path))?;
        }
        drop(file);
        std::fs::rename(&self.tmp_path, &self.path).map_err(io("rename to", &self.path))?;
        Ok(self.path.clone())
    }
}

impl Drop for TsFileWriter {
    fn drop(&mut self) {
        // Not closed (an error, or the caller gave up): leave nothing behind.
        if self.out.take().is_some() {
            let _ = std::fs::remove_file(&self.tmp_path);
        }
    }
}

fn check_codec(s: &MeasurementSchema) -> WriteResult<()> {
    if !encoding_is_writable(s.encoding, s.data_type) {
        return Err(WriteError::schema(format!(
            "column {:?}: {} cannot be written as {}",
            s.name,
            s.data_type.name(),
            s.encoding.name()
        )));
    }
    if s.compression == tsfile_format::types::CompressionType::Lzo {
        return Err(WriteError::schema(format!(
            "column {:?}: LZO is never written (Java readers cannot decompress it)",
            s.name
        )));
    }
    Ok(())
}

pub(crate) fn time_values<'a>(batch: &'a RecordBatch, name: &str) -> WriteResult<&'a [i64]> {
    let a = batch
        .column_by_name(name)
        .ok_or_else(|| WriteError::schema(format!("the batch has no time column {name:?}")))?;
    let v = conv::i64_values(a.as_ref()).ok_or_else(|| {
        WriteError::schema(format!(
            "time column {name:?} is {}, not INT64 or a timestamp",
            a.data_type()
        ))
    })?;
    if a.null_count() > 0 {
        return Err(WriteError::schema(format!(
            "time column {name:?} has nulls"
        )));
    }
    Ok(v)
}
