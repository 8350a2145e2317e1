//! The many-files figure of `cargo xtask bench lake`: the big quoted CSV and the nested
//! NDJSON of the lake cut into parts of about [`PART_BYTES`] (each CSV part with the header),
//! as a lake partitioned into many files is, mapped warm and cold against DuckDB counting
//! the same parts through globs (its own way of reading many files). Cold, this is where the
//! read-ahead of `map create` across files shows: no file is large enough to be split and
//! read ahead by its own scan.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;

/// The size of one part.
pub const PART_BYTES: usize = 4 << 20;

/// The version of the cut: parts made by an older one are made again.
const VERSION: &str = "parts-1";

/// The parts of `csv` and `ndjson` in `dir` (made once, then reused while the sources keep
/// their sizes); returns every part.
pub fn parts(csv: &Path, ndjson: &Path, dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let stamp = format!(
        "{VERSION} {} {} {PART_BYTES}",
        fs::metadata(csv)?.len(),
        fs::metadata(ndjson)?.len()
    );
    let marker = dir.join(".generated");
    if fs::read_to_string(&marker).is_ok_and(|s| s == stamp) {
        return listed(dir);
    }
    if dir.exists() {
        fs::remove_dir_all(dir)?;
    }
    fs::create_dir_all(dir)?;
    println!("cutting the big CSV and NDJSON into parts of {PART_BYTES} bytes (once)...");
    let data = fs::read(csv).with_context(|| csv.display().to_string())?;
    let header_end = record_end(&data, 0, 0).context("the CSV has no header line")?;
    let header = &data[..header_end];
    write_parts(
        dir,
        "quoted",
        "csv",
        header,
        &data[header_end..],
        record_end,
    )?;
    let data = fs::read(ndjson).with_context(|| ndjson.display().to_string())?;
    write_parts(dir, "events", "ndjson", b"", &data, |d, _, want| {
        d[want..]
            .iter()
            .position(|&b| b == b'\n')
            .map(|i| want + i + 1)
    })?;
    fs::write(&marker, stamp)?;
    listed(dir)
}

/// The part files of `dir`, in name order.
fn listed(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut out: Vec<PathBuf> = fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "csv" || e == "ndjson"))
        .collect();
    out.sort();
    Ok(out)
}

/// Just past the first CSV record end (a line feed outside quotes) at or after `want`, the
/// quotes counted from the record start `from`; `None` when there is none.
fn record_end(d: &[u8], from: usize, want: usize) -> Option<usize> {
    let mut quoted = false;
    for (i, &c) in d.get(from..)?.iter().enumerate() {
        match c {
            b'"' => quoted = !quoted,
            b'\n' if !quoted && from + i >= want => return Some(from + i + 1),
            _ => {}
        }
    }
    None
}

/// Writes `body` as parts `{stem}-NNNN.{ext}` of about [`PART_BYTES`] each, each after
/// `header`: a part from the record start `start` ends just past the record end that
/// `next_end(body, start, want)` finds at or after `want`.
fn write_parts(
    dir: &Path,
    stem: &str,
    ext: &str,
    header: &[u8],
    body: &[u8],
    next_end: impl Fn(&[u8], usize, usize) -> Option<usize>,
) -> anyhow::Result<()> {
    let mut start = 0;
    let mut k = 0;
    while start < body.len() {
        let want = (start + PART_BYTES).min(body.len());
        let end = if want == body.len() {
            body.len()
        } else {
            next_end(body, start, want).unwrap_or(body.len())
        };
        let mut part = Vec::with_capacity(header.len() + end - start);
        part.extend_from_slice(header);
        part.extend_from_slice(&body[start..end]);
        fs::write(dir.join(format!("{stem}-{k:04}.{ext}")), part)?;
        start = end;
        k += 1;
    }
    Ok(())
}

/// DuckDB's script counting the parts in `dir` through one glob per format, on `threads`
/// threads: the best of `runs` runs.
pub fn duckdb_script(dir: &Path, threads: usize, runs: usize) -> String {
    let d = dir.display();
    format!(
        "import time\n{}best = 1e9\nfor _ in range({runs}):\n    t = time.perf_counter()\n    n = con.execute(\"select count(*) from read_csv('{d}/*.csv', header=true)\").fetchone()[0]\n    n += con.execute(\"select count(*) from read_json('{d}/*.ndjson', format='newline_delimited')\").fetchone()[0]\n    best = min(best, time.perf_counter() - t)\nprint(n)\nprint(best)\n",
        super::timing::duckdb_connect(threads)
    )
}

/// Runs [`duckdb_script`]: the rows it counted and its best time.
pub fn duckdb(dir: &Path, threads: usize, runs: usize) -> anyhow::Result<(u64, Duration)> {
    super::lake_peers::run_counting_script("DuckDB", &duckdb_script(dir, threads, runs))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parts end at record ends (a line feed inside quotes is no end), every part of a CSV
    /// starts with its header, and the parts hold every record once.
    #[test]
    fn parts_cut_at_record_ends() {
        let dir = match tempfile::tempdir() {
            Ok(d) => d,
            Err(e) => panic!("temp dir: {e}"),
        };
        let mut csv = b"a,b\n".to_vec();
        let mut ndjson = Vec::new();
        let mut rows = 0;
        while csv.len() < 3 * PART_BYTES {
            // Quoted line feeds in fields of every length: a cut lands inside quotes often.
            let long = "w\n".repeat(rows % 50);
            csv.extend_from_slice(format!("{rows},\"x\ny,\"\"z\"\"{long}\"\n").as_bytes());
            ndjson.extend_from_slice(format!("{{\"i\":{rows}}}\n").as_bytes());
            rows += 1;
        }
        let (c, n) = (dir.path().join("q.csv"), dir.path().join("e.ndjson"));
        if let Err(e) = fs::write(&c, &csv).and_then(|()| fs::write(&n, &ndjson)) {
            panic!("writing the sources: {e}");
        }
        let out = dir.path().join("parts");
        let parts = match parts(&c, &n, &out) {
            Ok(p) => p,
            Err(e) => panic!("cutting: {e:#}"),
        };
        let (mut csv_rows, mut json_rows) = (0, 0);
        for p in &parts {
            let d = match fs::read(p) {
                Ok(d) => d,
                Err(e) => panic!("{}: {e}", p.display()),
            };
            if p.extension().is_some_and(|e| e == "csv") {
                assert!(d.starts_with(b"a,b\n"), "{}", p.display());
                let quotes = d.iter().filter(|&&b| b == b'"').count();
                assert!(quotes % 2 == 0, "{} ends inside quotes", p.display());
                csv_rows += d.windows(2).filter(|w| w == b"\"\n").count();
            } else {
                assert!(d.ends_with(b"}\n"), "{}", p.display());
                json_rows += d.iter().filter(|&&b| b == b'\n').count();
            }
        }
        assert_eq!((csv_rows, json_rows), (rows, rows));
        assert!(parts.len() >= 4, "{} parts", parts.len());
        // A second call reuses them.
        match super::parts(&c, &n, &out) {
            Ok(again) => assert_eq!(again, parts),
            Err(e) => panic!("again: {e:#}"),
        }
    }
}
