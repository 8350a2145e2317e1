//! `TsFileTable`: one table of a table-model Apache TsFile as a DataFusion [`TableProvider`]
//! (columns `time`, then the table's TAG, FIELD and ATTRIBUTE columns).
//!
//! Pushed down, exactly: comparisons and `BETWEEN` of `time` with literals become the
//! query's inclusive time range, which the reader uses to skip chunks and pages by their
//! statistics; `tag = 'value'` keeps only the devices with that tag value; the projection
//! reads only the named measurements.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{RecordBatch, RecordBatchOptions};
use arrow_schema::{DataType, SchemaRef, TimeUnit};
use async_trait::async_trait;
use bazan::tsfile::{TableQuery, TimeRange};
use datafusion::catalog::Session;
use datafusion::common::{DataFusionError, Result, ScalarValue};
use datafusion::datasource::{TableProvider, TableType};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::{Between, BinaryExpr, Expr, Operator, TableProviderFilterPushDown};
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties};

use crate::exec::external;
use crate::leaf::{leaf_plan_methods, leaf_properties, read_on_blocking_thread};

/// The time column of every table-model query.
const TIME: &str = "time";

/// One table of a TsFile as a SQL table; see the module documentation.
#[derive(Debug, Clone)]
pub struct TsFileTable {
    path: PathBuf,
    table: String,
    schema: SchemaRef,
    /// Names of the TAG columns.
    tags: Vec<String>,
}

impl TsFileTable {
    /// Opens table `table` of the TsFile at `path`.
    pub fn open(path: &Path, table: &str) -> Result<Self> {
        let reader = bazan::tsfile::open(path).map_err(external)?;
        let schema = reader
            .table_arrow_schema(table)
            .map_err(|e| external(bazan::Error::from(e).at(path)))?;
        let tags = reader
            .table_schema(table)
            .map(|s| {
                s.columns
                    .iter()
                    .filter(|c| c.category == bazan::tsfile::ColumnCategory::Tag)
                    .map(|c| c.schema.name.clone())
                    .collect()
            })
            .unwrap_or_default();
        Ok(TsFileTable {
            path: path.to_path_buf(),
            table: table.to_string(),
            schema,
            tags,
        })
    }

    /// The TAG columns of the table.
    pub fn tags(&self) -> &[String] {
        &self.tags
    }

    /// The table names of the file (sorted; empty for a tree-model file).
    pub fn table_names(path: &Path) -> Result<Vec<String>> {
        bazan::tsfile::table_names(path).map_err(external)
    }

    /// The time range a filter sets, when it is a comparison of `time` with a literal of its
    /// type (`None` otherwise).
    fn time_range(&self, expr: &Expr) -> Option<TimeRange> {
        let time_type = self.schema.field_with_name(TIME).ok()?.data_type().clone();
        let value = |e: &Expr| -> Option<i64> {
            let Expr::Literal(v, _) = e else { return None };
            match (&time_type, v) {
                (DataType::Int64, ScalarValue::Int64(Some(x))) => Some(*x),
                (
                    DataType::Timestamp(TimeUnit::Second, None),
                    ScalarValue::TimestampSecond(Some(x), None),
                )
                | (
                    DataType::Timestamp(TimeUnit::Millisecond, None),
                    ScalarValue::TimestampMillisecond(Some(x), None),
                )
                | (
                    DataType::Timestamp(TimeUnit::Microsecond, None),
                    ScalarValue::TimestampMicrosecond(Some(x), None),
                )
                | (
                    DataType::Timestamp(TimeUnit::Nanosecond, None),
                    ScalarValue::TimestampNanosecond(Some(x), None),
                ) => Some(*x),
                _ => None,
            }
        };
        let is_time = |e: &Expr| matches!(e, Expr::Column(c) if c.name == TIME);
        match expr {
            Expr::BinaryExpr(BinaryExpr { left, op, right }) => {
                let (op, v) = if is_time(left) {
                    (*op, value(right)?)
                } else if is_time(right) {
                    (op.swap()?, value(left)?)
                } else {
                    return None;
                };
                let r = match op {
                    Operator::Eq => TimeRange::new(Some(v), Some(v)),
                    Operator::Gt => TimeRange::new(Some(v.checked_add(1)?), None),
                    Operator::GtEq => TimeRange::new(Some(v), None),
                    Operator::Lt => TimeRange::new(None, Some(v.checked_sub(1)?)),
                    Operator::LtEq => TimeRange::new(None, Some(v)),
                    _ => return None,
                };
                Some(r)
            }
            Expr::Between(Between {
                expr,
                negated: false,
                low,
                high,
            }) if is_time(expr) => Some(TimeRange::new(Some(value(low)?), Some(value(high)?))),
            _ => None,
        }
    }

    /// The `(tag, value)` a filter `tag = 'value'` sets.
    fn tag_equality(&self, expr: &Expr) -> Option<(String, String)> {
        let Expr::BinaryExpr(BinaryExpr {
            left,
            op: Operator::Eq,
            right,
        }) = expr
        else {
            return None;
        };
        let (c, v) = match (left.as_ref(), right.as_ref()) {
            (Expr::Column(c), Expr::Literal(v, _)) | (Expr::Literal(v, _), Expr::Column(c)) => {
                (c, v)
            }
            _ => return None,
        };
        if !self.tags.contains(&c.name) {
            return None;
        }
        match v {
            ScalarValue::Utf8(Some(s))
            | ScalarValue::LargeUtf8(Some(s))
            | ScalarValue::Utf8View(Some(s)) => Some((c.name.clone(), s.clone())),
            _ => None,
        }
    }
}

#[async_trait]
impl TableProvider for TsFileTable {
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
                if self.time_range(f).is_some() || self.tag_equality(f).is_some() {
                    TableProviderFilterPushDown::Exact
                } else {
                    TableProviderFilterPushDown::Unsupported
                }
            })
            .collect())
    }

    async fn scan(
        &self,
        _state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        _limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let mut range = TimeRange::default();
        let mut tags = Vec::new();
        for f in filters {
            if let Some(r) = self.time_range(f) {
                range = TimeRange {
                    start: range.start.max(r.start),
                    end: range.end.min(r.end),
                };
            } else if let Some(t) = self.tag_equality(f) {
                tags.push(t);
            }
        }
        let columns: Vec<String> = match projection {
            Some(p) => p
                .iter()
                .map(|&i| self.schema.field(i).name().clone())
                .collect(),
            None => self
                .schema
                .fields()
                .iter()
                .map(|f| f.name().clone())
                .collect(),
        };
        Ok(Arc::new(TsFileScanExec::new(
            self.path.clone(),
            self.table.clone(),
            &self.schema,
            columns,
            range,
            tags,
        )?))
    }
}

/// The physical scan of one TsFile table (one partition, device by device).
#[derive(Debug, Clone)]
pub struct TsFileScanExec {
    path: PathBuf,
    table: String,
    columns: Vec<String>,
    range: TimeRange,
    tags: Vec<(String, String)>,
    props: Arc<PlanProperties>,
}

impl TsFileScanExec {
    /// A scan of `columns` of `table` (in `table_schema`), rows within `range` (inclusive)
    /// of the devices whose tags equal `tags`.
    pub fn new(
        path: PathBuf,
        table: String,
        table_schema: &SchemaRef,
        columns: Vec<String>,
        range: TimeRange,
        tags: Vec<(String, String)>,
    ) -> Result<Self> {
        let indices = columns
            .iter()
            .map(|c| table_schema.index_of(c))
            .collect::<Result<Vec<_>, _>>()?;
        let schema = Arc::new(table_schema.project(&indices)?);
        Ok(TsFileScanExec {
            path,
            table,
            columns,
            range,
            tags,
            props: leaf_properties(schema, 1),
        })
    }

    /// The file read.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The table read.
    pub fn table(&self) -> &str {
        &self.table
    }

    /// Output columns.
    pub fn columns(&self) -> &[String] {
        &self.columns
    }

    /// Inclusive `(start, end)` of the time range.
    pub fn time_range(&self) -> (i64, i64) {
        (self.range.start, self.range.end)
    }

    /// Tag equality filters.
    pub fn tags(&self) -> &[(String, String)] {
        &self.tags
    }
}

impl DisplayAs for TsFileScanExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "TsFileScanExec: file={}, table={}, columns=[{}], time=[{}, {}], tags={:?}",
            self.path.display(),
            self.table,
            self.columns.join(", "),
            self.range.start,
            self.range.end,
            self.tags
        )
    }
}

impl ExecutionPlan for TsFileScanExec {
    leaf_plan_methods!("TsFileScanExec");

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        if partition != 0 {
            return Err(DataFusionError::Internal(format!(
                "TsFileScanExec has one partition, not {partition}"
            )));
        }
        let schema = self.schema();
        let this = self.clone();
        let batch_size = context.session_config().batch_size().max(1);
        Ok(read_on_blocking_thread(Arc::clone(&schema), move |send| {
            let path = this.path.as_path();
            let reader = bazan::tsfile::open(path).map_err(external)?;
            // A query of no column (count(*)) still reads `time` for the row counts.
            let columns = if this.columns.is_empty() {
                vec![TIME.to_string()]
            } else {
                this.columns.clone()
            };
            let query = TableQuery {
                columns: Some(columns),
                time_range: this.range,
                tags: this
                    .tags
                    .iter()
                    .map(|(k, v)| (k.clone(), Some(v.clone())))
                    .collect(),
                batch_size,
            };
            let err = |e: bazan::tsfile::TsFileError| external(bazan::Error::from(e).at(path));
            let batches = reader.query_table(&this.table, &query).map_err(err)?;
            for batch in batches {
                let batch = batch.map_err(err)?;
                let batch = if this.columns.is_empty() {
                    let options = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
                    RecordBatch::try_new_with_options(Arc::clone(&schema), Vec::new(), &options)?
                } else {
                    batch.with_schema(Arc::clone(&schema))?
                };
                if !send(batch) {
                    break;
                }
            }
            Ok(())
        }))
    }
}
