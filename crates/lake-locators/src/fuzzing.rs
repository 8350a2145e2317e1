//! Entry points of the cargo-fuzz targets in `fuzz/` (not an API: hidden, may change). Each
//! writes the input to a file of its own and indexes it every way the crate can: this CPU's
//! vector path, the portable path, and split in byte ranges; any difference panics.

use std::io::Write as _;
use std::path::PathBuf;

use crate::locator::{IndexOptions, StatsColumns};

/// A file of this thread for the input, rewritten on every call.
fn input_file(ext: &str, data: &[u8]) -> Option<PathBuf> {
    let path = std::env::temp_dir().join(format!(
        "bazan-fuzz-{}-{:?}.{ext}",
        std::process::id(),
        std::thread::current().id()
    ));
    let mut f = std::fs::File::create(&path).ok()?;
    f.write_all(data).ok()?;
    Some(path)
}

/// The options of one case from its first two bytes: a stride of 1 to 8 rows, statistics on
/// or off, and the range length of the split (1 to 1,024 bytes).
fn options(head: &[u8]) -> (IndexOptions, usize) {
    let a = head.first().copied().unwrap_or(0);
    let b = head.get(1).copied().unwrap_or(0);
    let stats = if a & 0x80 == 0 {
        StatsColumns::All
    } else {
        StatsColumns::None
    };
    let options = IndexOptions {
        stride: u64::from(a & 7) + 1,
        stats,
    };
    (options, 1 + usize::from(b) * 4)
}

/// Checks the delimited scanners on `data` (its first two bytes choose the options).
pub fn csv(data: &[u8]) {
    let (options, chunk) = options(data);
    let body = data.get(2..).unwrap_or(&[]);
    if let Some(path) = input_file("csv", body) {
        crate::formats::csv::fuzz_check(&path, chunk, &options);
        let _ = std::fs::remove_file(path);
    }
}

/// Checks the JSON scanners on `data` (its first two bytes choose the options): as an
/// `.ndjson` file (lines) or, with bit 6 of the first byte, as a `.json` file (a top-level
/// array when it starts with `[`, split at guessed elements).
pub fn json(data: &[u8]) {
    let (options, chunk) = options(data);
    let ext = if data.first().is_some_and(|a| a & 0x40 != 0) {
        "json"
    } else {
        "ndjson"
    };
    let body = data.get(2..).unwrap_or(&[]);
    if let Some(path) = input_file(ext, body) {
        crate::formats::json::fuzz_check(&path, chunk, &options);
        let _ = std::fs::remove_file(path);
    }
}

#[cfg(test)]
mod tests {
    use crate::testutil::{byte_soup, stress_cases};

    /// Inputs the fuzz targets found, kept as regression cases.
    #[test]
    fn fuzz_findings_hold() {
        // A repeated header name: the rows before the second `b` turned Utf8 were joined
        // by name, taking the first `b`'s text bounds (vector and portable scans differed).
        super::csv(b"\x01\x10a,b,b\n1,2,3\n1,2,pric3\n1,2,3,4,15\n2,,3");
        // A header of many empty names: block statistics keyed by the name took one column's
        // bounds in the sequential scan and another's in the split scan (libFuzzer, 2026-12-02).
        // A repeated name now gets no statistics at all.
        let repeated: &[u8] =
            b"\x03\x10gid,na,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,480,\
            -505.07\n2976,charlie zulu 70,,ra\xc3\x9fe 64,953068,646.18\ne\n3\xf0\x9f\x9a\
            \x80rocket \xc3\xa9t\xc3\xa9 8793.84\n2978,989,47,-0c9";
        super::csv(repeated);
    }

    /// The fuzz checks over seeded byte soup, so that they run in every test run too.
    #[test]
    fn fuzz_checks_hold_on_byte_soup() {
        for case in 0..stress_cases(60) {
            let mut csv = vec![case as u8, (case * 7) as u8];
            csv.extend_from_slice(b"a,b\n");
            csv.extend(byte_soup(
                case as u64 + 1,
                30 + case * 5,
                b"1,\"\n\r.-x\xc3\xa9",
            ));
            super::csv(&csv);
            let mut json = vec![case as u8, (case * 3) as u8];
            json.extend(byte_soup(
                case as u64 + 7,
                30 + case * 5,
                b"{}[]\":,1-.\n \\a",
            ));
            super::json(&json);
            // An array of objects on one line or one per line, some holding arrays of
            // objects printed alike or strings holding the separator (guessed starts there
            // fail), every third one broken.
            let sep: &[u8] = if case % 2 == 0 { b",\n" } else { b"," };
            let mut array = vec![0x40 | case as u8, (case * 5) as u8];
            array.extend_from_slice(b"[{\"a\":1}");
            for i in 0..case * 3 {
                array.extend_from_slice(sep);
                match i % 3 {
                    0 => {
                        array.extend_from_slice(b"{\"a\":2,\"b\":[{\"c\":1}");
                        array.extend_from_slice(sep);
                        array.extend_from_slice(b"{\"c\":2}]}");
                    }
                    1 => array.extend_from_slice(b"{\"b\":[],\"a\":\"},{\"}"),
                    _ => array.extend_from_slice(b"{\"a\":3.5}"),
                }
            }
            array.extend_from_slice(b"\n]\n");
            if case % 3 == 0 {
                let soup = byte_soup(case as u64 + 11, 1, b"{}[]\":,1\n");
                let at = 2 + (case * 13) % (array.len() - 2);
                array[at] = soup[0];
            }
            super::json(&array);
        }
    }
}
