//! Legacy map schemas 1 (5 columns) and 2 (7 columns), built here with arrow-ipc, load with
//! the old defaults and slice correctly.

use std::collections::HashMap;
use std::fs;
use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use lake_map::{
    CreateOptions, Fingerprint, MapConfig, StatsColumns, TextEncoding, create_map_with, load_map,
    resolve_map_path,
};

use crate::common::{lines_registry, slice_values, standard_files, write_lake};

fn write_legacy(dir: &std::path::Path, version: u32, with_key: bool, reverse: bool) {
    let reg = lines_registry();
    let built = create_map_with(
        dir,
        &CreateOptions {
            config: MapConfig {
                checkpoint_stride_rows: 3,
                ..MapConfig::default()
            },
            registry: reg,
            dry_run: true,
            ..CreateOptions::default()
        },
    )
    .unwrap()
    .map;
    let mut entries = built.to_entries();
    if reverse {
        // Schema 1 maps get their order (and first rows) from the paths, not the file.
        entries.reverse();
    }
    let mut fields = vec![
        Field::new("path", DataType::Utf8, false),
        Field::new("format", DataType::Utf8, false),
        Field::new("size_bytes", DataType::Int64, false),
        Field::new("mtime_ms", DataType::Int64, false),
        Field::new("row_count", DataType::Int64, false),
    ];
    let mut columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from_iter_values(
            entries.iter().map(|e| &e.path),
        )),
        Arc::new(StringArray::from_iter_values(
            entries.iter().map(|e| &e.format),
        )),
        Arc::new(Int64Array::from_iter_values(
            entries.iter().map(|e| e.size_bytes as i64),
        )),
        Arc::new(Int64Array::from_iter_values(
            entries.iter().map(|e| e.mtime_ms),
        )),
        Arc::new(Int64Array::from_iter_values(
            entries.iter().map(|e| e.row_count as i64),
        )),
    ];
    if version == 2 {
        fields.push(Field::new("first_global_row", DataType::Int64, false));
        fields.push(Field::new("row_groups_json", DataType::Utf8, false));
        columns.push(Arc::new(Int64Array::from_iter_values(
            entries.iter().map(|e| e.first_global_row as i64),
        )));
        columns.push(Arc::new(StringArray::from_iter_values(
            entries.iter().map(|e| &e.row_groups_json),
        )));
    }
    let mut md = HashMap::new();
    if with_key {
        md.insert("bazan.kind".to_string(), "lake_map".to_string());
        md.insert("bazan.map_schema".to_string(), version.to_string());
    }
    let schema = Arc::new(Schema::new_with_metadata(fields, md));
    let batch = RecordBatch::try_new(schema.clone(), columns).unwrap();
    let file = fs::File::create(resolve_map_path(dir)).unwrap();
    let mut w = arrow_ipc::writer::FileWriter::try_new(file, &schema).unwrap();
    w.write(&batch).unwrap();
    w.finish().unwrap();
}

fn check_old_defaults(map: &lake_map::LakeMap) {
    assert_eq!(
        map.config(),
        &MapConfig {
            checkpoint_stride_rows: 65_536,
            fingerprint: Fingerprint::Metadata,
            stats_columns: StatsColumns::All,
            text_encoding: TextEncoding::Utf8,
        }
    );
    for e in map.entries() {
        assert_eq!((e.blake3, e.stats_json, e.schema_json), (None, None, None));
    }
}

#[test]
fn schema_1_loads_and_slices_from_file_start() {
    for with_key in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        write_lake(dir.path(), &standard_files());
        write_legacy(dir.path(), 1, with_key, true);
        let map = load_map(dir.path()).unwrap();
        assert_eq!(map.map_schema(), 1);
        assert!(!map.has_locators());
        check_old_defaults(&map);
        let firsts: Vec<u64> = map.entries().map(|e| e.first_global_row).collect();
        assert_eq!(firsts, [0, 4, 14, 17, 42, 82, 82]);
        assert_eq!(map.total_rows(), 99);
        for e in map.entries() {
            assert_eq!(e.row_groups_json, "[]");
        }
        assert_eq!(map.locate_row(50).unwrap().block, None);
        let reg = lines_registry();
        assert_eq!(
            slice_values(&map, &reg, 0, 200),
            (0..99).collect::<Vec<i64>>()
        );
        assert_eq!(slice_values(&map, &reg, 40, 5), vec![40, 41, 42, 43, 44]);
    }
}

#[test]
fn schema_2_loads_with_locators_and_old_defaults() {
    for with_key in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        write_lake(dir.path(), &standard_files());
        write_legacy(dir.path(), 2, with_key, false);
        let map = load_map(dir.path()).unwrap();
        assert_eq!(map.map_schema(), 2);
        assert!(map.has_locators());
        check_old_defaults(&map);
        let l = map.locate_row(50).unwrap();
        assert_eq!((l.entry().path, l.local_row), ("d/e/f.lines", 8));
        assert_eq!(
            l.block.unwrap().first_row,
            6,
            "the stored stride-3 blocks are used"
        );
        let reg = lines_registry();
        assert_eq!(
            slice_values(&map, &reg, 0, 200),
            (0..99).collect::<Vec<i64>>()
        );
        assert_eq!(
            slice_values(&map, &reg, 47, 9),
            (47..56).collect::<Vec<i64>>()
        );
    }
}

#[test]
fn schema_2_with_inconsistent_first_rows_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    write_lake(dir.path(), &standard_files());
    // Reversed entries keep their first rows, which no longer add up in file order.
    write_legacy(dir.path(), 2, true, true);
    let err = load_map(dir.path()).unwrap_err().to_string();
    assert!(err.contains("first_global_row"), "{err}");
}
