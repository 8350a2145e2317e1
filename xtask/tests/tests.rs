//! The xtask checks as ordinary tests: tidy over the source tree, and every registered
//! conformance suite against `../shared/conformance` (skipped, with the reason printed, when
//! that folder is absent).

#[test]
fn tidy() {
    let problems = xtask::tidy::check(&xtask::workspace_root()).expect("tidy could not run");
    assert!(
        problems.is_empty(),
        "tidy problems:\n{}",
        problems.join("\n")
    );
}

#[test]
fn conformance_suites() {
    let dir = xtask::conformance_dir();
    if !dir.is_dir() {
        println!("skipped: no conformance corpora at {}", dir.display());
        return;
    }
    let mut failures = Vec::new();
    for suite in xtask::conformance::suites() {
        match (suite.run)(&dir) {
            Ok(results) => {
                let total = results.len();
                let (gaps, bad): (Vec<_>, Vec<_>) = results
                    .into_iter()
                    .filter(|r| r.failure.is_some())
                    .partition(|r| {
                        matches!(suite.name, "external" | "writers")
                            && r.failure
                                .as_deref()
                                .is_some_and(|f| f.starts_with(xtask::conformance::external::GAP))
                    });
                // Known gaps of the real-world files are listed, not failed (external.rs,
                // writers.rs).
                for r in &gaps {
                    println!(
                        "known gap {}: {}",
                        r.case,
                        r.failure.as_deref().unwrap_or("")
                    );
                }
                println!("{}: {}/{total} passed", suite.name, total - bad.len());
                for r in bad {
                    failures.push(format!(
                        "{} {}: {}",
                        suite.name,
                        r.case,
                        r.failure.unwrap_or_default()
                    ));
                }
            }
            Err(err) => failures.push(format!("{}: could not run: {err:#}", suite.name)),
        }
    }
    assert!(
        failures.is_empty(),
        "conformance failures:\n{}",
        failures.join("\n")
    );
}
