//! Delimited text read as Latin-1 ([`DelimitedTextLocator`]): checkpoints are the file's own
//! byte offsets, every byte above 0x7F is the code point of the same value in the strings
//! read and in the string statistics, and the UTF-8 locator refuses the same file with the
//! row and byte offset of the first byte that is not UTF-8.

use crate::common::{self, checkpoints, malformed, write};

use lake_locators::csv::{DelimitedLocator, DelimitedTextLocator, TextEncoding};
use lake_locators::{ColumnStats, Locator, RowsRequest, rows, types};
use serde_json::{Value, json};

/// `caf\xe9,city,n` and four records; the second has a quoted field with a comma and
/// doubled quotes, the last ends without a line feed.
const FILE: &[u8] = b"caf\xe9,city,n\nJos\xe9,M\xfcnchen,1\n\"Zo\xeb, \"\"q\"\"\",S\xe3o Paulo,2\nplain,Z\xfcrich,3\n\xc0 la carte,\xff\xfe,4";

/// The rows as Python's `csv.reader(open(path, encoding="latin-1", newline=""))` gives
/// them after the header (worked out by hand: 0xE9 é, 0xFC ü, 0xEB ë, 0xE3 ã, 0xC0 À,
/// 0xFF ÿ, 0xFE þ).
fn expected() -> Vec<Value> {
    vec![
        json!({"café": "José", "city": "München", "n": 1}),
        json!({"café": "Zoë, \"q\"", "city": "São Paulo", "n": 2}),
        json!({"café": "plain", "city": "Zürich", "n": 3}),
        json!({"café": "À la carte", "city": "ÿþ", "n": 4}),
    ]
}

fn latin1() -> DelimitedTextLocator {
    DelimitedTextLocator::new(TextEncoding::Latin1)
}

#[test]
fn latin1_index_checkpoints_and_stats() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(&dir, "t.csv", FILE);
    let idx = common::index_every(&latin1(), &path, 2).unwrap();
    assert_eq!(idx.format, "csv");
    assert_eq!(idx.row_count, 4);
    let names = common::names(idx.schema.fields());
    assert_eq!(names, ["café", "city", "n"]);
    assert_eq!(
        types::type_name(idx.schema.field(2).data_type()),
        types::type_name(&arrow_schema::DataType::Int64)
    );
    // Checkpoints at rows 0 and 2, at the file's bytes (not the UTF-8 copy's).
    let row2 = FILE.windows(5).position(|w| w == b"plain").unwrap() as u64;
    assert_eq!(checkpoints(&idx), vec![(0, 12), (2, row2)]);
    let sizes: Vec<u64> = idx
        .blocks
        .iter()
        .map(|b| b.total_byte_size.unwrap())
        .collect();
    assert_eq!(sizes, vec![row2 - 12, FILE.len() as u64 - row2]);
    let stats = idx.stats.as_ref().unwrap();
    let s = |min: &str, max: &str| ColumnStats::Str {
        min_str: min.into(),
        max_str: max.into(),
    };
    // Latin-1 byte order: 'J' < 'Z' < 'p' < 0xC0; 'M' < 'S' < 'Z' < 0xFF.
    assert_eq!(stats["café"], s("José", "À la carte"));
    assert_eq!(stats["city"], s("München", "ÿþ"));
    assert_eq!(stats["n"], ColumnStats::Int { min: 1, max: 4 });
}

#[test]
fn latin1_reads_and_takes_equal_python_csv() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(&dir, "t.csv", FILE);
    let idx = common::index_every(&latin1(), &path, 2).unwrap();
    let all = expected();
    // Whole file, then every range (seeking to the checkpoints), indexed and direct.
    for (start, end) in [(0, 4), (1, 3), (2, 4), (3, 4)] {
        let want = &all[start as usize..end as usize];
        let got = common::read_rows(
            &latin1(),
            &path,
            &common::request(Some(&idx), start..end, None, 2),
        );
        assert_eq!(got, want, "rows {start}..{end}");
        let direct = common::read_rows(
            &latin1(),
            &path,
            &common::request(None, start..end, None, 0),
        );
        assert_eq!(direct, want, "direct rows {start}..{end}");
    }
    let take = |rows: &[u64]| -> Vec<Value> {
        let request = RowsRequest {
            rows,
            blocks: Some(&idx.blocks),
            schema: Some(idx.schema.clone()),
            projection: None,
        };
        latin1()
            .read_rows(&path, &request)
            .unwrap()
            .iter()
            .flat_map(|b| {
                (0..b.num_rows())
                    .map(|r| rows::row_value(b, r))
                    .collect::<Vec<_>>()
            })
            .collect()
    };
    assert_eq!(take(&[0, 3]), vec![all[0].clone(), all[3].clone()]);
    assert_eq!(take(&[1, 2]), all[1..3].to_vec());
}

#[test]
fn utf8_refuses_latin1_with_row_and_offset() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(&dir, "t.csv", b"name,city\nab,cd\nJos\xe9,x\n");
    let (offset, row, text) = malformed(
        DelimitedLocator
            .index(&path, &Default::default())
            .unwrap_err(),
    );
    assert_eq!((offset, row), (Some(19), Some(1)), "{text}");
    assert!(text.contains("invalid UTF-8"), "{text}");
    // The same locator through the encoding-aware type, and Latin-1 reads it.
    let utf8 = DelimitedTextLocator::new(TextEncoding::Utf8);
    let (offset, row, _) = malformed(utf8.index(&path, &Default::default()).unwrap_err());
    assert_eq!((offset, row), (Some(19), Some(1)));
    assert_eq!(
        latin1()
            .index(&path, &Default::default())
            .unwrap()
            .row_count,
        2
    );
}

#[test]
fn latin1_errors_name_file_bytes() {
    let dir = tempfile::tempdir().unwrap();
    // An unterminated quote after two Latin-1 bytes: the offset is the file's.
    let data = b"a,b\n\xe9\xe9,1\nx,\"open\n";
    let path = write(&dir, "t.csv", data);
    let (offset, row, text) = malformed(latin1().index(&path, &Default::default()).unwrap_err());
    let quote = data.iter().position(|&b| b == b'"').unwrap() as u64;
    assert_eq!((offset, row), (Some(quote), Some(1)), "{text}");
}

#[test]
fn latin1_other_dialects_and_ascii() {
    let dir = tempfile::tempdir().unwrap();
    let tsv = write(&dir, "t.tsv", b"k\tv\n\xe9\t1\n");
    let got = common::read_rows(&latin1(), &tsv, &common::request(None, 0..1, None, 0));
    assert_eq!(got, vec![json!({"k": "é", "v": 1})]);
    // Lone carriage returns end records in Latin-1 files too.
    let txt = write(&dir, "t.txt", b"k;v\r\xe9;1\r\xfc;2\r");
    let idx = common::index_every(&latin1(), &txt, 1).unwrap();
    assert_eq!(idx.row_count, 2);
    let got = common::read_rows(&latin1(), &txt, &common::request(Some(&idx), 1..2, None, 0));
    assert_eq!(got, vec![json!({"k": "ü", "v": 2})]);
    // An ASCII file indexes alike in both encodings.
    let ascii = write(&dir, "a.csv", b"x,y\n1,a\n2,b\n");
    let (a, b) = (
        common::index_every(&latin1(), &ascii, 1).unwrap(),
        common::index_every(&DelimitedLocator, &ascii, 1).unwrap(),
    );
    assert_eq!(checkpoints(&a), checkpoints(&b));
    assert_eq!(
        (a.row_count, &a.schema, &a.stats),
        (b.row_count, &b.schema, &b.stats)
    );
}

/// A Latin-1 file long enough for fine checkpoints (every 256 rows) and for a read shared by
/// two threads: the fine checkpoints are the file's row starts (not the UTF-8 copy's, which
/// run one byte further per accented letter before them), and reads that seek to them or
/// split at them return the rows Python's csv module would.
#[test]
fn latin1_fine_checkpoints_are_file_offsets() {
    let dir = tempfile::tempdir().unwrap();
    let mut latin = b"name,n\n".to_vec();
    let mut starts = Vec::new();
    for i in 0..3_000u32 {
        starts.push(latin.len() as u64);
        latin.extend_from_slice(b"Jos");
        latin.push(0xe9);
        latin.extend_from_slice(format!("-{i} caf").as_bytes());
        latin.push(0xe9);
        latin.extend_from_slice(b" \xfcber and a longer text of the row to pass 48 KiB");
        latin.extend_from_slice(format!(",{i}\n").as_bytes());
    }
    let path = write(&dir, "t.csv", &latin);
    let idx = common::index_every(&latin1(), &path, 65_536).unwrap();
    assert_eq!(idx.row_count, 3_000);
    let b = &idx.blocks[0];
    let fine = b.fine.as_ref().expect("fine checkpoints");
    assert_eq!(fine.rows, 256);
    for (k, off) in (1u64..).zip(&fine.bytes) {
        let row = (k * fine.rows) as usize;
        assert_eq!(
            b.first_byte.unwrap() + off,
            starts[row],
            "fine checkpoint of row {row}"
        );
    }
    let want = |r: u64| json!({"name": format!("José-{r} café über and a longer text of the row to pass 48 KiB"), "n": r});
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    for (start, end) in [(0, 3_000), (600, 2_900), (300, 1_400), (2_999, 3_000)] {
        let got = pool.install(|| {
            common::read_rows(
                &latin1(),
                &path,
                &common::request(Some(&idx), start..end, None, 0),
            )
        });
        let expected: Vec<Value> = (start..end).map(want).collect();
        assert_eq!(got.len(), expected.len(), "rows {start}..{end}");
        assert_eq!(got, expected, "rows {start}..{end}");
    }
}
