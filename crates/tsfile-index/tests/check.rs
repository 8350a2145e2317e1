//! `check` on valid files: the official writer's lossy float encodings (TS_2DIFF on
//! FLOAT/DOUBLE with SNAPPY, the fixture of `cargo xtask fixtures tsfile-official`) and every
//! file of the conformance corpora must give no problem, and the relaxed comparisons are
//! listed; a changed statistic of a lossy series is still flagged.

use std::path::PathBuf;
use std::sync::Arc;

use bytes::Bytes;
use tsfile_format::statistics::StatisticsValues;
use tsfile_index::TsFileReader;
use tsfile_index::check::{check_path_report, check_report};

use crate::common::corpus_files;

fn fixture() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/tsfile-official/float_ts2diff_snappy.tsfile"
    ))
}

#[test]
fn official_lossy_float_file_is_valid_and_says_what_was_relaxed() {
    let report = check_path_report(&fixture()).unwrap();
    assert!(report.is_valid(), "{:#?}", report.problems);
    // Two stations × three fields, each TS_2DIFF on FLOAT or DOUBLE.
    assert_eq!(report.relaxed.len(), 6, "{:#?}", report.relaxed);
    for r in &report.relaxed {
        assert_eq!(r.encodings, ["TS_2DIFF"]);
        assert_eq!(r.tolerance_abs, 0.005);
        assert!(r.reason.contains("max_point_number 2"), "{}", r.reason);
    }
    insta::assert_json_snapshot!("official_lossy_relaxed", report.relaxed_json());
}

/// The offset of the only occurrence of `needle` in `hay[from..to]`.
fn find_once(hay: &[u8], from: usize, to: usize, needle: &[u8]) -> usize {
    let hits: Vec<usize> = hay[from..to]
        .windows(needle.len())
        .enumerate()
        .filter(|(_, w)| *w == needle)
        .map(|(i, _)| from + i)
        .collect();
    assert_eq!(hits.len(), 1, "{needle:?} in [{from}, {to})");
    hits[0]
}

#[test]
fn a_changed_statistic_of_a_lossy_series_is_still_flagged() {
    let original = std::fs::read(fixture()).unwrap();
    let reader = TsFileReader::from_reader(Arc::new(Bytes::from(original.clone()))).unwrap();
    let device = reader.devices().unwrap().next().unwrap().unwrap();
    let series = reader.timeseries(&device).unwrap();
    let temp = series.iter().find(|s| s.name() == "temp").unwrap();
    let StatisticsValues::Float { max, .. } = temp.meta.statistics.values else {
        panic!("temp is a FLOAT series: {:?}", temp.meta.statistics);
    };
    // Move the stored maximum by 0.25: far beyond the 0.005 TS_2DIFF may move a value.
    let from = temp.offset as usize;
    let at = find_once(
        &original,
        from,
        from + temp.length as usize,
        &max.to_be_bytes(),
    );
    for (delta, flagged) in [(0.25f32, true), (0.001, false)] {
        let mut bytes = original.clone();
        bytes[at..at + 4].copy_from_slice(&(max + delta).to_be_bytes());
        let reader = TsFileReader::from_reader(Arc::new(Bytes::from(bytes))).unwrap();
        let report = check_report(&reader);
        assert_eq!(
            !report.is_valid(),
            flagged,
            "{delta}: {:#?}",
            report.problems
        );
        if flagged {
            assert!(
                report.problems[0].structure.ends_with(".temp")
                    && report.problems[0].message.contains("min/max"),
                "{:#?}",
                report.problems
            );
        }
    }
}

#[test]
fn every_valid_corpus_file_checks_clean() {
    let files = corpus_files();
    if files.is_empty() {
        println!("skipped: no TsFile conformance corpus");
        return;
    }
    let mut failures = Vec::new();
    let mut relaxed = 0;
    for path in &files {
        match check_path_report(path) {
            Ok(r) if r.is_valid() => relaxed += r.relaxed.len(),
            Ok(r) => failures.push(format!("{}: {:#?}", path.display(), r.problems)),
            Err(e) => failures.push(format!("{}: {e}", path.display())),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The corpus has TS_2DIFF and CAMEL float series.
    assert!(relaxed > 0);
    println!("{} files valid, {relaxed} relaxed series", files.len());
}
