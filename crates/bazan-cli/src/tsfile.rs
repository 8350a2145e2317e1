//! `bazan tsfile info|dump|query|check`: inspecting and reading one TsFile (cli.md, "TsFile
//! commands"). Every failure to read the file is an `error: FILE: …` line naming the
//! structure and byte offset (exit 2); `check` reports problems with exit 1.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;
use bazan::tsfile::{self as ts, Query};
use serde_json::Value;

use crate::Outcome;
use crate::output::{Format, RawStdout, RowWriter, raw_stdout};
use crate::read::quiet_broken_pipe;

/// Arguments of `bazan tsfile`.
#[derive(Debug, clap::Args)]
pub(crate) struct TsfileArgs {
    #[command(subcommand)]
    command: TsfileCommand,
}

#[derive(Debug, clap::Subcommand)]
enum TsfileCommand {
    /// Version, size, tables, device and series counts, time range, properties, Bloom filter.
    Info {
        /// The TsFile.
        file: PathBuf,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Everything the file holds, as JSON in the conformance answers' shape.
    Dump {
        /// The TsFile.
        file: PathBuf,
        /// Print JSON (the only form of the dump).
        #[arg(long, required = true)]
        json: bool,
    },
    /// Rows of one table (table model) or one device (tree model).
    Query(QueryArgs),
    /// Validate every structure and decode every page (exit 1 with the problems found).
    Check {
        /// The TsFile.
        file: PathBuf,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Write a table-model TsFile from a Parquet, CSV or Arrow IPC file.
    Import(crate::tsfile_import::ImportArgs),
}

/// Output formats of `tsfile query`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
enum QueryFormat {
    /// An aligned table for people.
    #[default]
    Table,
    /// One JSON object per row (the stable value representation).
    Ndjson,
    /// CSV with a header line.
    Csv,
    /// An Arrow IPC stream.
    Arrow,
}

/// Arguments of `bazan tsfile query`.
#[derive(Debug, clap::Args)]
struct QueryArgs {
    /// The TsFile.
    file: PathBuf,
    /// The table to read (table model).
    #[arg(long, conflicts_with = "device", required_unless_present = "device")]
    table: Option<String>,
    /// The device to read (tree model), by its path.
    #[arg(long)]
    device: Option<String>,
    /// Columns to return, in this order (comma-separated).
    #[arg(long, value_delimiter = ',')]
    columns: Option<Vec<String>>,
    /// Smallest time kept (inclusive).
    #[arg(long, allow_hyphen_values = true)]
    start_time: Option<i64>,
    /// Largest time kept (inclusive).
    #[arg(long, allow_hyphen_values = true)]
    end_time: Option<i64>,
    /// Keep only the devices whose TAG column K equals V (repeatable).
    #[arg(long = "tag", value_name = "K=V")]
    tags: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = QueryFormat::Table)]
    format: QueryFormat,
}

/// Runs `bazan tsfile …`.
pub(crate) fn run(args: TsfileArgs) -> anyhow::Result<Outcome> {
    match args.command {
        TsfileCommand::Info { file, json } => info(&file, json),
        TsfileCommand::Dump { file, .. } => {
            print_json(&ts::dump(&file)?)?;
            Ok(Outcome::Ok)
        }
        TsfileCommand::Query(q) => query(&q),
        TsfileCommand::Check { file, json } => check(&file, json),
        TsfileCommand::Import(args) => crate::tsfile_import::run(args),
    }
}

fn print_json(value: &Value) -> anyhow::Result<()> {
    let mut out = io::stdout().lock();
    serde_json::to_writer(&mut out, value)?;
    writeln!(out)?;
    Ok(())
}

fn info(file: &Path, as_json: bool) -> anyhow::Result<Outcome> {
    let reader = ts::open(file)?;
    let v = ts::info_of(&reader).map_err(|e| bazan::Error::from(e).at(file))?;
    if as_json {
        print_json(&v)?;
        return Ok(Outcome::Ok);
    }
    let mut out = io::stdout().lock();
    writeln!(out, "file:          {}", file.display())?;
    writeln!(out, "version:       {}", v["format_version"])?;
    writeln!(out, "size:          {} bytes", v["file_size"])?;
    writeln!(
        out,
        "model:         {}",
        v["model"].as_str().unwrap_or_default()
    )?;
    writeln!(out, "devices:       {}", v["device_count"])?;
    writeln!(out, "series:        {}", v["series_count"])?;
    match v["time_range"].as_object() {
        Some(r) => writeln!(out, "time range:    [{}, {}]", r["start"], r["end"])?,
        None => writeln!(out, "time range:    (no data)")?,
    }
    match reader.bloom_filter() {
        Some(b) => writeln!(
            out,
            "bloom filter:  {} bits, {} hash functions, {} bytes",
            b.size_in_bits,
            b.hash_count,
            b.bits.len()
        )?,
        None => writeln!(out, "bloom filter:  none")?,
    }
    for t in reader.table_schemas() {
        writeln!(out, "table {}:", t.table_name)?;
        for c in &t.schema.columns {
            writeln!(
                out,
                "  {:<24} {:<10} {:<10} {:<10} {}",
                c.schema.name,
                c.schema.data_type.name(),
                c.category.name(),
                c.schema.encoding.name(),
                c.schema.compression.name()
            )?;
        }
    }
    writeln!(out, "properties:")?;
    for p in reader.properties() {
        let value = match p.value.as_deref() {
            None => "null".to_string(),
            Some(v) => match std::str::from_utf8(v) {
                Ok(s) if !s.chars().any(char::is_control) => format!("{s:?}"),
                _ => format!("0x{}", ts::hex(v)),
            },
        };
        writeln!(out, "  {} = {value}", p.key)?;
    }
    Ok(Outcome::Ok)
}

fn query(q: &QueryArgs) -> anyhow::Result<Outcome> {
    let mut tags = Vec::new();
    for t in &q.tags {
        let (k, v) = t
            .split_once('=')
            .with_context(|| format!("--tag {t:?}: expected K=V"))?;
        tags.push((k.to_string(), v.to_string()));
    }
    let query = Query {
        table: q.table.clone(),
        device: q.device.clone(),
        columns: q.columns.clone(),
        start_time: q.start_time,
        end_time: q.end_time,
        tags,
    };
    // Batches are written as they are decoded: one batch is held at a time.
    let mut sink = Sink::Empty(q.format);
    let mut closed = false;
    let read = ts::query_with(&q.file, &query, |schema, batch| {
        match sink.write(schema, &batch) {
            Ok(()) => Ok(()),
            Err(e) => {
                closed = e.kind() == io::ErrorKind::BrokenPipe;
                Err(bazan::Error::new(
                    bazan::ErrorKind::Io,
                    format!("cannot write to stdout: {e}"),
                ))
            }
        }
    });
    let schema = match read {
        Ok(schema) => schema,
        Err(_) if closed => return Ok(Outcome::Ok),
        Err(e) => return Err(e.into()),
    };
    match sink.finish(&schema) {
        Ok(()) => Ok(Outcome::Ok),
        Err(e) => quiet_broken_pipe(e),
    }
}

/// Where `tsfile query` writes: nothing yet (the writer needs the schema), an Arrow IPC
/// stream, or rows.
enum Sink {
    Empty(QueryFormat),
    Arrow(Box<bazan::ipc::StreamWriter<io::BufWriter<RawStdout>>>),
    Rows(RowWriter<io::BufWriter<RawStdout>>),
}

fn arrow_io(e: bazan::ArrowError) -> io::Error {
    match e {
        bazan::ArrowError::IoError(_, e) => e,
        other => io::Error::other(other),
    }
}

impl Sink {
    fn open(format: QueryFormat, schema: &bazan::SchemaRef) -> io::Result<Sink> {
        let out = io::BufWriter::with_capacity(1 << 16, raw_stdout());
        Ok(match format {
            QueryFormat::Arrow => {
                let w = bazan::ipc::StreamWriter::try_new(out, schema).map_err(arrow_io)?;
                Sink::Arrow(Box::new(w))
            }
            QueryFormat::Table => Sink::Rows(RowWriter::new(Format::Table, out)),
            QueryFormat::Ndjson => Sink::Rows(RowWriter::new(Format::Ndjson, out)),
            QueryFormat::Csv => Sink::Rows(RowWriter::new(Format::Csv, out)),
        })
    }

    fn write(&mut self, schema: &bazan::SchemaRef, batch: &bazan::RecordBatch) -> io::Result<()> {
        if let Sink::Empty(format) = self {
            *self = Sink::open(*format, schema)?;
        }
        match self {
            Sink::Empty(_) => Ok(()),
            Sink::Arrow(w) => w.write(batch).map_err(arrow_io),
            Sink::Rows(w) => w.write_batch(batch),
        }
    }

    fn finish(self, schema: &bazan::SchemaRef) -> io::Result<()> {
        let this = match self {
            Sink::Empty(format) => {
                let mut opened = Sink::open(format, schema)?;
                if let Sink::Rows(w) = &mut opened {
                    // A query without rows still prints its header.
                    w.write_batch(&bazan::RecordBatch::new_empty(schema.clone()))?;
                }
                opened
            }
            other => other,
        };
        match this {
            Sink::Empty(_) => Ok(()),
            Sink::Arrow(mut w) => {
                w.finish().map_err(arrow_io)?;
                w.into_inner().map_err(arrow_io)?.flush()
            }
            Sink::Rows(w) => w.finish()?.flush(),
        }
    }
}

fn check(file: &Path, as_json: bool) -> anyhow::Result<Outcome> {
    let report = ts::check(file)?;
    let problems = &report.problems;
    if as_json {
        print_json(&ts::check_json(file, &report))?;
    } else {
        let mut out = io::stdout().lock();
        if problems.is_empty() {
            writeln!(out, "{}: valid", file.display())?;
            for r in &report.relaxed {
                writeln!(
                    out,
                    "  {} ({} {}): {} compared within the encoding's precision",
                    r.structure,
                    r.data_type,
                    r.encodings.join("/"),
                    r.comparisons.join(", ")
                )?;
            }
        } else {
            writeln!(out, "{}: {} problem(s)", file.display(), problems.len())?;
            for p in problems {
                writeln!(out, "  {p}")?;
            }
        }
    }
    Ok(if problems.is_empty() {
        Outcome::Ok
    } else {
        Outcome::Problem
    })
}
