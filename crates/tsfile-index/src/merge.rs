//! Merging non-aligned series of one device by time: one row per distinct timestamp, a
//! series without a point at that time null.

use arrow_array::{ArrayRef, UInt32Array};

use crate::error::Result;

/// Merges `(times, values)` pairs (each ascending in time) into the union of their
/// timestamps and one column per series aligned to it.
pub(crate) fn merge_by_time(
    mut parts: Vec<(Vec<i64>, ArrayRef)>,
) -> Result<(Vec<i64>, Vec<ArrayRef>)> {
    if parts.len() == 1
        && let Some((times, values)) = parts.pop()
    {
        return Ok((times, vec![values]));
    }
    let mut all: Vec<i64> = parts.iter().flat_map(|(t, _)| t.iter().copied()).collect();
    all.sort_unstable();
    all.dedup();
    let mut out = Vec::with_capacity(parts.len());
    for (times, values) in parts {
        // Positions of the union timestamps in this series, null where it has no point.
        let mut idx: Vec<Option<u32>> = Vec::with_capacity(all.len());
        let mut j = 0;
        for &t in &all {
            while j < times.len() && times[j] < t {
                j += 1;
            }
            if j < times.len() && times[j] == t {
                idx.push(Some(j as u32));
                j += 1;
            } else {
                idx.push(None);
            }
        }
        let indices = UInt32Array::from(idx);
        out.push(arrow_select::take::take(values.as_ref(), &indices, None)?);
    }
    Ok((all, out))
}
