//! The decoded-block cache of a [`Lake`](crate::Lake): blocks of the formats whose random
//! reads cost about a whole block's decode ([`lake_locators::Locator::rows_cost`]: a Parquet
//! row group, whose random rows touch nearly every compressed page; an Arrow record batch,
//! decoded and checked whole) kept decoded in memory once [`Lake::take`](crate::Lake::take)
//! has touched them, so that a training loop drawing random rows again and again pays each
//! block's decode once, not once per call.
//!
//! - Admission: a block whose read decodes it whole anyway (`RowsCost::WholeBlock`) is kept
//!   from its first touch; one whose whole decode costs a few times a read of its rows
//!   (`RowsCost::MostOfBlock`) from its second, so that a one-off take never pays for a
//!   whole block it does not need.
//! - Bounded: the kept blocks' Arrow memory stays within the budget
//!   ([`DEFAULT_CACHE_BYTES`], [`Lake::set_cache_bytes`](crate::Lake::set_cache_bytes); 0
//!   turns the cache off), the least recently used block leaving first; a block larger than
//!   an eighth of the budget is never kept.
//! - Never stale: a take checks every file's size and mtime against the map before it uses a
//!   kept block, as it does before it reads one, and a kept block belongs to one loaded map.
//!
//! An epoch of [`Shuffle::Global`](crate::epoch::Shuffle::Global) reads through a cache of
//! its own made by [`BlockCache::filling`], which differs in three ways: it reads the whole
//! lake once, so every block it touches it reads whole sooner or later, and it admits the
//! blocks of every format (a text file's checkpoint stride too, from its second touch, the
//! first batch staying a read of its rows); it keeps a block only while the kept bytes stay
//! within the budget and never evicts one (under uniformly random reads a kept set that
//! changes is not hit more often than one that stays, and every change is a block decoded
//! again), so past the budget the other blocks' rows are read as a take reads them; and it is
//! dropped with the epoch reader.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError};

use arrow_array::RecordBatch;

/// The default budget of a lake's decoded-block cache: 256 MiB of Arrow memory.
pub const DEFAULT_CACHE_BYTES: u64 = 256 << 20;

/// Blocks remembered as touched once, at most (the set is cleared when it is full).
const SEEN_MAX: usize = 1 << 16;

/// One block of one file read with one projection.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Key {
    pub(crate) entry: usize,
    pub(crate) block: usize,
    pub(crate) columns: Arc<[String]>,
}

/// What a take does with one touched block.
pub(crate) enum Use {
    /// Kept: the block's rows, one batch after the other.
    Hit(Arc<[RecordBatch]>),
    /// Touched before: decode it whole and keep it.
    Admit,
    /// First touch (or the cache is off): read only the wanted rows.
    Rows,
}

struct Slot {
    batches: Arc<[RecordBatch]>,
    bytes: u64,
    used: u64,
}

#[derive(Default)]
struct Inner {
    budget: u64,
    bytes: u64,
    tick: u64,
    kept: HashMap<Key, Slot>,
    seen: HashSet<Key>,
    /// Keep blocks while they fit, never evict ([`BlockCache::filling`]).
    fill: bool,
}

/// See the module documentation.
pub(crate) struct BlockCache {
    inner: Mutex<Inner>,
}

impl BlockCache {
    pub(crate) fn new(budget: u64) -> Self {
        BlockCache {
            inner: Mutex::new(Inner {
                budget,
                ..Inner::default()
            }),
        }
    }

    /// The cache of one epoch (see the module documentation): blocks of every format
    /// admitted while they fit within `budget`, none evicted.
    pub(crate) fn filling(budget: u64) -> Self {
        BlockCache {
            inner: Mutex::new(Inner {
                budget,
                fill: true,
                ..Inner::default()
            }),
        }
    }

    /// True for an epoch's cache ([`BlockCache::filling`]), which admits the blocks of every
    /// format.
    pub(crate) fn fills(&self) -> bool {
        self.lock().fill
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // The cache holds no invariant a panic elsewhere could break half-way.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn budget(&self) -> u64 {
        self.lock().budget
    }

    /// The bytes of Arrow memory kept now.
    pub(crate) fn bytes(&self) -> u64 {
        self.lock().bytes
    }

    /// Sets the budget, dropping least recently used blocks down to it (0 drops them all and
    /// forgets the blocks touched once).
    pub(crate) fn set_budget(&self, budget: u64) {
        let mut inner = self.lock();
        inner.budget = budget;
        if budget == 0 {
            inner.seen.clear();
        }
        inner.evict();
    }

    /// What to do with block `key`, whose decoded size is about `estimate` bytes (`None`:
    /// unknown, never kept), noting the touch; `first` admits it on its first touch.
    pub(crate) fn lookup(&self, key: &Key, estimate: Option<u64>, first: bool) -> Use {
        let mut inner = self.lock();
        if inner.budget == 0 {
            return Use::Rows;
        }
        inner.tick += 1;
        let tick = inner.tick;
        if let Some(slot) = inner.kept.get_mut(key) {
            slot.used = tick;
            return Use::Hit(Arc::clone(&slot.batches));
        }
        let fits = estimate.is_some_and(|e| inner.fits(e));
        if !fits {
            return Use::Rows;
        }
        if first || inner.seen.remove(key) {
            return Use::Admit;
        }
        if inner.seen.len() >= SEEN_MAX {
            inner.seen.clear();
        }
        inner.seen.insert(key.clone());
        Use::Rows
    }

    /// Keeps block `key`'s decoded rows (unless they are over an eighth of the budget, or,
    /// in an epoch's cache, over what is left of it).
    pub(crate) fn insert(&self, key: Key, batches: Arc<[RecordBatch]>) {
        let bytes: u64 = batches.iter().map(memory).sum();
        let mut inner = self.lock();
        if !inner.fits(bytes) {
            return;
        }
        inner.tick += 1;
        let used = inner.tick;
        if let Some(old) = inner.kept.insert(
            key,
            Slot {
                batches,
                bytes,
                used,
            },
        ) {
            inner.bytes -= old.bytes;
        }
        inner.bytes += bytes;
        inner.evict();
    }
}

/// The bytes of `batch`'s rows: of its slices only, not of whole buffers it shares with
/// others (the blocks cut from one decoded batch, the columns of one Arrow record batch
/// mapped from its file).
fn memory(batch: &RecordBatch) -> u64 {
    batch
        .columns()
        .iter()
        .map(|c| {
            let data = c.to_data();
            data.get_slice_memory_size()
                .unwrap_or_else(|_| c.get_array_memory_size()) as u64
        })
        .sum()
}

impl Inner {
    /// True when a block of `bytes` may be kept: at most an eighth of the budget, or, in an
    /// epoch's cache, within what is left of it.
    fn fits(&self, bytes: u64) -> bool {
        if self.fill {
            self.bytes.saturating_add(bytes) <= self.budget
        } else {
            bytes <= self.budget / 8
        }
    }

    /// Drops least recently used blocks until the kept bytes are within the budget, and a
    /// tenth of it more: the blocks are sorted by use once per tenth of the budget freed, not
    /// once per block kept.
    fn evict(&mut self) {
        if self.bytes <= self.budget {
            return;
        }
        let target = self.budget - self.budget / 10;
        let mut order: Vec<(u64, Key)> =
            self.kept.iter().map(|(k, s)| (s.used, k.clone())).collect();
        order.sort_unstable_by_key(|(used, _)| *used);
        for (_, key) in order {
            if self.bytes <= target {
                break;
            }
            if let Some(slot) = self.kept.remove(&key) {
                self.bytes -= slot.bytes;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{ArrayRef, Int64Array};
    use arrow_schema::{DataType, Field, Schema};

    fn key(block: usize) -> Key {
        Key {
            entry: 0,
            block,
            columns: Arc::from(vec!["x".to_string()]),
        }
    }

    fn batch(n: usize) -> Arc<[RecordBatch]> {
        let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Int64, false)]));
        let column: ArrayRef = Arc::new(Int64Array::from_iter_values(0..n as i64));
        Arc::from(vec![RecordBatch::try_new(schema, vec![column]).unwrap()])
    }

    #[test]
    fn a_block_is_admitted_on_its_second_touch_and_then_hit() {
        let cache = BlockCache::new(1 << 20);
        assert!(matches!(cache.lookup(&key(1), Some(100), false), Use::Rows));
        assert!(matches!(
            cache.lookup(&key(1), Some(100), false),
            Use::Admit
        ));
        cache.insert(key(1), batch(10));
        match cache.lookup(&key(1), Some(100), false) {
            Use::Hit(b) => assert_eq!(b[0].num_rows(), 10),
            _ => panic!("expected a hit"),
        }
        // A block whose read decodes it whole anyway is admitted on its first touch.
        assert!(matches!(cache.lookup(&key(5), Some(100), true), Use::Admit));
        // Another projection is another block.
        let mut other = key(1);
        other.columns = Arc::from(Vec::<String>::new());
        assert!(matches!(cache.lookup(&other, Some(100), false), Use::Rows));
    }

    #[test]
    fn unknown_or_large_blocks_and_a_zero_budget_are_never_kept() {
        let cache = BlockCache::new(8_000);
        for _ in 0..3 {
            assert!(matches!(cache.lookup(&key(1), None, false), Use::Rows));
            assert!(matches!(
                cache.lookup(&key(2), Some(1_001), false),
                Use::Rows
            ));
        }
        // Over an eighth of the budget once decoded: not kept.
        cache.insert(key(3), batch(1_000));
        assert_eq!(cache.bytes(), 0);
        cache.set_budget(0);
        assert!(matches!(cache.lookup(&key(4), Some(1), false), Use::Rows));
        assert!(matches!(cache.lookup(&key(4), Some(1), false), Use::Rows));
    }

    #[test]
    fn an_epoch_cache_keeps_blocks_while_they_fit_and_evicts_none() {
        let one = memory(&batch(100)[0]);
        // Room for three blocks and a half: a block is larger than an eighth of the budget
        // and is kept all the same.
        let cache = BlockCache::filling(one * 7 / 2);
        assert!(cache.fills() && !BlockCache::new(one).fills());
        assert!(matches!(cache.lookup(&key(0), Some(one), true), Use::Admit));
        for b in 0..5 {
            cache.insert(key(b), batch(100));
        }
        // The first three stay; the later ones were not kept and nothing was evicted.
        assert_eq!(cache.bytes(), 3 * one);
        for b in 0..3 {
            assert!(matches!(
                cache.lookup(&key(b), Some(one), true),
                Use::Hit(_)
            ));
        }
        // A full cache admits no more: the rows of other blocks are read as they are.
        assert!(matches!(cache.lookup(&key(7), Some(one), true), Use::Rows));
        assert!(matches!(cache.lookup(&key(8), Some(1), false), Use::Rows));
        assert!(matches!(cache.lookup(&key(8), Some(1), false), Use::Admit));
    }

    #[test]
    fn the_least_recently_used_blocks_leave_first_within_the_budget() {
        let one = memory(&batch(100)[0]);
        let cache = BlockCache::new(one * 8 * 3 / 2);
        // Budget/8 is 1.5 blocks, so a block fits; at most 12 blocks are kept.
        for b in 0..12 {
            cache.insert(key(b), batch(100));
        }
        assert_eq!(cache.bytes(), 12 * one);
        // Touch block 0, then add one more: the least recently used leave (blocks 1, 2 and
        // 3), down to nine tenths of the budget (10.8 blocks: 10 kept).
        assert!(matches!(cache.lookup(&key(0), Some(1), false), Use::Hit(_)));
        cache.insert(key(12), batch(100));
        assert_eq!(cache.bytes(), 10 * one);
        assert!(matches!(cache.lookup(&key(0), Some(1), false), Use::Hit(_)));
        for gone in 1..=3 {
            assert!(!matches!(
                cache.lookup(&key(gone), Some(1), false),
                Use::Hit(_)
            ));
        }
        assert!(matches!(cache.lookup(&key(4), Some(1), false), Use::Hit(_)));
        assert!(matches!(
            cache.lookup(&key(12), Some(1), false),
            Use::Hit(_)
        ));
        cache.set_budget(one * 8 + one);
        assert!(cache.bytes() <= one * 9);
    }
}
