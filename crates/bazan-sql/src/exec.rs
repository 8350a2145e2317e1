//! `LakeScanExec`: the physical scan of a lake. Each partition is a list of [`Part`]s (local
//! row ranges of files, cut at block boundaries) read through the facade's
//! [`bazan::Lake::read_file_rows`], which checks each file's size and mtime against the map
//! before reading it. A scan that needs no column of the files (only `_gid`, `_path` or row
//! counts) opens no file at all. Parquet and Arrow IPC parts are decoded on the thread that
//! polls the partition, other formats on a blocking thread ([`PartsReader`]); when the
//! table types strings as Utf8View, the facade is asked for views (Parquet decodes them so).

use std::collections::VecDeque;
use std::fmt;
use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, RecordBatch, RecordBatchOptions, StringArray};
use arrow_schema::{DataType, SchemaRef};
use bazan::{Lake, LakeReader, ScanOptions};
use datafusion::common::stats::Precision;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{DataFusionError, Result, Statistics};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::{EquivalenceProperties, Partitioning, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::metrics::Count;
use datafusion::physical_plan::metrics::{ExecutionPlanMetricsSet, MetricBuilder, MetricsSet};
use datafusion::physical_plan::statistics::StatisticsArgs;
use datafusion::physical_plan::stream::{
    RecordBatchReceiverStreamBuilder, RecordBatchStreamAdapter,
};
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties};

use crate::filters::{GID, PATH};
use crate::parts::Part;

/// Names of the counters every lake scan keeps (per partition, summed by DataFusion).
pub mod counters {
    /// File reads (each after its stale check; a file split over partitions counts once per
    /// partition).
    pub const FILES_OPENED: &str = "files_opened";
    /// File blocks read (a file without blocks counts as one).
    pub const BLOCKS_READ: &str = "blocks_read";
    /// Rows returned.
    pub const ROWS: &str = "rows_scanned";
}

/// The physical scan of a lake map: see the module documentation.
#[derive(Debug, Clone)]
pub struct LakeScanExec {
    lake: Arc<Lake>,
    /// Output column names, in order (unified names, `_gid`, `_path`).
    columns: Vec<String>,
    /// Parts of each partition.
    partitions: Vec<Vec<Part>>,
    /// Blocks of the lake in all (for reports: the share of blocks read).
    blocks_total: u64,
    props: Arc<PlanProperties>,
    metrics: ExecutionPlanMetricsSet,
}

impl LakeScanExec {
    pub(crate) fn new(
        lake: Arc<Lake>,
        schema: SchemaRef,
        columns: Vec<String>,
        partitions: Vec<Vec<Part>>,
        blocks_total: u64,
    ) -> Self {
        let partitions = if partitions.is_empty() {
            vec![Vec::new()]
        } else {
            partitions
        };
        let props = PlanProperties::new(
            EquivalenceProperties::new(schema),
            Partitioning::UnknownPartitioning(partitions.len()),
            EmissionType::Incremental,
            Boundedness::Bounded,
        );
        LakeScanExec {
            lake,
            columns,
            partitions,
            blocks_total,
            props: Arc::new(props),
            metrics: ExecutionPlanMetricsSet::new(),
        }
    }

    /// The lake this scan reads.
    pub fn lake(&self) -> &Arc<Lake> {
        &self.lake
    }

    /// Output column names, in order.
    pub fn columns(&self) -> &[String] {
        &self.columns
    }

    /// `(entry index, local row start, local row end, blocks)` of every part of every
    /// partition: the rows this scan reads.
    pub fn partitions(&self) -> Vec<Vec<(usize, u64, u64, u64)>> {
        self.partitions
            .iter()
            .map(|p| {
                p.iter()
                    .map(|x| (x.file, x.start, x.end, x.blocks))
                    .collect()
            })
            .collect()
    }

    /// The same scan with other partitions (the codec and the distributed planner rebuild
    /// scans this way).
    pub fn with_partitions(&self, partitions: Vec<Vec<(usize, u64, u64, u64)>>) -> Self {
        let parts = partitions
            .into_iter()
            .map(|p| {
                p.into_iter()
                    .map(|(file, start, end, blocks)| Part {
                        file,
                        start,
                        end,
                        blocks,
                    })
                    .collect()
            })
            .collect();
        LakeScanExec::new(
            Arc::clone(&self.lake),
            self.schema(),
            self.columns.clone(),
            parts,
            self.blocks_total,
        )
    }

    /// The scan cut into `tasks` scans of the same partition count that together read the
    /// same rows (the block groups re-planned over `tasks` × partitions), for running one
    /// scan on several workers.
    pub fn split_for_tasks(&self, tasks: usize) -> Vec<LakeScanExec> {
        let tasks = tasks.max(1);
        let per_task = self.partitions.len().max(1);
        let ranges: Vec<(usize, std::ops::Range<u64>)> = self
            .partitions
            .iter()
            .flatten()
            .map(|p| (p.file, p.start..p.end))
            .collect();
        let lake = Arc::clone(&self.lake);
        let block_starts = move |i: usize| -> Vec<u64> {
            lake.blocks(i)
                .map(|b| b.iter().map(|b| b.first_row).collect())
                .unwrap_or_default()
        };
        let mut groups =
            crate::parts::plan_partitions(&ranges, &block_starts, tasks * per_task).into_iter();
        (0..tasks)
            .map(|_| {
                let mine: Vec<Vec<Part>> = (0..per_task)
                    .map(|_| groups.next().unwrap_or_default())
                    .collect();
                LakeScanExec::new(
                    Arc::clone(&self.lake),
                    self.schema(),
                    self.columns.clone(),
                    mine,
                    self.blocks_total,
                )
            })
            .collect()
    }

    /// Blocks of the whole lake (a file without blocks counts as one).
    pub fn blocks_total(&self) -> u64 {
        self.blocks_total
    }

    /// Blocks this scan will read, over all partitions.
    pub fn blocks_planned(&self) -> u64 {
        self.partitions.iter().flatten().map(|p| p.blocks).sum()
    }

    /// Rows this scan returns, over all partitions.
    pub fn rows_planned(&self) -> u64 {
        self.partitions.iter().flatten().map(Part::rows).sum()
    }

    /// True when the scan reads no column of the files (only virtual columns or counts).
    fn virtual_only(&self) -> bool {
        self.columns.iter().all(|c| c == GID || c == PATH)
    }
}

impl DisplayAs for LakeScanExec {
    fn fmt_as(&self, t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        match t {
            DisplayFormatType::Default | DisplayFormatType::Verbose => write!(
                f,
                "LakeScanExec: lake={}, columns=[{}], partitions={}, rows={}, blocks={}/{}",
                self.lake.root().display(),
                self.columns.join(", "),
                self.partitions.len(),
                self.rows_planned(),
                self.blocks_planned(),
                self.blocks_total
            ),
            DisplayFormatType::TreeRender => write!(f, "rows={}", self.rows_planned()),
        }
    }
}

impl ExecutionPlan for LakeScanExec {
    fn name(&self) -> &str {
        "LakeScanExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.props
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        Vec::new()
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn with_new_children(
        self: Arc<Self>,
        _children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        Ok(self)
    }

    fn metrics(&self) -> Option<MetricsSet> {
        Some(self.metrics.clone_inner())
    }

    fn statistics_from_inputs(
        &self,
        _input_stats: &[Arc<Statistics>],
        args: &StatisticsArgs,
    ) -> Result<Arc<Statistics>> {
        let rows: u64 = match args.partition() {
            Some(p) => self
                .partitions
                .get(p)
                .map_or(0, |ps| ps.iter().map(Part::rows).sum()),
            None => self.rows_planned(),
        };
        let mut stats = Statistics::new_unknown(&self.schema());
        stats.num_rows = Precision::Exact(rows as usize);
        Ok(Arc::new(stats))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let parts = self.partitions.get(partition).cloned().ok_or_else(|| {
            DataFusionError::Internal(format!(
                "LakeScanExec: partition {partition} of {}",
                self.partitions.len()
            ))
        })?;
        let schema = self.schema();
        let string_views = schema
            .fields()
            .iter()
            .any(|f| f.data_type() == &DataType::Utf8View);
        let metric =
            |name: &'static str| MetricBuilder::new(&self.metrics).counter(name, partition);
        let inline = self.virtual_only()
            || parts
                .iter()
                .all(|p| self.lake.locator(p.file).is_ok_and(|l| l.decodes_inline()));
        let reader = PartsReader {
            lake: Arc::clone(&self.lake),
            schema: Arc::clone(&schema),
            columns: self.columns.clone(),
            virtual_only: self.virtual_only(),
            string_views,
            batch_size: context.session_config().batch_size().max(1),
            parts: parts.into(),
            current: None,
            files_opened: metric(counters::FILES_OPENED),
            blocks_read: metric(counters::BLOCKS_READ),
            rows_out: metric(counters::ROWS),
        };
        if inline {
            return Ok(Box::pin(RecordBatchStreamAdapter::new(
                schema,
                futures::stream::iter(reader),
            )));
        }
        let mut builder = RecordBatchReceiverStreamBuilder::new(schema, 2);
        let tx = builder.tx();
        builder.spawn_blocking(move || {
            for batch in reader {
                if tx.blocking_send(batch).is_err() {
                    break;
                }
            }
            Ok(())
        });
        Ok(builder.build())
    }
}

/// The batches of one partition's parts, in order. Parts whose locator
/// [decodes inline](bazan::Locator::decodes_inline) (Parquet, Arrow IPC: column chunks decode
/// into a few large buffers) are decoded on the thread that polls the partition, so that the
/// operator above consumes each batch on the core that decoded it; parts of the other formats
/// (text parsing, run-time handlers) are read on a blocking thread of their own, up to two
/// batches ahead of the consumer: measured faster for CSV and NDJSON.
struct PartsReader {
    lake: Arc<Lake>,
    schema: SchemaRef,
    columns: Vec<String>,
    /// Only `_gid`/`_path` (or no column): batches come from the map, no file is opened.
    virtual_only: bool,
    /// The schema types strings as Utf8View (the table's choice): Parquet decodes them so.
    string_views: bool,
    batch_size: usize,
    parts: VecDeque<Part>,
    /// The reader of the part being read, or the next row of a virtual part.
    current: Option<Current>,
    files_opened: Count,
    blocks_read: Count,
    rows_out: Count,
}

/// Where a [`PartsReader`] is inside its current part.
enum Current {
    File(Box<LakeReader>),
    Virtual { file: usize, at: u64, end: u64 },
}

impl PartsReader {
    fn step(&mut self) -> Result<Option<RecordBatch>> {
        loop {
            match &mut self.current {
                Some(Current::File(reader)) => match reader.next_batch() {
                    Some(batch) => {
                        let batch = conform(&self.schema, batch.map_err(external)?)?;
                        self.rows_out.add(batch.num_rows());
                        return Ok(Some(batch));
                    }
                    None => self.current = None,
                },
                Some(Current::Virtual { file, at, end }) if *at < *end => {
                    let n = (*end - *at).min(self.batch_size as u64);
                    let batch =
                        virtual_batch(&self.lake, &self.schema, &self.columns, *file, *at, n)?;
                    *at += n;
                    self.rows_out.add(n as usize);
                    return Ok(Some(batch));
                }
                Some(Current::Virtual { .. }) => self.current = None,
                None => {
                    let Some(part) = self.parts.pop_front() else {
                        return Ok(None);
                    };
                    if self.virtual_only {
                        self.current = Some(Current::Virtual {
                            file: part.file,
                            at: part.start,
                            end: part.end,
                        });
                        continue;
                    }
                    let options = ScanOptions {
                        columns: Some(self.columns.clone()),
                        batch_size: self.batch_size,
                        string_views: self.string_views,
                        ..ScanOptions::default()
                    };
                    let reader = self
                        .lake
                        .read_file_rows(part.file, part.start..part.end, &options)
                        .map_err(external)?;
                    self.files_opened.add(1);
                    self.blocks_read.add(part.blocks as usize);
                    self.current = Some(Current::File(Box::new(reader)));
                }
            }
        }
    }
}

impl Iterator for PartsReader {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.step() {
            Ok(batch) => batch.map(Ok),
            Err(e) => {
                // The stream ends after its error.
                self.parts.clear();
                self.current = None;
                Some(Err(e))
            }
        }
    }
}

/// A facade error as a DataFusion error (its message names the file).
pub(crate) fn external(e: bazan::Error) -> DataFusionError {
    DataFusionError::External(Box::new(e))
}

/// A facade batch in the scan's schema: `_path` arrives dictionary-encoded and is cast to
/// Utf8; every other column already has the scan's type.
fn conform(schema: &SchemaRef, batch: RecordBatch) -> Result<RecordBatch> {
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(batch.num_columns());
    for (field, array) in schema.fields().iter().zip(batch.columns()) {
        if array.data_type() == field.data_type() {
            columns.push(Arc::clone(array));
        } else {
            columns.push(arrow_cast::cast(array, field.data_type())?);
        }
    }
    let options = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
    Ok(RecordBatch::try_new_with_options(
        Arc::clone(schema),
        columns,
        &options,
    )?)
}

/// `n` rows from local row `at` of file `file` holding only virtual columns, built from the
/// map without opening the file.
fn virtual_batch(
    lake: &Lake,
    schema: &SchemaRef,
    columns: &[String],
    file: usize,
    at: u64,
    n: u64,
) -> Result<RecordBatch> {
    let entry = lake.map().entry(file);
    let first = (entry.first_global_row + at) as i64;
    let mut arrays: Vec<ArrayRef> = Vec::with_capacity(columns.len());
    for (name, field) in columns.iter().zip(schema.fields()) {
        let array: ArrayRef = match name.as_str() {
            GID => Arc::new(Int64Array::from_iter_values(first..first + n as i64)),
            _ => Arc::new(StringArray::from_iter_values(std::iter::repeat_n(
                entry.path, n as usize,
            ))),
        };
        debug_assert!(matches!(
            field.data_type(),
            DataType::Int64 | DataType::Utf8
        ));
        arrays.push(array);
    }
    let options = RecordBatchOptions::new().with_row_count(Some(n as usize));
    Ok(RecordBatch::try_new_with_options(
        Arc::clone(schema),
        arrays,
        &options,
    )?)
}
