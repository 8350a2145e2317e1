//! [`LakeMap::rebuilt`]: the map an update writes, built column by column from the old
//! map's columns and the entries indexed again.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{ArrayRef, Int64Array, RecordBatch};

use super::{LakeMap, MAP_SCHEMA, MapEntry, entries_to_batch};
use crate::error::{Error, Result};

/// Where an entry of a map rebuilt by [`LakeMap::rebuilt`] comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EntryFrom {
    /// Entry `index` of the old map, with the file's current mtime.
    Old {
        /// Its index in the old map.
        index: usize,
        /// The mtime to store.
        mtime_ms: i64,
    },
    /// Entry `.0` of the new entries.
    New(usize),
}

impl LakeMap {
    /// The map whose entries are, in order, those `from` names: entries of this map (with a
    /// new mtime) or of `fresh`, with `first_global_row` renumbered. Built column by column
    /// from this map's columns, without an owned copy of each entry, as an update that keeps
    /// most entries does. `None` when the two do not have the same columns (an `etag`
    /// column on one side only).
    pub(crate) fn rebuilt(&self, from: &[EntryFrom], fresh: &[MapEntry]) -> Result<Option<Self>> {
        let arrow = |source| Error::Arrow {
            path: self.root.clone(),
            source,
        };
        let old = self.to_record_batch()?;
        let new = entries_to_batch(fresh, &self.config)?;
        if old.schema().fields().len() != new.schema().fields().len() {
            return Ok(None);
        }
        let picks: Vec<(usize, usize)> = from
            .iter()
            .map(|f| match *f {
                EntryFrom::Old { index, .. } => (0, index),
                EntryFrom::New(j) => (1, j),
            })
            .collect();
        let mut columns = Vec::with_capacity(old.num_columns());
        for (k, field) in old.schema().fields().iter().enumerate() {
            let column: ArrayRef = match field.name().as_str() {
                "mtime_ms" => Arc::new(Int64Array::from_iter_values(from.iter().map(
                    |f| match *f {
                        EntryFrom::Old { mtime_ms, .. } => mtime_ms,
                        EntryFrom::New(j) => fresh[j].mtime_ms,
                    },
                ))),
                _ => arrow_select::interleave::interleave(
                    &[old.column(k).as_ref(), new.column(k).as_ref()],
                    &picks,
                )
                .map_err(arrow)?,
            };
            columns.push(column);
        }
        // Renumber the first rows: the running sum of the row counts.
        let (Ok(rows_at), Ok(first_at)) = (
            old.schema().index_of("row_count"),
            old.schema().index_of("first_global_row"),
        ) else {
            return Ok(None);
        };
        let Some(rows) = columns[rows_at].as_primitive_opt::<Int64Type>() else {
            return Ok(None);
        };
        let mut next = 0i64;
        let firsts = Int64Array::from_iter_values(rows.values().iter().map(|&r| {
            let at = next;
            next = next.saturating_add(r);
            at
        }));
        columns[first_at] = Arc::new(firsts);
        let batch = RecordBatch::try_new(old.schema(), columns).map_err(arrow)?;
        Self::from_batch(
            &self.root,
            self.config.clone(),
            MAP_SCHEMA,
            batch,
            &self.root,
        )
        .map(Some)
    }
}
