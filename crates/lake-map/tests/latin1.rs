//! A map of Latin-1 delimited files (`text_encoding: latin-1`): indexed, sliced and read by
//! rows with the encoding the map stores, after a reload and after `update`; a UTF-8 map
//! refuses the same files with the row and byte offset.

use std::fs;
use std::path::Path;

use arrow_array::{Array, RecordBatch, StringArray};
use lake_map::{
    CreateOptions, Error, HandlerRegistry, MapConfig, TextEncoding, UpdateOptions, create_map_with,
    load_map, update_map_with,
};

fn latin1_config() -> MapConfig {
    MapConfig {
        checkpoint_stride_rows: 2,
        text_encoding: TextEncoding::Latin1,
        ..MapConfig::default()
    }
}

fn create(root: &Path, config: MapConfig) -> lake_map::Result<lake_map::CreateReport> {
    create_map_with(
        root,
        &CreateOptions {
            config,
            registry: HandlerRegistry::builtin(),
            ..CreateOptions::default()
        },
    )
}

/// The strings of column `name` in the batches.
fn strings(batches: &[RecordBatch], name: &str) -> Vec<String> {
    let mut out = Vec::new();
    for b in batches {
        let col = b.column_by_name(name).expect("column");
        let col = col.as_any().downcast_ref::<StringArray>().expect("utf8");
        out.extend((0..col.len()).map(|i| col.value(i).to_string()));
    }
    out
}

fn lake(root: &Path) {
    // Python: csv.reader(open(p, encoding="latin-1", newline="")) gives, after the header,
    // José/München, "Zoë, ""q""" -> Zoë, "q"/São Paulo, plain/Zürich.
    fs::write(
        root.join("a.csv"),
        b"caf\xe9,city\nJos\xe9,M\xfcnchen\n\"Zo\xeb, \"\"q\"\"\",S\xe3o Paulo\nplain,Z\xfcrich\n",
    )
    .unwrap();
    fs::write(root.join("b.tsv"), b"caf\xe9\tcity\n\xc0 la carte\t\xff\n").unwrap();
}

fn check_reads(map: &lake_map::LakeMap, reg: &HandlerRegistry) {
    let slices = map.slice(0, 4, None, reg).unwrap();
    let batches: Vec<RecordBatch> = slices.iter().flat_map(|s| s.batches.clone()).collect();
    assert_eq!(
        strings(&batches, "café"),
        ["José", "Zoë, \"q\"", "plain", "À la carte"]
    );
    assert_eq!(
        strings(&batches, "city"),
        ["München", "São Paulo", "Zürich", "ÿ"]
    );
    // A slice that starts at the second checkpoint of a.csv.
    let slices = map.slice(2, 1, Some(&["city".to_string()]), reg).unwrap();
    assert_eq!(strings(&slices[0].batches, "city"), ["Zürich"]);
    let rows = map.read_rows(0, &[1, 2], None, reg).unwrap();
    assert_eq!(strings(&rows, "café"), ["Zoë, \"q\"", "plain"]);
}

#[test]
fn latin1_map_reads_survive_reload_and_update() {
    let dir = tempfile::tempdir().unwrap();
    lake(dir.path());
    let reg = HandlerRegistry::builtin();
    let built = create(dir.path(), latin1_config()).unwrap().map;
    assert_eq!(built.total_rows(), 4);
    check_reads(&built, &reg);
    let e = built.find("a.csv").unwrap();
    // Utf8 bounds hold the Latin-1 characters; the checkpoints are the file's bytes.
    assert_eq!(
        e.stats_json,
        Some(
            r#"{"café":{"min_str":"José","max_str":"plain"},"city":{"min_str":"München","max_str":"Zürich"}}"#
        )
    );
    let blocks = built.blocks(e.index).unwrap();
    let starts: Vec<Option<u64>> = blocks.iter().map(|b| b.first_byte).collect();
    assert_eq!(starts, [Some(10), Some(46)]);

    let loaded = load_map(dir.path()).unwrap();
    assert_eq!(loaded.config().text_encoding, TextEncoding::Latin1);
    check_reads(&loaded, &reg);

    // A new Latin-1 file: the update indexes it as Latin-1 and keeps the setting.
    fs::write(
        dir.path().join("c.csv"),
        b"caf\xe9,city\n\xe6\xf8\xe5,\xd8sl\xf8\n",
    )
    .unwrap();
    let report = update_map_with(
        dir.path(),
        &UpdateOptions {
            registry: reg.clone(),
            ..UpdateOptions::default()
        },
    )
    .unwrap();
    assert_eq!(report.added, ["c.csv"]);
    let updated = load_map(dir.path()).unwrap();
    assert_eq!(updated.config().text_encoding, TextEncoding::Latin1);
    check_reads(&updated, &reg);
    let slices = updated.slice(4, 1, None, &reg).unwrap();
    assert_eq!(strings(&slices[0].batches, "café"), ["æøå"]);
    assert_eq!(strings(&slices[0].batches, "city"), ["Øslø"]);
}

#[test]
fn utf8_map_refuses_latin1_with_row_and_offset() {
    let dir = tempfile::tempdir().unwrap();
    lake(dir.path());
    let err = create(dir.path(), MapConfig::default()).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, Error::Locator(_)), "{err:?}");
    // The header's byte 0xE9 (offset 3) has no row.
    assert!(text.contains("a.csv") || text.contains("b.tsv"), "{text}");
    assert!(
        text.contains("invalid UTF-8") && text.contains("at byte 3"),
        "{text}"
    );
    // With an ASCII header, the error names the row too.
    fs::write(dir.path().join("a.csv"), b"name,city\nJos\xe9,x\n").unwrap();
    fs::remove_file(dir.path().join("b.tsv")).unwrap();
    let text = create(dir.path(), MapConfig::default())
        .unwrap_err()
        .to_string();
    assert!(
        text.contains("at row 0 at byte 13: invalid UTF-8"),
        "{text}"
    );
}
