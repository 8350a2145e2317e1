//! Avro OCF locator over containers written by a small independent encoder in this test:
//! blocks with their byte ranges, every codec, reads that seek to the first touched block,
//! and malformed containers.

use crate::common;
use std::path::{Path, PathBuf};

use apache_avro::Codec;
use lake_locators::avro::AvroLocator;
use lake_locators::{ColumnStats, Error, FileIndex, IndexOptions, Locator, ReadRequest};
use serde_json::{Value, json};

const SCHEMA: &str = r#"{"type":"record","name":"r","fields":[
  {"name":"gid","type":"long"},
  {"name":"name","type":["null","string"]},
  {"name":"x","type":["double","null"]},
  {"name":"day","type":{"type":"int","logicalType":"date"}}]}"#;

const SYNC: [u8; 16] = *b"0123456789abcdef";
const BLOCKS: &[u64] = &[40, 0, 100, 1, 59];

fn long(v: i64, out: &mut Vec<u8>) {
    let mut z = ((v << 1) ^ (v >> 63)) as u64;
    loop {
        if z < 0x80 {
            out.push(z as u8);
            return;
        }
        out.push((z as u8 & 0x7f) | 0x80);
        z >>= 7;
    }
}

fn bytes(b: &[u8], out: &mut Vec<u8>) {
    long(b.len() as i64, out);
    out.extend_from_slice(b);
}

/// The record with gid `i` encoded, and its expected JSON row.
fn record(i: i64, out: &mut Vec<u8>) -> Value {
    long(i, out);
    let name = (i % 3 != 0).then(|| format!("név {i}"));
    match &name {
        Some(n) => {
            long(1, out);
            bytes(n.as_bytes(), out);
        }
        None => long(0, out),
    }
    let x = (i % 4 != 0).then(|| i as f64 * -1.5);
    match x {
        Some(x) => {
            long(0, out);
            out.extend_from_slice(&x.to_le_bytes());
        }
        None => long(1, out),
    }
    long(i, out);
    json!({"gid": i, "name": name, "x": x, "day": lake_locators::rows::civil_date(i)})
}

/// Writes a container with [`BLOCKS`] and `codec`; returns its path and expected rows.
fn write(dir: &Path, name: &str, codec: &str) -> (PathBuf, Vec<Value>) {
    let mut out = b"Obj\x01".to_vec();
    long(2, &mut out);
    bytes(b"avro.schema", &mut out);
    bytes(SCHEMA.as_bytes(), &mut out);
    bytes(b"avro.codec", &mut out);
    bytes(codec.as_bytes(), &mut out);
    long(0, &mut out);
    out.extend_from_slice(&SYNC);
    let mut rows = Vec::new();
    let mut gid = 0i64;
    for &n in BLOCKS {
        let mut data = Vec::new();
        for _ in 0..n {
            rows.push(record(gid, &mut data));
            gid += 1;
        }
        let c: Codec = codec.parse().unwrap();
        c.compress(&mut data).unwrap();
        long(n as i64, &mut out);
        bytes(&data, &mut out);
        out.extend_from_slice(&SYNC);
    }
    let path = dir.join(name);
    std::fs::write(&path, out).unwrap();
    (path, rows)
}

fn read(
    path: &Path,
    idx: Option<&FileIndex>,
    range: std::ops::Range<u64>,
    cols: Option<&[String]>,
) -> Vec<Value> {
    let request = ReadRequest {
        rows: range,
        blocks: idx.map(|i| i.blocks.as_slice()),
        projection: cols,
        batch_size: 16,
        ..Default::default()
    };
    common::read_rows(&AvroLocator, path, &request)
}

#[test]
fn every_codec_indexes_and_reads() {
    let dir = tempfile::tempdir().unwrap();
    for codec in ["null", "deflate", "snappy", "zstandard", "bzip2"] {
        let (path, want) = write(dir.path(), &format!("{codec}.avro"), codec);
        let idx = AvroLocator.index(&path, &IndexOptions::default()).unwrap();
        assert_eq!(idx.row_count, 200, "{codec}");
        let counts: Vec<u64> = idx.blocks.iter().map(|b| b.row_count).collect();
        assert_eq!(counts, BLOCKS, "{codec}");
        let len = std::fs::metadata(&path).unwrap().len();
        let last = idx.blocks.last().unwrap();
        assert_eq!(
            last.first_byte.unwrap() + last.total_byte_size.unwrap(),
            len
        );
        for w in idx.blocks.windows(2) {
            assert_eq!(
                w[0].first_byte.unwrap() + w[0].total_byte_size.unwrap(),
                w[1].first_byte.unwrap()
            );
        }
        let stats = idx.stats.clone().unwrap();
        assert_eq!(stats["gid"], ColumnStats::Int { min: 0, max: 199 });
        assert_eq!(
            stats["x"],
            ColumnStats::Float {
                min: -298.5,
                max: -1.5
            }
        );
        assert_eq!(
            stats["name"],
            ColumnStats::Str {
                min_str: "név 1".into(),
                max_str: "név 98".into()
            }
        );
        for range in [
            0..200,
            39..41,
            40..41,
            140..141,
            141..142,
            150..300,
            200..201,
            3..3,
        ] {
            let expect = want[range.start.min(200) as usize..range.end.min(200) as usize].to_vec();
            assert_eq!(
                read(&path, Some(&idx), range.clone(), None),
                expect,
                "{codec} {range:?}"
            );
            assert_eq!(
                read(&path, None, range.clone(), None),
                expect,
                "{codec} {range:?}"
            );
        }
        let cols = vec!["day".to_string(), "gid".to_string()];
        assert_eq!(
            read(&path, Some(&idx), 141..142, Some(&cols)),
            vec![json!({"day": "1970-05-22", "gid": 141})]
        );
    }
}

#[test]
fn reads_seek_past_earlier_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let (path, want) = write(dir.path(), "d.avro", "deflate");
    let idx = AvroLocator.index(&path, &IndexOptions::default()).unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    // Ruin block 0's data (keeping its framing): only a read that decodes it fails.
    let b0 = &idx.blocks[0];
    let data_end = (b0.first_byte.unwrap() + b0.total_byte_size.unwrap() - 16) as usize;
    let data_start = data_end - b0.compressed_size.unwrap() as usize;
    for x in &mut bytes[data_start..data_end] {
        *x = 0x42;
    }
    let ruined = dir.path().join("ruined.avro");
    std::fs::write(&ruined, &bytes).unwrap();
    assert_eq!(
        read(&ruined, Some(&idx), 150..152, None),
        want[150..152].to_vec()
    );
    // Without an index the framing is walked, not decoded, so this works too.
    assert_eq!(read(&ruined, None, 150..152, None), want[150..152].to_vec());
    let request = ReadRequest {
        rows: 0..1,
        blocks: Some(&idx.blocks),
        ..Default::default()
    };
    let err = AvroLocator
        .read(&ruined, &request)
        .and_then(|i| i.collect::<Result<Vec<_>, _>>());
    assert!(matches!(err, Err(Error::Malformed { .. })), "{err:?}");
}

#[test]
fn malformed_containers_are_typed_errors() {
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = write(dir.path(), "n.avro", "null");
    let good = std::fs::read(&path).unwrap();
    let idx = AvroLocator.index(&path, &IndexOptions::default()).unwrap();
    let first = idx.blocks[0].first_byte.unwrap() as usize;
    let mut cases: Vec<(&str, Vec<u8>)> = vec![
        ("empty", Vec::new()),
        ("truncated header", good[..first / 2].to_vec()),
        ("truncated block", good[..good.len() - 20].to_vec()),
    ];
    let mut magic = good.clone();
    magic[3] = 2;
    cases.push(("wrong magic", magic));
    // Block 0's declared size (after its one-byte count) is replaced by a huge value.
    let mut huge = good[..first].to_vec();
    long(40, &mut huge);
    long(1 << 40, &mut huge);
    huge.extend_from_slice(&[0u8; 64]);
    cases.push(("block size past the file", huge));
    let mut sync = good.clone();
    let end0 =
        (idx.blocks[0].first_byte.unwrap() + idx.blocks[0].total_byte_size.unwrap()) as usize;
    sync[end0 - 1] ^= 1;
    cases.push(("wrong sync marker", sync));
    let mut neg = good[..first].to_vec();
    long(-3, &mut neg);
    cases.push(("negative count", neg));
    let mut meta = b"Obj\x01".to_vec();
    long(1, &mut meta);
    long(i64::MAX / 4, &mut meta);
    cases.push(("metadata key length past the file", meta));
    for (what, bytes) in cases {
        let bad = dir.path().join("bad.avro");
        std::fs::write(&bad, &bytes).unwrap();
        let err = AvroLocator
            .index(&bad, &IndexOptions::default())
            .err()
            .unwrap_or_else(|| panic!("{what}: no error"));
        assert!(
            matches!(
                err,
                Error::Malformed {
                    offset: Some(_),
                    ..
                }
            ),
            "{what}: {err}"
        );
        assert!(err.to_string().contains("bad.avro"), "{what}: {err}");
    }
}

/// One block of 50 longs (`i * 1000 - 7`) compressed by Python's `lzma` module (xz, CRC64).
const XZ_BLOCK: &str = "fd377a585a000004e6d6b4460200210116000000742fe5a301008b0dc20f921fe22eb23e824ed25da26df27cc28c01929c01e2ab01b2bb0182cb01d2da01a2ea01f2f901c28902929902e2a802b2b80282c802d2d702a2e702f2f602c28603929603e2a503b2b50382c503d2d403a2e403f2f303c28304929304e2a204b2b20482c204d2d104a2e104f2f004c28005929005e29f05b2af0582bf05d2ce05a2de05f2ed05c2fd0500cad3b7db6077a1720001a4018c01000021cdf5dab1c467fb020000000004595a";

#[test]
fn xz_blocks_decode_with_lzma_rust2() {
    let data: Vec<u8> = (0..XZ_BLOCK.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&XZ_BLOCK[i..i + 2], 16).unwrap())
        .collect();
    let mut out = b"Obj\x01".to_vec();
    long(2, &mut out);
    bytes(b"avro.schema", &mut out);
    bytes(
        br#"{"type":"record","name":"r","fields":[{"name":"v","type":"long"}]}"#,
        &mut out,
    );
    bytes(b"avro.codec", &mut out);
    bytes(b"xz", &mut out);
    long(0, &mut out);
    out.extend_from_slice(&SYNC);
    for _ in 0..2 {
        long(50, &mut out);
        bytes(&data, &mut out);
        out.extend_from_slice(&SYNC);
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("xz.avro");
    std::fs::write(&path, &out).unwrap();
    let idx = AvroLocator.index(&path, &IndexOptions::default()).unwrap();
    assert_eq!(idx.row_count, 100);
    assert_eq!(
        idx.stats.unwrap()["v"],
        ColumnStats::Int {
            min: -7,
            max: 48_993
        }
    );
    let got = read(&path, None, 48..52, None);
    let want: Vec<Value> = [48, 49, 0, 1]
        .iter()
        .map(|i| json!({"v": i * 1000 - 7}))
        .collect();
    assert_eq!(got, want);
}

/// One block of 50 longs (`i * 1000 - 7`) compressed by Python's `bz2` module (level 9).
const BZIP2_BLOCK: &str = "425a6839314159265359acf23f79000014ffffbe028000800100010001000200020004592459249248924892493491349259222000686002611800434609a7a0693194f6a08540fdea54003400000007a868c954197a0179dfe4e3b031ac97d3f84031173fbae66d465e3619370290d8b5fc1f303fc11d184210644abec00644ac9f80065ae9f40065b091b3334ae2da49273bbbb2db49000658925001962fe2ee48a70a12159e47ef20";

/// bzip2 blocks (the Avro spec's optional codec, written by the Java and Python writers)
/// decode with the bzip2 crate on libbz2-rs-sys: a block from another encoder (Python's
/// `bz2`), a container written by apache-avro's own `Writer`, and a damaged block that is a
/// typed error naming the file.
#[test]
fn bzip2_blocks_decode() {
    let data: Vec<u8> = (0..BZIP2_BLOCK.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&BZIP2_BLOCK[i..i + 2], 16).unwrap())
        .collect();
    let container = |block: &[u8]| {
        let mut out = b"Obj\x01".to_vec();
        long(2, &mut out);
        bytes(b"avro.schema", &mut out);
        bytes(
            br#"{"type":"record","name":"r","fields":[{"name":"v","type":"long"}]}"#,
            &mut out,
        );
        bytes(b"avro.codec", &mut out);
        bytes(b"bzip2", &mut out);
        long(0, &mut out);
        out.extend_from_slice(&SYNC);
        for _ in 0..2 {
            long(50, &mut out);
            bytes(block, &mut out);
            out.extend_from_slice(&SYNC);
        }
        out
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("python-bz2.avro");
    std::fs::write(&path, container(&data)).unwrap();
    let idx = AvroLocator.index(&path, &IndexOptions::default()).unwrap();
    assert_eq!(idx.row_count, 100);
    assert_eq!(
        idx.stats.unwrap()["v"],
        ColumnStats::Int {
            min: -7,
            max: 48_993
        }
    );
    let want: Vec<Value> = [48, 49, 0, 1]
        .iter()
        .map(|i| json!({"v": i * 1000 - 7}))
        .collect();
    assert_eq!(read(&path, None, 48..52, None), want);

    // A container from apache-avro's writer with Codec::Bzip2.
    let schema = apache_avro::Schema::parse_str(SCHEMA).unwrap();
    let codec = Codec::Bzip2(apache_avro::Bzip2Settings::default());
    let mut w = apache_avro::Writer::with_codec(&schema, Vec::new(), codec).unwrap();
    for gid in 0..300i64 {
        let mut r = apache_avro::types::Record::new(&schema).unwrap();
        r.put("gid", gid);
        r.put("name", Some(format!("row {gid}")));
        let x = apache_avro::types::Value::Double(gid as f64 / 2.0);
        r.put("x", apache_avro::types::Value::Union(0, Box::new(x)));
        r.put("day", apache_avro::types::Value::Date(gid as i32));
        w.append_value(r).unwrap();
    }
    let written = dir.path().join("writer.avro");
    std::fs::write(&written, w.into_inner().unwrap()).unwrap();
    let idx = AvroLocator
        .index(&written, &IndexOptions::default())
        .unwrap();
    assert_eq!(idx.row_count, 300);
    assert_eq!(
        read(&written, Some(&idx), 299..300, None),
        vec![json!({"gid": 299, "name": "row 299", "x": 149.5, "day": "1970-10-27"})]
    );

    // A bzip2 block cut short is an error naming the file, not fewer rows.
    let bad = dir.path().join("bad-bz2.avro");
    std::fs::write(&bad, container(&data[..data.len() - 20])).unwrap();
    let err = AvroLocator
        .index(&bad, &IndexOptions::default())
        .err()
        .or_else(|| AvroLocator.read(&bad, &ReadRequest::default()).err());
    let err = err.map(|e| e.to_string()).unwrap_or_default();
    assert!(err.contains("bad-bz2.avro"), "{err}");
}
