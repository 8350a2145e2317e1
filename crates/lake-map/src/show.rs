//! The JSON forms of `bazan map show --json` and `bazan locate --json` (the CLI contract of
//! `cli.md`), built here so that the library's tests and the CLI print the same thing.

use serde_json::{Value, json};

use crate::config::stats_columns_to_json;
use crate::error::{Error, Result};
use crate::lake_map::{Entry, LakeMap, Location};

fn parse(entry: &Entry<'_>, what: &str, text: Option<&str>) -> Result<Value> {
    match text {
        None => Ok(Value::Null),
        Some(t) => serde_json::from_str(t)
            .map_err(|e| Error::invalid(entry.path, format!("{what} of the entry: {e}"))),
    }
}

/// One entry as `map show --json` prints it.
pub fn entry_json(entry: &Entry<'_>) -> Result<Value> {
    Ok(json!({
        "path": entry.path,
        "format": entry.format,
        "size_bytes": entry.size_bytes,
        "mtime_ms": entry.mtime_ms,
        "row_count": entry.row_count,
        "first_global_row": entry.first_global_row,
        "columns": parse(entry, "schema_json", entry.schema_json)?,
        "blocks": parse(entry, "row_groups_json", Some(entry.row_groups_json))?,
        "blake3": entry.blake3,
        "stats": parse(entry, "stats_json", entry.stats_json)?,
    }))
}

/// The whole map as `map show --json` prints it.
pub fn map_json(map: &LakeMap) -> Result<Value> {
    map.check_entries()?;
    let files = map
        .entries()
        .map(|e| entry_json(&e))
        .collect::<Result<Vec<_>>>()?;
    let config = map.config();
    Ok(json!({
        "map_schema": map.map_schema(),
        "checkpoint_stride_rows": config.checkpoint_stride_rows,
        "fingerprint": config.fingerprint.as_str(),
        "stats_columns": stats_columns_to_json(&config.stats_columns),
        "text_encoding": config.text_encoding.as_str(),
        "total_files": map.total_files(),
        "total_rows": map.total_rows(),
        "total_bytes": map.total_bytes(),
        "files": files,
    }))
}

/// A location as `locate --json` prints it.
pub fn location_json(location: &Location<'_>) -> Value {
    let entry = location.head();
    json!({
        "global_row": location.global_row,
        "path": entry.path,
        "format": entry.format,
        "local_row": location.local_row,
        "block": location.block.as_ref().map(|b| serde_json::to_value(b).unwrap_or(Value::Null)),
    })
}
