//! `bazan tsfile info|dump|query|check`: output on corpus files, and exit codes with
//! `error: FILE: …` lines naming structure and offset on damaged copies.

use std::path::PathBuf;

use crate::common::bazan;

fn corpus(name: &str) -> Option<PathBuf> {
    let dir = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/conformance/tsfile"
    ));
    if !dir.is_dir() {
        println!("skipped: no conformance corpus at {}", dir.display());
        return None;
    }
    Some(dir.join(name))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).unwrap()
}

#[test]
fn query_ndjson_and_filters() {
    let Some(file) = corpus("table_null_tags.tsfile") else {
        return;
    };
    let f = file.to_str().unwrap();
    let out = bazan(&[
        "tsfile",
        "query",
        f,
        "--table",
        "tags",
        "--tag",
        "a=p",
        "--tag",
        "b=x",
        "--columns",
        "time,a,b,c,d",
        "--format",
        "ndjson",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let lines: Vec<serde_json::Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(!lines.is_empty());
    // Keys come in the order of --columns (serde_json sorts parsed objects, so look at text).
    for line in text(&out.stdout).lines() {
        assert!(
            line.starts_with("{\"time\":") && line.contains("\"a\":\"p\",\"b\":\"x\",\"c\":"),
            "{line}"
        );
    }
    for row in &lines {
        assert_eq!(row.as_object().unwrap().len(), 5);
        assert_eq!(row["a"], "p");
        assert_eq!(row["b"], "x");
    }
    let times: Vec<i64> = lines.iter().map(|r| r["time"].as_i64().unwrap()).collect();
    let (lo, hi) = (times[0], times[times.len() / 2]);
    let out = bazan(&[
        "tsfile",
        "query",
        f,
        "--table",
        "tags",
        "--tag",
        "a=p",
        "--tag",
        "b=x",
        "--start-time",
        &lo.to_string(),
        "--end-time",
        &hi.to_string(),
        "--format",
        "ndjson",
    ]);
    let kept: Vec<serde_json::Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(
        kept.iter()
            .all(|r| (lo..=hi).contains(&r["time"].as_i64().unwrap()))
    );
    assert_eq!(
        kept.len(),
        times.iter().filter(|t| (lo..=hi).contains(*t)).count()
    );
}

#[test]
fn tree_device_query_and_info_json() {
    let Some(file) = corpus("tree_one_point.tsfile") else {
        return;
    };
    let f = file.to_str().unwrap();
    let info = bazan(&["tsfile", "info", f, "--json"]);
    assert_eq!(info.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&info.stdout).unwrap();
    insta::assert_json_snapshot!("tsfile_info_tree_one_point", v);
    let dump = bazan(&["tsfile", "dump", f, "--json"]);
    let d: serde_json::Value = serde_json::from_slice(&dump.stdout).unwrap();
    let device = d["data"]["devices"][0]["device"]
        .as_str()
        .unwrap()
        .to_string();
    let out = bazan(&[
        "tsfile", "query", f, "--device", &device, "--format", "ndjson",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).lines().count(), 1);
    let out = bazan(&[
        "tsfile",
        "query",
        f,
        "--device",
        "root.nope.d",
        "--format",
        "ndjson",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).starts_with("error: "));
}

#[test]
fn damaged_files_exit_2_and_check_exits_1() {
    let Some(file) = corpus("table_multi_chunk.tsfile") else {
        return;
    };
    let original = std::fs::read(&file).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let truncated = dir.path().join("truncated.tsfile");
    std::fs::write(&truncated, &original[..original.len() / 2]).unwrap();
    let t = truncated.to_str().unwrap();
    for args in [
        vec!["tsfile", "info", t],
        vec!["tsfile", "dump", t, "--json"],
        vec!["tsfile", "query", t, "--table", "x"],
    ] {
        let out = bazan(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = text(&out.stderr);
        assert!(
            err.starts_with("error: ") && err.contains("truncated.tsfile") && err.contains("byte"),
            "{err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    let out = bazan(&["tsfile", "check", t]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stdout).contains("byte"));
    // A chunk offset pointing into the middle of the data section: the index still opens, the
    // data does not read, and check lists the problem. (A single-chunk series, whose
    // TimeseriesMetadata ends with the offset of its one chunk.)
    let Some(file) = corpus("table_one_row.tsfile") else {
        return;
    };
    let original = std::fs::read(&file).unwrap();
    let json = bazan(&["tsfile", "dump", file.to_str().unwrap(), "--json"]);
    let d: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let entry = &d["devices"][0]["timeseries"][0]["index_entry"];
    let at =
        entry["offset"].as_u64().unwrap() as usize + entry["length"].as_u64().unwrap() as usize - 8;
    let mut bad = original.clone();
    bad[at..at + 8].copy_from_slice(&9i64.to_be_bytes());
    let broken = dir.path().join("broken.tsfile");
    std::fs::write(&broken, &bad).unwrap();
    let b = broken.to_str().unwrap();
    let table = d["tables"][0]["name"].as_str().unwrap();
    let out = bazan(&["tsfile", "query", b, "--table", table, "--format", "csv"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("byte"), "{}", text(&out.stderr));
    let out = bazan(&["tsfile", "check", b, "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["valid"], false);
    assert!(!v["problems"].as_array().unwrap().is_empty());
}

#[test]
fn arrow_stream_round_trips() {
    let Some(file) = corpus("table_one_row.tsfile") else {
        return;
    };
    let out = bazan(&[
        "tsfile",
        "query",
        file.to_str().unwrap(),
        "--table",
        "edge_one",
        "--format",
        "arrow",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let reader =
        arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(out.stdout), None).unwrap();
    let rows: usize = reader.map(|b| b.unwrap().num_rows()).sum();
    assert_eq!(rows, 1);
}

/// Damaged copies through the real binary: every command exits 0 (the damage went
/// unnoticed, e.g. a changed statistic), 2 with one `error: FILE: … byte …` line, or — for
/// `check` — 1 with the problems; never a crash.
#[test]
fn mutated_files_through_every_command() {
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let dir = tempfile::tempdir().unwrap();
    let mut failures = 0;
    let mut runs = 0;
    for name in [
        "table_one_row.tsfile",
        "tree_one_point.tsfile",
        "table_tags_only.tsfile",
    ] {
        let Some(file) = corpus(name) else { return };
        let original = std::fs::read(&file).unwrap();
        let len = original.len();
        for m in 0..30 {
            let bytes = if m < 10 {
                original[..len * m / 10].to_vec()
            } else {
                let mut b = original.clone();
                // Overwrite inside the index and footer (the last 60 % of these small files).
                let at = len * 2 / 5 + (next() as usize) % (len - len * 2 / 5);
                b[at] = next() as u8;
                b
            };
            let path = dir.path().join(format!("m{m}_{name}"));
            std::fs::write(&path, &bytes).unwrap();
            let p = path.to_str().unwrap();
            let table_or_device: Vec<&str> = if name.starts_with("table") {
                vec![
                    "--table",
                    if name.contains("tags") {
                        "presence"
                    } else {
                        "edge_one"
                    },
                ]
            } else {
                vec!["--device", "root.edge.single"]
            };
            let mut query = vec!["tsfile", "query", p];
            query.extend(&table_or_device);
            for args in [
                vec!["tsfile", "info", p, "--json"],
                vec!["tsfile", "dump", p, "--json"],
                query,
                vec!["tsfile", "check", p],
            ] {
                let out = bazan(&args);
                runs += 1;
                let code = out.status.code();
                let err = text(&out.stderr);
                match code {
                    Some(0) => {}
                    Some(1) if args[1] == "check" => failures += 1,
                    Some(2) if args[1] != "check" || !err.is_empty() => {
                        failures += 1;
                        assert!(
                            err.starts_with("error: ") && err.lines().count() == 1,
                            "{args:?}: {err}"
                        );
                        let located = err.contains("byte")
                            || err.contains("too short")
                            || err.contains("not found");
                        assert!(
                            err.contains(&*path.file_name().unwrap().to_string_lossy())
                                || err.contains("not found"),
                            "{args:?}: {err}"
                        );
                        assert!(located, "{args:?}: {err}");
                    }
                    other => panic!("{args:?} exited {other:?}: {err}"),
                }
            }
        }
    }
    assert!(
        failures * 2 > runs,
        "only {failures} of {runs} runs noticed the damage"
    );
}
