//! NDJSON members whose value types conflict between rows (a string in one row and an array
//! in another, GeoJSON coordinates that are a number pair in one row and nested arrays in the
//! next, an object and a string, conflicts below the top level, and a conflict that first
//! appears past the first split point of a large file): the member becomes a Utf8 column of
//! the `arrow.json` extension type holding each row's compact JSON text, the same through
//! the index, the map's stored schema, sequential and ranged reads, takes and split scans.

use std::path::Path;

use arrow_array::{Array, RecordBatch, StringArray};
use lake_locators::{
    FileIndex, IndexOptions, Locator, RowsRequest, StatsColumns, json::JsonLocator, types,
};
use serde_json::json;

use crate::common::{request, write};

/// The text of a Utf8 cell (`None` for null).
type Cell = Option<String>;

/// The index of `path` with statistics on every column and a checkpoint every 2 rows.
fn index(path: &Path) -> FileIndex {
    common_index(path, 2)
}

fn common_index(path: &Path, stride: u64) -> FileIndex {
    JsonLocator
        .index(
            path,
            &IndexOptions {
                stride,
                stats: StatsColumns::All,
            },
        )
        .unwrap_or_else(|e| panic!("index {}: {e}", path.display()))
}

/// `(name, type name, is JSON text)` of each column.
fn columns(idx: &FileIndex) -> Vec<(String, String, bool)> {
    idx.schema
        .fields()
        .iter()
        .map(|f| {
            let json =
                f.metadata().get("ARROW:extension:name").map(String::as_str) == Some("arrow.json");
            (
                f.name().clone(),
                types::type_name(f.data_type()).to_string(),
                json,
            )
        })
        .collect()
}

fn col(name: &str, ty: &str, json: bool) -> (String, String, bool) {
    (name.to_string(), ty.to_string(), json)
}

/// The schema as a map stores it and reads it back (`schema_json`).
fn stored_schema(idx: &FileIndex) -> arrow_schema::SchemaRef {
    let text = types::schema_to_json(&idx.schema).to_string();
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    types::schema_from_json(&value).unwrap()
}

/// Column `name` of `batches` as text cells.
fn cells(batches: &[RecordBatch], name: &str) -> Vec<Cell> {
    let mut out = Vec::new();
    for b in batches {
        let a = b
            .column_by_name(name)
            .unwrap_or_else(|| panic!("no column {name}"));
        let s = a
            .as_any()
            .downcast_ref::<StringArray>()
            .unwrap_or_else(|| panic!("column {name} is {:?}, not Utf8", a.data_type()));
        out.extend((0..s.len()).map(|i| s.is_valid(i).then(|| s.value(i).to_string())));
    }
    out
}

/// Every batch of rows `rows` read with the index (its schema as the map stores it, and
/// batches of `batch_size` rows), or without one when `idx` is `None`.
fn read(path: &Path, idx: Option<&FileIndex>, rows: std::ops::Range<u64>) -> Vec<RecordBatch> {
    let mut req = request(idx, rows, None, 3);
    if let Some(i) = idx {
        req.schema = Some(stored_schema(i));
    }
    JsonLocator
        .read(path, &req)
        .unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
        .map(|b| b.unwrap_or_else(|e| panic!("read {}: {e}", path.display())))
        .collect()
}

/// The rows `rows` taken with [`Locator::read_rows`] under the stored schema.
fn take(path: &Path, idx: &FileIndex, rows: &[u64]) -> Vec<RecordBatch> {
    JsonLocator
        .read_rows(
            path,
            &RowsRequest {
                rows,
                blocks: Some(&idx.blocks),
                schema: Some(stored_schema(idx)),
                projection: None,
            },
        )
        .unwrap_or_else(|e| panic!("take {}: {e}", path.display()))
}

fn s(text: &str) -> Cell {
    Some(text.to_string())
}

/// Checks column `name` of the file reads as `want` every way: whole, every range, without
/// the index, and row by row through takes, projected alone too.
fn reads_as(path: &Path, idx: &FileIndex, name: &str, want: &[Cell]) {
    let n = idx.row_count;
    assert_eq!(n as usize, want.len());
    assert_eq!(
        cells(&read(path, Some(idx), 0..n), name),
        want,
        "whole read"
    );
    assert_eq!(cells(&read(path, None, 0..n), name), want, "direct read");
    for a in 0..n {
        for b in a + 1..=n {
            let got = cells(&read(path, Some(idx), a..b), name);
            assert_eq!(got, &want[a as usize..b as usize], "rows {a}..{b}");
        }
    }
    for r in 0..n {
        let got = cells(&take(path, idx, &[r]), name);
        assert_eq!(got, &want[r as usize..=r as usize], "take {r}");
    }
    let every: Vec<u64> = (0..n).step_by(2).collect();
    let got = cells(&take(path, idx, &every), name);
    let expect: Vec<Cell> = every.iter().map(|&r| want[r as usize].clone()).collect();
    assert_eq!(got, expect, "take {every:?}");
    let projection = [name.to_string()];
    let mut req = request(Some(idx), 0..n, Some(&projection), 0);
    req.schema = Some(stored_schema(idx));
    let batches: Vec<RecordBatch> = JsonLocator
        .read(path, &req)
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(batches[0].num_columns(), 1);
    assert_eq!(cells(&batches, name), want, "projected read");
}

/// The statistics of column `name` as JSON.
fn stats_of(idx: &FileIndex, name: &str) -> serde_json::Value {
    let stats = serde_json::to_value(idx.stats.as_ref().expect("statistics")).unwrap();
    stats.get(name).cloned().unwrap_or(serde_json::Value::Null)
}

#[test]
fn a_string_in_one_row_and_an_array_in_another_is_json_text() {
    let dir = tempfile::tempdir().unwrap();
    let data = concat!(
        "{\"id\":\"1\",\"n\":1}\n",
        "{\"id\": [1, 2],\"n\":2}\n",
        "{\"id\":null,\"n\":3}\n",
        "{\"n\":4}\n",
        "{\"id\":7.50,\"n\":5}\n",
        "{\"id\":\"a\\\"b \\u00e9\",\"n\":6}\n",
        "{\"id\":[],\"n\":7}\n",
        "{\"n\":8,\"id\":true}\n",
    );
    let path = write(&dir, "ids.ndjson", data.as_bytes());
    let idx = index(&path);
    assert_eq!(
        columns(&idx),
        [col("id", "utf8", true), col("n", "int64", false)]
    );
    let want = [
        s("\"1\""),
        s("[1,2]"),
        None,
        None,
        s("7.50"),
        s("\"a\\\"b \\u00e9\""),
        s("[]"),
        s("true"),
    ];
    reads_as(&path, &idx, "id", &want);
    // Statistics as any Utf8 column's: bounds of the text.
    assert_eq!(
        stats_of(&idx, "id"),
        json!({"min_str": "\"1\"", "max_str": "true"})
    );
    // The map keeps the mark.
    let stored = types::schema_to_json(&idx.schema);
    assert_eq!(stored[0]["extension"], "arrow.json");
    assert_eq!(stored_schema(&idx), idx.schema);
}

#[test]
fn geojson_coordinates_of_a_point_and_of_a_line_are_json_text() {
    let dir = tempfile::tempdir().unwrap();
    // Top level: a number pair, then nested arrays.
    let flat = concat!(
        "{\"type\":\"Point\",\"coordinates\":[102.0, 0.5]}\n",
        "{\"type\":\"LineString\",\"coordinates\":[[102.0, 0.0], [103.0, 1.0]]}\n",
        "{\"type\":\"Polygon\",\"coordinates\":[[[100.0,0.0],[101.0,0.0],[100.0,0.0]]]}\n",
    );
    let path = write(&dir, "flat.ndjson", flat.as_bytes());
    let idx = index(&path);
    assert_eq!(
        columns(&idx),
        [col("type", "utf8", false), col("coordinates", "utf8", true)]
    );
    reads_as(
        &path,
        &idx,
        "coordinates",
        &[
            s("[102.0,0.5]"),
            s("[[102.0,0.0],[103.0,1.0]]"),
            s("[[[100.0,0.0],[101.0,0.0],[100.0,0.0]]]"),
        ],
    );
    // As GeoJSON features: the conflict is inside `geometry`, which becomes JSON text.
    let features = concat!(
        "{\"type\":\"Feature\",\"geometry\":{\"type\":\"Point\",\"coordinates\":[102.0,0.5]},\"properties\":{\"name\":\"a\"}}\n",
        "{\"type\":\"Feature\",\"geometry\":{\"type\":\"LineString\",\"coordinates\":[[102.0,0.0],[103.0,1.0]]},\"properties\":{\"name\":\"b\"}}\n",
        "{\"type\":\"Feature\",\"geometry\":null,\"properties\":{\"name\":\"c\"}}\n",
    );
    let path = write(&dir, "features.ndjson", features.as_bytes());
    let idx = index(&path);
    assert_eq!(
        columns(&idx),
        [
            col("type", "utf8", false),
            col("geometry", "utf8", true),
            col("properties", "struct<name: utf8>", false),
        ]
    );
    reads_as(
        &path,
        &idx,
        "geometry",
        &[
            s("{\"type\":\"Point\",\"coordinates\":[102.0,0.5]}"),
            s("{\"type\":\"LineString\",\"coordinates\":[[102.0,0.0],[103.0,1.0]]}"),
            None,
        ],
    );
}

#[test]
fn an_object_in_one_row_and_a_string_in_another_is_json_text() {
    let dir = tempfile::tempdir().unwrap();
    let data = concat!(
        "{\"user\":{\"name\":\"ann\", \"id\":1},\"k\":\"a\"}\n",
        "{\"user\":\"anonymous\",\"k\":\"b\"}\n",
        "{\"user\":{ },\"k\":\"c\"}\n",
        "{\"user\":12,\"k\":\"d\"}\n",
    );
    let path = write(&dir, "users.ndjson", data.as_bytes());
    let idx = index(&path);
    assert_eq!(
        columns(&idx),
        [col("user", "utf8", true), col("k", "utf8", false)]
    );
    reads_as(
        &path,
        &idx,
        "user",
        &[
            s("{\"name\":\"ann\",\"id\":1}"),
            s("\"anonymous\""),
            s("{}"),
            s("12"),
        ],
    );
    // The same rows as a top-level array (pretty-printed).
    let array = "[\n  {\"user\": {\"name\": \"ann\", \"id\": 1}, \"k\": \"a\"},\n  {\"user\": \"anonymous\", \"k\": \"b\"}\n]\n";
    let path = write(&dir, "users.json", array.as_bytes());
    let idx = index(&path);
    assert_eq!(idx.format, "json_array");
    assert_eq!(
        columns(&idx),
        [col("user", "utf8", true), col("k", "utf8", false)]
    );
    reads_as(
        &path,
        &idx,
        "user",
        &[s("{\"name\":\"ann\",\"id\":1}"), s("\"anonymous\"")],
    );
}

#[test]
fn a_conflict_below_the_top_level_makes_its_top_level_member_json_text() {
    let dir = tempfile::tempdir().unwrap();
    let data = concat!(
        "{\"a\":{\"b\":1,\"c\":\"x\"},\"l\":[{\"k\":1}],\"ok\":{\"v\":1}}\n",
        "{\"a\":{\"b\":[1],\"c\":\"y\"},\"l\":[{\"k\":{\"z\":1}}],\"ok\":{\"v\":2.5}}\n",
        "{\"a\":{\"c\":\"z\"},\"l\":[[1]],\"ok\":{\"v\":null}}\n",
    );
    let path = write(&dir, "nested.ndjson", data.as_bytes());
    let idx = index(&path);
    assert_eq!(
        columns(&idx),
        [
            col("a", "utf8", true),
            col("l", "utf8", true),
            col("ok", "struct<v: float64>", false),
        ]
    );
    reads_as(
        &path,
        &idx,
        "a",
        &[
            s("{\"b\":1,\"c\":\"x\"}"),
            s("{\"b\":[1],\"c\":\"y\"}"),
            s("{\"c\":\"z\"}"),
        ],
    );
    reads_as(
        &path,
        &idx,
        "l",
        &[s("[{\"k\":1}]"), s("[{\"k\":{\"z\":1}}]"), s("[[1]]")],
    );
}

#[test]
fn scalars_alone_and_arrays_of_nulls_are_no_conflict() {
    let dir = tempfile::tempdir().unwrap();
    let data = concat!(
        "{\"v\":1,\"t\":[null],\"w\":[1]}\n",
        "{\"v\":\"x\",\"t\":[[1,2]],\"w\":[2.5, null]}\n",
        "{\"v\":true,\"t\":null,\"w\":[]}\n",
    );
    let path = write(&dir, "scalars.ndjson", data.as_bytes());
    let idx = index(&path);
    assert_eq!(
        columns(&idx),
        [
            col("v", "utf8", false),
            col("t", "list<list<int64>>", false),
            col("w", "list<float64>", false),
        ]
    );
    // A plain Utf8 column: the text of each scalar, strings without quotes.
    assert_eq!(
        cells(&read(&path, Some(&idx), 0..3), "v"),
        [s("1"), s("x"), s("true")]
    );
}

/// A file of over 16 MiB (split on a pool of two threads, read whole by one thread on a pool
/// of one) whose conflicts first appear past its first split point: `id` turns from strings
/// to arrays in a late range, `geo` gains a nested conflict there, and `tags`, arrays in every
/// row of the early ranges, is a string in every row of the last ones.
#[test]
fn a_conflict_past_the_first_split_point_gives_the_sequential_index() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::new();
    let mut rows = 0u64;
    let mut turned = Vec::new();
    while text.len() < 17 << 20 {
        let late = text.len() > 12 << 20;
        let id = if late && rows % 1000 == 7 {
            turned.push(rows);
            format!("[{rows}, \"x\"]")
        } else {
            format!("\"{rows}\"")
        };
        let geo = if late && rows % 1000 == 7 {
            "{\"type\":\"Polygon\",\"coordinates\":[[[1.5,2],[3,4]]]}".to_string()
        } else {
            format!("{{\"type\":\"Point\",\"coordinates\":[{}.5,2]}}", rows % 90)
        };
        let tags = if text.len() > 15 << 20 {
            "\"solo\"".to_string()
        } else {
            "[\"a\",\"b\"]".to_string()
        };
        text.push_str(&format!(
            "{{\"i\":{rows},\"id\":{id},\"geo\":{geo},\"tags\":{tags},\"pad\":\"{}\"}}\n",
            "p".repeat((rows % 40) as usize)
        ));
        rows += 1;
    }
    let path = write(&dir, "big.ndjson", text.as_bytes());
    let on = |threads: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| common_index(&path, 10_000))
    };
    let split = on(2);
    let sequential = on(1);
    assert_eq!(format!("{split:?}"), format!("{sequential:?}"));
    assert_eq!(split.row_count, rows);
    assert_eq!(
        columns(&split),
        [
            col("i", "int64", false),
            col("id", "utf8", true),
            col("geo", "utf8", true),
            col("tags", "utf8", true),
            col("pad", "utf8", false),
        ]
    );
    assert!(!turned.is_empty());
    // Rows of every range, the turned ones among them.
    let mut wanted: Vec<u64> = (0..rows).step_by(9_973).collect();
    wanted.extend(&turned[..turned.len().min(5)]);
    wanted.push(rows - 1);
    wanted.sort_unstable();
    wanted.dedup();
    let got = take(&path, &split, &wanted);
    let ids = cells(&got, "id");
    let geos = cells(&got, "geo");
    let tags = cells(&got, "tags");
    let late_tags = text.find("\"tags\":\"solo\"").unwrap();
    let first_solo = text[..late_tags].matches('\n').count() as u64;
    for (k, &r) in wanted.iter().enumerate() {
        if turned.contains(&r) {
            assert_eq!(ids[k], s(&format!("[{r},\"x\"]")), "row {r}");
            assert_eq!(
                geos[k],
                s("{\"type\":\"Polygon\",\"coordinates\":[[[1.5,2],[3,4]]]}")
            );
        } else {
            assert_eq!(ids[k], s(&format!("\"{r}\"")), "row {r}");
            assert_eq!(
                geos[k],
                s(&format!(
                    "{{\"type\":\"Point\",\"coordinates\":[{}.5,2]}}",
                    r % 90
                ))
            );
        }
        let tag = if r >= first_solo {
            "\"solo\""
        } else {
            "[\"a\",\"b\"]"
        };
        assert_eq!(tags[k], s(tag), "row {r}");
    }
    // A ranged read across a split point and a turned row.
    let t = turned[0];
    let batches = read(&path, Some(&split), t - 2..t + 2);
    let ids = cells(&batches, "id");
    assert_eq!(ids[2], s(&format!("[{t},\"x\"]")));
    assert_eq!(ids[1], s(&format!("\"{}\"", t - 1)));
}
