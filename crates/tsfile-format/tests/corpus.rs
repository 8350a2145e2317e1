//! Conformance: every structure of every corpus file round-trips byte for byte, and the series
//! statistics decoded from each file equal the official reader's answers in `expected.json`.

use serde_json::{Value, json};
use tsfile_format::device_id::DeviceId;
use tsfile_format::statistics::{Statistics, StatisticsValues};
use tsfile_format::types::{FormatVersion, TSDataType};

use crate::walk::{Series, corpus_dir, tsfiles, walk};

#[test]
fn every_structure_of_every_corpus_file_round_trips() {
    let mut files = 0;
    let mut structures = 0;
    for sub in ["tsfile", "tsfile-v3"] {
        let Some(dir) = corpus_dir(sub) else { return };
        for path in tsfiles(&dir) {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let bytes = std::fs::read(&path).unwrap();
            let w = walk(&name, &bytes);
            assert!(
                w.counts.timeseries > 0 || name.contains("empty"),
                "{name}: no series"
            );
            files += 1;
            structures += w.counts.total();
        }
    }
    println!("{files} files, {structures} structures re-encoded identically");
    assert!(
        files >= 50,
        "expected the 49 V4 files and the V3 file, walked {files}"
    );
}

#[test]
fn v3_file_matches_the_java_compatibility_facts() {
    let Some(dir) = corpus_dir("tsfile-v3") else {
        return;
    };
    let bytes = std::fs::read(dir.join("v3TsFile.tsfile")).unwrap();
    let w = walk("v3TsFile.tsfile", &bytes);
    assert_eq!(w.version, FormatVersion::V3);
    assert_eq!(w.counts.chunk_groups, 2);
    let names: Vec<String> = w.devices.iter().map(ToString::to_string).collect();
    assert_eq!(names, ["d1", "d2"]);
    let find = |m: &str| {
        w.series
            .iter()
            .find(|s| s.device.to_string() == "d1" && s.meta.measurement_id == m)
    };
    let s1 = find("s1").expect("d1.s1");
    assert_eq!(s1.meta.data_type, TSDataType::Float);
    assert_eq!(
        (s1.meta.statistics.count, s1.meta.statistics.start_time),
        (1, 10000)
    );
    assert!(matches!(
        s1.meta.statistics.values,
        StatisticsValues::Float { first: 5.0, .. }
    ));
    let s2 = find("s2").expect("d1.s2");
    assert!(matches!(
        s2.meta.statistics.values,
        StatisticsValues::Int32 { first: 5, .. }
    ));
    assert!(find("s3").is_none());
}

#[test]
fn series_statistics_equal_expected_json() {
    let Some(dir) = corpus_dir("tsfile") else {
        return;
    };
    let mut checked = 0;
    for path in tsfiles(&dir) {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let expected_path = path.with_extension("expected.json");
        let expected: Value =
            serde_json::from_str(&std::fs::read_to_string(&expected_path).unwrap()).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let w = walk(&name, &bytes);
        let devices = expected["devices"].as_array().unwrap();
        let expected_order: Vec<DeviceId> = devices.iter().map(device_of).collect();
        assert_eq!(w.devices, expected_order, "{name}: device index order");
        for dev in devices {
            let id = device_of(dev);
            let series_of = |m: &str| -> &Series {
                w.series
                    .iter()
                    .find(|s| s.device == id && s.meta.measurement_id == m)
                    .unwrap_or_else(|| panic!("{name}: {id}.{m} missing"))
            };
            let mut all: Vec<(&str, &Value)> = dev["timeseries"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| (t["measurement"].as_str().unwrap(), t))
                .collect();
            if let Some(time) = dev.get("time_column") {
                all.push(("", time));
            }
            for (m, t) in all {
                let s = series_of(m);
                let what = format!("{name}: {id}.{m}");
                if let Some(ty) = t.get("data_type") {
                    assert_eq!(ty.as_str(), Some(s.meta.data_type.name()), "{what}");
                }
                assert_eq!(
                    t["chunk_count"].as_u64(),
                    Some(s.meta.chunk_metadata.len() as u64),
                    "{what}: chunk count"
                );
                if let Some(entry) = t.get("index_entry") {
                    assert_eq!(entry["offset"].as_u64(), Some(s.offset), "{what}: offset");
                    assert_eq!(
                        entry["length"].as_u64(),
                        Some(s.len as u64),
                        "{what}: length"
                    );
                }
                compare_statistics(&what, &s.meta.statistics, &t["statistics"]);
                checked += 1;
            }
        }
    }
    println!("{checked} series statistics equal expected.json");
    assert!(checked > 1000, "only {checked} series checked");
}

fn device_of(dev: &Value) -> DeviceId {
    DeviceId::new(
        dev["segments"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().map(str::to_owned))
            .collect(),
    )
}

/// Renders our statistics the way `expected.json` does and compares field by field.
fn compare_statistics(what: &str, s: &Statistics, expected: &Value) {
    let mut ours = json!({ "count": s.count });
    if s.count > 0 {
        ours["start_time"] = json!(s.start_time);
        ours["end_time"] = json!(s.end_time);
        let date = |v: i32| format!("{:04}-{:02}-{:02}", v / 10000, v / 100 % 100, v % 100);
        // The official reader hands statistics text over as C strings, so it truncates them
        // at the first NUL byte (the README's "official reader quirks"); compare likewise.
        let text = |v: &Option<Vec<u8>>| {
            v.as_ref().map(|b| {
                let end = b.iter().position(|&x| x == 0).unwrap_or(b.len());
                String::from_utf8(b[..end].to_vec()).expect("UTF-8 text statistics")
            })
        };
        let is_date = expected
            .get("min")
            .is_some_and(|m| m.is_string() && !expected["sum"].is_null());
        let extra = match &s.values {
            StatisticsValues::Boolean { first, last, sum } => {
                json!({"first": first, "last": last, "sum": sum})
            }
            StatisticsValues::Int32 {
                min,
                max,
                first,
                last,
                sum,
            } if is_date => json!({
                "min": date(*min), "max": date(*max), "first": date(*first),
                "last": date(*last), "sum": sum
            }),
            StatisticsValues::Int32 {
                min,
                max,
                first,
                last,
                sum,
            } => json!({"min": min, "max": max, "first": first, "last": last, "sum": sum}),
            StatisticsValues::Int64 {
                min,
                max,
                first,
                last,
                sum,
            } => json!({"min": min, "max": max, "first": first, "last": last, "sum": sum}),
            StatisticsValues::Float {
                min,
                max,
                first,
                last,
                sum,
            } => json!({
                "min": f64::from(*min), "max": f64::from(*max), "first": f64::from(*first),
                "last": f64::from(*last), "sum": sum
            }),
            StatisticsValues::Double {
                min,
                max,
                first,
                last,
                sum,
            } => json!({"min": min, "max": max, "first": first, "last": last, "sum": sum}),
            StatisticsValues::Text { first, last } => {
                json!({"first": text(first), "last": text(last)})
            }
            StatisticsValues::String {
                first,
                last,
                min,
                max,
            } => json!({
                "first": text(first), "last": text(last), "min": text(min), "max": text(max)
            }),
            StatisticsValues::None => json!({}),
        };
        for (k, v) in extra.as_object().unwrap() {
            ours[k] = v.clone();
        }
    } else {
        // An all-null column: the official reader reports its own time range, and the file
        // may hold stale values (reference §6), so only the count is compared.
        ours["start_time"] = expected["start_time"].clone();
        ours["end_time"] = expected["end_time"].clone();
    }
    let obj = ours.as_object().unwrap();
    let exp = expected.as_object().unwrap();
    let mut ours_keys: Vec<_> = obj.keys().collect();
    let mut exp_keys: Vec<_> = exp.keys().collect();
    ours_keys.sort();
    exp_keys.sort();
    assert_eq!(ours_keys, exp_keys, "{what}: statistics fields");
    for (k, v) in obj {
        let e = &exp[k];
        let equal = match (v.as_f64(), e.as_f64()) {
            // Integers compare exactly (they may exceed 2^53); doubles bit-for-bit equal.
            _ if v.is_i64() || v.is_u64() => v.as_i64() == e.as_i64() && e.is_i64(),
            (Some(a), Some(b)) => a == b || (a.is_nan() && b.is_nan()),
            _ => v == e,
        };
        assert!(equal, "{what}: statistics {k}: ours {v}, expected {e}");
    }
}
