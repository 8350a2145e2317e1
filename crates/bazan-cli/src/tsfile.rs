//! `bazan tsfile info|dump|query|check`: inspecting and reading one TsFile (cli.md, "TsFile
//! commands"). Every failure to read the file is an `error: FILE: …` line naming the
//! structure and byte offset (exit 2); `check` reports problems with exit 1.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use serde_json::{Value, json};
use tsfile_index::check::{Problem, check_path};
use tsfile_index::dump::{dump, hex};
use tsfile_index::query::{TableQuery, TreeQuery};
use tsfile_index::{TimeRange, TsFileReader};

use crate::Outcome;
use crate::output::{Format, RowWriter};

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
            let reader = open(&file)?;
            let value = dump(&reader).with_context(|| file.display().to_string())?;
            print_json(&value)?;
            Ok(Outcome::Ok)
        }
        TsfileCommand::Query(q) => query(&q),
        TsfileCommand::Check { file, json } => check(&file, json),
        TsfileCommand::Import(args) => crate::tsfile_import::run(args),
    }
}

fn open(file: &Path) -> anyhow::Result<TsFileReader> {
    TsFileReader::open(file).with_context(|| file.display().to_string())
}

fn print_json(value: &Value) -> anyhow::Result<()> {
    let mut out = io::stdout().lock();
    serde_json::to_writer(&mut out, value)?;
    writeln!(out)?;
    Ok(())
}

/// The facts `info` prints, as JSON.
fn info_json(reader: &TsFileReader) -> tsfile_index::Result<Value> {
    let mut devices = 0usize;
    let mut series = 0usize;
    let mut range: Option<(i64, i64)> = None;
    for device in reader.devices()? {
        let device = device?;
        devices += 1;
        for s in reader.timeseries(&device)? {
            if !s.meta.is_time_column() {
                series += 1;
            }
            let st = &s.meta.statistics;
            if st.count > 0 {
                range = Some(match range {
                    None => (st.start_time, st.end_time),
                    Some((a, b)) => (a.min(st.start_time), b.max(st.end_time)),
                });
            }
        }
    }
    let tables: Vec<Value> = reader
        .table_schemas()
        .iter()
        .map(|t| {
            let columns: Vec<Value> = t
                .schema
                .columns
                .iter()
                .map(|c| {
                    json!({"name": c.schema.name, "data_type": c.schema.data_type.name(),
                           "category": c.category.name(), "encoding": c.schema.encoding.name(),
                           "compression": c.schema.compression.name()})
                })
                .collect();
            json!({"name": t.table_name, "columns": columns})
        })
        .collect();
    let mut props = serde_json::Map::new();
    for p in reader.properties() {
        props.insert(
            p.key.clone(),
            p.value.as_deref().map_or(Value::Null, |v| json!(hex(v))),
        );
    }
    let bloom = reader.bloom_filter().map_or(Value::Null, |b| {
        json!({"size_in_bits": b.size_in_bits, "hash_count": b.hash_count, "bytes": b.bits.len()})
    });
    Ok(json!({
        "format_version": reader.version(),
        "file_size": reader.file_len(),
        "model": if reader.is_table_model() { "table" } else { "tree" },
        "index_tables": reader.table_names(),
        "tables": tables,
        "device_count": devices,
        "series_count": series,
        "time_range": range.map_or(Value::Null, |(a, b)| json!({"start": a, "end": b})),
        "properties": props,
        "bloom_filter": bloom,
        "metadata": {"offset": reader.metadata_start(), "length": reader.metadata_len(),
                     "meta_offset": reader.meta_offset()},
    }))
}

fn info(file: &Path, as_json: bool) -> anyhow::Result<Outcome> {
    let reader = open(file)?;
    let v = info_json(&reader).with_context(|| file.display().to_string())?;
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
                _ => format!("0x{}", hex(v)),
            },
        };
        writeln!(out, "  {} = {value}", p.key)?;
    }
    Ok(Outcome::Ok)
}

fn query(q: &QueryArgs) -> anyhow::Result<Outcome> {
    let reader = open(&q.file)?;
    let ctx = || q.file.display().to_string();
    let range = TimeRange::new(q.start_time, q.end_time);
    let mut batches = Vec::new();
    let schema;
    if let Some(table) = &q.table {
        if !reader.is_table_model() {
            bail!(
                "{}: a tree-model file has no tables; use --device PATH",
                q.file.display()
            );
        }
        let mut tags = Vec::new();
        for t in &q.tags {
            let (k, v) = t
                .split_once('=')
                .with_context(|| format!("--tag {t:?}: expected K=V"))?;
            tags.push((k.to_string(), Some(v.to_string())));
        }
        let query = TableQuery {
            columns: q.columns.clone(),
            time_range: range,
            tags,
            batch_size: 0,
        };
        let it = reader.query_table(table, &query).with_context(ctx)?;
        schema = it.schema();
        for b in it {
            batches.push(b.with_context(ctx)?);
        }
    } else {
        let path = q.device.as_deref().unwrap_or_default();
        if !q.tags.is_empty() {
            bail!("--tag filters apply to --table queries only");
        }
        let device = reader
            .device_by_path(path)
            .with_context(ctx)?
            .with_context(|| format!("{}: device {path:?} not found", q.file.display()))?;
        if let Some(cols) = &q.columns {
            let names: Vec<String> = reader
                .timeseries(&device)
                .with_context(ctx)?
                .iter()
                .map(|s| s.name().to_string())
                .collect();
            if let Some(missing) = cols.iter().find(|c| *c != "time" && !names.contains(c)) {
                bail!(
                    "{}: device {path:?} has no measurement {missing:?}",
                    q.file.display()
                );
            }
        }
        let query = TreeQuery {
            columns: q.columns.clone(),
            time_range: range,
            batch_size: 0,
        };
        let batch = reader.read_device(&device, &query).with_context(ctx)?;
        schema = batch.schema();
        batches.push(batch);
    }
    let stdout = io::stdout().lock();
    let format = match q.format {
        QueryFormat::Arrow => {
            let mut w = arrow_ipc::writer::StreamWriter::try_new(stdout, &schema)?;
            for b in &batches {
                w.write(b)?;
            }
            w.finish()?;
            return Ok(Outcome::Ok);
        }
        QueryFormat::Table => Format::Table,
        QueryFormat::Ndjson => Format::Ndjson,
        QueryFormat::Csv => Format::Csv,
    };
    let mut w = RowWriter::new(format, stdout);
    for b in &batches {
        w.write_batch(b)?;
    }
    drop(w.finish()?);
    Ok(Outcome::Ok)
}

fn problem_json(p: &Problem) -> Value {
    json!({"structure": p.structure, "offset": p.offset, "message": p.message})
}

fn check(file: &Path, as_json: bool) -> anyhow::Result<Outcome> {
    let problems = check_path(file).with_context(|| file.display().to_string())?;
    if as_json {
        let list: Vec<Value> = problems.iter().map(problem_json).collect();
        print_json(
            &json!({"file": file.display().to_string(), "valid": problems.is_empty(), "problems": list}),
        )?;
    } else {
        let mut out = io::stdout().lock();
        if problems.is_empty() {
            writeln!(out, "{}: valid", file.display())?;
        } else {
            writeln!(out, "{}: {} problem(s)", file.display(), problems.len())?;
            for p in &problems {
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
