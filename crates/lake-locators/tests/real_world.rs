//! Files as real writers produce them (issue 23): each is either read right or refused with
//! a one-line typed error naming the file, never a silent wrong count and never a panic.

use crate::common::{self, write};

use std::sync::Arc;

use arrow_array::{ArrayRef, Int32Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use lake_locators::{FileIndex, IndexOptions, Locator, csv::DelimitedLocator, ipc};
use serde_json::json;

fn index_and_read(
    locator: &dyn Locator,
    path: &std::path::Path,
) -> (FileIndex, Vec<serde_json::Value>) {
    let idx = common::index_every(locator, path, 2).unwrap_or_else(|e| panic!("{e}"));
    let rows = common::read_rows(
        locator,
        path,
        &common::request(Some(&idx), 0..idx.row_count, None, 0),
    );
    (idx, rows)
}

/// Old Mac line ends (lone carriage returns) end records as in Python's csv and DuckDB; a
/// carriage return inside quotes stays in the value.
#[test]
fn csv_with_carriage_return_line_ends() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(&dir, "mac.csv", b"a,b\r1,x\r2,\"y\rz\"\r3,w\r");
    let (idx, rows) = index_and_read(&DelimitedLocator, &path);
    assert_eq!(idx.row_count, 3);
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[1], json!({"a": 2, "b": "y\rz"}));
    // Direct reads without the index agree.
    let direct = common::read_rows(
        &DelimitedLocator,
        &path,
        &common::request(None, 1..3, None, 1),
    );
    assert_eq!(direct, rows[1..3]);
    // A CRLF file is untouched, and a lone carriage return after the first record stays data.
    let crlf = write(&dir, "crlf.csv", b"a,b\r\n1,x\r\n2,y\r\n");
    assert_eq!(index_and_read(&DelimitedLocator, &crlf).0.row_count, 2);
}

/// An Arrow IPC stream of `schema` holding `batches`, as arrow-ipc writes it.
fn stream(schema: &Arc<Schema>, batches: &[RecordBatch]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut w = arrow_ipc::writer::StreamWriter::try_new(&mut out, schema).unwrap();
    for b in batches {
        w.write(b).unwrap();
    }
    w.finish().unwrap();
    drop(w);
    out
}

/// The length of the first (schema) message of a stream written by arrow-ipc.
fn schema_message_len(data: &[u8]) -> usize {
    let meta = i32::from_le_bytes(data[4..8].try_into().unwrap()) as usize;
    8 + meta
}

fn refused(locator: &dyn Locator, path: &std::path::Path, what: &str) {
    let options = IndexOptions::default();
    let err = match locator.index(path, &options) {
        Err(e) => e.to_string(),
        Ok(idx) => panic!("{what}: mapped {} rows instead of refusing", idx.row_count),
    };
    assert!(err.contains(&path.display().to_string()), "{err}");
    assert!(!err.contains('\n'), "{err}");
}

/// Damaged streams whose record batches read as nothing are refused, as pyarrow refuses them:
/// a record batch with fewer field nodes than the schema has, and a schema with a decimal of
/// precision 0 (arrow-ipc would read both as 0 rows).
#[test]
fn damaged_ipc_streams_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let one = Arc::new(Schema::new(vec![Field::new("a", DataType::Int32, true)]));
    let two = Arc::new(Schema::new(vec![
        Field::new("a", DataType::Int32, true),
        Field::new("b", DataType::Int32, true),
    ]));
    let col: ArrayRef = Arc::new(Int32Array::from(vec![1, 2, 3]));
    let batch = RecordBatch::try_new(one.clone(), vec![col]).unwrap();
    let good = stream(&one, std::slice::from_ref(&batch));
    let path = write(&dir, "good.arrows", &good);
    let (idx, rows) = index_and_read(&ipc::ArrowStreamLocator, &path);
    assert_eq!((idx.row_count, rows.len()), (3, 3));

    // The schema of two columns, then the batches of the one-column stream.
    let header = stream(&two, &[]);
    let mut spliced = header[..schema_message_len(&header)].to_vec();
    spliced.extend_from_slice(&good[schema_message_len(&good)..]);
    let path = write(&dir, "nodes.arrows", &spliced);
    refused(&ipc::ArrowStreamLocator, &path, "fewer field nodes");

    let decimal = Arc::new(Schema::new(vec![Field::new(
        "d",
        DataType::Decimal128(0, 0),
        true,
    )]));
    let path = write(&dir, "decimal.arrows", &stream(&decimal, &[]));
    refused(&ipc::ArrowStreamLocator, &path, "decimal precision 0");
}

/// An Avro container of `schema` holding `values`, written by apache-avro.
fn avro_file(schema: &str, values: Vec<apache_avro::types::Value>) -> Vec<u8> {
    let schema = apache_avro::Schema::parse_str(schema).unwrap();
    let mut w = apache_avro::Writer::new(&schema, Vec::new()).unwrap();
    for v in values {
        w.append_value(v).unwrap();
    }
    w.into_inner().unwrap()
}

/// Avro files whose fields are nested or logical types are counted from the block headers
/// and read: records, arrays, maps and unions of several types as JSON text (the string
/// fallback), decimals as Decimal128, time-millis as Time32; a top-level schema that is not
/// a record is one column `value`.
#[test]
fn avro_nested_logical_and_bare_schemas() {
    use apache_avro::types::Value as V;
    let dir = tempfile::tempdir().unwrap();
    let schema = r#"{"type":"record","name":"r","fields":[
      {"name":"id","type":"int"},
      {"name":"inner","type":{"type":"record","name":"in","fields":[{"name":"x","type":"long"}]}},
      {"name":"tags","type":{"type":"array","items":"string"}},
      {"name":"attrs","type":{"type":"map","values":"int"}},
      {"name":"either","type":["null","int","string"]},
      {"name":"price","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}},
      {"name":"at","type":{"type":"int","logicalType":"time-millis"}}]}"#;
    let row = |i: i32| {
        V::Record(vec![
            ("id".into(), V::Int(i)),
            (
                "inner".into(),
                V::Record(vec![("x".into(), V::Long(i as i64 * 10))]),
            ),
            ("tags".into(), V::Array(vec![V::String(format!("t{i}"))])),
            (
                "attrs".into(),
                V::Map([("k".to_string(), V::Int(i))].into_iter().collect()),
            ),
            (
                "either".into(),
                if i == 0 {
                    V::Union(1, Box::new(V::Int(7)))
                } else {
                    V::Union(2, Box::new(V::String("s".into())))
                },
            ),
            (
                "price".into(),
                V::Decimal(apache_avro::Decimal::from(vec![0x01, 0x2c])),
            ),
            ("at".into(), V::TimeMillis(1000 * i)),
        ])
    };
    let path = write(
        &dir,
        "nested.avro",
        &avro_file(schema, vec![row(0), row(1)]),
    );
    let (idx, rows) = index_and_read(&lake_locators::avro::AvroLocator, &path);
    assert_eq!(idx.row_count, 2);
    let types: Vec<String> = idx
        .schema
        .fields()
        .iter()
        .map(|f| f.data_type().to_string())
        .collect();
    assert_eq!(
        types,
        [
            "Int32",
            "Utf8",
            "Utf8",
            "Utf8",
            "Utf8",
            "Decimal128(9, 2)",
            "Time32(ms)"
        ]
    );
    assert_eq!(rows[1]["inner"], json!("{\"x\":10}"));
    assert_eq!(rows[1]["tags"], json!("[\"t1\"]"));
    assert_eq!(rows[0]["attrs"], json!("{\"k\":0}"));
    assert_eq!(rows[0]["either"], json!("7"));
    assert_eq!(rows[1]["either"], json!("\"s\""));

    let bare = write(
        &dir,
        "bare.avro",
        &avro_file(
            r#"{"type":"array","items":"long"}"#,
            vec![V::Array(vec![V::Long(1)]), V::Array(vec![])],
        ),
    );
    let (idx, rows) = index_and_read(&lake_locators::avro::AvroLocator, &bare);
    assert_eq!(idx.row_count, 2);
    assert_eq!(rows, [json!({"value": "[1]"}), json!({"value": "[]"})]);
}

/// The postscript of an ORC file (`data`) without its field `field`, as writers of the ORC
/// 0.11 format (Hive 0.11) wrote it before the field existed.
fn orc_without_postscript_field(data: &[u8], field: u64) -> Vec<u8> {
    let ps_len = *data.last().unwrap() as usize;
    let ps_start = data.len() - 1 - ps_len;
    let ps = &data[ps_start..data.len() - 1];
    let varint = |b: &[u8], mut i: usize| -> (u64, usize) {
        let (mut v, mut shift) = (0u64, 0);
        loop {
            let byte = b[i];
            i += 1;
            v |= u64::from(byte & 0x7f) << shift;
            shift += 7;
            if byte & 0x80 == 0 {
                return (v, i);
            }
        }
    };
    let mut kept = Vec::new();
    let mut i = 0;
    while i < ps.len() {
        let start = i;
        let (key, after) = varint(ps, i);
        i = match key & 7 {
            0 => varint(ps, after).1,
            2 => {
                let (n, at) = varint(ps, after);
                at + n as usize
            }
            5 => after + 4,
            _ => after + 8,
        };
        if key >> 3 != field {
            kept.extend_from_slice(&ps[start..i]);
        }
    }
    let mut out = data[..ps_start].to_vec();
    out.extend_from_slice(&kept);
    out.push(kept.len() as u8);
    out
}

/// ORC files of the 0.11 format have no metadata length in their postscript: they are
/// counted from their stripes and read (orc-rust needs the field; the locator supplies 0).
#[test]
fn orc_without_metadata_length() {
    let dir = tempfile::tempdir().unwrap();
    let schema = Arc::new(Schema::new(vec![Field::new("a", DataType::Int32, true)]));
    let col: ArrayRef = Arc::new(Int32Array::from(vec![1, 2, 3, 4]));
    let batch = RecordBatch::try_new(schema.clone(), vec![col]).unwrap();
    let mut data = Vec::new();
    let mut w = orc_rust::ArrowWriterBuilder::new(&mut data, schema)
        .try_build()
        .unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    let path = write(&dir, "old.orc", &orc_without_postscript_field(&data, 5));
    let (idx, rows) = index_and_read(&lake_locators::orc::OrcLocator, &path);
    assert_eq!((idx.row_count, rows.len()), (4, 4));
    assert_eq!(rows[3], json!({"a": 4}));
}

/// NDJSON whose member is an array in one row and a number or an object in another: the
/// member is widened to a Utf8 column of JSON text and every row is counted and read.
#[test]
fn ndjson_members_of_changing_types_are_widened() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        &dir,
        "mixed.ndjson",
        b"{\"a\":[1,2],\"b\":1}\n{\"a\":3,\"b\":2}\n{\"a\":{\"x\":1},\"b\":3}\n{\"b\":4}\n",
    );
    let (idx, rows) = index_and_read(&lake_locators::json::JsonLocator, &path);
    assert_eq!(idx.row_count, 4);
    assert_eq!(
        idx.schema.field_with_name("a").unwrap().data_type(),
        &DataType::Utf8
    );
    assert_eq!(
        idx.schema.field_with_name("b").unwrap().data_type(),
        &DataType::Int64
    );
    let a: Vec<&serde_json::Value> = rows.iter().map(|r| &r["a"]).collect();
    assert_eq!(
        a,
        [
            &json!("[1,2]"),
            &json!("3"),
            &json!("{\"x\":1}"),
            &json!(null)
        ]
    );
}

/// Bytes that are not UTF-8 (Latin-1 text) are refused with the row and the byte offset.
#[test]
fn csv_not_utf8_names_row_and_byte() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(&dir, "latin1.csv", b"name,age\nAna,30\nJos\xe9,31\n");
    let err = DelimitedLocator
        .index(&path, &IndexOptions::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("at row 1 at byte 19"), "{err}");
}

/// Records with fewer or more fields than the header are counted, as Python's csv module and
/// DuckDB (`null_padding`) count them: missing fields read as null, extra fields as added
/// columns named `column{i}` (0-based, as DuckDB names them) typed by the same inference.
#[test]
fn csv_ragged_records_pad_with_nulls_and_add_columns() {
    let dir = tempfile::tempdir().unwrap();
    let data = b"a,b,c\n1,2,3\n4,5\n6,7,8,9,x\n\"10\",11\n";
    let path = write(&dir, "ragged.csv", data);
    let options = IndexOptions {
        stride: 2,
        stats: lake_locators::StatsColumns::All,
    };
    let idx = DelimitedLocator.index(&path, &options).unwrap();
    assert_eq!(idx.row_count, 4);
    let fields: Vec<(String, DataType)> = idx
        .schema
        .fields()
        .iter()
        .map(|f| (f.name().clone(), f.data_type().clone()))
        .collect();
    assert_eq!(
        fields,
        [
            ("a".into(), DataType::Int64),
            ("b".into(), DataType::Int64),
            ("c".into(), DataType::Int64),
            ("column3".into(), DataType::Int64),
            ("column4".into(), DataType::Utf8),
        ]
    );
    let stats = idx.stats.as_ref().unwrap();
    assert_eq!(
        stats.get("column3"),
        Some(&lake_locators::ColumnStats::Int { min: 9, max: 9 })
    );
    let rows = common::read_rows(
        &DelimitedLocator,
        &path,
        &common::request(Some(&idx), 0..idx.row_count, None, 0),
    );
    assert_eq!(
        rows,
        [
            json!({"a": 1, "b": 2, "c": 3, "column3": null, "column4": null}),
            json!({"a": 4, "b": 5, "c": null, "column3": null, "column4": null}),
            json!({"a": 6, "b": 7, "c": 8, "column3": 9, "column4": "x"}),
            json!({"a": 10, "b": 11, "c": null, "column3": null, "column4": null}),
        ]
    );
    // A direct read (no stored index) and a read from the checkpoint of row 2 agree.
    let direct = common::read_rows(
        &DelimitedLocator,
        &path,
        &common::request(None, 2..4, None, 1),
    );
    assert_eq!(direct, rows[2..]);
    // An added column's name that a header field already has takes a suffix.
    let clash = write(&dir, "clash.csv", b"a,column2\n1,2,3\n");
    let idx = common::index_every(&DelimitedLocator, &clash, 2).unwrap();
    let names: Vec<&String> = idx.schema.fields().iter().map(|f| f.name()).collect();
    assert_eq!(names, ["a", "column2", "column2_1"]);
}

/// The index of ragged records is the same by the vector path, the portable path and a
/// split in byte ranges, whatever range length and stride.
#[test]
fn csv_ragged_records_index_alike_every_way() {
    let mut body = String::from("a,b,c\n");
    for i in 0..400 {
        let row = match i % 7 {
            0 => format!("{i}\n"),
            1 => format!("{i},x{i},1.5,{i},\"q\"z\n"),
            2 => format!("{i},,\n"),
            3 => format!("\"{i}\",\"y\"\"{i}\",{i},,,{i}\n"),
            _ => format!("{i},{i},{i}\n"),
        };
        body.push_str(&row);
    }
    for (stride, chunk) in [(0u8, 0u8), (1, 3), (0x85, 20), (7, 255)] {
        let mut input = vec![stride, chunk];
        input.extend_from_slice(body.as_bytes());
        lake_locators::fuzzing::csv(&input);
    }
}

/// Bytes after a closing quote join the field, as Python's csv module reads them (`"ab"c`
/// is `abc`), in the index's types and in the rows read.
#[test]
fn csv_bytes_after_a_closing_quote_join_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let data = b"\"h\"1,b\n\"ab\"c,1\n\"x\" \"y\",2\n\"1\"2,3\n\"q\"\"\"r,4\n";
    let path = write(&dir, "after.csv", data);
    let (idx, rows) = index_and_read(&DelimitedLocator, &path);
    assert_eq!(idx.row_count, 4);
    assert_eq!(idx.schema.field(0).name(), "h1");
    assert_eq!(idx.schema.field(0).data_type(), &DataType::Utf8);
    assert_eq!(
        rows,
        [
            json!({"h1": "abc", "b": 1}),
            json!({"h1": "x \"y\"", "b": 2}),
            json!({"h1": "12", "b": 3}),
            json!({"h1": "q\"r", "b": 4}),
        ]
    );
}
