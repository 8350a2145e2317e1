//! `bazan sql LAKE "QUERY" [--format …] [--table NAME=PATH …] [--workers URL,…]`: SQL over a
//! lake and TsFiles through `bazan-sql` (Apache DataFusion), on this machine or on `bazan
//! worker` processes. The lake is the table `lake`; `--table` adds more lakes or TsFiles by
//! name (`docs/sql.md`).

use std::io::{self, Write};
use std::path::PathBuf;

use anyhow::{Context, bail};

use crate::Outcome;
use crate::output::{Format, RowWriter};
use crate::read::quiet_broken_pipe;

/// Output formats of `bazan sql`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub(crate) enum SqlFormat {
    /// An aligned table for people.
    #[default]
    Table,
    /// One JSON object per row.
    Ndjson,
    /// CSV with a header line.
    Csv,
    /// An Arrow IPC stream.
    Arrow,
}

/// Arguments of `bazan sql`.
#[derive(Debug, clap::Args)]
pub(crate) struct SqlArgs {
    /// The lake root, registered as the table `lake`.
    lake: PathBuf,
    /// The query.
    query: String,
    /// More tables: a lake directory or a TsFile, as NAME=PATH (repeatable). A TsFile with
    /// several tables is registered as NAME_TABLE for each.
    #[arg(long = "table", value_name = "NAME=PATH")]
    tables: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = SqlFormat::Table)]
    format: SqlFormat,
    /// Worker threads of the query (default: every core).
    #[arg(long)]
    threads: Option<usize>,
    /// Answer from the map without checking the files it answers for (`count(*)`, `_gid`,
    /// `_path`, files skipped by statistics); by default a file changed since the map was
    /// made fails the query as stale.
    #[arg(long)]
    trust_map: bool,
    /// Run the query on these `bazan worker` processes (URL[,URL...], `http://HOST:PORT` or
    /// `HOST:PORT`); every worker must see the lakes at the same paths.
    #[arg(long, value_delimiter = ',', value_name = "URL")]
    workers: Vec<String>,
}

/// Runs `bazan sql`.
pub(crate) fn run(a: SqlArgs) -> anyhow::Result<Outcome> {
    let mut session = match a.threads {
        Some(n) if a.workers.is_empty() => bazan_sql::SqlSession::with_threads(n)?,
        None if a.workers.is_empty() => bazan_sql::SqlSession::new()?,
        threads => {
            let threads = threads
                .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
            let cluster = bazan_sql::cluster::Cluster::new(&a.workers)?;
            bazan_sql::SqlSession::on_cluster(cluster, threads)?
        }
    };
    session.set_trust_map(a.trust_map);
    session.register_lake("lake", &a.lake).with_context(|| {
        format!(
            "cannot load the map of {} (build it with `bazan map create`)",
            a.lake.display()
        )
    })?;
    for spec in &a.tables {
        let Some((name, path)) = spec.split_once('=') else {
            bail!("--table {spec:?}: expected NAME=PATH");
        };
        session.register_path(name, path.as_ref())?;
    }
    let mut rows = session.sql_stream(&a.query)?;
    for note in rows.notes() {
        eprintln!("note: {note}");
    }
    // Each batch is written as it comes: the first rows print while the query still runs,
    // and a `select *` of a large lake holds a few batches, not its result.
    let schema = rows.schema();
    let stdout = io::stdout().lock();
    let format = match a.format {
        SqlFormat::Arrow => {
            let mut w = bazan::ipc::StreamWriter::try_new(io::BufWriter::new(stdout), &schema)?;
            while let Some(batch) = rows.next_batch() {
                match w.write(&batch?) {
                    Ok(()) => {}
                    Err(bazan::ArrowError::IoError(_, e)) => return quiet_broken_pipe(e),
                    Err(e) => return Err(e.into()),
                }
            }
            let finished = (|| -> Result<(), bazan::ArrowError> {
                w.finish()?;
                w.into_inner()?.flush()?;
                Ok(())
            })();
            return match finished {
                Ok(()) => Ok(Outcome::Ok),
                Err(bazan::ArrowError::IoError(_, e)) => quiet_broken_pipe(e),
                Err(e) => Err(e.into()),
            };
        }
        SqlFormat::Table => Format::Table,
        SqlFormat::Ndjson => Format::Ndjson,
        SqlFormat::Csv => Format::Csv,
    };
    let mut w = RowWriter::new(format, io::BufWriter::new(stdout));
    while let Some(batch) = rows.next_batch() {
        if let Err(e) = w.write_batch(&batch?) {
            return quiet_broken_pipe(e);
        }
    }
    match w.finish().and_then(|mut out| out.flush()) {
        Ok(()) => Ok(Outcome::Ok),
        Err(e) => quiet_broken_pipe(e),
    }
}
