//! Sets of global rows as sorted, disjoint, non-empty half-open ranges: what the exact
//! filters of a lake scan (`_gid` comparisons, `_path` predicates) select.

// Ranges here are row ranges, never meant to be expanded into their rows.
#![allow(clippy::single_range_in_vec_init)]

use std::ops::Range;

/// A set of rows `[0, u64::MAX)`-bounded, as sorted, disjoint, non-adjacent ranges.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct RowSet {
    ranges: Vec<Range<u64>>,
}

impl RowSet {
    /// The empty set.
    pub(crate) fn empty() -> Self {
        RowSet { ranges: Vec::new() }
    }

    /// One range (empty when `start >= end`).
    pub(crate) fn range(start: u64, end: u64) -> Self {
        if start < end {
            RowSet {
                ranges: vec![start..end],
            }
        } else {
            RowSet::empty()
        }
    }

    /// Rows `[0, total)`.
    pub(crate) fn all(total: u64) -> Self {
        RowSet::range(0, total)
    }

    /// A set from any ranges (sorted and merged here).
    pub(crate) fn from_ranges(mut ranges: Vec<Range<u64>>) -> Self {
        ranges.retain(|r| r.start < r.end);
        ranges.sort_by_key(|r| r.start);
        let mut out: Vec<Range<u64>> = Vec::with_capacity(ranges.len());
        for r in ranges {
            match out.last_mut() {
                Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
                _ => out.push(r),
            }
        }
        RowSet { ranges: out }
    }

    /// The ranges, sorted and disjoint.
    pub(crate) fn ranges(&self) -> &[Range<u64>] {
        &self.ranges
    }

    /// Number of rows in the set.
    pub(crate) fn len(&self) -> u64 {
        self.ranges.iter().map(|r| r.end - r.start).sum()
    }

    /// Rows in either set.
    pub(crate) fn union(&self, other: &RowSet) -> RowSet {
        let mut all = self.ranges.clone();
        all.extend(other.ranges.iter().cloned());
        RowSet::from_ranges(all)
    }

    /// Rows in both sets.
    pub(crate) fn intersect(&self, other: &RowSet) -> RowSet {
        let (a, b) = (&self.ranges, &other.ranges);
        let (mut i, mut j) = (0, 0);
        let mut out = Vec::new();
        while i < a.len() && j < b.len() {
            let start = a[i].start.max(b[j].start);
            let end = a[i].end.min(b[j].end);
            if start < end {
                out.push(start..end);
            }
            if a[i].end < b[j].end {
                i += 1;
            } else {
                j += 1;
            }
        }
        RowSet { ranges: out }
    }

    /// Rows of `[0, total)` not in the set.
    pub(crate) fn complement(&self, total: u64) -> RowSet {
        let mut out = Vec::new();
        let mut at = 0;
        for r in &self.ranges {
            if r.start >= total {
                break;
            }
            if at < r.start {
                out.push(at..r.start);
            }
            at = r.end;
        }
        if at < total {
            out.push(at..total);
        }
        RowSet { ranges: out }
    }

    /// The first `n` rows of the set.
    pub(crate) fn truncate(&self, mut n: u64) -> RowSet {
        let mut out = Vec::new();
        for r in &self.ranges {
            if n == 0 {
                break;
            }
            let len = (r.end - r.start).min(n);
            out.push(r.start..r.start + len);
            n -= len;
        }
        RowSet { ranges: out }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_sort_and_set_operations() {
        let a = RowSet::from_ranges(vec![5..7, 0..2, 2..3, 10..10]);
        assert_eq!(a.ranges(), &[0..3, 5..7]);
        assert_eq!(a.len(), 5);
        let b = RowSet::from_ranges(vec![1..6, 8..9]);
        assert_eq!(a.intersect(&b).ranges(), &[1..3, 5..6]);
        assert_eq!(a.union(&b).ranges(), &[0..7, 8..9]);
        assert_eq!(a.complement(10).ranges(), &[3..5, 7..10]);
        assert_eq!(RowSet::empty().complement(4).ranges(), &[0..4]);
        assert_eq!(RowSet::all(4).complement(4).ranges(), &[] as &[Range<u64>]);
        assert_eq!(a.truncate(4).ranges(), &[0..3, 5..6]);
        assert_eq!(RowSet::range(3, 1), RowSet::empty());
    }
}
