//! The Parquet locator: blocks are row groups, described from the footer alone (with the
//! column chunks' byte ranges and the OffsetIndex page locations when the file has them).
//! Statistics come from the footer where they are present and exact, otherwise from the data.
//! Reads select the touched row groups and a `RowSelection` inside them, with the page index
//! loaded in optional mode so that pages outside the range are skipped; chosen rows
//! (`read_rows`) are one `RowSelection` of exactly those rows. A read whose request schema
//! types a string column as Utf8View gets it decoded as Utf8View.

mod footer;
mod ranged;
mod take;
pub mod trace;

use std::path::Path;
use std::sync::Arc;

use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder, RowSelection,
    RowSelectionPolicy, RowSelector,
};
use parquet::file::metadata::{PageIndexPolicy, ParquetMetaData, RowGroupMetaData};
use parquet::file::reader::ChunkReader;
use parquet::file::statistics::Statistics;

use crate::columnar::{self, Projection};
use crate::error::{Error, Result};
use crate::formats::parquet::trace::{ReadLog, TraceReader};
use crate::locator::{
    BatchIter, Block, ColumnChunk, ColumnStats, FileIndex, IndexOptions, Locator, PageLocation,
    ReadRequest, RowsRequest, Stats, StatsColumns, repeated_names,
};
use crate::stats::StatsBuilder;

const FORMAT: &str = "parquet";

/// Locator of Parquet files (`.parquet`).
#[derive(Debug, Clone, Copy, Default)]
pub struct ParquetLocator;

impl Locator for ParquetLocator {
    fn rows_cost(&self) -> crate::locator::RowsCost {
        crate::locator::RowsCost::MostOfBlock
    }

    fn name(&self) -> &str {
        FORMAT
    }

    fn decodes_inline(&self) -> bool {
        true
    }

    fn decodes_string_views(&self) -> bool {
        true
    }

    fn extensions(&self) -> &[&str] {
        &["parquet"]
    }

    fn byte_layout(&self) -> Option<crate::ByteLayout> {
        Some(crate::ByteLayout {
            head: false,
            tail: true,
            block_end: crate::BlockEnd::Compressed,
        })
    }

    fn formats(&self) -> &[&str] {
        &[FORMAT]
    }

    fn index(&self, path: &Path, options: &IndexOptions) -> Result<FileIndex> {
        // Format libraries may panic on malformed input; that becomes a typed error.
        columnar::guard(path, FORMAT, || {
            self.index_reader(path, bounded(path)?, options)
        })
    }

    fn index_ranged(
        &self,
        path: &Path,
        size: u64,
        read: &crate::RangeRead,
        options: &IndexOptions,
    ) -> Option<Result<FileIndex>> {
        let reader = ranged::RangedReader {
            read: read.clone(),
            len: size,
        };
        // Format libraries may panic on malformed input; that becomes a typed error.
        Some(columnar::guard(path, FORMAT, || {
            self.index_reader(path, reader, options)
        }))
    }

    fn read(&self, path: &Path, request: &ReadRequest<'_>) -> Result<BatchIter> {
        // Format libraries may panic on malformed input; that becomes a typed error.
        columnar::guard(path, FORMAT, || {
            self.read_reader(path, bounded(path)?, request)
        })
        .map(|batches| columnar::guard_iter(path, FORMAT, batches))
    }

    fn read_rows(
        &self,
        path: &Path,
        request: &RowsRequest<'_>,
    ) -> Result<Vec<arrow_array::RecordBatch>> {
        // Format libraries may panic on malformed input; that becomes a typed error.
        columnar::guard(path, FORMAT, || {
            // The file mapped, shared by the parts: pages are decompressed straight from the
            // page cache, without a copy of every touched column chunk first.
            let bytes = take::mapped(path)?;
            take::read_rows(path, || Ok(bytes.clone()), request)
        })
    }
}

/// The file behind a reader that refuses ranges past its end before allocating for them.
fn bounded(path: &Path) -> Result<TraceReader> {
    let (file, _) = columnar::open(path)?;
    TraceReader::new(file, ReadLog::off()).map_err(|e| Error::io(path, e))
}

fn lib_err(path: &Path, e: parquet::errors::ParquetError) -> Error {
    Error::library(path, FORMAT, e)
}

fn load_metadata<R: ChunkReader>(path: &Path, reader: &R) -> Result<ArrowReaderMetadata> {
    let options = ArrowReaderOptions::new().with_page_index_policy(PageIndexPolicy::Optional);
    // A schema annotation newer than the parquet crate knows is dropped, as pyarrow ignores it.
    let meta = ArrowReaderMetadata::load(reader, options.clone())
        .or_else(|e| {
            footer::load_patched(reader, options, PageIndexPolicy::Optional).unwrap_or(Err(e))
        })
        .map_err(|e| lib_err(path, e))?;
    check_structure(path, meta.metadata())?;
    Ok(meta)
}

/// Refuses footers the format's rules forbid and that arrow-rs would still read, though
/// other readers (pyarrow) refuse them: a column that is not repeated whose chunk holds
/// another number of values than its row group has rows (every row has one value or null),
/// and a MAP whose key field is not required.
fn check_structure(path: &Path, meta: &ParquetMetaData) -> Result<()> {
    for (i, rg) in meta.row_groups().iter().enumerate() {
        for c in rg.columns() {
            if c.column_descr().max_rep_level() == 0 && c.num_values() != rg.num_rows() {
                return Err(Error::malformed(
                    path,
                    FORMAT,
                    format!(
                        "column {} holds {} values for {} rows",
                        c.column_path().string(),
                        c.num_values(),
                        rg.num_rows()
                    ),
                )
                .in_block(i as u64));
            }
        }
    }
    check_maps(path, meta.file_metadata().schema())
}

fn check_maps(path: &Path, t: &parquet::schema::types::Type) -> Result<()> {
    use parquet::basic::{ConvertedType, LogicalType, Repetition};
    if !t.is_group() {
        return Ok(());
    }
    let info = t.get_basic_info();
    let is_map = matches!(info.logical_type_ref(), Some(LogicalType::Map))
        || info.converted_type() == ConvertedType::MAP;
    if is_map {
        let key = t
            .get_fields()
            .first()
            .filter(|kv| kv.is_group())
            .and_then(|kv| kv.get_fields().first());
        if let Some(key) = key
            && key.get_basic_info().has_repetition()
            && key.get_basic_info().repetition() != Repetition::REQUIRED
        {
            return Err(Error::malformed(
                path,
                FORMAT,
                format!("the key of map {} is not required", info.name()),
            ));
        }
    }
    for f in t.get_fields() {
        check_maps(path, f)?;
    }
    Ok(())
}

/// Ends a read with an error when the decoder returns fewer rows than the footer promised
/// (arrow-rs ends some structures early without an error; a short read must not pass as
/// the whole range).
struct Counted {
    inner: BatchIter,
    path: std::path::PathBuf,
    want: u64,
    got: u64,
    done: bool,
}

impl Iterator for Counted {
    type Item = Result<arrow_array::RecordBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.inner.next() {
            Some(Ok(b)) => {
                self.got += b.num_rows() as u64;
                Some(Ok(b))
            }
            Some(Err(e)) => {
                self.done = true;
                Some(Err(e))
            }
            None => {
                self.done = true;
                (self.got < self.want).then(|| {
                    Err(Error::malformed(
                        &self.path,
                        FORMAT,
                        format!(
                            "the row groups hold {} rows where the footer says {}",
                            self.got, self.want
                        ),
                    ))
                })
            }
        }
    }
}

impl ParquetLocator {
    /// [`Locator::index`] over any Parquet `ChunkReader` (for example a
    /// [`crate::formats::parquet::trace::TraceReader`]); `path` only names the file in errors.
    pub fn index_reader<R: ChunkReader + 'static>(
        &self,
        path: &Path,
        reader: R,
        options: &IndexOptions,
    ) -> Result<FileIndex> {
        let meta = load_metadata(path, &reader)?;
        let blocks = blocks(path, meta.metadata())?;
        let row_count = blocks.last().map_or(0, |b| b.first_row + b.row_count);
        let schema = meta.schema().clone();
        let stats = if options.stats.is_none() {
            None
        } else {
            Some(stats(path, reader, &meta, &options.stats)?)
        };
        Ok(FileIndex {
            format: FORMAT.into(),
            row_count,
            blocks,
            schema,
            stats,
        })
    }

    /// [`Locator::read`] over any Parquet `ChunkReader`; `path` only names the file in errors.
    pub fn read_reader<R: ChunkReader + 'static>(
        &self,
        path: &Path,
        reader: R,
        request: &ReadRequest<'_>,
    ) -> Result<BatchIter> {
        let meta = string_views(load_metadata(path, &reader)?, request.schema.as_deref());
        let groups = meta.metadata().row_groups();
        // The footer is read anyway, so the row groups come from it; stored blocks are only
        // checked against it so that a stale index is reported instead of wrong rows.
        let file_blocks = blocks(path, meta.metadata())?;
        let total = file_blocks.last().map_or(0, |b| b.first_row + b.row_count);
        if let Some(stored) = request.blocks {
            columnar::check_blocks(path, stored, total)?;
            if stored.len() != groups.len() {
                return Err(Error::StaleIndex {
                    path: path.to_path_buf(),
                    message: format!(
                        "stored index has {} row groups, the file has {}",
                        stored.len(),
                        groups.len()
                    ),
                });
            }
        }
        let projection = Projection::new(path, meta.schema(), request.projection)?;
        let rows = columnar::clamp_rows(&request.rows, total);
        if rows.is_empty() {
            return Ok(columnar::empty());
        }
        let touched = columnar::touched_blocks(&file_blocks, &rows);
        let first_row = file_blocks[touched.start].first_row;
        let mut selectors = Vec::with_capacity(2);
        if rows.start > first_row {
            selectors.push(RowSelector::skip((rows.start - first_row) as usize));
        }
        selectors.push(RowSelector::select((rows.end - rows.start) as usize));
        let mask = match &projection {
            Some(p) => ProjectionMask::roots(meta.parquet_schema(), p.decode.iter().copied()),
            None => ProjectionMask::all(),
        };
        let reader = ParquetRecordBatchReaderBuilder::new_with_metadata(reader, meta)
            .with_row_groups(touched.collect())
            .with_row_selection(RowSelection::from(selectors))
            .with_row_selection_policy(RowSelectionPolicy::Selectors)
            .with_projection(mask)
            .with_batch_size(columnar::batch_size(request.batch_size))
            .build()
            .map_err(|e| lib_err(path, e))?;
        let owned = path.to_path_buf();
        let batches: BatchIter = Box::new(reader.map(move |r| {
            r.map_err(|e| Error::library(&owned, FORMAT, e))
                .and_then(|b| {
                    columnar::reorder(projection.as_ref(), b)
                        .map_err(|e| Error::library(&owned, FORMAT, e))
                })
        }));
        Ok(Box::new(Counted {
            inner: batches,
            path: path.to_path_buf(),
            want: rows.end - rows.start,
            got: 0,
            done: false,
        }))
    }
}

/// The reader metadata with every string column that `wanted` (the request's schema) types
/// as Utf8View decoded as Utf8View: arrow-rs then builds the views over the decoded pages
/// (and, for dictionary pages, copies one 16-byte view per row) instead of copying every
/// string into an offsets buffer. The values are the same; only the array type differs.
/// Without such a column, or when arrow-rs refuses the hint, the metadata is unchanged.
fn string_views(meta: ArrowReaderMetadata, wanted: Option<&Schema>) -> ArrowReaderMetadata {
    let Some(wanted) = wanted else {
        return meta;
    };
    let schema = meta.schema();
    let as_view = |f: &Field| {
        matches!(f.data_type(), DataType::Utf8 | DataType::LargeUtf8)
            && wanted
                .field_with_name(f.name())
                .is_ok_and(|w| w.data_type() == &DataType::Utf8View)
    };
    if !schema.fields().iter().any(|f| as_view(f)) {
        return meta;
    }
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .map(|f| {
            let f = f.as_ref().clone();
            if as_view(&f) {
                f.with_data_type(DataType::Utf8View)
            } else {
                f
            }
        })
        .collect();
    let hint = Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()));
    let options = ArrowReaderOptions::new().with_schema(hint);
    ArrowReaderMetadata::try_new(Arc::clone(meta.metadata()), options).unwrap_or(meta)
}

/// The row groups of a file as blocks, from the footer only.
fn blocks(path: &Path, meta: &ParquetMetaData) -> Result<Vec<Block>> {
    let offsets = meta.offset_index();
    let mut first_row = 0u64;
    let mut out = Vec::with_capacity(meta.row_groups().len());
    for (i, rg) in meta.row_groups().iter().enumerate() {
        let row_count = u64::try_from(rg.num_rows()).map_err(|_| {
            Error::malformed(
                path,
                FORMAT,
                format!("negative row count {}", rg.num_rows()),
            )
            .in_block(i as u64)
        })?;
        let columns: Vec<ColumnChunk> = rg
            .columns()
            .iter()
            .enumerate()
            .map(|(j, c)| {
                let (first_byte, compressed_size) = c.byte_range();
                let page_locations =
                    offsets
                        .and_then(|o| o.get(i))
                        .and_then(|o| o.get(j))
                        .map(|o| {
                            o.page_locations()
                                .iter()
                                .map(|p| PageLocation {
                                    offset: p.offset,
                                    compressed_page_size: p.compressed_page_size,
                                    first_row_index: p.first_row_index,
                                })
                                .collect()
                        });
                ColumnChunk {
                    path: c.column_path().string(),
                    first_byte,
                    compressed_size,
                    page_locations,
                }
            })
            .collect();
        out.push(Block {
            ordinal: i as u64,
            first_row,
            row_count,
            first_byte: columns.iter().map(|c| c.first_byte).min(),
            total_byte_size: u64::try_from(rg.total_byte_size()).ok(),
            compressed_size: u64::try_from(rg.compressed_size()).ok(),
            columns: Some(columns),
            stats: None,
            fine: None,
        });
        first_row = first_row.checked_add(row_count).ok_or_else(|| {
            Error::malformed(path, FORMAT, "row counts overflow").in_block(i as u64)
        })?;
    }
    Ok(out)
}

/// Statistics: from the footer for every column whose footer statistics are complete and
/// exact, from the decoded data for the others.
fn stats<R: ChunkReader + 'static>(
    path: &Path,
    reader: R,
    meta: &ArrowReaderMetadata,
    wanted: &StatsColumns,
) -> Result<Stats> {
    let schema = meta.schema();
    let descr = meta.parquet_schema();
    let mut stats = Stats::new();
    let mut from_data = Vec::new();
    let repeated = repeated_names(schema.fields().iter().map(|f| f.name().as_str()));
    for (i, field) in schema.fields().iter().enumerate() {
        if !wanted.wants(field.name())
            || repeated.contains(field.name().as_str())
            || !matches!(
                field.data_type(),
                DataType::Int64
                    | DataType::Float64
                    | DataType::Utf8
                    | DataType::LargeUtf8
                    | DataType::Utf8View
            )
        {
            continue;
        }
        // Only flat columns map one Arrow field to one leaf whose path is the field's name.
        let leaf = descr.columns().iter().position(|c| {
            let parts = c.path().parts();
            parts.len() == 1 && parts[0] == *field.name()
        });
        let footer = leaf
            .and_then(|leaf| footer_stats(meta.metadata().row_groups(), leaf, field.data_type()));
        match footer {
            Some(Some(s)) => {
                stats.insert(field.name().clone(), s);
            }
            // Complete statistics that saw no value: an all-null column is left out.
            Some(None) => {}
            None => from_data.push(i),
        }
    }
    if from_data.is_empty() {
        return Ok(stats);
    }
    let names: Vec<String> = from_data
        .iter()
        .map(|&i| schema.field(i).name().clone())
        .collect();
    let projected: SchemaRef = Arc::new(
        schema
            .project(&from_data)
            .map_err(|e| Error::Schema(e.to_string()))?,
    );
    let mut builder = StatsBuilder::new(&projected, &StatsColumns::Only(names));
    let mask = ProjectionMask::roots(descr, from_data.iter().copied());
    let batches = ParquetRecordBatchReaderBuilder::new_with_metadata(reader, meta.clone())
        .with_projection(mask)
        .with_batch_size(columnar::DEFAULT_BATCH_SIZE)
        .build()
        .map_err(|e| lib_err(path, e))?;
    for batch in batches {
        builder.update(&batch.map_err(|e| Error::library(path, FORMAT, e))?);
    }
    stats.extend(builder.finish());
    Ok(stats)
}

/// Folds the footer statistics of leaf column `leaf` over all row groups. `None` when some row
/// group lacks usable statistics (the data must be read); `Some(None)` when the statistics
/// are complete and the column holds no non-null value.
fn footer_stats(
    groups: &[RowGroupMetaData],
    leaf: usize,
    data_type: &DataType,
) -> Option<Option<ColumnStats>> {
    let mut acc: Option<ColumnStats> = None;
    for rg in groups {
        let rows = u64::try_from(rg.num_rows()).ok()?;
        if rows == 0 {
            continue;
        }
        let s = rg.columns().get(leaf)?.statistics()?;
        let nulls = s.null_count_opt();
        if nulls == Some(rows) {
            continue;
        }
        // The deprecated min/max fields use signed byte order for strings; they are not used.
        if s.is_min_max_deprecated() && matches!(data_type, DataType::Utf8) {
            return None;
        }
        let next = match (s, data_type) {
            (Statistics::Int64(v), DataType::Int64) => {
                // Fixed-width values are never truncated: present bounds are real values.
                let (min, max) = (*v.min_opt()?, *v.max_opt()?);
                ColumnStats::Int { min, max }
            }
            (Statistics::Double(v), DataType::Float64) => {
                let (min, max) = (*v.min_opt()?, *v.max_opt()?);
                // Writers may keep a NaN bound, which does not tell the exact value: the data
                // decides then. A zero bound (writers store `-0.0` for a minimum and `0.0` for
                // a maximum whatever zero the data holds) is exact, as stats write zeros
                // unsigned (`ColumnStats::float`).
                if min.is_nan() || max.is_nan() {
                    return None;
                }
                ColumnStats::float(min, max)
            }
            (Statistics::ByteArray(v), DataType::Utf8) => {
                // Byte-array bounds may be truncated; only bounds marked exact are used.
                if !v.min_is_exact() || !v.max_is_exact() {
                    return None;
                }
                let min = std::str::from_utf8(v.min_opt()?.data()).ok()?.to_string();
                let max = std::str::from_utf8(v.max_opt()?.data()).ok()?.to_string();
                ColumnStats::Str {
                    min_str: min,
                    max_str: max,
                }
            }
            _ => return None,
        };
        acc = Some(match (acc, next) {
            (None, n) => n,
            (Some(ColumnStats::Int { min, max }), ColumnStats::Int { min: a, max: b }) => {
                ColumnStats::Int {
                    min: min.min(a),
                    max: max.max(b),
                }
            }
            (Some(ColumnStats::Float { min, max }), ColumnStats::Float { min: a, max: b }) => {
                ColumnStats::float(min.min(a), max.max(b))
            }
            (
                Some(ColumnStats::Str { min_str, max_str }),
                ColumnStats::Str {
                    min_str: a,
                    max_str: b,
                },
            ) => ColumnStats::Str {
                min_str: if a < min_str { a } else { min_str },
                max_str: if b > max_str { b } else { max_str },
            },
            _ => return None,
        });
    }
    Some(acc)
}

#[cfg(test)]
mod view_tests;

#[cfg(test)]
mod structure_tests {
    use super::check_maps;
    use parquet::schema::parser::parse_message_type;

    /// A MAP whose key may be null is refused (the format requires keys); a required key passes.
    #[test]
    fn map_keys_must_be_required() {
        let schema = |rep: &str| {
            format!(
                "message m {{ optional group my_map (MAP) {{ repeated group key_value {{
                   {rep} binary key (UTF8); optional binary value (UTF8); }} }} }}"
            )
        };
        let path = std::path::Path::new("m.parquet");
        let bad = parse_message_type(&schema("optional")).unwrap();
        let err = check_maps(path, &bad).unwrap_err().to_string();
        assert!(
            err.contains("the key of map my_map is not required"),
            "{err}"
        );
        let good = parse_message_type(&schema("required")).unwrap();
        check_maps(path, &good).unwrap();
    }
}
