//! Times the JSON parsers Rust users reach for over every line of an NDJSON file, one
//! thread, best of five passes over the file in memory (see `Cargo.toml`). The result is
//! the number of lines each parser took as valid.

use std::error::Error;
use std::io::Write;
use std::time::Instant;

use serde::de::IgnoredAny;

fn main() -> Result<(), Box<dyn Error>> {
    let path = std::env::args()
        .nth(1)
        .ok_or("usage: json-parsers FILE.ndjson")?;
    let data = std::fs::read(&path).map_err(|e| format!("{path}: {e}"))?;
    let mut lines = Vec::new();
    let mut start = 0;
    for end in memchr::memchr_iter(b'\n', &data) {
        lines.push(start..end);
        start = end + 1;
    }
    if start < data.len() {
        lines.push(start..data.len());
    }
    let mb = data.len() as f64 / 1e6;
    // Written with errors returned, not `println!`: a closed pipe (`| head`) ends the run.
    let out = std::cell::RefCell::new(std::io::stdout().lock());
    writeln!(
        out.borrow_mut(),
        "{path}: {mb:.1} MB, {} lines, one thread, best of 5",
        lines.len()
    )?;
    // `.cargo/config.toml` applies only when cargo runs from this package's folder.
    writeln!(
        out.borrow_mut(),
        "peers built with AVX2: {} (run cargo from xtask/peers/json-parsers for their best case)",
        cfg!(target_feature = "avx2")
    )?;
    let time = |name: &str, pass: &mut dyn FnMut() -> usize| -> std::io::Result<()> {
        let mut best = f64::MAX;
        let mut ok = 0;
        for _ in 0..5 {
            let t = Instant::now();
            ok = pass();
            best = best.min(t.elapsed().as_secs_f64());
        }
        writeln!(
            out.borrow_mut(),
            "{name:52} {:8.1} ms {:6.0} MB/s  (result {ok})",
            best * 1e3,
            mb / best
        )
    };
    time("memchr: line feeds only", &mut || {
        memchr::memchr_iter(b'\n', &data).count()
    })?;
    time("simdutf8: UTF-8 check of the file", &mut || {
        usize::from(simdutf8::basic::from_utf8(&data).is_ok())
    })?;
    time("serde_json: validate (IgnoredAny)", &mut || {
        let valid = |r: &std::ops::Range<usize>| {
            serde_json::from_slice::<IgnoredAny>(&data[r.clone()]).is_ok()
        };
        lines.iter().filter(|r| valid(r)).count()
    })?;
    time("serde_json: Value", &mut || {
        let valid = |r: &std::ops::Range<usize>| {
            serde_json::from_slice::<serde_json::Value>(&data[r.clone()]).is_ok()
        };
        lines.iter().filter(|r| valid(r)).count()
    })?;
    time("sonic-rs: Value", &mut || {
        let valid = |r: &std::ops::Range<usize>| {
            sonic_rs::from_slice::<sonic_rs::Value>(&data[r.clone()]).is_ok()
        };
        lines.iter().filter(|r| valid(r)).count()
    })?;
    let mut buffers = simd_json::Buffers::default();
    let mut line = Vec::new();
    time(
        "simd-json: tape (line copied, it parses in place)",
        &mut || {
            let mut ok = 0;
            for r in &lines {
                line.clear();
                line.extend_from_slice(&data[r.clone()]);
                ok += usize::from(simd_json::to_tape_with_buffers(&mut line, &mut buffers).is_ok());
            }
            ok
        },
    )?;
    Ok(())
}
