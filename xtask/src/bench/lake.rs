//! `cargo xtask bench lake`: the Lake Map on a generated mixed lake of over 1 GB (Parquet,
//! CSV, NDJSON, Arrow IPC; 32M rows) under `target/bench-data/lake` (git-ignored, generated
//! once and reused), with DuckDB (`pip install duckdb`) as the peer in the same run:
//!
//! - `map create` with stats off and with the default stats vs DuckDB counting every row;
//! - a 100-row slice deep in a CSV, an NDJSON and a Parquet file vs DuckDB `LIMIT 100 OFFSET k`
//!   on that file, and a global-offset slice vs DuckDB counting the earlier files first;
//! - loading a 100,000-entry map, and 1M `locate_row` calls.
//!
//! Times are the best of several warm runs, after every file of the lake was dropped from the
//! page cache and read back once, so that the cache holds them as for a lake read from disk
//! (see `settle_page_cache`). `BAZAN_BENCH_LAKE=map cargo xtask bench lake` runs only the
//! last part (map load and `locate_row`).

use std::fs::{self, File};
use std::io::{BufWriter, Write as _};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use arrow_array::{ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use lake_map::{
    CreateOptions, HandlerRegistry, LakeMap, MapConfig, MapEntry, StatsColumns,
    assign_first_global_rows, create_map_with, load_map, load_map_file, write_map_to,
};

use super::timing::{best, python_seconds};

/// The generated files: name, rows.
const FILES: &[(&str, u64)] = &[
    ("p00.csv", 3_000_000),
    ("p01.ndjson", 2_000_000),
    ("p02.parquet", 2_500_000),
    ("p03.arrow", 2_000_000),
    ("p04.csv", 3_000_000),
    ("p05.ndjson", 2_000_000),
    ("p06.parquet", 2_500_000),
    ("p07.arrow", 2_000_000),
    ("p08.csv", 3_000_000),
    ("p09.ndjson", 2_000_000),
    ("p10.parquet", 2_500_000),
    ("p11.csv", 3_000_000),
    ("p12.parquet", 2_500_000),
];

/// Bumped whenever the generator changes, so an old lake is regenerated.
const VERSION: &str = "lake-bench-v1";

/// Runs the benchmark.
pub fn run() -> anyhow::Result<()> {
    let dir = crate::workspace_root().join("target").join("bench-data");
    // `BAZAN_BENCH_LAKE=map` runs only the map load and `locate_row` part, which needs no
    // generated lake and takes seconds instead of minutes.
    if std::env::var("BAZAN_BENCH_LAKE").is_ok_and(|v| v == "map") {
        return map_load_and_locate(&dir);
    }
    let lake = dir.join("lake");
    generate(&lake)?;
    let bytes: u64 = FILES
        .iter()
        .map(|(n, _)| fs::metadata(lake.join(n)).map(|m| m.len()).unwrap_or(0))
        .sum();
    let rows: u64 = FILES.iter().map(|f| f.1).sum();
    println!(
        "lake: {} files, {rows} rows, {:.2} GB at {}",
        FILES.len(),
        bytes as f64 / 1e9,
        lake.display()
    );
    settle_page_cache(&lake)?;
    let peer = super::timing::python_imports("duckdb");
    if !peer {
        println!("peer unavailable: DuckDB (pip install duckdb) cannot be imported by python3");
    }

    // map create, stats off and default (the first run of each also warms the page cache).
    let lake_ref = lake.as_path();
    let create = |stats: StatsColumns| {
        let options = CreateOptions {
            config: MapConfig {
                stats_columns: stats,
                ..MapConfig::default()
            },
            ..CreateOptions::default()
        };
        move || {
            create_map_with(lake_ref, &options)
                .map(|r| r.map.total_rows())
                .map_err(Into::into)
        }
    };
    let (off, n_off) = best(3, create(StatsColumns::None))?;
    let (on, n_on) = best(3, create(StatsColumns::All))?;
    if n_off != rows || n_on != rows {
        bail!("map create counted {n_off}/{n_on} rows, the generator wrote {rows}");
    }
    let peer_count = if peer {
        Some(duckdb_count_all(&lake)?)
    } else {
        None
    };
    println!();
    println!(
        "{:<44} {:>10} {:>12} {:>8}",
        "measure", "bazan", "peer", "ratio"
    );
    let line = |what: &str, ours: Duration, theirs: Option<Duration>, goal: &str| match theirs {
        Some(t) => println!(
            "{what:<44} {:>9.3}s {:>11.3}s {:>7.1}x  (goal {goal})",
            ours.as_secs_f64(),
            t.as_secs_f64(),
            t.as_secs_f64() / ours.as_secs_f64()
        ),
        None => println!(
            "{what:<44} {:>9.3}s {:>12} {:>8}",
            ours.as_secs_f64(),
            "-",
            "-"
        ),
    };
    line(
        "map create, stats off vs DuckDB count(*)",
        off,
        peer_count,
        ">= 5x",
    );
    line(
        "map create, default stats vs DuckDB count(*)",
        on,
        peer_count,
        ">= 2x",
    );

    // Deep 100-row slices (the map with default stats is on disk now).
    let map = load_map(&lake)?;
    let registry = HandlerRegistry::builtin();
    for (file, local) in [
        ("p08.csv", 2_500_000u64),
        ("p09.ndjson", 1_700_000),
        ("p10.parquet", 2_100_000),
        ("p07.arrow", 1_600_000),
    ] {
        let e = map.find(file).context("file not in the map")?;
        let start = e.first_global_row + local;
        let (ours, got) = best(5, || {
            let m = load_map(&lake)?;
            let s = m.slice(start, 100, None, &registry)?;
            Ok(s.iter()
                .flat_map(|f| f.batches.iter())
                .map(RecordBatch::num_rows)
                .sum::<usize>())
        })?;
        if got != 100 {
            bail!("{file}: the slice returned {got} rows");
        }
        let theirs = if peer && !file.ends_with(".arrow") {
            Some(duckdb_limit_offset(&lake.join(file), local)?)
        } else {
            None
        };
        line(
            &format!("100 rows at local {local} of {file} (load+slice)"),
            ours,
            theirs,
            if file.ends_with(".parquet") {
                ">= 1x"
            } else {
                ">= 50x"
            },
        );
    }
    // Global offset: the map finds the file; without it the earlier files must be counted.
    let target = "p11.csv";
    let e = map.find(target).context("file not in the map")?;
    let local = 2_000_000u64;
    let (ours, _) = best(5, || {
        let m = load_map(&lake)?;
        Ok(m.slice(e.first_global_row + local, 100, None, &registry)?
            .len())
    })?;
    let theirs = if peer {
        let earlier: Vec<PathBuf> = FILES
            .iter()
            .take_while(|f| f.0 != target)
            .map(|f| lake.join(f.0))
            .collect();
        Some(duckdb_count_files(&earlier)? + duckdb_limit_offset(&lake.join(target), local)?)
    } else {
        None
    };
    line(
        &format!(
            "100 rows at global {} (load+slice)",
            e.first_global_row + local
        ),
        ours,
        theirs,
        ">= 100x",
    );

    map_load_and_locate(&dir)?;
    Ok(())
}

fn map_load_and_locate(dir: &Path) -> anyhow::Result<()> {
    let root = dir.join("map100k");
    fs::create_dir_all(&root)?;
    let mut entries: Vec<MapEntry> = (0..100_000u64)
        .map(|i| MapEntry {
            path: format!("year={}/month={:02}/part-{i:06}.parquet", 2000 + i / 5000, i % 12 + 1),
            format: "parquet".into(),
            size_bytes: 1_000_000 + i,
            mtime_ms: 1_764_400_000_000 + i as i64,
            row_count: 1000 + i % 977,
            first_global_row: 0,
            row_groups_json: format!(
                r#"[{{"ordinal":0,"first_row":0,"row_count":{},"first_byte":4,"total_byte_size":90000,"compressed_size":80000,"columns":null}}]"#,
                1000 + i % 977
            ),
            blake3: None,
            stats_json: Some(format!(r#"{{"id":{{"min":{i},"max":{}}}}}"#, i + 999)),
            schema_json: Some(r#"[{"name":"id","nullable":false,"type":"int64"}]"#.into()),
        })
        .collect();
    assign_first_global_rows(&mut entries);
    let map = LakeMap::from_entries(&root, MapConfig::default(), &entries)?;
    let path = root.join(".br_map.bazan");
    write_map_to(&map, &path)?;
    let size = fs::metadata(&path)?.len();
    let (load, m) = best(20, || Ok(load_map_file(&root, &path)?))?;
    println!(
        "{:<44} {:>9.3}ms {:>12} {:>8}  (goal <= 5 ms; map file {:.1} MB)",
        "load a 100,000-entry map (mmap, zero-copy)",
        load.as_secs_f64() * 1e3,
        "-",
        "-",
        size as f64 / 1e6
    );
    let total = m.total_rows();
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut rows = Vec::with_capacity(1_000_000);
    for _ in 0..1_000_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        rows.push(x % total);
    }
    // The first pass parses (and caches) each touched entry's blocks.
    let mut sink = 0u64;
    for &g in &rows {
        sink = sink.wrapping_add(m.locate_row(g)?.local_row);
    }
    let (t, s) = best(3, || {
        let mut s = 0u64;
        for &g in &rows {
            s = s.wrapping_add(m.locate_row(g)?.local_row);
        }
        Ok(s)
    })?;
    let (t_idx, _) = best(3, || {
        let mut s = 0u64;
        for &g in &rows {
            s = s.wrapping_add(m.locate_index(g)?.1);
        }
        Ok(s)
    })?;
    // What a caller that also wants the file pays: the entry's fields read from the map.
    let (t_entry, _) = best(3, || {
        let mut s = 0u64;
        for &g in &rows {
            let l = m.locate_row(g)?;
            s = s.wrapping_add(l.entry().path.len() as u64 + l.local_row);
        }
        Ok(s)
    })?;
    anyhow::ensure!(s == sink, "locate_row is not deterministic");
    println!(
        "{:<44} {:>8.1}ns {:>12} {:>8}  (goal <= 1 us; binary search alone {:.1} ns)",
        "locate_row, 1M random rows (per call)",
        t.as_secs_f64() * 1e9 / 1e6,
        "-",
        "-",
        t_idx.as_secs_f64() * 1e9 / 1e6
    );
    println!(
        "{:<44} {:>8.1}ns {:>12} {:>8}",
        "locate_row + entry(), 1M random rows",
        t_entry.as_secs_f64() * 1e9 / 1e6,
        "-",
        "-",
    );
    Ok(())
}

fn schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("code", DataType::Utf8, false),
        Field::new("v", DataType::Int64, true),
        Field::new("x", DataType::Float64, true),
    ]))
}

/// Puts the lake's files in the page cache as a lake read from disk has them: each file is
/// dropped from the cache and read back once. Files the generator has just written sit in
/// the cache as the write path left them (on Linux 6.x often as 4 KiB pages), which every
/// memory map of them pays for page by page; read back, readahead caches them in large
/// folios, as any file read from disk. Both tools are then measured on the same warm cache.
fn settle_page_cache(lake: &Path) -> anyhow::Result<()> {
    #[cfg(target_os = "linux")]
    {
        use std::io::Read;
        use std::os::fd::AsRawFd;
        let mut buf = vec![0u8; 1 << 20];
        for (name, _) in FILES {
            let mut file = File::open(lake.join(name))?;
            // Written pages must be clean before they can be dropped.
            file.sync_all()?;
            // SAFETY: a plain system call on an open descriptor; it only advises the kernel.
            let err =
                unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
            if err != 0 {
                println!("page cache: posix_fadvise failed on {name} (error {err}); left as it is");
                return Ok(());
            }
            while file.read(&mut buf)? > 0 {}
        }
        println!("page cache: every file dropped and read back once (as from disk)");
    }
    Ok(())
}

/// The rows of the generated lake, from a deterministic generator.
struct Gen(crate::rng::XorShift);

impl Gen {
    fn row(&mut self) -> (String, i64, f64) {
        let r = self.0.next_u64();
        let code = format!(
            "c{:03}-{}",
            r % 997,
            ["abcd", "wxyz", "mnop", "qrst"][(r >> 20) as usize % 4]
        );
        let v = ((r >> 8) % 2_000_001) as i64 - 1_000_000;
        let x = (((r >> 30) % 2_000_000) as f64 - 1_000_000.0) / 100.0;
        (code, v, x)
    }
}

pub(crate) fn generate(lake: &Path) -> anyhow::Result<()> {
    let marker = lake.join(".generated");
    if fs::read_to_string(&marker).is_ok_and(|s| s == VERSION) {
        return Ok(());
    }
    if lake.exists() {
        fs::remove_dir_all(lake)?;
    }
    fs::create_dir_all(lake)?;
    println!("generating the bench lake at {} (once)...", lake.display());
    let mut gid = 0i64;
    let mut g = Gen(crate::rng::XorShift(0x9e37_79b9_7f4a_7c15));
    for (name, rows) in FILES {
        let path = lake.join(name);
        let ext = name.rsplit('.').next().unwrap_or("");
        match ext {
            "csv" | "ndjson" => {
                let mut w = BufWriter::with_capacity(1 << 20, File::create(&path)?);
                if ext == "csv" {
                    writeln!(w, "id,code,v,x")?;
                }
                for _ in 0..*rows {
                    let (code, v, x) = g.row();
                    if ext == "csv" {
                        writeln!(w, "{gid},{code},{v},{x}")?;
                    } else {
                        writeln!(w, r#"{{"id":{gid},"code":"{code}","v":{v},"x":{x}}}"#)?;
                    }
                    gid += 1;
                }
                w.flush()?;
            }
            _ => {
                let file = File::create(&path)?;
                let mut batches = Vec::new();
                let mut left = *rows;
                while left > 0 {
                    let n = left.min(250_000);
                    let mut ids = Vec::with_capacity(n as usize);
                    let mut codes = Vec::with_capacity(n as usize);
                    let mut vs = Vec::with_capacity(n as usize);
                    let mut xs = Vec::with_capacity(n as usize);
                    for _ in 0..n {
                        let (code, v, x) = g.row();
                        ids.push(gid);
                        codes.push(code);
                        vs.push(v);
                        xs.push(x);
                        gid += 1;
                    }
                    let cols: Vec<ArrayRef> = vec![
                        Arc::new(Int64Array::from(ids)),
                        Arc::new(StringArray::from(codes)),
                        Arc::new(Int64Array::from(vs)),
                        Arc::new(Float64Array::from(xs)),
                    ];
                    batches.push(RecordBatch::try_new(schema(), cols)?);
                    left -= n;
                }
                if ext == "parquet" {
                    use parquet::file::properties::WriterProperties;
                    let props = WriterProperties::builder()
                        .set_compression(parquet::basic::Compression::SNAPPY)
                        .set_max_row_group_row_count(Some(500_000))
                        .build();
                    let mut w = parquet::arrow::ArrowWriter::try_new(file, schema(), Some(props))?;
                    for b in &batches {
                        w.write(b)?;
                    }
                    w.close()?;
                } else {
                    let mut w =
                        arrow_ipc::writer::FileWriter::try_new(BufWriter::new(file), &schema())?;
                    for b in &batches {
                        w.write(b)?;
                    }
                    w.finish()?;
                }
            }
        }
    }
    fs::write(marker, VERSION)?;
    Ok(())
}

/// Runs a Python snippet that prints the best time in seconds of `body` over 3 runs.
fn python_best(setup: &str, body: &str) -> anyhow::Result<Duration> {
    let script = format!(
        "import time, duckdb\n{setup}\nbest = 1e9\nfor _ in range(3):\n    t = time.perf_counter()\n{}\n    best = min(best, time.perf_counter() - t)\nprint(best)\n",
        body.lines()
            .map(|l| format!("    {l}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    python_seconds(&script)
}

fn py_list(paths: &[PathBuf], ext: &str) -> String {
    let items: Vec<String> = paths
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .map(|p| format!("{:?}", p.display().to_string()))
        .collect();
    format!("[{}]", items.join(", "))
}

/// DuckDB counting the rows of these files (Arrow IPC files through pyarrow).
fn duckdb_count_files(paths: &[PathBuf]) -> anyhow::Result<Duration> {
    let setup = format!(
        "import pyarrow as pa\ncon = duckdb.connect()\ncsv = {}\nnd = {}\npq = {}\nipc = {}",
        py_list(paths, "csv"),
        py_list(paths, "ndjson"),
        py_list(paths, "parquet"),
        py_list(paths, "arrow")
    );
    let body = "n = 0\n\
        if csv: n += con.execute(f\"select count(*) from read_csv({csv!r}, header=true)\").fetchall()[0][0]\n\
        if nd: n += con.execute(f\"select count(*) from read_json({nd!r}, format='newline_delimited')\").fetchall()[0][0]\n\
        if pq: n += con.execute(f\"select count(*) from read_parquet({pq!r})\").fetchall()[0][0]\n\
        for f in ipc: n += pa.ipc.open_file(pa.memory_map(f)).read_all().num_rows";
    python_best(&setup, body)
}

fn duckdb_count_all(lake: &Path) -> anyhow::Result<Duration> {
    let paths: Vec<PathBuf> = FILES.iter().map(|f| lake.join(f.0)).collect();
    duckdb_count_files(&paths)
}

fn duckdb_limit_offset(file: &Path, offset: u64) -> anyhow::Result<Duration> {
    let f = file.display().to_string();
    let reader = match file.extension().and_then(|e| e.to_str()) {
        Some("csv") => format!("read_csv('{f}', header=true)"),
        Some("ndjson") => format!("read_json('{f}', format='newline_delimited')"),
        _ => format!("read_parquet('{f}')"),
    };
    let setup = "con = duckdb.connect()";
    let body =
        format!("con.execute(\"select * from {reader} limit 100 offset {offset}\").fetchall()");
    python_best(setup, &body)
}
