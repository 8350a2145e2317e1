//! Path-escape and symbolic-link tests: discovery never follows links, and a map whose
//! entries point outside the root is refused.

use std::fs;

use lake_map::{
    CreateOptions, Error, LakeMap, MapConfig, MapEntry, SkipReason, assign_first_global_rows,
    create_map_with, discover, load_map, write_map,
};

use crate::common::{lines_registry, slice_values, write_lake};

fn entry(path: &str, rows: u64) -> MapEntry {
    MapEntry {
        path: path.into(),
        format: "lines".into(),
        size_bytes: 1,
        mtime_ms: 0,
        row_count: rows,
        first_global_row: 0,
        row_groups_json: "[]".into(),
        blake3: None,
        stats_json: None,
        schema_json: None,
    }
}

#[test]
fn escaping_entry_paths_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    for bad in [
        "../outside.lines",
        "/etc/passwd",
        "a/../../x.lines",
        "a//b.lines",
        "./a.lines",
    ] {
        let mut entries = vec![entry("a.lines", 1), entry(bad, 2)];
        assign_first_global_rows(&mut entries);
        // Building the in-memory map already refuses it.
        let err = LakeMap::from_entries(dir.path(), MapConfig::default(), &entries).unwrap_err();
        assert!(matches!(err, Error::PathEscape { .. }), "{bad}: {err}");
    }
    // A same-length escape, patched into a written map.
    let mut ok = vec![entry("a.lines", 1), entry("b.lines", 2)];
    assign_first_global_rows(&mut ok);
    write_map(&LakeMap::from_entries(dir.path(), MapConfig::default(), &ok).unwrap()).unwrap();
    let path = lake_map::resolve_map_path(dir.path());
    let mut bytes = fs::read(&path).unwrap();
    let pos = bytes.windows(7).position(|w| w == b"b.lines").unwrap();
    bytes[pos..pos + 7].copy_from_slice(b"../b.ln");
    fs::write(&path, &bytes).unwrap();
    // Entries are checked when their record batch is first read: the load succeeds, and
    // every reader of the batch's entries refuses it; no entry reads as that path.
    let map = load_map(dir.path()).unwrap();
    let err = map.check_entries().unwrap_err();
    assert!(matches!(err, Error::PathEscape { .. }), "{err}");
    assert!(err.to_string().contains("../b.ln"), "{err}");
    for e in [
        map.locate_row(0).unwrap_err(),
        map.check_fresh(1).unwrap_err(),
        map.slice(0, 3, None, &lines_registry()).unwrap_err(),
        lake_map::show::map_json(&map).unwrap_err(),
    ] {
        assert!(matches!(e, Error::PathEscape { .. }), "{e}");
    }
    assert!(map.head(1).path.contains('\0') && map.find("../b.ln").is_none());
}

#[cfg(unix)]
#[test]
fn symlinks_are_not_followed() {
    use std::os::unix::fs::symlink;
    let outside = tempfile::tempdir().unwrap();
    write_lake(
        outside.path(),
        &[("secret.lines", 5), ("sub/more.lines", 5)],
    );
    let dir = tempfile::tempdir().unwrap();
    write_lake(dir.path(), &[("a.lines", 3)]);
    symlink(
        outside.path().join("secret.lines"),
        dir.path().join("link.lines"),
    )
    .unwrap();
    symlink(outside.path().join("sub"), dir.path().join("linkdir")).unwrap();
    let found = discover(dir.path(), &lines_registry()).unwrap();
    let paths: Vec<&str> = found.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["a.lines"]);
    let links: Vec<(&str, SkipReason)> = found
        .skipped
        .iter()
        .map(|s| (s.path.as_str(), s.reason))
        .collect();
    assert_eq!(
        links,
        [
            ("link.lines", SkipReason::Symlink),
            ("linkdir", SkipReason::Symlink)
        ]
    );
    let reg = lines_registry();
    let options = CreateOptions {
        registry: reg.clone(),
        ..CreateOptions::default()
    };
    let map = create_map_with(dir.path(), &options).unwrap().map;
    assert_eq!(map.total_rows(), 3);
    // A file replaced by a link after mapping is refused when sliced, not followed.
    fs::remove_file(dir.path().join("a.lines")).unwrap();
    symlink(
        outside.path().join("secret.lines"),
        dir.path().join("a.lines"),
    )
    .unwrap();
    let err = map.slice(0, 1, None, &reg).unwrap_err();
    assert!(matches!(err, Error::PathEscape { .. }), "{err}");
    // A directory on the entry's path replaced by a link is refused too.
    let dir2 = tempfile::tempdir().unwrap();
    write_lake(dir2.path(), &[("sub/more.lines", 5)]);
    let map2 = create_map_with(
        dir2.path(),
        &CreateOptions {
            registry: reg.clone(),
            ..CreateOptions::default()
        },
    )
    .unwrap()
    .map;
    assert_eq!(slice_values(&map2, &reg, 0, 1), vec![0]);
    fs::remove_dir_all(dir2.path().join("sub")).unwrap();
    symlink(outside.path().join("sub"), dir2.path().join("sub")).unwrap();
    let err = map2.slice(0, 1, None, &reg).unwrap_err();
    assert!(matches!(err, Error::PathEscape { .. }), "{err}");
}

#[test]
fn discovery_rules() {
    let dir = tempfile::tempdir().unwrap();
    write_lake(
        dir.path(),
        &[
            ("a.lines", 1),
            ("B.LINES", 1),
            ("x/y.lines", 1),
            (".hid/z.lines", 1),
            (".h.lines", 1),
        ],
    );
    for name in [
        "README",
        "lines",
        ".lines",
        "weird.",
        "a.lines.bak",
        ".br_map.ipc",
        "x/.br_map.bazan",
    ] {
        fs::write(dir.path().join(name), "1\n").unwrap();
    }
    let found = discover(dir.path(), &lines_registry()).unwrap();
    let paths: Vec<&str> = found.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["B.LINES", "a.lines", "x/y.lines"]);
    let skipped: Vec<(&str, &str)> = found
        .skipped
        .iter()
        .map(|s| (s.path.as_str(), s.reason.as_str()))
        .collect();
    assert_eq!(
        skipped,
        [
            (".br_map.ipc", "legacy_map_file"),
            (".h.lines", "hidden"),
            (".hid/", "hidden"),
            (".lines", "no_extension"),
            ("README", "no_extension"),
            ("a.lines.bak", "unknown_extension"),
            ("lines", "no_extension"),
            ("weird.", "unknown_extension"),
            ("x/.br_map.bazan", "map_file"),
        ]
    );
}
