//! The map of `testdata/lake` (written by `cargo xtask fixtures lake`) with the built-in
//! locators: the map written, loaded and equal field by field, its `map show --json` form as
//! an insta snapshot (mtimes masked), and every row's `gid` equal to its global row.

use std::path::Path;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use lake_map::{CreateOptions, HandlerRegistry, MapConfig, create_map_with, load_map, show};

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

fn lake_copy() -> tempfile::TempDir {
    let src = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/lake"));
    let dir = tempfile::tempdir().unwrap();
    copy_tree(src, dir.path());
    dir
}

#[test]
fn testdata_lake_map_show_snapshot() {
    let dir = lake_copy();
    let options = CreateOptions::default();
    let built = create_map_with(dir.path(), &options).unwrap().map;
    let map = load_map(dir.path()).unwrap();
    assert_eq!(map.to_entries(), built.to_entries());
    assert_eq!(map.config(), &MapConfig::default());
    let mut json = show::map_json(&map).unwrap();
    for f in json["files"].as_array_mut().unwrap() {
        f["mtime_ms"] = serde_json::Value::from("[masked]");
    }
    insta::assert_json_snapshot!("testdata_lake_map_show", json);
}

#[test]
fn testdata_lake_gid_is_the_global_row() {
    let dir = lake_copy();
    let map = create_map_with(dir.path(), &CreateOptions::default())
        .unwrap()
        .map;
    let registry = HandlerRegistry::builtin();
    let total = map.total_rows();
    assert!(total > 5_000, "{total}");
    let mut next = 0i64;
    let mut touched = 0;
    for f in map.slice(0, total, None, &registry).unwrap() {
        if f.path == "notes.txt" {
            next += f.len as i64;
            continue;
        }
        touched += 1;
        for b in &f.batches {
            let col = b.column_by_name("gid").unwrap();
            let values: Vec<i64> = match col.as_primitive_opt::<Int64Type>() {
                Some(a) => a.values().to_vec(),
                // XLSX numbers are doubles in the file; the inferred type may keep them so.
                None => arrow_cast_f64(col.as_ref()),
            };
            for v in values {
                assert_eq!(v, next, "{}", f.path);
                next += 1;
            }
        }
    }
    assert_eq!(next as u64, total);
    assert!(touched > 25, "{touched}");
    // Deep slices land on the same rows.
    for g in [0, 1, 119, 120, 3_000, total / 2, total - 1] {
        let l = map.locate_row(g).unwrap();
        let s = map.slice(g, 1, None, &registry).unwrap();
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].path, l.entry().path);
        assert_eq!(s[0].local_start, l.local_row);
    }
}

fn arrow_cast_f64(col: &dyn arrow_array::Array) -> Vec<i64> {
    col.as_primitive::<arrow_array::types::Float64Type>()
        .values()
        .iter()
        .map(|v| *v as i64)
        .collect()
}
