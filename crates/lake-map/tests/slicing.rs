//! `slice`: strides give the same rows, slices across many files, projections, dynamic
//! handlers overriding a built-in extension, and the stale check.

use std::fs;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use lake_map::{CreateOptions, Error, HandlerRegistry, MapConfig, create_map_with, load_map};

use crate::common::{LinesLocator, lines_registry, slice_values, standard_files, write_lake};

fn build(dir: &std::path::Path, stride: u64, registry: HandlerRegistry) -> lake_map::LakeMap {
    create_map_with(
        dir,
        &CreateOptions {
            config: MapConfig {
                checkpoint_stride_rows: stride,
                ..MapConfig::default()
            },
            registry,
            ..CreateOptions::default()
        },
    )
    .unwrap();
    load_map(dir).unwrap()
}

#[test]
fn strides_give_the_same_slices() {
    let dir = tempfile::tempdir().unwrap();
    write_lake(dir.path(), &standard_files());
    let reg = lines_registry();
    let maps: Vec<_> = [1, 7, 65_536]
        .into_iter()
        .map(|s| {
            let m = build(dir.path(), s, reg.clone());
            let blocks: usize = (0..m.total_files())
                .map(|i| m.blocks(i).unwrap().len())
                .sum();
            (s, m, blocks)
        })
        .collect();
    assert_eq!(maps[0].2, 99, "stride 1: one block per row");
    assert_eq!(maps[2].2, 6, "stride 65,536: one block per non-empty file");
    for start in [0, 1, 3, 4, 13, 16, 17, 40, 41, 42, 81, 82, 97, 98, 99, 150] {
        for len in [0, 1, 2, 6, 7, 8, 30, 99, 1000] {
            let want: Vec<i64> = (start..(start + len).min(99)).map(|v| v as i64).collect();
            for (s, m, _) in &maps {
                assert_eq!(
                    slice_values(m, &reg, start, len),
                    want,
                    "stride {s} [{start}+{len}]"
                );
            }
        }
    }
}

#[test]
fn slice_spanning_ten_files() {
    let dir = tempfile::tempdir().unwrap();
    let names: Vec<String> = (0..12).map(|i| format!("part/f{i:02}.lines")).collect();
    let files: Vec<(&str, u64)> = names.iter().map(|n| (n.as_str(), 9)).collect();
    write_lake(dir.path(), &files);
    let reg = lines_registry();
    let map = build(dir.path(), 4, reg.clone());
    // From row 5 of file 1 to row 3 of file 10: ten touched files.
    let slices = map.slice(14, 80, None, &reg).unwrap();
    assert_eq!(slices.len(), 10);
    assert_eq!(slices[0].path, "part/f01.lines");
    assert_eq!((slices[0].local_start, slices[0].len), (5, 4));
    assert_eq!(slices[9].path, "part/f10.lines");
    assert_eq!((slices[9].local_start, slices[9].len), (0, 4));
    assert_eq!(
        slice_values(&map, &reg, 14, 80),
        (14..94).collect::<Vec<i64>>()
    );
    // Projection: known column kept, unknown column an error naming the file.
    let cols = vec!["v".to_string()];
    let p = map.slice(14, 3, Some(&cols), &reg).unwrap();
    assert_eq!(p[0].batches[0].schema().field(0).name(), "v");
    let bad = vec!["nope".to_string()];
    let err = map.slice(14, 3, Some(&bad), &reg).unwrap_err().to_string();
    assert!(err.contains("f01.lines") && err.contains("nope"), "{err}");
}

#[test]
fn dynamic_handler_overrides_a_builtin_extension() {
    let dir = tempfile::tempdir().unwrap();
    write_lake(dir.path(), &[("a.csv", 12), ("b.lines", 5), ("c.csv", 30)]);
    let builtin = Arc::new(LinesLocator::new("lines", &["csv", "lines"], &["lines"]));
    let dynamic = Arc::new(LinesLocator::new("linecount", &["csv"], &["linecount"]));
    let mut reg = HandlerRegistry::with_locators(vec![builtin.clone()]);
    reg.register(dynamic.clone());
    let map = build(dir.path(), 4, reg.clone());
    for e in map.entries() {
        if e.path.ends_with(".csv") {
            assert_eq!(e.format, "linecount");
            assert_eq!(e.row_groups_json, "[]");
        } else {
            assert_eq!(e.format, "lines");
            assert_ne!(e.row_groups_json, "[]");
        }
    }
    assert_eq!(
        slice_values(&map, &reg, 0, 100),
        (0..47).collect::<Vec<i64>>()
    );
    assert_eq!(
        dynamic.reads.load(Ordering::SeqCst),
        2,
        "both .csv files through the handler"
    );
    assert_eq!(
        dynamic.seeks.load(Ordering::SeqCst),
        0,
        "no stored blocks for the handler"
    );
    assert_eq!(
        builtin.reads.load(Ordering::SeqCst),
        1,
        "only b.lines through the built-in"
    );
    assert_eq!(builtin.seeks.load(Ordering::SeqCst), 1);
    let l = map.locate_row(20).unwrap();
    assert_eq!((l.entry().path, l.local_row, l.block), ("c.csv", 3, None));
}

#[test]
fn stale_files_error_and_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    write_lake(dir.path(), &standard_files());
    let reg = lines_registry();
    let map = build(dir.path(), 7, reg.clone());
    // Size change.
    let f = dir.path().join("b/c.lines");
    let old = fs::metadata(&f).unwrap();
    let mut text = fs::read_to_string(&f).unwrap();
    text.push_str("1000\n");
    fs::write(&f, &text).unwrap();
    fs::File::options()
        .write(true)
        .open(&f)
        .unwrap()
        .set_modified(old.modified().unwrap())
        .unwrap();
    let err = map.slice(15, 5, None, &reg).unwrap_err();
    assert!(matches!(err, Error::Stale { .. }), "{err}");
    assert!(err.to_string().contains("b/c.lines"), "{err}");
    assert!(err.to_string().contains("size"), "{err}");
    // Rows before the stale file still read.
    assert_eq!(slice_values(&map, &reg, 14, 3), vec![14, 15, 16]);
    // Same size, new mtime.
    let g = dir.path().join("a.lines");
    let when = fs::metadata(&g).unwrap().modified().unwrap() + Duration::from_secs(5);
    fs::File::options()
        .write(true)
        .open(&g)
        .unwrap()
        .set_modified(when)
        .unwrap();
    let err = map.slice(4, 1, None, &reg).unwrap_err().to_string();
    assert!(err.contains("a.lines") && err.contains("mtime"), "{err}");
    // Missing file.
    fs::remove_file(dir.path().join("z.lines")).unwrap();
    let err = map.slice(90, 1, None, &reg).unwrap_err().to_string();
    assert!(err.contains("z.lines") && err.contains("missing"), "{err}");
}
