//! `cargo xtask bench locators`, columnar formats: index time (footer only, and with
//! statistics) and a 100-row read at a deep offset for Parquet, ORC, Avro, Arrow IPC file and
//! Arrow IPC stream files of over 100 MB, next to pyarrow and DuckDB doing the same work on
//! the same files in the same run, where they are installed.
//!
//! The files are generated once under `target/bench-data/` (git-ignored) and reused while
//! their marker file says they hold [`ROWS`] rows.

use std::fs::File;
use std::io::{BufWriter, Write as _};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use arrow_array::{Float64Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use lake_locators::{FileIndex, IndexOptions, ReadRequest, StatsColumns, registry};

/// Rows of each generated file (every file is over 100 MB).
const ROWS: u64 = 5_500_000;
/// Rows per generated batch, Arrow record batch and Avro block run.
const CHUNK: usize = 65_536;
/// Rows per Avro block (fastavro writes blocks of about this many rows of this width).
const AVRO_BLOCK: usize = 4_000;
/// The deep read: 100 rows starting at 90 % of the file.
const DEEP: u64 = ROWS / 10 * 9 + 12_345;
/// Repetitions of each timed operation (the median is reported).
const REPEAT: usize = 5;

/// Runs the columnar half of the benchmark.
pub fn run() -> anyhow::Result<()> {
    let dir = crate::workspace_root().join("target").join("bench-data");
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let files = [
        ("parquet", dir.join("cols.parquet")),
        ("orc", dir.join("cols.orc")),
        ("avro", dir.join("cols.avro")),
        ("arrow", dir.join("cols.arrow")),
        ("arrows", dir.join("cols.arrows")),
    ];
    for (format, path) in &files {
        generate(format, path)?;
    }
    let peer = PeerScript::new(&dir)?;
    println!(
        "{:<8} {:>9} {:>8} | {:>12} {:>12} {:>12} | {:>14} {:>14}",
        "format",
        "MB",
        "blocks",
        "index",
        "index+stats",
        "deep read",
        "read no index",
        "deep rows ok"
    );
    let mut ours = Vec::new();
    for (format, path) in &files {
        let m = measure(format, path)?;
        println!(
            "{:<8} {:>9.1} {:>8} | {:>12} {:>12} {:>12} | {:>14} {:>14}",
            format,
            m.bytes as f64 / 1e6,
            m.blocks,
            fmt(m.index),
            fmt(m.index_stats),
            fmt(m.deep),
            fmt(m.deep_no_index),
            m.deep_ok
        );
        ours.push((format, path, m));
    }
    parquet_bytes_read(&files[0].1)?;
    let Some(peer) = peer else {
        return Ok(());
    };
    println!();
    println!(
        "{:<8} {:<8} {:>12} {:>12} | {:>14} {:>14}",
        "format", "peer", "index", "deep read", "index ratio", "read ratio"
    );
    for (format, path, m) in &ours {
        for result in peer.run(format, path)? {
            let ratio = |peer: Option<Duration>, ours: Duration| match peer {
                Some(p) => format!("{:.1}x", p.as_secs_f64() / ours.as_secs_f64().max(1e-9)),
                None => "-".into(),
            };
            println!(
                "{:<8} {:<8} {:>12} {:>12} | {:>14} {:>14}",
                format,
                result.peer,
                result.index.map_or("-".into(), fmt),
                result.deep.map_or("-".into(), fmt),
                ratio(result.index, m.index),
                ratio(result.deep, m.deep),
            );
            if let Some(note) = &result.note {
                println!("         {note}");
            }
        }
    }
    println!("(ratio = peer time / our time: above 1 means Bazan is faster)");
    Ok(())
}

/// Bytes the Parquet index and the deep read fetch (traced), against the file and the row
/// group: the index reads the tail only, the deep read the pages of one row group.
fn parquet_bytes_read(path: &Path) -> anyhow::Result<()> {
    use lake_locators::parquet::ParquetLocator;
    use lake_locators::trace::{ReadLog, TraceReader};
    let log = ReadLog::default();
    let traced = TraceReader::new(File::open(path)?, log.clone())?;
    let idx = ParquetLocator.index_reader(path, traced, &IndexOptions::default())?;
    let sum = |log: &ReadLog| log.ranges().iter().map(|r| r.end - r.start).sum::<u64>();
    let index_bytes = sum(&log);
    log.clear();
    let traced = TraceReader::new(File::open(path)?, log.clone())?;
    let request = ReadRequest {
        rows: DEEP..DEEP + 100,
        blocks: Some(&idx.blocks),
        ..Default::default()
    };
    for batch in ParquetLocator.read_reader(path, traced, &request)? {
        batch?;
    }
    let group = idx
        .blocks
        .iter()
        .find(|b| b.row_range().contains(&DEEP))
        .and_then(|b| b.compressed_size)
        .unwrap_or(0);
    println!(
        "parquet bytes fetched: index (with footer statistics) {:.1} KB of a {:.1} MB file; \
         deep read {:.2} MB (footer and page index included) of a {:.1} MB row group",
        index_bytes as f64 / 1e3,
        std::fs::metadata(path)?.len() as f64 / 1e6,
        sum(&log) as f64 / 1e6,
        group as f64 / 1e6
    );
    Ok(())
}

fn fmt(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 1e-3 {
        format!("{:.1} µs", s * 1e6)
    } else if s < 1.0 {
        format!("{:.2} ms", s * 1e3)
    } else {
        format!("{s:.2} s")
    }
}

fn median(mut f: impl FnMut() -> anyhow::Result<()>) -> anyhow::Result<Duration> {
    let mut times = Vec::with_capacity(REPEAT);
    for _ in 0..REPEAT {
        let t = Instant::now();
        f()?;
        times.push(t.elapsed());
    }
    times.sort();
    Ok(times[REPEAT / 2])
}

/// What one file measured.
struct Measured {
    bytes: u64,
    blocks: usize,
    index: Duration,
    index_stats: Duration,
    deep: Duration,
    deep_no_index: Duration,
    deep_ok: bool,
}

fn measure(format: &str, path: &Path) -> anyhow::Result<Measured> {
    let locator = registry::for_extension(format).context("no locator")?;
    let no_stats = IndexOptions {
        stride: 65_536,
        stats: StatsColumns::None,
    };
    let mut idx: Option<FileIndex> = None;
    let index = median(|| {
        idx = Some(locator.index(path, &no_stats)?);
        Ok(())
    })?;
    let idx = idx.context("no index")?;
    if idx.row_count != ROWS {
        bail!(
            "{}: {} rows, expected {ROWS}",
            path.display(),
            idx.row_count
        );
    }
    let t = Instant::now();
    let with_stats = locator.index(path, &IndexOptions::default())?;
    let index_stats = t.elapsed();
    if with_stats.stats.as_ref().is_none_or(|s| s.len() != 4) {
        bail!("{}: statistics incomplete", path.display());
    }
    let deep_read = |blocks: Option<&[lake_locators::Block]>| -> anyhow::Result<Vec<i64>> {
        let request = ReadRequest {
            rows: DEEP..DEEP + 100,
            blocks,
            ..Default::default()
        };
        let mut gids = Vec::with_capacity(100);
        for batch in locator.read(path, &request)? {
            let batch = batch?;
            let col = batch
                .column(0)
                .as_any()
                .downcast_ref::<Int64Array>()
                .context("gid is not int64")?;
            gids.extend(col.values().iter().copied());
        }
        Ok(gids)
    };
    let mut gids = Vec::new();
    let deep = median(|| {
        gids = deep_read(Some(&idx.blocks))?;
        Ok(())
    })?;
    let t = Instant::now();
    let again = deep_read(None)?;
    let deep_no_index = t.elapsed();
    let want: Vec<i64> = (DEEP as i64..DEEP as i64 + 100).collect();
    Ok(Measured {
        bytes: std::fs::metadata(path)?.len(),
        blocks: idx.blocks.len(),
        index,
        index_stats,
        deep,
        deep_no_index,
        deep_ok: gids == want && again == want,
    })
}

fn schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("gid", DataType::Int64, false),
        Field::new("code", DataType::Utf8, true),
        Field::new("v", DataType::Int64, true),
        Field::new("x", DataType::Float64, true),
    ]))
}

/// The deterministic generator, so that runs compare the same bytes.
use crate::rng::XorShift as Rng;

/// Rows `[first, first + n)`: `gid` = row number, a random 8-letter `code`, a random `v`
/// (every 10th null) and a random `x` with two decimals (every 7th null).
fn chunk(rng: &mut Rng, first: u64, n: usize) -> anyhow::Result<RecordBatch> {
    let mut codes = Vec::with_capacity(n);
    let mut vs = Vec::with_capacity(n);
    let mut xs = Vec::with_capacity(n);
    for i in 0..n as u64 {
        let r = rng.next_u64();
        let code: String = (0..8)
            .map(|k| char::from(b'a' + ((r >> (k * 5)) % 26) as u8))
            .collect();
        codes.push(code);
        let g = first + i;
        vs.push((!g.is_multiple_of(10)).then(|| (rng.next_u64() >> 20) as i64 - (1 << 43)));
        xs.push(
            (!g.is_multiple_of(7)).then(|| ((rng.next_u64() % 2_000_000) as f64 - 1e6) / 100.0),
        );
    }
    Ok(RecordBatch::try_new(
        schema(),
        vec![
            Arc::new(Int64Array::from_iter_values(
                first as i64..first as i64 + n as i64,
            )),
            Arc::new(StringArray::from(codes)),
            Arc::new(Int64Array::from(vs)),
            Arc::new(Float64Array::from(xs)),
        ],
    )?)
}

fn generate(format: &str, path: &Path) -> anyhow::Result<()> {
    let marker = PathBuf::from(format!("{}.rows{ROWS}", path.display()));
    if path.is_file() && marker.is_file() {
        return Ok(());
    }
    let started = Instant::now();
    let file = File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let out = BufWriter::with_capacity(1 << 20, file);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let chunks = (0..ROWS).step_by(CHUNK).map(|first| {
        let n = (ROWS - first).min(CHUNK as u64) as usize;
        (first, n)
    });
    match format {
        "parquet" => {
            // pyarrow's defaults: row groups of 1Mi rows, snappy, page index written.
            let props = parquet::file::properties::WriterProperties::builder()
                .set_max_row_group_row_count(Some(1 << 20))
                .set_compression(parquet::basic::Compression::SNAPPY)
                .build();
            let mut w = parquet::arrow::ArrowWriter::try_new(out, schema(), Some(props))?;
            for (first, n) in chunks {
                w.write(&chunk(&mut rng, first, n)?)?;
            }
            w.close()?;
        }
        "orc" => {
            // Uncompressed (orc-rust's default), so that the file is over 100 MB; stripes of
            // 64 MiB, the ORC default.
            let mut w = orc_rust::ArrowWriterBuilder::new(out, schema()).try_build()?;
            for (first, n) in chunks {
                w.write(&chunk(&mut rng, first, n)?)?;
            }
            w.close()?;
        }
        "arrow" => {
            let mut w = arrow_ipc::writer::FileWriter::try_new(out, &schema())?;
            for (first, n) in chunks {
                w.write(&chunk(&mut rng, first, n)?)?;
            }
            w.finish()?;
        }
        "arrows" => {
            let mut w = arrow_ipc::writer::StreamWriter::try_new(out, &schema())?;
            for (first, n) in chunks {
                w.write(&chunk(&mut rng, first, n)?)?;
            }
            w.finish()?;
        }
        "avro" => {
            let mut out = out;
            avro::write(&mut out, &mut rng, chunks)?;
            out.flush()?;
        }
        other => bail!("unknown format {other}"),
    }
    std::fs::write(&marker, b"")?;
    println!(
        "generated {} ({:.0} MB) in {:.1} s",
        path.display(),
        std::fs::metadata(path)?.len() as f64 / 1e6,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// A minimal Avro OCF writer (deflate blocks) for the generated rows.
mod avro {
    use std::io::Write;

    use arrow_array::cast::AsArray;
    use arrow_array::types::{Float64Type, Int64Type};
    use arrow_array::{Array, RecordBatch};

    use super::{AVRO_BLOCK, Rng, chunk};

    const SCHEMA: &str = r#"{"type":"record","name":"row","fields":[{"name":"gid","type":"long"},{"name":"code","type":["null","string"]},{"name":"v","type":["null","long"]},{"name":"x","type":["null","double"]}]}"#;
    const SYNC: [u8; 16] = *b"bazan-bench-sync";

    fn long(v: i64, out: &mut Vec<u8>) {
        let mut z = ((v << 1) ^ (v >> 63)) as u64;
        while z >= 0x80 {
            out.push((z as u8 & 0x7f) | 0x80);
            z >>= 7;
        }
        out.push(z as u8);
    }

    fn bytes(b: &[u8], out: &mut Vec<u8>) {
        long(b.len() as i64, out);
        out.extend_from_slice(b);
    }

    fn encode(batch: &RecordBatch, row: usize, out: &mut Vec<u8>) {
        let gid = batch.column(0).as_primitive::<Int64Type>();
        let code = batch.column(1).as_string::<i32>();
        let v = batch.column(2).as_primitive::<Int64Type>();
        let x = batch.column(3).as_primitive::<Float64Type>();
        long(gid.value(row), out);
        long(1, out);
        bytes(code.value(row).as_bytes(), out);
        if v.is_null(row) {
            long(0, out);
        } else {
            long(1, out);
            long(v.value(row), out);
        }
        if x.is_null(row) {
            long(0, out);
        } else {
            long(1, out);
            out.extend_from_slice(&x.value(row).to_le_bytes());
        }
    }

    pub(super) fn write(
        out: &mut impl Write,
        rng: &mut Rng,
        chunks: impl Iterator<Item = (u64, usize)>,
    ) -> anyhow::Result<()> {
        let mut head = b"Obj\x01".to_vec();
        long(2, &mut head);
        bytes(b"avro.schema", &mut head);
        bytes(SCHEMA.as_bytes(), &mut head);
        bytes(b"avro.codec", &mut head);
        bytes(b"deflate", &mut head);
        long(0, &mut head);
        head.extend_from_slice(&SYNC);
        out.write_all(&head)?;
        for (first, n) in chunks {
            let batch = chunk(rng, first, n)?;
            for start in (0..n).step_by(AVRO_BLOCK) {
                let end = (start + AVRO_BLOCK).min(n);
                let mut data = Vec::new();
                for row in start..end {
                    encode(&batch, row, &mut data);
                }
                let mut framed = Vec::with_capacity(data.len() / 2 + 32);
                apache_avro::Codec::Deflate(Default::default()).compress(&mut data)?;
                long((end - start) as i64, &mut framed);
                bytes(&data, &mut framed);
                framed.extend_from_slice(&SYNC);
                out.write_all(&framed)?;
            }
        }
        Ok(())
    }
}

/// One peer's figures for one file.
struct PeerResult {
    peer: String,
    index: Option<Duration>,
    deep: Option<Duration>,
    note: Option<String>,
}

/// The Python side: pyarrow and DuckDB, timed inside Python (interpreter start excluded).
struct PeerScript {
    script: PathBuf,
}

const PEER_PY: &str = include_str!("locators_peer.py");

impl PeerScript {
    fn new(dir: &Path) -> anyhow::Result<Option<Self>> {
        let ok = Command::new("python3")
            .args(["-c", "import pyarrow, duckdb"])
            .output()
            .is_ok_and(|o| o.status.success());
        if !ok {
            // Try once to install them, as the issue asks; report when that fails too.
            let _ = Command::new("python3")
                .args(["-m", "pip", "install", "--quiet", "pyarrow", "duckdb"])
                .status();
        }
        let ok = Command::new("python3")
            .args(["-c", "import pyarrow"])
            .output()
            .is_ok_and(|o| o.status.success());
        if !ok {
            println!(
                "peer unavailable: pyarrow/DuckDB (pip install pyarrow duckdb) cannot be imported by python3"
            );
            return Ok(None);
        }
        let script = dir.join("locators_peer.py");
        std::fs::write(&script, PEER_PY)?;
        Ok(Some(PeerScript { script }))
    }

    fn run(&self, format: &str, path: &Path) -> anyhow::Result<Vec<PeerResult>> {
        let out = Command::new("python3")
            .arg(&self.script)
            .args([
                format,
                &path.display().to_string(),
                &DEEP.to_string(),
                &REPEAT.to_string(),
            ])
            .output()
            .context("cannot run python3")?;
        if !out.status.success() {
            bail!(
                "peer script failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let mut results = Vec::new();
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            let v: serde_json::Value = serde_json::from_str(line)
                .with_context(|| format!("peer script printed {line:?}"))?;
            let secs = |k: &str| v[k].as_f64().map(Duration::from_secs_f64);
            results.push(PeerResult {
                peer: v["peer"].as_str().unwrap_or("?").to_string(),
                index: secs("index"),
                deep: secs("deep"),
                note: v["note"].as_str().map(str::to_string),
            });
        }
        Ok(results)
    }
}
