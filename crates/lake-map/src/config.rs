//! The map's configuration (`docs/lake-map.md` §3): checkpoint stride, fingerprint mode,
//! statistics columns and the text encoding of delimited files, with their text forms in the
//! map's schema metadata.

use std::fmt;
use std::str::FromStr;

use lake_locators::StatsColumns;
pub use lake_locators::csv::TextEncoding;
use serde_json::Value;

use crate::error::{Error, Result};

/// The default rows per checkpoint of row formats (defined once, in lake-locators).
pub use lake_locators::DEFAULT_STRIDE;

/// How a file's identity is fingerprinted in the map.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Fingerprint {
    /// Size and modification time only.
    #[default]
    Metadata,
    /// Size, modification time and the BLAKE3 digest of the whole file.
    Blake3,
}

impl Fingerprint {
    /// The stored name (`metadata` or `blake3`).
    pub fn as_str(self) -> &'static str {
        match self {
            Fingerprint::Metadata => "metadata",
            Fingerprint::Blake3 => "blake3",
        }
    }
}

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Fingerprint {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        match s {
            "metadata" => Ok(Fingerprint::Metadata),
            "blake3" => Ok(Fingerprint::Blake3),
            other => Err(Error::Config(format!(
                "unknown fingerprint mode {other:?} (expected metadata or blake3)"
            ))),
        }
    }
}

/// The configuration stored in a map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MapConfig {
    /// Rows per checkpoint of the row formats (> 0).
    pub checkpoint_stride_rows: u64,
    /// Fingerprint mode.
    pub fingerprint: Fingerprint,
    /// Which columns get statistics.
    pub stats_columns: StatsColumns,
    /// How delimited text files (CSV, TSV, PSV, TXT) are read, when indexed and on every
    /// later read of the map: UTF-8 (checked) or Latin-1.
    pub text_encoding: TextEncoding,
}

impl Default for MapConfig {
    fn default() -> Self {
        MapConfig {
            checkpoint_stride_rows: DEFAULT_STRIDE,
            fingerprint: Fingerprint::Metadata,
            stats_columns: StatsColumns::All,
            text_encoding: TextEncoding::Utf8,
        }
    }
}

impl MapConfig {
    /// Checks the rules of §3 (the stride must be > 0).
    pub fn validate(&self) -> Result<()> {
        if self.checkpoint_stride_rows == 0 {
            return Err(Error::Config("checkpoint_stride_rows must be > 0".into()));
        }
        Ok(())
    }
}

/// The JSON form of a statistics selection: `null`, `[]` or a list of names.
pub fn stats_columns_to_json(stats: &StatsColumns) -> Value {
    match stats {
        StatsColumns::All => Value::Null,
        StatsColumns::None => Value::Array(Vec::new()),
        StatsColumns::Only(list) => {
            Value::Array(list.iter().map(|c| Value::String(c.clone())).collect())
        }
    }
}

/// Reads the JSON form of a statistics selection back.
pub fn stats_columns_from_json(value: &Value) -> Result<StatsColumns> {
    match value {
        Value::Null => Ok(StatsColumns::All),
        Value::Array(items) if items.is_empty() => Ok(StatsColumns::None),
        Value::Array(items) => items
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| Error::Config(format!("stats column name is not a string: {v}")))
            })
            .collect::<Result<Vec<_>>>()
            .map(StatsColumns::Only),
        other => Err(Error::Config(format!(
            "stats_columns must be null or a list, got {other}"
        ))),
    }
}

/// Parses the CLI's `--stats all|none|COL,COL…`.
pub fn parse_stats_option(text: &str) -> StatsColumns {
    match text {
        "all" => StatsColumns::All,
        "none" | "" => StatsColumns::None,
        list => StatsColumns::Only(
            list.split(',')
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(str::to_string)
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_json_round_trip() {
        for s in [
            StatsColumns::All,
            StatsColumns::None,
            StatsColumns::Only(vec!["a".into(), "b c".into()]),
        ] {
            assert_eq!(
                stats_columns_from_json(&stats_columns_to_json(&s)).unwrap(),
                s
            );
        }
        assert!(stats_columns_from_json(&serde_json::json!(3)).is_err());
    }

    #[test]
    fn fingerprint_names() {
        assert_eq!(
            "blake3".parse::<Fingerprint>().unwrap(),
            Fingerprint::Blake3
        );
        assert!("md5".parse::<Fingerprint>().is_err());
        assert!(
            MapConfig {
                checkpoint_stride_rows: 0,
                ..MapConfig::default()
            }
            .validate()
            .is_err()
        );
    }
}
