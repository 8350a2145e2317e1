//! The JSON-family locator on small hand-written files: layout by content, checkpoints of
//! lines and array elements, reads from checkpoints, nested values through arrow-json's
//! inference, mixed types, and typed errors for bad input.

use crate::common::{self, checkpoints, malformed, write};
use std::path::Path;

use lake_locators::{FileIndex, json::JsonLocator, types};
use serde_json::{Value, json};

fn index(path: &Path, stride: u64) -> lake_locators::Result<FileIndex> {
    common::index_every(&JsonLocator, path, stride)
}

fn read(path: &Path, idx: Option<&FileIndex>, rows: std::ops::Range<u64>) -> Vec<Value> {
    common::read_rows(&JsonLocator, path, &common::request(idx, rows, None, 2))
}

fn type_names(idx: &FileIndex) -> Vec<String> {
    idx.schema
        .fields()
        .iter()
        .map(|f| format!("{}:{}", f.name(), types::type_name(f.data_type())))
        .collect()
}

fn all_ranges_agree(path: &Path, idx: &FileIndex) {
    let whole = read(path, Some(idx), 0..idx.row_count);
    assert_eq!(whole.len() as u64, idx.row_count);
    for a in 0..=idx.row_count {
        for b in a..=idx.row_count + 1 {
            let want = &whole[a as usize..(b.min(idx.row_count)) as usize];
            assert_eq!(read(path, Some(idx), a..b), want, "indexed {a}..{b}");
            assert_eq!(read(path, None, a..b), want, "direct {a}..{b}");
        }
    }
}

#[test]
fn lines_with_blank_lines_crlf_and_varying_keys() {
    let dir = tempfile::tempdir().unwrap();
    let data = b"{\"a\":1,\"s\":\"x\"}\r\n\r\n  \n{\"s\":\"\\u00e9\\ud83d\\ude80\",\"a\":2}\r\n{\"a\":null}\n\t{\"a\":4,\"s\":\"z\",\"b\":true}";
    let path = write(&dir, "l.jsonl", data);
    let idx = index(&path, 2).unwrap();
    assert_eq!(idx.format, "ndjson");
    assert_eq!(idx.row_count, 4);
    assert_eq!(checkpoints(&idx), [(0, 0), (2, 56)]);
    assert_eq!(type_names(&idx), ["a:int64", "s:utf8", "b:bool"]);
    assert_eq!(
        read(&path, Some(&idx), 1..3),
        [
            json!({"a": 2, "s": "é🚀", "b": null}),
            json!({"a": null, "s": null, "b": null})
        ]
    );
    let stats = serde_json::to_value(idx.stats.as_ref().unwrap()).unwrap();
    assert_eq!(
        stats,
        json!({"a": {"min": 1, "max": 4}, "s": {"min_str": "x", "max_str": "é🚀"}})
    );
    all_ranges_agree(&path, &idx);
}

#[test]
fn arrays_pretty_and_compact() {
    let dir = tempfile::tempdir().unwrap();
    let data = b"\n  [\n  {\"a\": 1,\n   \"b\": \"]\\\"}\"},\n  {\"a\": 2.5, \"b\": \"y\"} ,{\"b\":\"z\",\"a\":3}\n]\n";
    let path = write(&dir, "a.json", data);
    let idx = index(&path, 2).unwrap();
    assert_eq!(idx.format, "json_array");
    assert_eq!(idx.row_count, 3);
    let third = data.windows(5).position(|w| w == b"{\"b\":").unwrap() as u64;
    assert_eq!(checkpoints(&idx), [(0, 7), (2, third)]);
    assert_eq!(type_names(&idx), ["a:float64", "b:utf8"]);
    assert_eq!(
        read(&path, Some(&idx), 0..3),
        [
            json!({"a": 1.0, "b": "]\"}"}),
            json!({"a": 2.5, "b": "y"}),
            json!({"a": 3.0, "b": "z"})
        ]
    );
    all_ranges_agree(&path, &idx);
    // `.ndjson` is always line-delimited, so an array there is one row that is not an object.
    let nd = write(&dir, "a.ndjson", b"[{\"a\":1}]\n");
    assert!(index(&nd, 2).is_err());
    let empty = write(&dir, "e.json", b" [ ] ");
    let idx = index(&empty, 2).unwrap();
    assert_eq!((idx.format.as_str(), idx.row_count), ("json_array", 0));
    assert!(read(&empty, None, 0..3).is_empty());
    let blank = write(&dir, "w.jsonl", b" \n\n");
    assert_eq!(index(&blank, 2).unwrap().row_count, 0);
}

#[test]
fn nested_and_mixed_values_follow_arrow_json() {
    let dir = tempfile::tempdir().unwrap();
    let data = b"{\"id\":1,\"m\":\"x\",\"n\":null}\n{\"id\":2,\"m\":5,\"o\":{\"k\":[1,2]}}\n{\"id\":3,\"m\":true,\"l\":[1.5]}\n";
    let path = write(&dir, "n.ndjson", data);
    let idx = index(&path, 1).unwrap();
    assert_eq!(
        type_names(&idx),
        [
            "id:int64",
            "m:utf8",
            "n:utf8",
            "o:struct<k: list<int64>>",
            "l:list<float64>"
        ]
    );
    assert_eq!(
        read(&path, Some(&idx), 1..3),
        [
            json!({"id": 2, "m": "5", "n": null, "o": {"k": [1, 2]}, "l": null}),
            json!({"id": 3, "m": "true", "n": null, "o": null, "l": [1.5]})
        ]
    );
    let stats = serde_json::to_value(idx.stats.as_ref().unwrap()).unwrap();
    assert_eq!(
        stats,
        json!({"id": {"min": 1, "max": 3}, "m": {"min_str": "5", "max_str": "x"}})
    );
    // The flat tokenizer and arrow-json agree on mixed scalars too.
    let flat = write(
        &dir,
        "f.ndjson",
        b"{\"m\":\"x\"}\n{\"m\":5}\n{\"m\":true}\n",
    );
    let idx = index(&flat, 1).unwrap();
    assert_eq!(type_names(&idx), ["m:utf8"]);
    assert_eq!(
        read(&flat, Some(&idx), 0..3),
        [json!({"m": "x"}), json!({"m": "5"}), json!({"m": "true"})]
    );
    let big = write(
        &dir,
        "b.ndjson",
        b"{\"v\":1}\n{\"v\":18446744073709551615}\n",
    );
    assert_eq!(type_names(&index(&big, 1).unwrap()), ["v:float64"]);
}

#[test]
fn bad_input_gives_typed_errors() {
    let dir = tempfile::tempdir().unwrap();
    let open = write(&dir, "o.json", b"[{\"a\":1},\n{\"a\":2}\n");
    let (offset, _, text) = malformed(index(&open, 10).unwrap_err());
    assert_eq!(offset, Some(18), "{text}");
    assert!(text.contains("never closes"), "{text}");

    let inside = write(&dir, "i.json", b"[{\"a\":1},{\"a\":");
    let (offset, _, text) = malformed(index(&inside, 10).unwrap_err());
    assert_eq!(offset, Some(14), "{text}");
    assert!(text.contains("never closes"), "{text}");

    let utf8 = write(&dir, "u.ndjson", b"{\"a\":\"\xc3\"}\n");
    let (offset, _, _) = malformed(index(&utf8, 10).unwrap_err());
    assert_eq!(offset, Some(6));

    let garbage = write(&dir, "g.ndjson", b"{\"a\":1}\n{\"a\":2} x\n");
    let (offset, _, text) = malformed(index(&garbage, 10).unwrap_err());
    assert_eq!(offset, Some(15), "{text}");

    let syntax = write(&dir, "s.ndjson", b"{\"a\":1}\n{\"a\" 2}\n");
    let (offset, _, _) = malformed(index(&syntax, 10).unwrap_err());
    assert_eq!(offset, Some(13));

    let trailing = write(&dir, "t.json", b"[{\"a\":1}] []");
    let (offset, _, _) = malformed(index(&trailing, 10).unwrap_err());
    assert_eq!(offset, Some(10));
}
