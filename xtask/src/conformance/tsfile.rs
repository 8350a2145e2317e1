//! Suite `tsfile`: the `dump` of every case of `../shared/conformance/tsfile` against its
//! `expected.json` (rules of that folder's README), and the facts of the V3 file's README.

use std::path::Path;

use anyhow::{Context, bail, ensure};
use serde_json::Value;

use super::CaseResult;

/// Keys of `expected.json` that only the corpus generator can know; never compared.
const GENERATOR_KEYS: &[&str] = &[
    "schema_version",
    "case",
    "profile",
    "seed",
    "generator",
    "description",
    "covers",
    "writer",
    "official_reader_config",
    "notes",
    "lossy_series_max_abs_error",
];

/// Runs the suite over the conformance folder.
pub fn run(dir: &Path) -> anyhow::Result<Vec<CaseResult>> {
    let corpus = dir.join("tsfile");
    let manifest: Value = read_json(&corpus.join("MANIFEST.json"))?;
    let mut names: Vec<String> = Vec::new();
    if let Some(cases) = manifest.get("cases").and_then(Value::as_array) {
        for case in cases {
            if let Some(name) = case.get("name").and_then(Value::as_str) {
                names.push(name.to_string());
            }
        }
    }
    if names.is_empty() {
        // Fall back to the folder listing when the manifest has another shape.
        for entry in std::fs::read_dir(&corpus)? {
            let name = entry?.file_name().to_string_lossy().into_owned();
            if let Some(stem) = name.strip_suffix(".tsfile") {
                names.push(stem.to_string());
            }
        }
        names.sort();
    }
    let mut results: Vec<CaseResult> = names
        .iter()
        .map(|name| CaseResult::from_result(name.clone(), check_case(&corpus, name)))
        .collect();
    let v3 = dir.join("tsfile-v3");
    if v3.is_dir() {
        results.push(CaseResult::from_result("v3TsFile", check_v3(&v3)));
    }
    Ok(results)
}

fn read_json(path: &Path) -> anyhow::Result<Value> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("cannot parse {}", path.display()))
}

/// One case: our dump compared with the expected answer, field by field.
pub fn check_case(corpus: &Path, name: &str) -> anyhow::Result<()> {
    let expected = read_json(&corpus.join(format!("{name}.expected.json")))?;
    let file = corpus.join(format!("{name}.tsfile"));
    let actual = tsfile_index::dump::dump_path(&file)
        .with_context(|| format!("dump of {}", file.display()))?;
    compare_dump(&expected, &actual)
}

/// Compares a dump with an expected answer by the corpus README's rules.
pub fn compare_dump(expected: &Value, actual: &Value) -> anyhow::Result<()> {
    let exp = expected
        .as_object()
        .context("expected answer is not an object")?;
    for (key, want) in exp {
        if GENERATOR_KEYS.contains(&key.as_str()) {
            continue;
        }
        let got = actual
            .get(key)
            .with_context(|| format!("dump lacks key {key:?}"))?;
        if key == "data" {
            compare_data(want, got)?;
        } else {
            compare_value(want, got, key)?;
        }
    }
    Ok(())
}

fn compare_data(want: &Value, got: &Value) -> anyhow::Result<()> {
    let list_key = if want.get("tables").is_some() {
        "tables"
    } else {
        "devices"
    };
    let wants = want
        .get(list_key)
        .and_then(Value::as_array)
        .context("expected data list")?;
    let gots = got
        .get(list_key)
        .and_then(Value::as_array)
        .with_context(|| format!("dump data lacks {list_key:?}"))?;
    ensure!(
        wants.len() == gots.len(),
        "data.{list_key}: expected {} entries, dump has {}",
        wants.len(),
        gots.len()
    );
    for (k, (w, g)) in wants.iter().zip(gots).enumerate() {
        let at = format!("data.{list_key}[{k}]");
        let wo = w
            .as_object()
            .context("expected data entry is not an object")?;
        for (key, wv) in wo {
            match key.as_str() {
                "row_samples" => {
                    let rows = g
                        .get("rows")
                        .and_then(Value::as_array)
                        .with_context(|| format!("{at}: dump has no rows"))?;
                    for sample in wv.as_array().context("row_samples is not a list")? {
                        let index = sample
                            .get(0)
                            .and_then(Value::as_u64)
                            .context("sample index")?;
                        let row = sample.get(1).context("sample row")?;
                        let mine = rows
                            .get(index as usize)
                            .with_context(|| format!("{at}: no row {index}"))?;
                        compare_value(row, mine, &format!("{at}.rows[{index}]"))?;
                    }
                }
                _ => {
                    let gv = g
                        .get(key)
                        .with_context(|| format!("{at}: dump lacks {key:?}"))?;
                    compare_value(wv, gv, &format!("{at}.{key}"))?;
                }
            }
        }
    }
    Ok(())
}

/// Structural equality with the README's number rules: integers exactly (as i128, so values
/// past 2^53 are exact), floats bit-exactly (so `-0.0` differs from `0.0`), and an integer never
/// equal to a float unless both denote the same value and one side was printed as integral.
fn compare_value(want: &Value, got: &Value, at: &str) -> anyhow::Result<()> {
    match (want, got) {
        (Value::Object(w), Value::Object(g)) => {
            for (key, wv) in w {
                // Index entries are optional to check; compare them only when we print them.
                if key == "index_entry" && !g.contains_key(key) {
                    continue;
                }
                let gv = g
                    .get(key)
                    .with_context(|| format!("{at}: missing key {key:?}"))?;
                compare_value(wv, gv, &format!("{at}.{key}"))?;
            }
            for key in g.keys() {
                if !w.contains_key(key) && !extra_key_allowed(key) {
                    bail!("{at}: unexpected key {key:?}");
                }
            }
            Ok(())
        }
        (Value::Array(w), Value::Array(g)) => {
            ensure!(
                w.len() == g.len(),
                "{at}: expected {} items, got {}",
                w.len(),
                g.len()
            );
            for (i, (wv, gv)) in w.iter().zip(g).enumerate() {
                compare_value(wv, gv, &format!("{at}[{i}]"))?;
            }
            Ok(())
        }
        (Value::Number(w), Value::Number(g)) => {
            ensure!(numbers_equal(w, g), "{at}: expected {w}, got {g}");
            Ok(())
        }
        (Value::String(w), Value::String(g)) if at.contains(".statistics.") && g.contains('\0') => {
            // Official reader quirk: it returns TEXT/STRING statistics as C strings, cut at
            // the first NUL byte (the README notes the same for its row API); the file holds
            // the whole value, which is what we print.
            let cut = g.split('\0').next().unwrap_or_default();
            ensure!(
                w == cut,
                "{at}: expected {}, got {}",
                short(want),
                short(got)
            );
            Ok(())
        }
        _ => {
            ensure!(
                want == got,
                "{at}: expected {}, got {}",
                short(want),
                short(got)
            );
            Ok(())
        }
    }
}

/// Keys our dump adds beyond the answers (the dump may print more than the corpus knows).
fn extra_key_allowed(key: &str) -> bool {
    matches!(key, "index_entry" | "rows_included" | "rows")
}

fn numbers_equal(w: &serde_json::Number, g: &serde_json::Number) -> bool {
    let as_int = |n: &serde_json::Number| {
        n.as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from))
    };
    match (as_int(w), as_int(g)) {
        (Some(a), Some(b)) => a == b,
        _ => match (w.as_f64(), g.as_f64()) {
            (Some(a), Some(b)) => a.to_bits() == b.to_bits(),
            _ => false,
        },
    }
}

fn short(v: &Value) -> String {
    let mut s = v.to_string();
    if s.len() > 120 {
        let mut cut = 120;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        s.push('…');
    }
    s
}

/// The facts the Java library's compatibility test asserts about the V3 file.
fn check_v3(dir: &Path) -> anyhow::Result<()> {
    use tsfile_index::TsFileReader;
    let path = dir.join("v3TsFile.tsfile");
    let reader = TsFileReader::open(&path)?;
    ensure!(
        reader.version() == 3,
        "version byte is {}, expected 3",
        reader.version()
    );
    let devices: Vec<String> = reader
        .devices()?
        .map(|d| d.map(|d| d.path()))
        .collect::<Result<_, _>>()?;
    ensure!(
        devices == ["d1", "d2"],
        "devices are {devices:?}, expected [\"d1\", \"d2\"]"
    );
    let d1 = reader
        .device_by_path("d1")?
        .context("device d1 not found")?;
    let batch = reader.read_device(&d1, &tsfile_index::TreeQuery::default())?;
    let dump = tsfile_index::dump::batch_rows(&batch)?;
    let schema = batch.schema();
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    ensure!(
        names == ["time", "s1", "s2"],
        "d1 columns are {names:?}, expected time, s1, s2"
    );
    let want: Value = serde_json::json!([[10000, 5.0, 5]]);
    compare_value(&want, &dump, "d1 rows")?;
    ensure!(
        reader.chunk_group_count()? == 2,
        "{} chunk groups, expected 2",
        reader.chunk_group_count()?
    );
    let query = tsfile_index::TreeQuery {
        columns: Some(vec!["s1".into(), "s2".into(), "s3".into()]),
        ..Default::default()
    };
    let wide = reader.read_device(&d1, &query);
    if let Ok(batch) = wide {
        ensure!(
            batch.num_columns() == 3,
            "a query asking for s3 returned {} columns",
            batch.num_columns()
        );
    }
    let problems = tsfile_index::check::check_path(&path)?;
    ensure!(problems.is_empty(), "check found problems: {problems:?}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_compare_bit_exactly() {
        let j = |s: &str| serde_json::from_str::<Value>(s).unwrap();
        assert!(compare_value(&j("-0.0"), &j("-0.0"), "x").is_ok());
        assert!(compare_value(&j("-0.0"), &j("0.0"), "x").is_err());
        assert!(compare_value(&j("9007199254740993"), &j("9007199254740992"), "x").is_err());
        assert!(compare_value(&j("[1, null]"), &j("[1, null]"), "x").is_ok());
        assert!(compare_value(&j("{\"a\": 1}"), &j("{\"a\": 1, \"b\": 2}"), "x").is_err());
    }

    #[test]
    fn a_changed_row_or_statistic_is_caught() {
        let corpus = crate::conformance_dir().join("tsfile");
        if !corpus.is_dir() {
            println!("skipped: no corpus at {}", corpus.display());
            return;
        }
        let expected = read_json(&corpus.join("table_one_row.expected.json")).unwrap();
        let actual = tsfile_index::dump::dump_path(&corpus.join("table_one_row.tsfile")).unwrap();
        compare_dump(&expected, &actual).unwrap();
        let mut bad = actual.clone();
        bad["data"]["tables"][0]["rows"][0][2] = serde_json::json!(12345);
        assert!(compare_dump(&expected, &bad).is_err());
        let mut bad = actual.clone();
        bad["devices"][0]["timeseries"][1]["statistics"]["sum"] = serde_json::json!(99);
        assert!(compare_dump(&expected, &bad).is_err());
        let mut bad = actual;
        bad["devices"][0]["segments"][1] = serde_json::json!("other");
        assert!(compare_dump(&expected, &bad).is_err());
    }
}
