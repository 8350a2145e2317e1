//! The data of `cargo xtask bench lake`'s realistic profile: text files that look like the
//! files users have, not like a benchmark's. Deterministic (the same bytes on every run).
//!
//! - `quoted.csv`: CRLF line ends, a UTF-8 BOM, a free-text column whose values hold commas,
//!   doubled quotes and line breaks inside quotes, long values now and then, empty fields;
//! - `wide.csv`: 120 columns (integers, decimals, short codes, booleans, empty fields);
//! - `events.ndjson`: nested objects and arrays, keys in several orders, members that come
//!   and go, escapes (`\"`, `\\`, `\n`, `\u00e9`) and raw non-ASCII text;
//! - `sales.parquet` (row groups of 100,000 rows) and `batches.arrow` (record batches of
//!   1,000 rows: many small batches).
//!
//! The default size is 240 MB (120 MB of CSV, 120 MB of NDJSON); `--size 1g` multiplies it.

use std::fs::{self, File};
use std::io::{BufWriter, Write as _};
use std::path::Path;
use std::sync::Arc;

use arrow_array::{ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};

use crate::rng::XorShift;

/// Bumped whenever the generator changes, so an old lake is regenerated.
const VERSION: &str = "lake-real-v1";

/// The files of the realistic lake and their share of the text bytes (CSV and NDJSON) or
/// their rows per MB of total size (Parquet and Arrow).
pub const FILES: &[&str] = &[
    "quoted.csv",
    "wide.csv",
    "events.ndjson",
    "sales.parquet",
    "batches.arrow",
];

/// The big quoted CSV of the 1-thread vs 2-thread figure and the deep slices.
pub const BIG_CSV: &str = "quoted.csv";
/// The NDJSON file of the deep slices.
pub const BIG_NDJSON: &str = "events.ndjson";

const WORDS: &[&str] = &[
    "the",
    "order",
    "arrived",
    "late",
    "box",
    "was",
    "damaged",
    "but",
    "support",
    "helped",
    "quickly",
    "great",
    "value",
    "would",
    "buy",
    "again",
    "size",
    "runs",
    "small",
    "colour",
    "différent",
    "très",
    "bien",
    "schnell",
    "geliefert",
    "日本",
    "円",
    "ok",
    "refund",
    "n/a",
];

/// A sentence of `n` words, with the punctuation users type.
fn sentence(g: &mut XorShift, n: usize, out: &mut String) {
    for i in 0..n {
        if i > 0 {
            out.push(if g.chance(0.08) { ',' } else { ' ' });
            if out.ends_with(',') {
                out.push(' ');
            }
        }
        out.push_str(WORDS[g.below(WORDS.len() as u64) as usize]);
    }
}

/// The free-text field of `quoted.csv`, already quoted when it needs to be.
fn csv_comment(g: &mut XorShift, out: &mut String) {
    let r = g.below(100);
    if r < 10 {
        // Empty field.
        return;
    }
    let mut text = String::new();
    let words = if g.chance(0.02) {
        150 + g.below(300) as usize
    } else {
        3 + g.below(14) as usize
    };
    sentence(g, words, &mut text);
    if g.chance(0.15) {
        text.push_str(" \"quoted\" word");
    }
    if g.chance(0.05) {
        text.push_str("\r\nsecond line");
        if g.chance(0.3) {
            text.push_str("\nthird line, with a comma");
        }
    }
    if text.contains([',', '"', '\n', '\r']) || g.chance(0.3) {
        out.push('"');
        out.push_str(&text.replace('"', "\"\""));
        out.push('"');
    } else {
        out.push_str(&text);
    }
}

/// Writes `quoted.csv` until it holds `bytes` bytes; returns its rows.
fn quoted_csv(path: &Path, bytes: u64, g: &mut XorShift) -> anyhow::Result<u64> {
    let mut w = BufWriter::with_capacity(1 << 20, File::create(path)?);
    let rows = quoted_csv_to(&mut w, bytes, g)?;
    w.flush()?;
    Ok(rows)
}

/// Writes the header and rows of `quoted.csv` to `w` until `bytes` bytes are written (at
/// least one row); returns its rows.
pub(crate) fn quoted_csv_to(
    w: &mut impl std::io::Write,
    bytes: u64,
    g: &mut XorShift,
) -> anyhow::Result<u64> {
    let mut written = 0u64;
    let head = "\u{feff}id,created_at,customer,amount,qty,paid,comment,country,score\r\n";
    w.write_all(head.as_bytes())?;
    written += head.len() as u64;
    let mut rows = 0u64;
    let mut line = String::with_capacity(4096);
    while written < bytes {
        line.clear();
        let r = g.next_u64();
        let day = 1 + r % 28;
        let month = 1 + (r >> 5) % 12;
        let amount = if g.chance(0.03) {
            String::new()
        } else {
            format!("{}.{:02}", (r >> 12) % 100_000, (r >> 30) % 100)
        };
        let customer = if g.chance(0.1) {
            format!("\"Smith, {}\"", WORDS[(r >> 40) as usize % WORDS.len()])
        } else {
            format!("cust-{:06}", (r >> 20) % 1_000_000)
        };
        use std::fmt::Write as _;
        let _ = write!(
            line,
            "{rows},2026-{month:02}-{day:02}T{:02}:{:02}:{:02}Z,{customer},{amount},{},{},",
            (r >> 7) % 24,
            (r >> 13) % 60,
            (r >> 19) % 60,
            (r >> 25) % 50,
            if r & 1 == 0 { "true" } else { "false" },
        );
        csv_comment(g, &mut line);
        let score = if g.chance(0.01) {
            "1.5e3".to_string()
        } else {
            format!("{:.3}", ((r >> 33) % 100_000) as f64 / 1000.0 - 50.0)
        };
        let _ = write!(
            line,
            ",{},{score}\r\n",
            ["FR", "DE", "US", "JP", "BR", "IN"][(r >> 50) as usize % 6]
        );
        w.write_all(line.as_bytes())?;
        written += line.len() as u64;
        rows += 1;
    }
    Ok(rows)
}

/// Writes `wide.csv` (120 columns) until it holds `bytes` bytes; returns its rows.
fn wide_csv(path: &Path, bytes: u64, g: &mut XorShift) -> anyhow::Result<u64> {
    const COLS: usize = 120;
    let mut w = BufWriter::with_capacity(1 << 20, File::create(path)?);
    let head: Vec<String> = (0..COLS).map(|c| format!("c{c:03}")).collect();
    let head = head.join(",") + "\n";
    w.write_all(head.as_bytes())?;
    let mut written = head.len() as u64;
    let mut rows = 0u64;
    let mut line = String::with_capacity(4096);
    while written < bytes {
        line.clear();
        for c in 0..COLS {
            if c > 0 {
                line.push(',');
            }
            let r = g.next_u64();
            use std::fmt::Write as _;
            if r.is_multiple_of(50) {
                continue;
            }
            let _ = match c % 5 {
                0 => write!(line, "{}", (r >> 8) % 1_000_000),
                1 => write!(line, "{}.{}", (r >> 8) % 10_000, (r >> 30) % 100),
                2 => write!(line, "k{}", (r >> 8) % 500),
                3 => write!(line, "{}", if r & 2 == 0 { "true" } else { "false" }),
                _ => write!(line, "-{}", (r >> 8) % 100),
            };
        }
        line.push('\n');
        w.write_all(line.as_bytes())?;
        written += line.len() as u64;
        rows += 1;
    }
    w.flush()?;
    Ok(rows)
}

/// A JSON string literal of `text` with its escapes (`"`, `\`, line breaks; `é` written as
/// `\u00e9` now and then, raw otherwise).
fn json_str(g: &mut XorShift, text: &str, out: &mut String) {
    out.push('"');
    let escape_unicode = g.chance(0.2);
    for ch in text.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            'é' if escape_unicode => out.push_str("\\u00e9"),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Writes `events.ndjson` until it holds `bytes` bytes; returns its rows.
fn events_ndjson(path: &Path, bytes: u64, g: &mut XorShift) -> anyhow::Result<u64> {
    let mut w = BufWriter::with_capacity(1 << 20, File::create(path)?);
    let rows = events_ndjson_to(&mut w, bytes, g)?;
    w.flush()?;
    Ok(rows)
}

/// Writes the lines of `events.ndjson` to `w` until `bytes` bytes are written; returns its
/// rows.
pub(crate) fn events_ndjson_to(
    w: &mut impl std::io::Write,
    bytes: u64,
    g: &mut XorShift,
) -> anyhow::Result<u64> {
    use std::fmt::Write as _;
    let mut written = 0u64;
    let mut rows = 0u64;
    let mut line = String::with_capacity(4096);
    let mut members: Vec<String> = Vec::with_capacity(10);
    while written < bytes {
        members.clear();
        let r = g.next_u64();
        members.push(format!("\"id\":{rows}"));
        members.push(format!(
            "\"ts\":\"2026-{:02}-{:02}T{:02}:{:02}:00Z\"",
            1 + r % 12,
            1 + (r >> 4) % 28,
            (r >> 9) % 24,
            (r >> 14) % 60
        ));
        members.push(format!(
            "\"type\":\"{}\"",
            ["click", "view", "purchase", "signup"][(r >> 20) as usize % 4]
        ));
        let mut user = String::new();
        let _ = write!(user, "\"user\":{{\"id\":{},\"name\":", (r >> 22) % 100_000);
        let mut name = String::new();
        sentence(g, 2, &mut name);
        json_str(g, &name, &mut user);
        let _ = write!(user, ",\"vip\":{}}}", r & 8 == 0);
        members.push(user);
        let ntags = (r >> 40) % 4;
        let tags: Vec<String> = (0..ntags)
            .map(|i| format!("\"t{}\"", (r >> (44 + i)) % 20))
            .collect();
        members.push(format!("\"tags\":[{}]", tags.join(",")));
        if g.chance(0.7) {
            members.push(format!(
                "\"amount\":{}.{:02}",
                (r >> 30) % 10_000,
                (r >> 50) % 100
            ));
        } else if g.chance(0.5) {
            members.push("\"amount\":null".into());
        }
        if g.chance(0.5) {
            let mut msg = String::from("\"message\":");
            let mut text = String::new();
            let words = 4 + g.below(12) as usize;
            sentence(g, words, &mut text);
            if g.chance(0.1) {
                text.push_str(" \"quoted\" and a back\\slash\nnext line");
            }
            json_str(g, &text, &mut msg);
            members.push(msg);
        }
        // Keys in one of several orders: writers built from maps do not keep one order.
        match g.below(4) {
            0 => {}
            1 => members.reverse(),
            2 => members.rotate_left(2),
            _ => members.swap(0, 3),
        }
        line.clear();
        line.push('{');
        line.push_str(&members.join(","));
        line.push_str("}\n");
        w.write_all(line.as_bytes())?;
        written += line.len() as u64;
        rows += 1;
    }
    Ok(rows)
}

pub(crate) fn columnar_schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("store", DataType::Utf8, false),
        Field::new("qty", DataType::Int64, true),
        Field::new("price", DataType::Float64, true),
    ]))
}

/// `rows` rows in batches of `batch` rows.
pub(crate) fn columnar_batches(
    rows: u64,
    batch: u64,
    g: &mut XorShift,
) -> anyhow::Result<Vec<RecordBatch>> {
    let mut out = Vec::new();
    let mut done = 0u64;
    while done < rows {
        let n = batch.min(rows - done);
        let ids: Vec<i64> = (done..done + n).map(|i| i as i64).collect();
        let stores: Vec<String> = (0..n).map(|_| format!("store-{}", g.below(300))).collect();
        let qty: Vec<Option<i64>> = (0..n)
            .map(|_| (!g.chance(0.02)).then(|| g.below(100) as i64))
            .collect();
        let price: Vec<Option<f64>> = (0..n)
            .map(|_| (!g.chance(0.02)).then(|| g.below(100_000) as f64 / 100.0))
            .collect();
        let cols: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from(ids)),
            Arc::new(StringArray::from(stores)),
            Arc::new(Int64Array::from(qty)),
            Arc::new(Float64Array::from(price)),
        ];
        out.push(RecordBatch::try_new(columnar_schema(), cols)?);
        done += n;
    }
    Ok(out)
}

/// Generates the realistic lake of `mb` megabytes of text files at `lake` unless it is there
/// already; returns the rows of each file of [`FILES`], in order.
pub fn generate(lake: &Path, mb: u64) -> anyhow::Result<Vec<u64>> {
    let marker = lake.join(".generated");
    let stamp = format!("{VERSION} {mb}");
    if let Ok(s) = fs::read_to_string(&marker)
        && let Some(rest) = s.strip_prefix(&format!("{stamp}\n"))
    {
        let rows: Vec<u64> = rest
            .split_whitespace()
            .filter_map(|r| r.parse().ok())
            .collect();
        if rows.len() == FILES.len() {
            return Ok(rows);
        }
    }
    if lake.exists() {
        fs::remove_dir_all(lake)?;
    }
    fs::create_dir_all(lake)?;
    println!(
        "generating the realistic bench lake ({mb} MB of text) at {} (once)...",
        lake.display()
    );
    let mut g = XorShift(0x2545_f491_4f6c_dd1d);
    let mb_bytes = mb * 1_000_000;
    let mut rows = Vec::new();
    rows.push(quoted_csv(&lake.join(FILES[0]), mb_bytes * 3 / 8, &mut g)?);
    rows.push(wide_csv(&lake.join(FILES[1]), mb_bytes / 8, &mut g)?);
    rows.push(events_ndjson(&lake.join(FILES[2]), mb_bytes / 2, &mut g)?);
    // Columnar files: about 8,000 rows per MB of the lake.
    let n = mb * 8_000;
    let batches = columnar_batches(n, 100_000, &mut g)?;
    {
        use parquet::file::properties::WriterProperties;
        let props = WriterProperties::builder()
            .set_compression(parquet::basic::Compression::SNAPPY)
            .set_max_row_group_row_count(Some(100_000))
            .build();
        let file = File::create(lake.join(FILES[3]))?;
        let mut w = parquet::arrow::ArrowWriter::try_new(file, columnar_schema(), Some(props))?;
        for b in &batches {
            w.write(b)?;
        }
        w.close()?;
    }
    rows.push(n);
    let small = columnar_batches(n, 1_000, &mut g)?;
    {
        let file = File::create(lake.join(FILES[4]))?;
        let mut w =
            arrow_ipc::writer::FileWriter::try_new(BufWriter::new(file), &columnar_schema())?;
        for b in &small {
            w.write(b)?;
        }
        w.finish()?;
    }
    rows.push(n);
    let list: Vec<String> = rows.iter().map(u64::to_string).collect();
    fs::write(marker, format!("{stamp}\n{}\n", list.join(" ")))?;
    Ok(rows)
}
