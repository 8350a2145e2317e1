//! `SqlSession`: the entry point of the front ends. It owns a DataFusion `SessionContext` and
//! its Tokio runtimes, registers lakes, TsFile tables and Arrow streams by name, and runs
//! queries to Arrow record batches: all of them at once ([`SqlSession::sql`]) or as they come
//! ([`SqlSession::sql_stream`], in the memory of a few batches per partition). Results keep
//! the types the plan computes in: strings of lake tables and `_path` are Utf8View.
//!
//! Runtimes: queries are planned on a current-thread runtime, and a plan of one partition
//! from its leaves to its root (an answer from the map such as `count(*)`, a scan of one
//! block) runs there too, since more threads could not share its work; any other plan runs
//! on a pool of `threads` workers, started by the first query that needs it. A one-shot
//! `bazan sql` of a map answer thus never starts a thread.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use arrow_array::{RecordBatch, RecordBatchReader};
use arrow_schema::{ArrowError, SchemaRef};
use bazan::Lake;
use datafusion::datasource::MemTable;
use datafusion::execution::SendableRecordBatchStream;
use datafusion::physical_plan::{
    ExecutionPlan, ExecutionPlanProperties, displayable, execute_stream,
};
use datafusion::prelude::{SessionConfig, SessionContext};
use futures::StreamExt;
use tokio::runtime::Runtime;

use crate::error::{Error, Result};
use crate::exec::{LakeScanExec, counters};
use crate::table::LakeTable;
use crate::tsfile::TsFileTable;

/// Scan counters of one query, summed over its lake scans.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScanCounts {
    /// Lake file reads (each after its stale check): a file read by several partitions
    /// counts once per partition.
    pub files_opened: u64,
    /// File blocks read.
    pub blocks_read: u64,
    /// Blocks of the scanned lakes in all (a file without blocks counts as one).
    pub blocks_total: u64,
    /// Rows the lake scans returned.
    pub rows_scanned: u64,
}

/// The result of a query: its schema, its batches and what its lake scans read.
#[derive(Debug, Clone)]
pub struct QueryOutput {
    /// The result schema.
    pub schema: SchemaRef,
    /// The result rows.
    pub batches: Vec<RecordBatch>,
    /// What the lake scans read.
    pub counts: ScanCounts,
    /// Notes for the user that are not errors (a worker left out of the query).
    pub notes: Vec<String>,
}

/// A SQL session over lakes, TsFiles and Arrow data; see the module documentation.
pub struct SqlSession {
    ctx: SessionContext,
    /// Current-thread: planning, and the plans of one partition throughout (module
    /// documentation). Shared with the [`SqlStream`]s that poll their plans on it.
    local: Arc<Runtime>,
    /// `threads` workers for every other plan, started by the first such query.
    pool: OnceLock<Arc<Runtime>>,
    threads: usize,
    /// Lakes registered from now on answer from the map unchecked.
    trust_map: bool,
    /// The workers the queries run on, if any.
    #[cfg(feature = "grpc")]
    cluster: Option<crate::cluster::Cluster>,
}

impl std::fmt::Debug for SqlSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqlSession")
            .field("threads", &self.threads)
            .finish_non_exhaustive()
    }
}

impl SqlSession {
    /// A session using every core.
    pub fn new() -> Result<Self> {
        // DataFusion's default partition count is the core count already: taken from there,
        // the cgroup files behind it are read once less at start.
        let config = SessionConfig::new().with_information_schema(true);
        let threads = config.target_partitions();
        SqlSession::with_config(config, threads)
    }

    /// A session running queries on `threads` threads (and as many scan partitions); 0 is
    /// the facade's [`bazan::check_threads`] error.
    pub fn with_threads(threads: usize) -> Result<Self> {
        bazan::check_threads(Some(threads))?;
        let config = SessionConfig::new()
            .with_target_partitions(threads)
            .with_information_schema(true);
        SqlSession::with_config(config, threads)
    }

    /// A session with a DataFusion configuration of the caller's (e.g. a distributed one).
    pub fn with_config(config: SessionConfig, threads: usize) -> Result<Self> {
        bazan::check_threads(Some(threads))?;
        let local = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::Other(format!("cannot start the query runtime: {e}")))?;
        Ok(SqlSession {
            ctx: SessionContext::new_with_config(config),
            local: Arc::new(local),
            pool: OnceLock::new(),
            threads,
            trust_map: false,
            #[cfg(feature = "grpc")]
            cluster: None,
        })
    }

    /// A session around a DataFusion context built by the caller.
    pub fn from_context(ctx: SessionContext, threads: usize) -> Result<Self> {
        let mut s = SqlSession::with_threads(threads)?;
        s.ctx = ctx;
        Ok(s)
    }

    /// A session whose queries run on the workers of `cluster` (feature `grpc`), `threads`
    /// partitions per task. Before each query the workers are asked for their version
    /// ([`crate::cluster::Cluster::refresh`]); `EXPLAIN` shows the stages and which worker
    /// runs which task.
    #[cfg(feature = "grpc")]
    pub fn on_cluster(cluster: crate::cluster::Cluster, threads: usize) -> Result<Self> {
        let mut s = SqlSession::from_context(cluster.session_context(threads), threads)?;
        s.cluster = Some(cluster);
        Ok(s)
    }

    /// The DataFusion context (to register functions, change settings, ...).
    pub fn context(&self) -> &SessionContext {
        &self.ctx
    }

    /// Threads of the session.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// With `trust` true, lakes registered after this call answer from the map (`count(*)`,
    /// `_gid`, `_path`, files skipped by statistics) without checking those files against
    /// the disk; by default such answers fail `Stale` when a file changed since the map was
    /// made ([`LakeTable::with_trust_map`]). Files a query reads are checked either way.
    pub fn set_trust_map(&mut self, trust: bool) {
        self.trust_map = trust;
    }

    /// Registers the lake mapped at `root` (its directory, or its map file) as table `name`.
    pub fn register_lake(&self, name: &str, root: &Path) -> Result<()> {
        let lake = bazan::load_map(root)?;
        self.register_lake_map(name, Arc::new(lake))
    }

    /// Registers a loaded lake as table `name`.
    pub fn register_lake_map(&self, name: &str, lake: Arc<Lake>) -> Result<()> {
        let table = LakeTable::new(lake)?.with_trust_map(self.trust_map);
        self.ctx.register_table(name, Arc::new(table))?;
        Ok(())
    }

    /// Registers the tables of the table-model TsFile at `path`: a file with one table as
    /// `name`, a file with several as `name_TABLE` for each. Returns the names registered.
    pub fn register_tsfile(&self, name: &str, path: &Path) -> Result<Vec<String>> {
        let tables = TsFileTable::table_names(path)?;
        if tables.is_empty() {
            return Err(Error::Query(format!(
                "{}: a tree-model TsFile has no tables to query with SQL",
                path.display()
            )));
        }
        let mut names = Vec::with_capacity(tables.len());
        for table in &tables {
            let registered = if tables.len() == 1 {
                name.to_string()
            } else {
                format!("{name}_{table}")
            };
            let provider = TsFileTable::open(path, table)?;
            self.ctx
                .register_table(registered.as_str(), Arc::new(provider))?;
            names.push(registered);
        }
        Ok(names)
    }

    /// Registers `path` by what it is: a `.tsfile` file as [`SqlSession::register_tsfile`],
    /// anything else (a lake directory or its map file) as [`SqlSession::register_lake`].
    /// Returns the names registered.
    pub fn register_path(&self, name: &str, path: &Path) -> Result<Vec<String>> {
        let is_tsfile = path.is_file()
            && path
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("tsfile"));
        if is_tsfile {
            self.register_tsfile(name, path)
        } else {
            self.register_lake(name, path)?;
            Ok(vec![name.to_string()])
        }
    }

    /// Registers the batches of an Arrow stream (read to the end now) as table `name`.
    pub fn register_batches(&self, name: &str, reader: impl RecordBatchReader) -> Result<()> {
        let schema = reader.schema();
        let batches = reader
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| Error::Other(format!("reading the batches of table {name}: {e}")))?;
        let table = MemTable::try_new(schema, vec![batches])?;
        self.ctx.register_table(name, Arc::new(table))?;
        Ok(())
    }

    /// Runs `query` and returns its schema and rows. A query that does not parse or plan is
    /// [`Error::Query`] with DataFusion's message; a file changed since it was mapped is
    /// [`Error::Bazan`] of kind `Stale` naming it.
    pub fn sql(&self, query: &str) -> Result<(SchemaRef, Vec<RecordBatch>)> {
        let out = self.sql_counted(query)?;
        Ok((out.schema, out.batches))
    }

    /// As [`SqlSession::sql`], with what the lake scans read.
    pub fn sql_counted(&self, query: &str) -> Result<QueryOutput> {
        self.outside_runtime("sql")?;
        let (started, runtime) = self.start_blocking(query)?;
        runtime.block_on(collect(started))
    }

    /// Plans `query` and starts it: its batches come from the returned stream as the plan
    /// produces them, so the first can be used before the last is computed, and a query over
    /// a large lake holds a few batches per partition, not its result. Planning errors are
    /// returned here, errors of the run (a stale file) by the stream.
    pub fn sql_stream(&self, query: &str) -> Result<SqlStream> {
        self.outside_runtime("sql_stream")?;
        let (started, runtime) = self.start_blocking(query)?;
        Ok(SqlStream { started, runtime })
    }

    /// As [`SqlSession::sql_counted`], for callers already in an async context.
    pub async fn sql_async(&self, query: &str) -> Result<QueryOutput> {
        collect(self.start(query).await?).await
    }

    /// The pool of `threads` workers, started on first use.
    fn pool(&self) -> Result<Arc<Runtime>> {
        if let Some(pool) = self.pool.get() {
            return Ok(Arc::clone(pool));
        }
        let pool = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(self.threads)
            .thread_name("bazan-sql")
            .enable_all()
            .build()
            .map_err(|e| Error::Other(format!("cannot start the query runtime: {e}")))?;
        Ok(Arc::clone(self.pool.get_or_init(|| Arc::new(pool))))
    }

    /// Plans `query` on the current-thread runtime and starts it on the runtime it needs
    /// (module documentation), which is returned to poll its rows on.
    fn start_blocking(&self, query: &str) -> Result<(Started, Arc<Runtime>)> {
        #[cfg(feature = "grpc")]
        if self.cluster.is_some() {
            let pool = self.pool()?;
            let started = pool.block_on(self.start(query))?;
            return Ok((started, pool));
        }
        let plan = self.local.block_on(self.plan_async(query))?;
        let runtime = if one_partition(&plan) {
            Arc::clone(&self.local)
        } else {
            self.pool()?
        };
        // Plans of several partitions spawn their tasks at `execute`: on the pool.
        let started = {
            let _on = runtime.enter();
            self.execute(plan)?
        };
        Ok((started, runtime))
    }

    /// The error of a blocking call made on a thread of an async runtime.
    fn outside_runtime(&self, call: &str) -> Result<()> {
        if tokio::runtime::Handle::try_current().is_ok() {
            return Err(Error::Other(format!(
                "SqlSession::{call} was called from an async context; use sql_async there"
            )));
        }
        Ok(())
    }

    /// Plans `query` and starts its plan (on a cluster, after asking the workers for their
    /// versions; a plain `EXPLAIN` there is answered with the distributed plan).
    async fn start(&self, query: &str) -> Result<Started> {
        #[cfg(feature = "grpc")]
        if let Some(cluster) = &self.cluster {
            let notes = cluster.refresh().await?;
            if let Some(inner) = explain_target(query) {
                let plan = self.plan_async(inner).await?;
                let text = format!(
                    "{}\n{}",
                    datafusion_distributed::display_plan_ascii(plan.as_ref(), false),
                    cluster.routing(&plan)
                );
                let mut started = text_output("plan", &text)?;
                started.notes = notes;
                return Ok(started);
            }
            let mut started = self.start_plan(query).await?;
            started.notes = notes;
            return Ok(started);
        }
        self.start_plan(query).await
    }

    /// Plans `query` and starts its plan.
    async fn start_plan(&self, query: &str) -> Result<Started> {
        let plan = self.plan_async(query).await?;
        self.execute(plan)
    }

    /// Starts `plan` on the runtime of the calling context.
    fn execute(&self, plan: Arc<dyn ExecutionPlan>) -> Result<Started> {
        let stream =
            execute_stream(Arc::clone(&plan), self.ctx.task_ctx()).map_err(Error::from_run)?;
        Ok(Started {
            schema: plan.schema(),
            rows: Rows::Running(stream),
            plan: Some(plan),
            notes: Vec::new(),
        })
    }

    /// The physical plan of `query`, indented, one operator a line.
    pub fn explain(&self, query: &str) -> Result<String> {
        self.outside_runtime("explain")?;
        let plan = self.local.block_on(self.plan_async(query))?;
        #[cfg(feature = "grpc")]
        if let Some(cluster) = &self.cluster {
            return Ok(format!(
                "{}\n{}",
                datafusion_distributed::display_plan_ascii(plan.as_ref(), false),
                cluster.routing(&plan)
            ));
        }
        Ok(displayable(plan.as_ref()).indent(true).to_string())
    }

    /// The physical plan of `query`.
    pub async fn plan_async(&self, query: &str) -> Result<Arc<dyn ExecutionPlan>> {
        let df = self.ctx.sql(query).await.map_err(Error::from_plan)?;
        df.create_physical_plan().await.map_err(Error::from_plan)
    }
}

/// The query after a leading `EXPLAIN` (not `EXPLAIN ANALYZE` or `EXPLAIN VERBOSE`).
#[cfg(feature = "grpc")]
fn explain_target(query: &str) -> Option<&str> {
    let q = query.trim_start();
    let head = q.get(..7)?;
    if !head.eq_ignore_ascii_case("explain") {
        return None;
    }
    let rest = q.get(7..)?;
    if !rest.starts_with(char::is_whitespace) {
        return None;
    }
    let rest = rest.trim_start();
    let word = rest.split_whitespace().next().unwrap_or("");
    if ["analyze", "verbose", "format"]
        .iter()
        .any(|w| word.eq_ignore_ascii_case(w))
    {
        return None;
    }
    Some(rest)
}

/// A one-column Utf8 result, one row per line of `text`.
#[cfg(feature = "grpc")]
fn text_output(column: &str, text: &str) -> Result<Started> {
    let schema = Arc::new(arrow_schema::Schema::new(vec![arrow_schema::Field::new(
        column,
        arrow_schema::DataType::Utf8,
        false,
    )]));
    let lines = arrow_array::StringArray::from_iter_values(text.lines().collect::<Vec<_>>());
    let batch = RecordBatch::try_new(Arc::clone(&schema), vec![Arc::new(lines)])
        .map_err(|e| Error::Other(format!("plan text: {e}")))?;
    Ok(Started {
        schema,
        rows: Rows::Ready(VecDeque::from([batch])),
        plan: None,
        notes: Vec::new(),
    })
}

/// Whether every operator of `plan` has one output partition: the plan is one stream from its
/// leaves to its root, which a pool of threads could not share.
fn one_partition(plan: &Arc<dyn ExecutionPlan>) -> bool {
    plan.output_partitioning().partition_count() == 1
        && plan.children().into_iter().all(one_partition)
}

/// Reads a started query to its end.
async fn collect(mut started: Started) -> Result<QueryOutput> {
    let mut batches = Vec::new();
    while let Some(batch) = started.rows.next().await {
        batches.push(batch?);
    }
    Ok(QueryOutput {
        counts: started.counts(),
        schema: started.schema,
        batches,
        notes: started.notes,
    })
}

/// A query once started: its schema, where its rows come from and the plan they come from.
struct Started {
    schema: SchemaRef,
    rows: Rows,
    /// The running plan (none for an answer computed before the query, such as a plan text).
    plan: Option<Arc<dyn ExecutionPlan>>,
    notes: Vec<String>,
}

impl Started {
    /// What the lake scans of the plan read so far.
    fn counts(&self) -> ScanCounts {
        self.plan.as_ref().map(scan_counts).unwrap_or_default()
    }
}

/// The rows of a started query.
enum Rows {
    /// The stream of a running plan.
    Running(SendableRecordBatchStream),
    /// Rows computed already.
    Ready(VecDeque<RecordBatch>),
}

impl Rows {
    /// The next batch, with DataFusion's errors as the session's.
    async fn next(&mut self) -> Option<Result<RecordBatch>> {
        match self {
            Rows::Running(stream) => Some(stream.next().await?.map_err(Error::from_run)),
            Rows::Ready(batches) => batches.pop_front().map(Ok),
        }
    }
}

/// The batches of a running query ([`SqlSession::sql_stream`]), in order, as the plan
/// produces them; an Arrow [`RecordBatchReader`]. Reading blocks the calling thread (which
/// must not be a thread of an async runtime) until the next batch is ready. After an error
/// the stream ends; dropping it stops the query.
pub struct SqlStream {
    /// Dropped before the runtime (fields drop in order), so that a stream outliving its
    /// session stops its plan while the runtime still runs.
    started: Started,
    runtime: Arc<Runtime>,
}

impl std::fmt::Debug for SqlStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqlStream")
            .field("schema", &self.started.schema)
            .finish_non_exhaustive()
    }
}

impl SqlStream {
    /// The schema of every batch.
    pub fn schema(&self) -> SchemaRef {
        Arc::clone(&self.started.schema)
    }

    /// Notes for the user that are not errors (a worker left out of the query).
    pub fn notes(&self) -> &[String] {
        &self.started.notes
    }

    /// What the lake scans read so far (all of it once the stream has ended).
    pub fn counts(&self) -> ScanCounts {
        self.started.counts()
    }

    /// The next batch, or `None` at the end of the rows.
    pub fn next_batch(&mut self) -> Option<Result<RecordBatch>> {
        if tokio::runtime::Handle::try_current().is_ok() {
            return Some(Err(Error::Other(
                "SqlStream was read from an async context; use SqlSession::sql_async there".into(),
            )));
        }
        let next = self.runtime.block_on(self.started.rows.next());
        if matches!(next, Some(Err(_))) {
            self.started.rows = Rows::Ready(VecDeque::new());
        }
        next
    }
}

impl Iterator for SqlStream {
    type Item = std::result::Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_batch()
            .map(|r| r.map_err(|e| ArrowError::ExternalError(Box::new(e))))
    }
}

impl RecordBatchReader for SqlStream {
    fn schema(&self) -> SchemaRef {
        Arc::clone(&self.started.schema)
    }
}

/// Sums the counters of every lake scan of an executed plan.
pub fn scan_counts(plan: &Arc<dyn ExecutionPlan>) -> ScanCounts {
    let mut counts = ScanCounts::default();
    let mut stack = vec![Arc::clone(plan)];
    while let Some(node) = stack.pop() {
        if let Some(scan) = node.downcast_ref::<LakeScanExec>() {
            counts.blocks_total += scan.blocks_total();
            if let Some(m) = scan.metrics() {
                let get = |name: &str| m.sum_by_name(name).map_or(0, |v| v.as_usize() as u64);
                counts.files_opened += get(counters::FILES_OPENED);
                counts.blocks_read += get(counters::BLOCKS_READ);
                counts.rows_scanned += get(counters::ROWS);
            }
        }
        stack.extend(node.children().into_iter().cloned());
    }
    counts
}

/// Runs one query over tables given as `(name, path)`: lake directories (or map files) and
/// TsFiles, registered as by [`SqlSession::register_path`].
pub fn run_query(
    tables: &[(String, std::path::PathBuf)],
    query: &str,
) -> Result<(SchemaRef, Vec<RecordBatch>)> {
    let session = SqlSession::new()?;
    for (name, path) in tables {
        session.register_path(name, path)?;
    }
    session.sql(query)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A map answer and a one-partition plan run without the pool; a plan of several
    /// partitions starts it, and both give the rows of the lake.
    #[test]
    fn the_pool_starts_only_for_plans_of_several_partitions() {
        let dir = tempfile::tempdir().expect("temp dir");
        for f in 0..4 {
            let rows: String = (0..50)
                .map(|i| format!("{},k{}\n", f * 50 + i, i % 3))
                .collect();
            std::fs::write(dir.path().join(format!("f{f}.csv")), format!("a,b\n{rows}"))
                .expect("write");
        }
        bazan::create_map(dir.path(), &bazan::CreateOptions::default()).expect("map");
        let s = SqlSession::with_threads(2).expect("session");
        s.register_lake("lake", dir.path()).expect("register");

        let (_, count) = s.sql("select count(*) from lake").expect("count");
        assert_eq!(count[0].num_rows(), 1);
        assert!(s.pool.get().is_none(), "a map answer started the pool");

        let out = s
            .sql("select b, sum(a) as s from lake group by b order by b")
            .expect("group by");
        let rows: usize = out.1.iter().map(RecordBatch::num_rows).sum();
        assert_eq!(rows, 3);
        assert!(
            s.pool.get().is_some(),
            "a plan of several partitions ran without the pool"
        );
    }
}
