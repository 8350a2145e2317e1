//! `LakeScanExec`: the physical scan of a lake. Each partition is a list of [`Part`]s (local
//! row ranges of files, cut at block boundaries) read through the facade's
//! [`bazan::Lake::read_file_rows`], which checks each file's size and mtime against the map
//! before reading it, in the types the table plans with (strings and `_path` as Utf8View,
//! [`bazan::ScanOptions::string_views`]). A scan that needs no column of the files (only
//! `_gid`, `_path` or row counts) opens no file at all: the facade's
//! [`bazan::Lake::map_rows`] answers it from the map. Parquet and Arrow IPC parts are decoded
//! on the thread that polls the partition, other formats on a blocking thread
//! ([`PartsReader`]).

use std::collections::VecDeque;
use std::fmt;
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use bazan::{GID_COLUMN, Lake, LakeReader, PATH_COLUMN, ScanOptions};
use datafusion::common::stats::Precision;
use datafusion::common::{DataFusionError, Result, Statistics};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_plan::metrics::Count;
use datafusion::physical_plan::metrics::{ExecutionPlanMetricsSet, MetricBuilder, MetricsSet};
use datafusion::physical_plan::statistics::StatisticsArgs;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties};

use crate::leaf::{leaf_plan_methods, leaf_properties, read_on_blocking_thread};
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
        LakeScanExec {
            lake,
            columns,
            props: leaf_properties(schema, partitions.len()),
            partitions,
            blocks_total,
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

    /// The parts of every partition: the rows this scan reads.
    pub fn partitions(&self) -> &[Vec<Part>] {
        &self.partitions
    }

    /// The same scan with other partitions (the codec and the distributed planner rebuild
    /// scans this way).
    pub fn with_partitions(&self, partitions: Vec<Vec<Part>>) -> Self {
        LakeScanExec::new(
            Arc::clone(&self.lake),
            self.schema(),
            self.columns.clone(),
            partitions,
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
        self.columns
            .iter()
            .all(|c| c == GID_COLUMN || c == PATH_COLUMN)
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
    leaf_plan_methods!("LakeScanExec");

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
        let metric =
            |name: &'static str| MetricBuilder::new(&self.metrics).counter(name, partition);
        let inline = self.virtual_only()
            || parts
                .iter()
                .all(|p| self.lake.locator(p.file).is_ok_and(|l| l.decodes_inline()));
        let reader = PartsReader {
            lake: Arc::clone(&self.lake),
            columns: self.columns.clone(),
            virtual_only: self.virtual_only(),
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
        Ok(read_on_blocking_thread(schema, move |send| {
            for batch in reader {
                if !send(batch?) {
                    break;
                }
            }
            Ok(())
        }))
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
    columns: Vec<String>,
    /// Only `_gid`/`_path` (or no column): batches come from the map, no file is opened.
    virtual_only: bool,
    batch_size: usize,
    parts: VecDeque<Part>,
    /// The reader of the part being read.
    current: Option<Box<LakeReader>>,
    files_opened: Count,
    blocks_read: Count,
    rows_out: Count,
}

impl PartsReader {
    fn step(&mut self) -> Result<Option<RecordBatch>> {
        loop {
            if let Some(reader) = &mut self.current {
                match reader.next_batch() {
                    Some(batch) => {
                        let batch = batch.map_err(external)?;
                        self.rows_out.add(batch.num_rows());
                        return Ok(Some(batch));
                    }
                    None => self.current = None,
                }
            }
            let Some(part) = self.parts.pop_front() else {
                return Ok(None);
            };
            let options = ScanOptions {
                columns: Some(self.columns.clone()),
                batch_size: self.batch_size,
                string_views: true,
                ..ScanOptions::default()
            };
            let rows = part.start..part.end;
            let reader = if self.virtual_only {
                self.lake.map_rows(part.file, rows, &options)
            } else {
                self.lake.read_file_rows(part.file, rows, &options)
            };
            self.current = Some(Box::new(reader.map_err(external)?));
            if !self.virtual_only {
                self.files_opened.add(1);
                self.blocks_read.add(part.blocks as usize);
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
