//! `LakeTable`: a DataFusion [`TableProvider`] over a loaded lake map.
//!
//! Schema: the facade's scan schema with string views ([`bazan::ScanOptions::string_views`]):
//! the lake's unified schema with strings as Utf8View, plus `_gid` (Int64, the global row
//! number) and `_path` (Utf8View, the file's relative path). Filters on `_gid` and `_path` are exact (served by
//! reading only the selected rows); comparisons of Int64, Float64 and Utf8 columns with
//! literals prune files, and blocks that carry statistics, by the map's min/max statistics
//! (inexact: DataFusion filters the
//! rows of the files kept). Row counts are exact, from the map, so `count(*)` reads nothing.

use std::collections::HashSet;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use arrow_schema::SchemaRef;
use async_trait::async_trait;
use bazan::{ColumnStats, GID_COLUMN, Lake, PATH_COLUMN, ScanOptions};
use datafusion::catalog::Session;
use datafusion::common::stats::Precision;
use datafusion::common::{Result, Statistics};
use datafusion::datasource::{TableProvider, TableType};
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown};
use datafusion::physical_plan::ExecutionPlan;

use crate::exec::{LakeScanExec, external};
use crate::filters::{Bound, Catalog, FileFacts};
use crate::parts::{Part, file_ranges, plan_partitions};
use crate::rowset::RowSet;

/// A lake map as a SQL table; see the module documentation.
#[derive(Debug)]
pub struct LakeTable {
    lake: Arc<Lake>,
    schema: SchemaRef,
    /// Files, rows and unified column types (bounds filled in on first need).
    catalog: Catalog,
    /// The catalog with every file's bounds, built when a filter first needs them.
    with_bounds: OnceLock<Result<Catalog, String>>,
    /// Blocks of the lake (a file without blocks counts as one), counted on first need.
    blocks_total: OnceLock<u64>,
    /// Answer from the map without checking the files it answers for (see
    /// [`LakeTable::with_trust_map`]).
    trust_map: bool,
}

impl LakeTable {
    /// Loads the map of the lake at `root` (the directory, or its map file).
    pub fn open(root: &Path) -> Result<Self> {
        let lake = bazan::load_map(root).map_err(external)?;
        LakeTable::new(Arc::new(lake))
    }

    /// A table over a loaded lake.
    pub fn new(lake: Arc<Lake>) -> Result<Self> {
        let unified = lake.schema().map_err(external)?;
        // Strings as views, as DataFusion's own Parquet tables type them: Parquet decodes them
        // without copying, and grouping and comparing views is faster. The scans ask the
        // facade for the same types, so no batch is cast on its way in or out.
        let schema = lake
            .scan_schema(&ScanOptions {
                with_gid: true,
                with_path: true,
                string_views: true,
                ..ScanOptions::default()
            })
            .map_err(external)?;
        let map = lake.map();
        let mut files = Vec::with_capacity(map.total_files());
        for i in 0..map.total_files() {
            let e = map.entry(i);
            let own = lake.file_schema(i).map_err(external)?;
            files.push(FileFacts {
                path: e.path.to_string(),
                first: e.first_global_row,
                rows: e.row_count,
                columns: Some(
                    own.fields()
                        .iter()
                        .map(|f| f.name().clone())
                        .collect::<HashSet<_>>(),
                ),
                bounds: Vec::new(),
            });
        }
        let catalog = Catalog {
            total: lake.total_rows(),
            files,
            columns: unified
                .fields()
                .iter()
                .map(|f| (f.name().clone(), f.data_type().clone()))
                .collect(),
        };
        Ok(LakeTable {
            lake,
            schema,
            catalog,
            with_bounds: OnceLock::new(),
            blocks_total: OnceLock::new(),
            trust_map: false,
        })
    }

    /// With `trust` true, a scan answers from the map (row counts, `_gid` and `_path`, files
    /// skipped by their statistics) without checking those files against the disk first.
    /// By default every file whose rows are in a scan's scope and that the scan does not
    /// read is checked (size and mtime, [`Lake::check_fresh`]) when the scan is planned, and
    /// a changed file fails the query `Stale` as a read of it would.
    pub fn with_trust_map(mut self, trust: bool) -> Self {
        self.trust_map = trust;
        self
    }

    /// The lake behind the table.
    pub fn lake(&self) -> &Arc<Lake> {
        &self.lake
    }

    /// The catalog with the map's per-file statistics.
    fn bounds(&self) -> Result<&Catalog> {
        let built = self.with_bounds.get_or_init(|| {
            let mut catalog = self.catalog.clone();
            for (i, file) in catalog.files.iter_mut().enumerate() {
                let stats = self.lake.file_stats(i).map_err(|e| e.to_string())?;
                file.bounds = bounds_of(stats.as_ref());
            }
            Ok(catalog)
        });
        built
            .as_ref()
            .map_err(|m| datafusion::common::DataFusionError::Execution(m.clone()))
    }

    /// Blocks of every file (a file without blocks counts as one).
    fn blocks_total(&self) -> Result<u64> {
        if let Some(n) = self.blocks_total.get() {
            return Ok(*n);
        }
        let mut n = 0;
        for i in 0..self.catalog.files.len() {
            n += (self.lake.blocks(i).map_err(external)?.len() as u64).max(1);
        }
        Ok(*self.blocks_total.get_or_init(|| n))
    }

    /// A scan of `columns` (by name) reading these parts, per partition (how the codec
    /// rebuilds a serialized scan); a part outside the map is a planning error.
    pub fn exec(&self, columns: &[String], partitions: Vec<Vec<Part>>) -> Result<LakeScanExec> {
        let indices = columns
            .iter()
            .map(|c| self.schema.index_of(c))
            .collect::<Result<Vec<_>, _>>()?;
        let schema = Arc::new(self.schema.project(&indices)?);
        let files = self.catalog.files.len();
        for p in partitions.iter().flatten() {
            let rows = self.catalog.files.get(p.file).map(|f| f.rows);
            if rows.is_none_or(|r| p.start > p.end || p.end > r) {
                return Err(datafusion::common::DataFusionError::Plan(format!(
                    "lake scan part {}:{}..{} is outside the map of {} ({files} files)",
                    p.file,
                    p.start,
                    p.end,
                    self.lake.root().display()
                )));
            }
        }
        Ok(LakeScanExec::new(
            Arc::clone(&self.lake),
            schema,
            columns.to_vec(),
            partitions,
            self.blocks_total()?,
        ))
    }

    /// The scan for these filters, projection and limit (also used by tests and the bench to
    /// see the plan of a scan without running a query).
    pub fn plan_scan(
        &self,
        projection: Option<&[usize]>,
        filters: &[Expr],
        limit: Option<usize>,
        target_partitions: usize,
    ) -> Result<LakeScanExec> {
        let mut rows = RowSet::all(self.catalog.total);
        let mut inexact = Vec::new();
        let mut whole = true;
        for f in filters {
            match self.catalog.exact_rows(f) {
                Some(set) => {
                    rows = rows.intersect(&set);
                    whole = false;
                }
                None => inexact.push(f),
            }
        }
        // The rows the answer covers, before files are skipped by their statistics.
        let mut scope = rows.clone();
        if !inexact.is_empty() {
            let catalog = self.bounds()?;
            let mut dropped = Vec::new();
            for (i, file) in catalog.files.iter().enumerate() {
                if file.rows == 0 {
                    continue;
                }
                if !inexact.iter().all(|f| catalog.may_match(f, file)) {
                    dropped.push(file.first..file.first + file.rows);
                    continue;
                }
                // Blocks with their own statistics (the row formats) are pruned alike.
                let blocks = self.lake.blocks(i).map_err(external)?;
                for b in blocks.iter() {
                    let Some(stats) = &b.stats else { continue };
                    // The file's columns and path were judged above.
                    let block = FileFacts {
                        path: String::new(),
                        first: file.first + b.first_row,
                        rows: b.row_count,
                        columns: None,
                        bounds: bounds_of(Some(stats)),
                    };
                    if b.row_count > 0 && !inexact.iter().all(|f| catalog.may_match(f, &block)) {
                        dropped.push(block.first..block.first + block.rows);
                    }
                }
            }
            rows = rows.intersect(&RowSet::from_ranges(dropped).complement(self.catalog.total));
        }
        let mut target = target_partitions.max(1);
        if let Some(n) = limit
            && inexact.is_empty()
        {
            rows = rows.truncate(n as u64);
            scope = rows.clone();
            whole = false;
            target = 1;
        }
        let ranges = file_ranges(&rows, &self.catalog.files);
        let block_starts = |i: usize| -> Vec<u64> {
            match self.lake.blocks(i) {
                Ok(blocks) => blocks.iter().map(|b| b.first_row).collect(),
                Err(_) => Vec::new(),
            }
        };
        let partitions = plan_partitions(&ranges, &block_starts, target);
        let (schema, columns) = match projection {
            Some(p) => (
                Arc::new(self.schema.project(p)?),
                p.iter()
                    .map(|&i| self.schema.field(i).name().clone())
                    .collect::<Vec<_>>(),
            ),
            None => (
                Arc::clone(&self.schema),
                self.schema
                    .fields()
                    .iter()
                    .map(|f| f.name().clone())
                    .collect(),
            ),
        };
        if !self.trust_map {
            let virtual_only = columns.iter().all(|c| c == GID_COLUMN || c == PATH_COLUMN);
            self.check_map_answers(&scope, whole, &partitions, virtual_only)?;
        }
        Ok(LakeScanExec::new(
            Arc::clone(&self.lake),
            schema,
            columns,
            partitions,
            self.blocks_total()?,
        ))
    }

    /// Checks every file of `scope` that the scan answers for from the map (all of them for
    /// a scan of virtual columns only, else those it skips) against the disk. `whole`: the
    /// scope is the whole table, so files without rows are in it too.
    fn check_map_answers(
        &self,
        scope: &RowSet,
        whole: bool,
        partitions: &[Vec<Part>],
        virtual_only: bool,
    ) -> Result<()> {
        let read: HashSet<usize> = if virtual_only {
            HashSet::new()
        } else {
            partitions.iter().flatten().map(|p| p.file).collect()
        };
        let mut files: Vec<usize> = if whole {
            (0..self.catalog.files.len()).collect()
        } else {
            file_ranges(scope, &self.catalog.files)
                .into_iter()
                .map(|(i, _)| i)
                .collect()
        };
        files.dedup();
        files.retain(|i| !read.contains(i));
        self.lake.check_fresh(&files).map_err(external)
    }
}

#[async_trait]
impl TableProvider for LakeTable {
    fn schema(&self) -> SchemaRef {
        Arc::clone(&self.schema)
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> Result<Vec<TableProviderFilterPushDown>> {
        Ok(filters
            .iter()
            .map(|f| {
                if self.catalog.exact_rows(f).is_some() {
                    TableProviderFilterPushDown::Exact
                } else if self.catalog.can_prune(f) {
                    TableProviderFilterPushDown::Inexact
                } else {
                    TableProviderFilterPushDown::Unsupported
                }
            })
            .collect())
    }

    fn statistics(&self) -> Option<Statistics> {
        let mut stats = Statistics::new_unknown(&self.schema);
        stats.num_rows = Precision::Exact(self.catalog.total as usize);
        Some(stats)
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let target = state.config().target_partitions();
        let exec = self.plan_scan(projection.map(|p| p.as_slice()), filters, limit, target)?;
        Ok(Arc::new(exec))
    }
}

/// The bounds of a file's or a block's statistics, as the filters compare them.
fn bounds_of(stats: Option<&bazan::Stats>) -> Vec<(String, Bound)> {
    stats
        .into_iter()
        .flatten()
        .map(|(column, s)| {
            let bound = match s {
                ColumnStats::Int { min, max } => Bound::Int(*min, *max),
                ColumnStats::Float { min, max } => Bound::Float(*min, *max),
                ColumnStats::Str { min_str, max_str } => {
                    Bound::Str(min_str.clone(), max_str.clone())
                }
            };
            (column.clone(), bound)
        })
        .collect()
}
