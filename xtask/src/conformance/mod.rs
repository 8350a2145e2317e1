//! Conformance suites: our results against answers written by other tools in
//! `../shared/conformance`. Each suite returns one [`CaseResult`] per case; the command prints
//! them as a table and exits 1 on any failure. A suite registers itself in [`suites`].

pub mod external;
pub mod lake;
pub mod mutations;
pub mod tsfile;
pub mod tsfile_write;
pub mod writers;

use std::path::Path;

/// The outcome of one case of a suite.
#[derive(Debug, Clone)]
pub struct CaseResult {
    /// The case's name (a file, a sample, a slice…).
    pub case: String,
    /// `None` when the case passed, else the first difference found.
    pub failure: Option<String>,
}

impl CaseResult {
    /// A passing case.
    pub fn pass(case: impl Into<String>) -> Self {
        CaseResult {
            case: case.into(),
            failure: None,
        }
    }

    /// A failing case with its first difference.
    pub fn fail(case: impl Into<String>, why: impl Into<String>) -> Self {
        CaseResult {
            case: case.into(),
            failure: Some(why.into()),
        }
    }

    /// A case from a result: `Err` is its first difference.
    pub fn from_result(case: impl Into<String>, result: anyhow::Result<()>) -> Self {
        match result {
            Ok(()) => Self::pass(case),
            Err(err) => Self::fail(case, format!("{err:#}")),
        }
    }
}

/// A registered suite: its name and the function that runs it over the conformance folder.
pub struct Suite {
    /// The suite's name on the command line.
    pub name: &'static str,
    /// What it checks, for the listing.
    pub about: &'static str,
    /// Runs every case; `Err` means the suite itself could not run.
    pub run: fn(&Path) -> anyhow::Result<Vec<CaseResult>>,
}

/// Every registered suite, in the order they run.
pub fn suites() -> Vec<Suite> {
    vec![
        Suite {
            name: "lake",
            about: "Lake Map over the lake corpus: files, order, skipped, samples, slices, stats",
            run: lake::run,
        },
        Suite {
            name: "tsfile",
            about: "TsFile dump of every corpus case against expected.json, and the V3 file's facts",
            run: tsfile::run,
        },
        Suite {
            name: "external",
            about: "Real-world files of the formats' own projects: rows and columns as the reference readers say, damaged files refused",
            run: external::run,
        },
        Suite {
            name: "writers",
            about: "Files of other writers (fastavro, pyorc, pyarrow, DuckDB, Python csv/json, official TsFile) in testdata/writers, one or more per class of issue 23: rows and columns as their reference reader says, damaged files refused alone",
            run: writers::run,
        },
        Suite {
            name: "mutations",
            about: "The external and writers files cut short, with bytes inverted or zeroed: each copy read or refused in one line naming it, no panic escaping",
            run: mutations::run,
        },
        Suite {
            name: "tsfile-write",
            about: "TsFiles our writer makes, read back by the official Python reader and by ours",
            run: tsfile_write::run,
        },
    ]
}

/// `cargo xtask conformance [SUITE…]`.
pub fn main(names: &[String]) -> anyhow::Result<u8> {
    let dir = crate::conformance_dir();
    let all = suites();
    if all.is_empty() {
        println!("no conformance suite is registered yet");
        return Ok(0);
    }
    if !dir.is_dir() {
        println!(
            "conformance corpora not found at {}: nothing to run",
            dir.display()
        );
        return Ok(0);
    }
    let mut selected = Vec::new();
    for name in names {
        match all.iter().find(|s| s.name == name) {
            Some(s) => selected.push(s),
            None => {
                let known: Vec<&str> = all.iter().map(|s| s.name).collect();
                eprintln!("unknown suite {name:?}; registered: {}", known.join(", "));
                return Ok(2);
            }
        }
    }
    if selected.is_empty() {
        selected = all.iter().collect();
    }
    let mut failed = 0;
    let mut rows = Vec::new();
    for suite in selected {
        match (suite.run)(&dir) {
            Ok(results) => rows.extend(results.into_iter().map(|r| (suite.name, r))),
            Err(err) => rows.push((suite.name, CaseResult::fail("(suite)", format!("{err:#}")))),
        }
    }
    let suite_w = rows.iter().map(|(s, _)| s.len()).max().unwrap_or(5).max(5);
    let case_w = rows
        .iter()
        .map(|(_, r)| r.case.len())
        .max()
        .unwrap_or(4)
        .clamp(4, 60);
    println!(
        "{:suite_w$}  {:case_w$}  result  first difference",
        "suite", "case"
    );
    for (suite, r) in &rows {
        let (verdict, why) = match &r.failure {
            None => ("pass", String::new()),
            Some(why) => {
                failed += 1;
                ("FAIL", why.lines().next().unwrap_or_default().to_string())
            }
        };
        println!("{suite:suite_w$}  {:case_w$}  {verdict:6}  {why}", r.case);
    }
    println!();
    for suite in rows
        .iter()
        .map(|(s, _)| *s)
        .collect::<std::collections::BTreeSet<_>>()
    {
        let total = rows.iter().filter(|(s, _)| *s == suite).count();
        let bad = rows
            .iter()
            .filter(|(s, r)| *s == suite && r.failure.is_some())
            .count();
        println!("{suite}: {}/{total} passed", total - bad);
    }
    Ok(if failed == 0 { 0 } else { 1 })
}
