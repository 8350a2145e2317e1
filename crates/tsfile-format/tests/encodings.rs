//! Every page of every corpus file, decompressed and decoded with the value codecs, against
//! the rows the official reader returned (`expected.json`): FLOAT compared as float32,
//! DOUBLE bit-exact (−0.0 included), integers as i64, and `large` through its SHA-256
//! column digests and row samples.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

use serde_json::Value;
use tsfile_format::chunk::DataRecord;
use tsfile_format::compression;
use tsfile_format::cursor::Cursor;
use tsfile_format::file::decode_head;
use tsfile_format::page::PageHeader;
use tsfile_format::page_payload::{self, PageValues};

use crate::walk::{corpus_dir, tsfiles};

/// One cell, in a form both sides convert to.
#[derive(Debug, Clone, PartialEq)]
enum Val {
    Null,
    Bool(bool),
    Int(i64),
    F32(u32),
    F64(u64),
    Bytes(Vec<u8>),
}

/// What the data section holds for one device.
#[derive(Debug, Default)]
struct DeviceData {
    /// Timestamps of the aligned time column (every row, nulls included).
    times: Vec<i64>,
    /// Non-null values per measurement, in file order.
    series: HashMap<String, Vec<(i64, Val)>>,
}

/// What the walk saw, for the coverage checks.
#[derive(Debug, Default)]
struct Walked {
    devices: HashMap<Vec<Option<String>>, DeviceData>,
    pages: usize,
    /// (data type, encoding, compression) of every decoded page.
    combos: Combos,
}

fn key(segments: &[Option<String>]) -> Vec<Option<String>> {
    let mut k = segments.to_vec();
    while k.len() > 1 && k.last().is_some_and(Option::is_none) {
        k.pop();
    }
    k
}

fn cells(values: PageValues<'_>) -> Vec<Val> {
    match values {
        PageValues::Boolean(v) => v.into_iter().map(Val::Bool).collect(),
        PageValues::Int32(v) => v.into_iter().map(|x| Val::Int(i64::from(x))).collect(),
        PageValues::Int64(v) => v.into_iter().map(Val::Int).collect(),
        PageValues::Float(v) => v.into_iter().map(|x| Val::F32(x.to_bits())).collect(),
        PageValues::Double(v) => v.into_iter().map(|x| Val::F64(x.to_bits())).collect(),
        PageValues::Binary(v) => v.into_iter().map(|x| Val::Bytes(x.to_vec())).collect(),
    }
}

/// Walks the data section from byte 7 to the separator, decoding every page.
fn walk(bytes: &[u8]) -> Walked {
    let version = decode_head(bytes).expect("head");
    let mut w = Walked::default();
    let mut c = Cursor::new(&bytes[7..], 7);
    let mut device: Vec<Option<String>> = Vec::new();
    // Row timestamps of each time page of the current chunk group.
    let mut time_pages: Vec<Vec<i64>> = Vec::new();
    loop {
        let rec = DataRecord::decode(&mut c, version).expect("data record");
        let h = match rec {
            DataRecord::Separator => break,
            DataRecord::OperationIndex(_) => continue,
            DataRecord::ChunkGroup(g) => {
                device = key(g.device.device_id().segments());
                time_pages.clear();
                continue;
            }
            DataRecord::Chunk(h) => h,
        };
        let mut pages = c
            .sub(h.data_size as usize, "chunk pages")
            .expect("chunk pages");
        let data = w.devices.entry(device.clone()).or_default();
        if h.is_time_chunk() {
            time_pages.clear();
        }
        let mut page_no = 0;
        while !pages.is_empty() {
            let ph = PageHeader::decode_for_chunk(&mut pages, &h).expect("page header");
            if ph.is_empty() {
                page_no += 1;
                continue;
            }
            let at = pages.offset();
            let raw = ph.take_payload(&mut pages).expect("payload");
            let payload =
                compression::decompress(h.compression, raw, ph.uncompressed_size as usize, at)
                    .unwrap_or_else(|e| panic!("decompress {h:?}: {e}"));
            w.pages += 1;
            w.combos.insert((
                h.data_type.name().to_string(),
                h.encoding.name().to_string(),
                h.compression.name().to_string(),
            ));
            if h.is_time_chunk() {
                let mut t = Vec::new();
                page_payload::decode_times(h.encoding, &payload, at, &mut t, usize::MAX)
                    .unwrap_or_else(|e| panic!("time page {h:?}: {e}"));
                data.times.extend_from_slice(&t);
                time_pages.push(t);
            } else if h.is_value_chunk() {
                let times = &time_pages[page_no];
                let p = page_payload::split_aligned_value(&payload, at).expect("value page");
                assert_eq!(p.row_count, times.len(), "value page {page_no} of {h:?}");
                let vals = page_payload::decode_values(
                    h.encoding,
                    h.data_type,
                    p.values,
                    p.values_offset,
                    p.present_count(),
                )
                .unwrap_or_else(|e| panic!("value page {page_no} of {h:?}: {e}"));
                let out = data.series.entry(h.measurement_id.clone()).or_default();
                let mut vals = cells(vals).into_iter();
                for (i, &t) in times.iter().enumerate() {
                    if p.is_present(i) {
                        out.push((t, vals.next().expect("present count")));
                    }
                }
            } else {
                let p = page_payload::split_non_aligned(&payload, at).expect("page split");
                let mut t = Vec::new();
                page_payload::decode_times(
                    page_payload::detect_time_encoding(p.times),
                    p.times,
                    p.times_offset,
                    &mut t,
                    usize::MAX,
                )
                .unwrap_or_else(|e| panic!("times of {h:?}: {e}"));
                let vals = page_payload::decode_values(
                    h.encoding,
                    h.data_type,
                    p.values,
                    p.values_offset,
                    t.len(),
                )
                .unwrap_or_else(|e| panic!("values of {h:?}: {e}"));
                let out = data.series.entry(h.measurement_id.clone()).or_default();
                out.extend(t.into_iter().zip(cells(vals)));
            }
            page_no += 1;
        }
    }
    w
}

/// Converts an expected.json cell of column type `ty`.
fn json_val(v: &Value, ty: &str) -> Val {
    if v.is_null() {
        return Val::Null;
    }
    match ty {
        "BOOLEAN" => Val::Bool(v.as_bool().expect("bool")),
        "INT32" | "INT64" | "TIMESTAMP" => Val::Int(v.as_i64().expect("integer")),
        "DATE" => {
            let s = v.as_str().expect("date");
            let parts: Vec<i64> = s
                .split('-')
                .map(|p| p.parse().expect("date part"))
                .collect();
            Val::Int(parts[0] * 10_000 + parts[1] * 100 + parts[2])
        }
        "FLOAT" => Val::F32((v.as_f64().expect("float") as f32).to_bits()),
        "DOUBLE" => Val::F64(v.as_f64().expect("double").to_bits()),
        "BLOB" => {
            let s = v.as_str().expect("hex");
            Val::Bytes(
                (0..s.len())
                    .step_by(2)
                    .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
                    .collect(),
            )
        }
        _ => Val::Bytes(v.as_str().expect("text").as_bytes().to_vec()),
    }
}

/// One column of a reconstructed table: where its cells come from.
enum Source {
    Time,
    Tag(usize),
    Series(String),
}

/// Rebuilds the rows of one device as the official reader returns them: one row per
/// distinct timestamp, ascending.
fn device_rows(
    data: Option<&DeviceData>,
    segments: &[Option<String>],
    sources: &[Source],
) -> Vec<Vec<Val>> {
    let Some(data) = data else {
        return Vec::new();
    };
    let mut times: BTreeSet<i64> = data.times.iter().copied().collect();
    let mut lookup: HashMap<&str, HashMap<i64, &Val>> = HashMap::new();
    for (m, pts) in &data.series {
        times.extend(pts.iter().map(|p| p.0));
        lookup.insert(m.as_str(), pts.iter().map(|(t, v)| (*t, v)).collect());
    }
    times
        .into_iter()
        .map(|t| {
            sources
                .iter()
                .map(|s| match s {
                    Source::Time => Val::Int(t),
                    Source::Tag(i) => match segments.get(i + 1).cloned().flatten() {
                        Some(s) => Val::Bytes(s.into_bytes()),
                        None => Val::Null,
                    },
                    Source::Series(m) => lookup
                        .get(m.as_str())
                        .and_then(|l| l.get(&t))
                        .map_or(Val::Null, |v| (*v).clone()),
                })
                .collect()
        })
        .collect()
}

fn segments_of(v: &Value) -> Vec<Option<String>> {
    v.as_array()
        .expect("segments")
        .iter()
        .map(|s| s.as_str().map(str::to_string))
        .collect()
}

/// Every (table or device) block of expected data with the rows this crate decoded for it.
fn blocks(expected: &Value, walked: &Walked) -> Vec<(String, Value, Vec<Vec<Val>>)> {
    let mut out = Vec::new();
    let data = &expected["data"];
    if expected["model"] == "table" {
        for t in data["tables"].as_array().expect("tables") {
            let name = t["table"].as_str().expect("table name");
            let schema = expected["tables"]
                .as_array()
                .expect("schemas")
                .iter()
                .find(|s| s["name"] == name)
                .expect("schema of table");
            let mut sources = vec![Source::Time];
            let mut tag = 0;
            for col in schema["columns"].as_array().expect("columns") {
                let cname = col["name"].as_str().expect("column name").to_string();
                if col["category"] == "TAG" {
                    sources.push(Source::Tag(tag));
                    tag += 1;
                } else {
                    sources.push(Source::Series(cname));
                }
            }
            let mut rows = Vec::new();
            for d in expected["devices"].as_array().expect("devices") {
                if d["table_name"] != name {
                    continue;
                }
                let segs = segments_of(&d["segments"]);
                rows.extend(device_rows(
                    walked.devices.get(&key(&segs)),
                    &segs,
                    &sources,
                ));
            }
            out.push((name.to_string(), t.clone(), rows));
        }
    } else {
        for d in data["devices"].as_array().expect("devices") {
            let segs = segments_of(&d["segments"]);
            let cols = d["columns"].as_array().expect("columns");
            let sources: Vec<Source> = cols
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    if i == 0 {
                        Source::Time
                    } else {
                        Source::Series(c.as_str().expect("column").to_string())
                    }
                })
                .collect();
            let rows = device_rows(walked.devices.get(&key(&segs)), &segs, &sources);
            out.push((
                d["device"].as_str().expect("device").to_string(),
                d.clone(),
                rows,
            ));
        }
    }
    out
}

fn expected_row(row: &Value, types: &[&str]) -> Vec<Val> {
    row.as_array()
        .expect("row")
        .iter()
        .zip(types)
        .map(|(v, t)| json_val(v, t))
        .collect()
}

/// The corpus digest of one cell (README: null `00`, else `01` + little-endian value).
fn digest_cell(v: &Val, ty: &str, out: &mut Vec<u8>) {
    match v {
        Val::Null => out.push(0),
        Val::Bool(b) => out.extend([1, u8::from(*b)]),
        Val::Int(i) => {
            out.push(1);
            match ty {
                "INT32" | "DATE" => out.extend((*i as i32).to_le_bytes()),
                _ => out.extend(i.to_le_bytes()),
            }
        }
        Val::F32(b) => {
            out.push(1);
            out.extend(b.to_le_bytes());
        }
        Val::F64(b) => {
            out.push(1);
            out.extend(b.to_le_bytes());
        }
        Val::Bytes(b) => {
            out.push(1);
            out.extend((b.len() as u32).to_le_bytes());
            out.extend(b);
        }
    }
}

/// (data type, encoding, compression) names of a decoded page.
type Combos = BTreeSet<(String, String, String)>;

fn check_case(path: &Path) -> Result<(usize, usize, Combos), String> {
    let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
    let json_path = path.with_extension("expected.json");
    let expected: Value =
        serde_json::from_slice(&std::fs::read(&json_path).map_err(|e| e.to_string())?)
            .map_err(|e| e.to_string())?;
    let walked = walk(&bytes);
    // Every (encoding, compression) the expected series report was decoded from some page.
    let seen: BTreeSet<(&str, &str)> = walked
        .combos
        .iter()
        .map(|(_, e, c)| (e.as_str(), c.as_str()))
        .collect();
    for d in expected["devices"].as_array().into_iter().flatten() {
        for ts in d["timeseries"].as_array().into_iter().flatten() {
            if ts["statistics"]["count"].as_u64() == Some(0) {
                continue;
            }
            let pair = (
                ts["encoding"].as_str().unwrap_or_default(),
                ts["compression"].as_str().unwrap_or_default(),
            );
            if !seen.contains(&pair) {
                return Err(format!("no page decoded with {pair:?}"));
            }
        }
    }
    let mut rows_checked = 0;
    for (name, block, rows) in blocks(&expected, &walked) {
        let types: Vec<&str> = block["types"]
            .as_array()
            .expect("types")
            .iter()
            .map(|t| t.as_str().expect("type"))
            .collect();
        let row_count = block["row_count"].as_u64().expect("row_count") as usize;
        if rows.len() != row_count {
            return Err(format!(
                "{name}: {} rows decoded, {row_count} expected",
                rows.len()
            ));
        }
        if let Some(exp) = block["rows"].as_array() {
            for (i, (got, want)) in rows.iter().zip(exp).enumerate() {
                let want = expected_row(want, &types);
                if *got != want {
                    return Err(format!(
                        "{name} row {i}: decoded {got:?}, expected {want:?}"
                    ));
                }
            }
        } else {
            for s in block["row_samples"].as_array().expect("row samples") {
                let i = s[0].as_u64().expect("sample index") as usize;
                let want = expected_row(&s[1], &types);
                if rows[i] != want {
                    return Err(format!(
                        "{name} sample row {i}: decoded {:?}, expected {want:?}",
                        rows[i]
                    ));
                }
            }
            let columns = block["columns"].as_array().expect("columns");
            for (c, col) in columns.iter().enumerate() {
                let col = col.as_str().expect("column");
                let mut buf = Vec::new();
                for r in &rows {
                    digest_cell(&r[c], types[c], &mut buf);
                }
                let got = hex(&sha256(&buf));
                let want = block["column_digests"][col].as_str().expect("digest");
                if got != want {
                    return Err(format!(
                        "{name} column {col}: digest {got}, expected {want}"
                    ));
                }
            }
        }
        rows_checked += rows.len();
    }
    Ok((walked.pages, rows_checked, walked.combos))
}

#[test]
fn every_page_of_every_corpus_file_decodes_to_the_official_rows() {
    let Some(dir) = corpus_dir("tsfile") else {
        return;
    };
    let mut failures = Vec::new();
    let mut combos: BTreeMap<String, usize> = BTreeMap::new();
    let (mut pages, mut rows, mut cases) = (0, 0, 0);
    for path in tsfiles(&dir) {
        cases += 1;
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default()
            .to_string();
        match check_case(&path) {
            Ok((p, r, seen)) => {
                pages += p;
                rows += r;
                for (t, e, c) in seen {
                    *combos.entry(format!("{t} {e} {c}")).or_default() += 1;
                }
            }
            Err(e) => failures.push(format!("{name}: {e}")),
        }
    }
    println!(
        "{cases} cases, {pages} pages, {rows} rows, {} type/encoding/compression combinations",
        combos.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {cases} cases disagree:\n{}",
        failures.len(),
        failures.join("\n")
    );
    // The README's writer list: these encodings and compressors all occur in the corpus.
    let all: String = combos.keys().cloned().collect::<Vec<_>>().join("\n");
    for needle in [
        "LZO",
        "CAMEL",
        "SPRINTZ",
        "FLOAT TS_2DIFF",
        "DOUBLE TS_2DIFF",
        "RLBE",
        "CHIMP",
        "ZIGZAG",
        "DICTIONARY",
        "GORILLA",
        "SNAPPY",
        "GZIP",
        "LZ4",
        "ZSTD",
        "LZMA2",
        "UNCOMPRESSED",
    ] {
        assert!(all.contains(needle), "no page decoded with {needle}");
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// SHA-256 (FIPS 180-4), for the corpus column digests; small enough to keep in the test
/// instead of adding a dependency.
fn sha256(data: &[u8]) -> [u8; 32] {
    const K: [u32; 64] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
        0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
        0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
        0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
        0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
        0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
        0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
        0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
        0xc67178f2,
    ];
    let mut h: [u32; 8] = [
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab,
        0x5be0cd19,
    ];
    let mut msg = data.to_vec();
    msg.push(0x80);
    while msg.len() % 64 != 56 {
        msg.push(0);
    }
    msg.extend(((data.len() as u64) * 8).to_be_bytes());
    for block in msg.chunks_exact(64) {
        let mut w = [0u32; 64];
        for i in 0..16 {
            w[i] = u32::from_be_bytes([
                block[4 * i],
                block[4 * i + 1],
                block[4 * i + 2],
                block[4 * i + 3],
            ]);
        }
        for i in 16..64 {
            let s0 = w[i - 15].rotate_right(7) ^ w[i - 15].rotate_right(18) ^ (w[i - 15] >> 3);
            let s1 = w[i - 2].rotate_right(17) ^ w[i - 2].rotate_right(19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16]
                .wrapping_add(s0)
                .wrapping_add(w[i - 7])
                .wrapping_add(s1);
        }
        let mut v = h;
        for i in 0..64 {
            let s1 = v[4].rotate_right(6) ^ v[4].rotate_right(11) ^ v[4].rotate_right(25);
            let ch = (v[4] & v[5]) ^ (!v[4] & v[6]);
            let t1 = v[7]
                .wrapping_add(s1)
                .wrapping_add(ch)
                .wrapping_add(K[i])
                .wrapping_add(w[i]);
            let s0 = v[0].rotate_right(2) ^ v[0].rotate_right(13) ^ v[0].rotate_right(22);
            let maj = (v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]);
            let t2 = s0.wrapping_add(maj);
            v = [
                t1.wrapping_add(t2),
                v[0],
                v[1],
                v[2],
                v[3].wrapping_add(t1),
                v[4],
                v[5],
                v[6],
            ];
        }
        for (a, b) in h.iter_mut().zip(v) {
            *a = a.wrapping_add(b);
        }
    }
    let mut out = [0u8; 32];
    for (i, x) in h.iter().enumerate() {
        out[4 * i..4 * i + 4].copy_from_slice(&x.to_be_bytes());
    }
    out
}

#[test]
fn sha256_known_answer() {
    assert_eq!(
        hex(&sha256(b"abc")),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
}
