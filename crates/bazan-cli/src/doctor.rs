//! `bazan doctor LAKE [--json]`: compares the lake's map with the disk through `lake-doctor`.
//!
//! Exit codes: 0 when every entry is healthy and nothing is unindexed, 1 when anything is
//! modified, unindexed or missing, 2 when the map cannot be loaded or some path could not be
//! checked (each such path is printed as its own `error:` line; the report is still printed).

use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use bazan::{DoctorOptions, DoctorReport, Fingerprint, Progress, ProgressFn, Verdict};

use crate::Outcome;

/// Arguments of `bazan doctor`.
#[derive(Debug, clap::Args)]
pub(crate) struct DoctorArgs {
    /// The lake root (its map is LAKE/.br_map.bazan).
    lake: PathBuf,
    /// Machine-readable output.
    #[arg(long)]
    json: bool,
}

/// A progress bar on stderr when it is a terminal: bytes hashed in blake3 mode, entries
/// checked in metadata mode (which only takes as long as the directory walk).
fn progress_bar(fingerprint: Fingerprint) -> Option<indicatif::ProgressBar> {
    if !io::stderr().is_terminal() {
        return None;
    }
    let template = match fingerprint {
        Fingerprint::Blake3 => "{spinner} hashing [{bar:30}] {bytes}/{total_bytes} {msg} ({eta})",
        Fingerprint::Metadata => "{spinner} checking [{bar:30}] {pos}/{len} files",
    };
    let bar = indicatif::ProgressBar::new(0);
    if let Ok(style) = indicatif::ProgressStyle::with_template(template) {
        bar.set_style(style.progress_chars("=> "));
    }
    Some(bar)
}

/// `bazan doctor …`.
pub(crate) fn run(args: DoctorArgs) -> anyhow::Result<Outcome> {
    let lake = crate::map::load(&args.lake)?;
    let fingerprint = lake.config().fingerprint;
    let bar = progress_bar(fingerprint);
    let progress: Option<ProgressFn> = bar.clone().map(|bar| {
        Arc::new(move |p: Progress| match fingerprint {
            Fingerprint::Blake3 => {
                bar.set_length(p.total_bytes);
                bar.set_position(p.done_bytes);
                bar.set_message(format!("{}/{} files", p.done_files, p.total_files));
            }
            Fingerprint::Metadata => {
                bar.set_length(p.total_files);
                bar.set_position(p.done_files);
            }
        }) as ProgressFn
    });
    let options = DoctorOptions {
        progress,
        threads: None,
    };
    let report = lake.doctor(&options);
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let report =
        report.with_context(|| format!("cannot check the lake {}", args.lake.display()))?;
    let mut out = io::stdout().lock();
    if args.json {
        serde_json::to_writer(&mut out, &report)?;
        writeln!(out)?;
    } else {
        write!(out, "{}", human(&report))?;
    }
    out.flush()?;
    for e in &report.errors {
        eprintln!("error: {}", e.message);
    }
    match report.verdict() {
        Verdict::Healthy => Ok(Outcome::Ok),
        Verdict::Drift => Ok(Outcome::Problem),
        Verdict::Errors => anyhow::bail!(
            "{} path(s) of {} could not be checked",
            report.errors.len(),
            args.lake.display()
        ),
    }
}

/// The human summary: one line of counts, then one line per drifted or failed path, each
/// list in map order.
fn human(report: &DoctorReport) -> String {
    let mut s = format!(
        "fingerprint {}: {} healthy, {} modified, {} unindexed, {} missing, {} error(s)",
        report.fingerprint,
        report.healthy,
        report.modified.len(),
        report.unindexed.len(),
        report.missing.len(),
        report.errors.len()
    );
    if report.hashed_bytes > 0 {
        s.push_str(&format!(
            " ({:.1} MB hashed)",
            report.hashed_bytes as f64 / 1e6
        ));
    }
    s.push('\n');
    let lists: [(&str, &Vec<String>); 3] = [
        ("modified", &report.modified),
        ("unindexed", &report.unindexed),
        ("missing", &report.missing),
    ];
    for (state, paths) in lists {
        for p in paths {
            s.push_str(&format!("{state:<10} {p}\n"));
        }
    }
    for e in &report.errors {
        s.push_str(&format!(
            "{:<10} {} ({})\n",
            "error",
            e.path,
            e.kind.as_str()
        ));
    }
    match report.verdict() {
        Verdict::Healthy => s.push_str("the map matches the lake\n"),
        Verdict::Drift => {
            s.push_str("the map is out of date: rebuild it with `bazan map create`\n")
        }
        Verdict::Errors => s.push_str("some paths could not be checked (see the errors)\n"),
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use bazan::lake::{DoctorErrorKind as ErrorKind, PathError};

    #[test]
    fn human_summary_lists_every_path() {
        let mut r = DoctorReport::new(Fingerprint::Blake3);
        r.healthy = 5;
        assert!(human(&r).ends_with("the map matches the lake\n"));
        r.modified = vec!["a.csv".into()];
        r.unindexed = vec!["new.parquet".into()];
        r.missing = vec!["gone/x.orc".into()];
        r.hashed_bytes = 2_500_000;
        let text = human(&r);
        assert_eq!(
            text,
            "fingerprint blake3: 5 healthy, 1 modified, 1 unindexed, 1 missing, 0 error(s) \
             (2.5 MB hashed)\n\
             modified   a.csv\n\
             unindexed  new.parquet\n\
             missing    gone/x.orc\n\
             the map is out of date: rebuild it with `bazan map create`\n"
        );
        r.errors.push(PathError {
            path: "d/".into(),
            kind: ErrorKind::Unreadable,
            message: "/l/d: denied".into(),
        });
        assert!(human(&r).contains("error      d/ (unreadable)\n"));
    }
}
