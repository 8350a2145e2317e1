//! House rules on the source tree: every `.rs` file opens with a `//!` line, no file is over
//! 1,000 lines, no trailing whitespace, no `dbg!`, no module cycle inside a crate (see
//! [`cycles`]).

mod cycles;

use std::path::{Path, PathBuf};

use anyhow::Context;

/// Longest allowed source file, in lines.
pub const MAX_LINES: usize = 1000;

/// Checks every `.rs` file under `crates/`, `xtask/` and `fuzz/` and returns the problems.
pub fn check(root: &Path) -> anyhow::Result<Vec<String>> {
    let mut files = Vec::new();
    for dir in ["crates", "xtask", "fuzz"] {
        collect(&root.join(dir), &mut files)?;
    }
    files.sort();
    let mut problems = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file)
            .with_context(|| format!("cannot read {}", file.display()))?;
        let rel = file
            .strip_prefix(root)
            .unwrap_or(&file)
            .display()
            .to_string();
        if !text.starts_with("//!") {
            problems.push(format!("{rel}: does not start with a `//!` line"));
        }
        let lines = text.lines().count();
        if lines > MAX_LINES {
            problems.push(format!(
                "{rel}: {lines} lines (at most {MAX_LINES}); split it"
            ));
        }
        let dbg_macro = concat!("dbg", "!(");
        for (i, line) in text.lines().enumerate() {
            if line.ends_with(' ') || line.ends_with('\t') {
                problems.push(format!("{rel}:{}: trailing whitespace", i + 1));
            }
            if line.contains(dbg_macro) {
                problems.push(format!("{rel}:{}: dbg! left in", i + 1));
            }
        }
    }
    problems.extend(cycles::check(root)?);
    Ok(problems)
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    for entry in entries {
        let entry = entry?;
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if entry.file_type()?.is_dir() {
            if name != "target" && !name.starts_with('.') {
                collect(&path, out)?;
            }
        } else if name.ends_with(".rs") {
            out.push(path);
        }
    }
    Ok(())
}
