//! The doctor's report: a count of healthy entries, the three drift lists (paths in map
//! order, the byte order of the `/`-separated path) and the paths that could not be checked.
//! Its serde form (fields in the order of `cli.md`) is the `bazan doctor --json` contract,
//! plus `errors` and `hashed_bytes`.

use serde::{Serialize, Serializer};

use lake_map::Fingerprint;

/// Why one path could not be checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The operating system refused to list a directory or inspect or read a file
    /// (permission denied, I/O error).
    Unreadable,
    /// A name that is not valid UTF-8 (a lake path must be UTF-8 to be stored in a map).
    NotUtf8,
    /// The map's entry is now a directory, FIFO, socket or device.
    NotRegular,
    /// The map's entry, or a directory on its way, is now a symbolic link, which the doctor
    /// does not follow (nor does discovery).
    Symlink,
    /// The map's entry path escapes the lake root.
    PathEscape,
    /// The map says fingerprint `blake3` but stores no digest for this entry.
    NoDigest,
}

impl ErrorKind {
    /// The kind's name as the JSON report spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Unreadable => "unreadable",
            ErrorKind::NotUtf8 => "not_utf8",
            ErrorKind::NotRegular => "not_regular",
            ErrorKind::Symlink => "symlink",
            ErrorKind::PathEscape => "path_escape",
            ErrorKind::NoDigest => "no_digest",
        }
    }
}

/// A path the doctor could not check. It is never counted as healthy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PathError {
    /// Path relative to the lake root, `/`-separated; a directory ends with `/` and the root
    /// itself is `.`.
    pub path: String,
    /// What kind of problem it is.
    pub kind: ErrorKind,
    /// The full message, naming the file on disk.
    pub message: String,
}

/// The overall result of a run, as the CLI's exit code reflects it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Every entry is healthy, nothing is unindexed and every path could be checked.
    Healthy,
    /// Something is modified, unindexed or missing (and every path could be checked).
    Drift,
    /// At least one path could not be checked.
    Errors,
}

fn fingerprint_name<S: Serializer>(f: &Fingerprint, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(f.as_str())
}

/// What the doctor found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DoctorReport {
    /// The map's fingerprint mode, which decided the comparison.
    #[serde(serialize_with = "fingerprint_name")]
    pub fingerprint: Fingerprint,
    /// Entries whose file exists and whose fingerprint matches.
    pub healthy: u64,
    /// Entries whose file exists but whose fingerprint differs, in map order.
    pub modified: Vec<String>,
    /// Files discovery finds that the map has no entry for, in map order.
    pub unindexed: Vec<String>,
    /// Entries whose file is gone, in map order.
    pub missing: Vec<String>,
    /// Paths that could not be checked, sorted by path.
    pub errors: Vec<PathError>,
    /// Bytes read to compute digests (0 in metadata mode, which never opens a file).
    pub hashed_bytes: u64,
}

impl DoctorReport {
    /// An empty report for a map with this fingerprint mode.
    pub fn new(fingerprint: Fingerprint) -> Self {
        DoctorReport {
            fingerprint,
            healthy: 0,
            modified: Vec::new(),
            unindexed: Vec::new(),
            missing: Vec::new(),
            errors: Vec::new(),
            hashed_bytes: 0,
        }
    }

    /// Number of drifted paths (modified + unindexed + missing).
    pub fn drift_count(&self) -> usize {
        self.modified.len() + self.unindexed.len() + self.missing.len()
    }

    /// Errors first (the check is incomplete), then drift, else healthy.
    pub fn verdict(&self) -> Verdict {
        if !self.errors.is_empty() {
            Verdict::Errors
        } else if self.drift_count() > 0 {
            Verdict::Drift
        } else {
            Verdict::Healthy
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_and_json_keys() {
        let mut r = DoctorReport::new(Fingerprint::Blake3);
        r.healthy = 3;
        assert_eq!(r.verdict(), Verdict::Healthy);
        r.missing.push("a.csv".into());
        assert_eq!(r.verdict(), Verdict::Drift);
        r.errors.push(PathError {
            path: "locked/".into(),
            kind: ErrorKind::Unreadable,
            message: "/lake/locked: permission denied".into(),
        });
        assert_eq!(r.verdict(), Verdict::Errors);
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            serde_json::json!({
                "fingerprint": "blake3", "healthy": 3, "modified": [], "unindexed": [],
                "missing": ["a.csv"], "hashed_bytes": 0,
                "errors": [{"path": "locked/", "kind": "unreadable",
                            "message": "/lake/locked: permission denied"}]
            })
        );
        assert_eq!(ErrorKind::NotRegular.as_str(), "not_regular");
        // The keys come in the order of `cli.md`.
        let text = serde_json::to_string(&r).unwrap();
        assert!(
            text.starts_with(r#"{"fingerprint":"blake3","healthy":3,"modified":[],"unindexed":[],"missing":["a.csv"],"errors":"#),
            "{text}"
        );
    }
}
