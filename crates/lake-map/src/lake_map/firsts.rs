//! The `first_global_row` column of a loaded map, kept as the map file's record batches hold
//! it (one array per record batch, not copied into one): what `locate_row` searches.

use std::sync::Arc;

use arrow_array::{Array, Int64Array};

/// `first_global_row`, in chunks (one per record batch of the map file, or one for a map
/// built in memory).
#[derive(Debug, Clone)]
pub(crate) struct Firsts {
    /// The first entry of each chunk, then the entry count.
    starts: Arc<[usize]>,
    chunks: Arc<[Int64Array]>,
    /// The first value of each chunk with entries, and that chunk's number.
    fronts: Arc<[(i64, usize)]>,
}

impl Firsts {
    /// The chunks `chunks`, the first entry of each (then the entry count) in `starts`; `None`
    /// when their lengths do not agree.
    pub(crate) fn new(starts: Arc<[usize]>, chunks: Vec<Int64Array>) -> Option<Firsts> {
        if starts.len() != chunks.len() + 1
            || chunks
                .iter()
                .enumerate()
                .any(|(c, a)| a.len() != starts[c + 1] - starts[c])
        {
            return None;
        }
        let fronts = chunks
            .iter()
            .enumerate()
            .filter(|(_, a)| !a.is_empty())
            .map(|(c, a)| (a.value(0), c))
            .collect();
        Some(Firsts {
            starts,
            chunks: Arc::from(chunks),
            fronts,
        })
    }

    /// One chunk.
    pub(crate) fn one(array: Int64Array) -> Firsts {
        let n = array.len();
        let fronts = match n {
            0 => Vec::new(),
            _ => vec![(array.value(0), 0)],
        };
        Firsts {
            starts: Arc::from(vec![0, n]),
            chunks: Arc::from(vec![array]),
            fronts: Arc::from(fronts),
        }
    }

    fn chunk_of(&self, i: usize) -> (usize, usize) {
        let c = if self.chunks.len() == 1 {
            0
        } else {
            self.starts.partition_point(|&s| s <= i) - 1
        };
        (c, i - self.starts[c])
    }

    /// Entry `i`'s first global row (panics when out of range, like slice indexing).
    pub(crate) fn value(&self, i: usize) -> i64 {
        let (c, j) = self.chunk_of(i);
        self.chunks[c].values()[j]
    }

    /// Entry `i`'s first global row, `None` past the end.
    pub(crate) fn get(&self, i: usize) -> Option<i64> {
        (i < self.len()).then(|| self.value(i))
    }

    /// Entries.
    pub(crate) fn len(&self) -> usize {
        self.starts.last().copied().unwrap_or(0)
    }

    /// The values of chunk `c`.
    pub(crate) fn chunk(&self, c: usize) -> &[i64] {
        self.chunks[c].values()
    }

    /// Every value, in entry order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = i64> + '_ {
        self.chunks.iter().flat_map(|a| a.values().iter().copied())
    }

    /// The last entry whose first global row is at or before `g` (`None` when none is):
    /// zero-row entries share their first row with the next entry, and the last of them
    /// holds row `g`.
    pub(crate) fn last_at_or_before(&self, g: u64) -> Option<usize> {
        let k = self.fronts.partition_point(|&(f, _)| f as u64 <= g);
        let (_, c) = *self.fronts.get(k.checked_sub(1)?)?;
        let j = self.chunk(c).partition_point(|&f| f as u64 <= g);
        Some(self.starts[c] + j.checked_sub(1)?)
    }

    /// The whole column as one array (the chunk itself when there is one).
    pub(crate) fn to_array(&self) -> Int64Array {
        match &*self.chunks {
            [one] => one.clone(),
            _ => Int64Array::from_iter_values(self.iter()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_read_as_one_column() {
        // Chunks of 3, 0 and 2 entries; zero-row entries (first rows 4, 4) across a chunk.
        let firsts = Firsts::new(
            Arc::from(vec![0, 3, 3, 5]),
            vec![
                Int64Array::from(vec![0, 2, 4]),
                Int64Array::from(Vec::<i64>::new()),
                Int64Array::from(vec![4, 7]),
            ],
        )
        .expect("lengths agree");
        assert_eq!(firsts.iter().collect::<Vec<_>>(), vec![0, 2, 4, 4, 7]);
        assert_eq!((firsts.value(3), firsts.get(5)), (4, None));
        let one = Firsts::one(Int64Array::from(vec![0, 2, 4, 4, 7]));
        for g in 0..10 {
            assert_eq!(
                firsts.last_at_or_before(g),
                one.last_at_or_before(g),
                "row {g}"
            );
        }
        assert_eq!(firsts.last_at_or_before(4), Some(3));
        assert_eq!(firsts.last_at_or_before(3), Some(1));
        assert_eq!(firsts.to_array(), one.to_array());
        assert!(Firsts::new(Arc::from(vec![0, 2]), vec![Int64Array::from(vec![0])]).is_none());
    }
}
