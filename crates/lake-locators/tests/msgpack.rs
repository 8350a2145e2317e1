//! The MessagePack locator on files written with rmp: concatenated maps and an outer array,
//! checkpoints every `stride` rows at the map headers, reads from checkpoints, nested values,
//! and typed errors for truncated or malformed input.

use crate::common::{self, malformed, write};
use std::path::Path;

use lake_locators::{FileIndex, msgpack::MsgPackLocator, types};
use rmp::encode;
use serde_json::{Value, json};

fn index(path: &Path, stride: u64) -> lake_locators::Result<FileIndex> {
    common::index_every(&MsgPackLocator, path, stride)
}

fn read(path: &Path, idx: Option<&FileIndex>, rows: std::ops::Range<u64>) -> Vec<Value> {
    common::read_rows(&MsgPackLocator, path, &common::request(idx, rows, None, 2))
}

/// One row `{"id": i, "name": .., "price": .., "ok": ..}` with varying key order and a
/// missing key on odd rows; returns the bytes.
fn row(buf: &mut Vec<u8>, i: i64) {
    let odd = i % 2 == 1;
    encode::write_map_len(buf, if odd { 3 } else { 4 }).unwrap();
    if odd {
        encode::write_str(buf, "name").unwrap();
        encode::write_str(buf, &format!("n{i}")).unwrap();
        encode::write_str(buf, "id").unwrap();
        encode::write_sint(buf, i * 1000).unwrap();
        encode::write_str(buf, "ok").unwrap();
        encode::write_nil(buf).unwrap();
    } else {
        encode::write_str(buf, "id").unwrap();
        encode::write_sint(buf, -i).unwrap();
        encode::write_str(buf, "name").unwrap();
        encode::write_str(buf, &format!("n{i}")).unwrap();
        encode::write_str(buf, "price").unwrap();
        encode::write_f64(buf, i as f64 + 0.25).unwrap();
        encode::write_str(buf, "ok").unwrap();
        encode::write_bool(buf, i % 4 == 0).unwrap();
    }
}

#[test]
fn concatenated_maps_and_outer_array() {
    let dir = tempfile::tempdir().unwrap();
    let mut data = Vec::new();
    let mut starts = Vec::new();
    for i in 0..7 {
        starts.push(data.len() as u64);
        row(&mut data, i);
    }
    let path = write(&dir, "c.msgpack", &data);
    let idx = index(&path, 3).unwrap();
    assert_eq!(idx.row_count, 7);
    let cps: Vec<(u64, u64)> = idx
        .blocks
        .iter()
        .map(|b| (b.first_row, b.first_byte.unwrap()))
        .collect();
    assert_eq!(cps, [(0, starts[0]), (3, starts[3]), (6, starts[6])]);
    let names: Vec<String> = idx
        .schema
        .fields()
        .iter()
        .map(|f| format!("{}:{}", f.name(), types::type_name(f.data_type())))
        .collect();
    assert_eq!(names, ["id:int64", "name:utf8", "price:float64", "ok:bool"]);
    assert_eq!(
        read(&path, Some(&idx), 3..5),
        [
            json!({"id": 3000, "name": "n3", "price": null, "ok": null}),
            json!({"id": -4, "name": "n4", "price": 4.25, "ok": true})
        ]
    );
    let stats = serde_json::to_value(idx.stats.as_ref().unwrap()).unwrap();
    assert_eq!(
        stats,
        json!({"id": {"min": -6, "max": 5000}, "name": {"min_str": "n0", "max_str": "n6"},
               "price": {"min": 0.25, "max": 6.25}})
    );
    let whole = read(&path, Some(&idx), 0..7);
    for a in 0..=7 {
        for b in a..=8 {
            let want = &whole[a as usize..b.min(7) as usize];
            assert_eq!(read(&path, Some(&idx), a..b), want);
            assert_eq!(read(&path, None, a..b), want);
        }
    }

    let mut arr = Vec::new();
    encode::write_array_len(&mut arr, 7).unwrap();
    let header = arr.len() as u64;
    arr.extend_from_slice(&data);
    let path = write(&dir, "a.mpk", &arr);
    let idx = index(&path, 3).unwrap();
    assert_eq!(idx.row_count, 7);
    assert_eq!(idx.blocks[1].first_byte, Some(starts[3] + header));
    assert_eq!(read(&path, Some(&idx), 0..7), whole);
    assert_eq!(read(&path, None, 5..9), &whole[5..]);

    let empty = write(&dir, "e.msgpack", b"");
    assert_eq!(index(&empty, 3).unwrap().row_count, 0);
    assert!(read(&empty, None, 0..2).is_empty());
}

#[test]
fn nested_values_become_lists_and_structs() {
    let dir = tempfile::tempdir().unwrap();
    let mut data = Vec::new();
    for i in 0..3i64 {
        encode::write_map_len(&mut data, 2).unwrap();
        encode::write_str(&mut data, "id").unwrap();
        encode::write_sint(&mut data, i).unwrap();
        encode::write_str(&mut data, "tags").unwrap();
        encode::write_array_len(&mut data, 2).unwrap();
        encode::write_str(&mut data, "a").unwrap();
        encode::write_str(&mut data, "b").unwrap();
    }
    let path = write(&dir, "n.msgpack", &data);
    let idx = index(&path, 2).unwrap();
    let types: Vec<String> = idx
        .schema
        .fields()
        .iter()
        .map(|f| types::type_name(f.data_type()))
        .collect();
    assert_eq!(types, ["int64", "list<utf8>"]);
    assert_eq!(
        read(&path, Some(&idx), 2..3),
        [json!({"id": 2, "tags": ["a", "b"]})]
    );
}

/// Nested maps keep their keys in order of first appearance, at the top and inside.
#[test]
fn nested_keys_keep_first_appearance_order() {
    let dir = tempfile::tempdir().unwrap();
    let mut data = Vec::new();
    encode::write_map_len(&mut data, 2).unwrap();
    encode::write_str(&mut data, "zeta").unwrap();
    encode::write_map_len(&mut data, 2).unwrap();
    encode::write_str(&mut data, "y").unwrap();
    encode::write_sint(&mut data, 1).unwrap();
    encode::write_str(&mut data, "b").unwrap();
    encode::write_sint(&mut data, 2).unwrap();
    encode::write_str(&mut data, "alpha").unwrap();
    encode::write_sint(&mut data, 3).unwrap();
    let path = write(&dir, "o.msgpack", &data);
    let idx = index(&path, 2).unwrap();
    let names = common::names(idx.schema.fields());
    assert_eq!(names, ["zeta", "alpha"]);
    let arrow_schema::DataType::Struct(inner) = idx.schema.field(0).data_type() else {
        panic!("zeta is a struct: {:?}", idx.schema)
    };
    let inner = common::names(inner);
    assert_eq!(inner, ["y", "b"]);
}

#[test]
fn bad_input_gives_typed_errors() {
    let dir = tempfile::tempdir().unwrap();
    let mut data = Vec::new();
    row(&mut data, 0);
    let whole = data.len();
    row(&mut data, 1);
    // Cut the second row inside its last string.
    data.truncate(whole + 8);
    let path = write(&dir, "t.msgpack", &data);
    let (offset, _, text) = malformed(index(&path, 10).unwrap_err());
    assert!(text.contains("truncated"), "{text}");
    assert!(offset.is_some_and(|o| o > whole as u64), "{text}");

    // A 4 GiB string announced in 6 bytes: refused without allocating.
    let path = write(
        &dir,
        "h.msgpack",
        &[0x81, 0xa1, b'a', 0xdb, 0xff, 0xff, 0xff, 0xff],
    );
    let (offset, _, text) = malformed(index(&path, 10).unwrap_err());
    assert_eq!(offset, Some(8), "{text}");

    let path = write(&dir, "s.msgpack", &[0x05]);
    let (offset, _, text) = malformed(index(&path, 10).unwrap_err());
    assert_eq!(offset, Some(0), "{text}");
    assert!(text.contains("not a map"), "{text}");

    let path = write(&dir, "k.msgpack", &[0x81, 0x01, 0x02]);
    assert_eq!(malformed(index(&path, 10).unwrap_err()).0, Some(1));

    let path = write(&dir, "u.msgpack", &[0x81, 0xa1, 0xff, 0x01]);
    assert_eq!(malformed(index(&path, 10).unwrap_err()).0, Some(2));

    let path = write(&dir, "r.msgpack", &[0x81, 0xa1, b'a', 0xc1]);
    assert_eq!(malformed(index(&path, 10).unwrap_err()).0, Some(3));

    let mut short = Vec::new();
    encode::write_array_len(&mut short, 3).unwrap();
    row(&mut short, 0);
    let path = write(&dir, "o.msgpack", &short);
    let (_, _, text) = malformed(index(&path, 10).unwrap_err());
    assert!(text.contains("announces 3 rows"), "{text}");
}
