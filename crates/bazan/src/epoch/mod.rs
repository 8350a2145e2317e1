//! Training epochs over a lake ([`Lake::epoch`]): every row once per epoch, in an order that
//! is a pure function of `(seed, epoch)`, the options and the map, split between
//! data-parallel ranks and the worker processes of each rank, in batches of one size, and
//! resumable after any batch from a small [`EpochState`].
//!
//! **The epoch order.** The `n` rows of the lake are laid out in a sequence of positions
//! `0..n`:
//!
//! - [`Shuffle::None`]: position `p` is row `p`;
//! - [`Shuffle::Block`]: the lake is cut into *units* (the map's blocks: row groups, stripes,
//!   record batches, checkpoint strides; a block longer than a quarter of `buffer_rows` is cut
//!   into pieces of that length; a file without blocks is one unit), the units are put in a
//!   random order and laid end to end;
//! - [`Shuffle::Global`]: position `p` is row `π(p)` of a pseudo-random permutation `π` of
//!   `0..n` (a keyed Feistel network, computed per position: no table of `n` row numbers).
//!
//! **Shards.** With `world_size` ranks, each rank gets `R` consecutive positions: rank `r`
//! reads positions `r·R .. (r+1)·R`. Without `drop_last`, `R = ⌈n / world_size⌉` and a
//! position `p ≥ n` wraps to `p − n` (the first rows of the epoch order are read a second time
//! by the last ranks, fewer than `world_size` rows in all, as `torch`'s `DistributedSampler`
//! pads); its `⌈R / batch_size⌉` batches are full but the last. With `drop_last`,
//! `R = ⌊⌊n / world_size⌋ / batch_size⌋ · batch_size`: every batch is full and the last
//! `n − world_size·R` positions of the order are not read this epoch. Every rank thus has the
//! same number of batches. The `B` batches of a rank are split between its `num_workers`
//! workers in consecutive runs (worker `w` reads batches `⌊w·B/k⌋ .. ⌊(w+1)·B/k⌋`), so the
//! rows and batches of a rank do not depend on its worker count.
//!
//! **Reading.** `Block` reads a rank's positions in *windows* of `buffer_rows` (rounded down
//! to whole batches) laid from the rank's first position, so that a rank's batches are the
//! same whatever its worker count (the workers' batches, one worker after the other, are the
//! rank's): a window is read as the row ranges it covers (the files' blocks, in parallel,
//! each file checked against the map first), then its rows are returned in a pseudo-random
//! order of the window (a permutation keyed by the seed, the epoch and the window's first
//! position). Memory is bounded by the window, and the rows of several blocks are mixed in
//! it; a worker whose batches begin or end inside a window reads that whole window.
//!
//! `None` and `Global` return the positions in order, so they read ahead from the next batch
//! of the worker: one batch first, then twice as many positions each time up to
//! `buffer_rows` (a quick first batch, then few large reads). `None` reads the row ranges as
//! `Block` does; `Global` reads each run of positions with one [`Lake::take`] (the batched
//! take path: one read per touched file), whose cost per touched file is what the read-ahead
//! spreads over many rows.
//!
//! **The cache of a global epoch.** Random rows cost about a whole block's decode in most
//! formats (a Parquet row group's pages, an Arrow record batch, a text file's checkpoint
//! stride skipped through to the wanted rows), and a global epoch draws rows from every block
//! in every read. So a `Global` reader keeps the blocks it decodes in a decoded-block cache of
//! its own, dropped with the reader: every block of every format (a text file's stride from
//! its second touch, so the first batch reads only its rows) is decoded whole once and kept
//! while the kept blocks' Arrow memory stays within [`EPOCH_CACHE_FACTOR`] times the lake's
//! cache budget ([`Lake::set_cache_bytes`]; 1 GiB by default, none when the lake's cache is
//! off). Blocks past the budget are not kept and none is evicted: their rows are read again
//! in each read that wants them, as a take reads them. A lake whose decoded blocks fit thus
//! costs one decode of each block per epoch and a gather of its rows; memory is the budget
//! plus the read window ([`EpochReader::cached_bytes`] says what is kept).
//!
//! Because what is read never changes what is returned, a reader resumed at batch `k` returns
//! exactly what an uninterrupted one would.

use std::ops::Range;
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use rayon::prelude::*;

use crate::block_cache::BlockCache;
use crate::cancel::CancelToken;
use crate::error::{Error, ErrorKind, Result};
use crate::lake::Lake;
use crate::scan::ScanOptions;

/// Rows of the read window ([`EpochOptions::buffer_rows`]) by default.
pub const DEFAULT_BUFFER_ROWS: usize = 65_536;

/// The budget of a [`Shuffle::Global`] epoch's own decoded-block cache, as a multiple of the
/// lake's ([`Lake::cache_bytes`]): 1 GiB for the default 256 MiB, none when the lake's cache
/// is off.
pub const EPOCH_CACHE_FACTOR: u64 = 4;

/// The budget of a [`Shuffle::Global`] epoch's decoded-block cache for `lake`.
fn epoch_cache_bytes(lake: &Lake) -> u64 {
    lake.cache_bytes().saturating_mul(EPOCH_CACHE_FACTOR)
}

/// How an epoch orders the rows (the module documentation gives each rule and its cost).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Shuffle {
    /// Lake order.
    #[default]
    None,
    /// A random order of blocks, mixed in a window of `buffer_rows` rows.
    Block,
    /// A pseudo-random permutation of every row.
    Global,
}

impl Shuffle {
    /// The mode's name: `none`, `block` or `global`.
    pub fn as_str(self) -> &'static str {
        match self {
            Shuffle::None => "none",
            Shuffle::Block => "block",
            Shuffle::Global => "global",
        }
    }
}

impl std::str::FromStr for Shuffle {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        match s {
            "none" => Ok(Shuffle::None),
            "block" => Ok(Shuffle::Block),
            "global" => Ok(Shuffle::Global),
            other => Err(Error::invalid(format!(
                "shuffle must be 'none', 'block' or 'global', not {other:?}"
            ))),
        }
    }
}

/// One part of a whole: `index` of `count` (a rank of the world, a worker of a rank).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// Which part, from 0.
    pub index: u64,
    /// How many parts (at least 1).
    pub count: u64,
}

impl Shard {
    /// The whole (part 0 of 1).
    pub const WHOLE: Shard = Shard { index: 0, count: 1 };

    /// An error naming `what` (`world_size`, `num_workers`) unless the shard is valid.
    fn check(self, index: &str, count: &str) -> Result<()> {
        if self.count == 0 {
            return Err(Error::invalid(format!("{count} must be at least 1, not 0")));
        }
        if self.index >= self.count {
            return Err(Error::invalid(format!(
                "{index} {} is out of range for {count} {} (0 to {})",
                self.index,
                self.count,
                self.count - 1
            )));
        }
        Ok(())
    }
}

impl Default for Shard {
    fn default() -> Self {
        Shard::WHOLE
    }
}

/// What an epoch reads and how ([`Lake::epoch`]).
#[derive(Debug, Clone)]
pub struct EpochOptions {
    /// Rows per batch (at least 1; every batch is full but a part's last one, see the module
    /// documentation).
    pub batch_size: usize,
    /// Columns, in this order (unified names; `_gid` and `_path` may be named); `None`: all.
    pub columns: Option<Vec<String>>,
    /// Append `_gid` (the global row number) when not named in `columns`.
    pub with_gid: bool,
    /// Append `_path` (the file's relative path) when not named in `columns`.
    pub with_path: bool,
    /// The order of the rows.
    pub shuffle: Shuffle,
    /// The seed of the order.
    pub seed: u64,
    /// The epoch (each epoch has its own order).
    pub epoch: u64,
    /// This rank of the data-parallel world (`count` is the world size).
    pub shard: Shard,
    /// This worker of the rank (a DataLoader worker process; `count` is the worker count).
    pub worker: Shard,
    /// Read full batches only (see the module documentation for the rows left out).
    pub drop_last: bool,
    /// Rows of the read window (at least 1): bounds memory; with [`Shuffle::Block`], the
    /// rows mixed together.
    pub buffer_rows: usize,
    /// Stops a running read from another thread.
    pub cancel: Option<CancelToken>,
}

impl Default for EpochOptions {
    fn default() -> Self {
        EpochOptions {
            batch_size: 1024,
            columns: None,
            with_gid: false,
            with_path: false,
            shuffle: Shuffle::None,
            seed: 0,
            epoch: 0,
            shard: Shard::WHOLE,
            worker: Shard::WHOLE,
            drop_last: false,
            buffer_rows: DEFAULT_BUFFER_ROWS,
            cancel: None,
        }
    }
}

/// Where an epoch reader is: the options that fix its order, and the batches already
/// returned. A reader made with the same options and this state returns exactly the batches
/// an uninterrupted one would have returned next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EpochState {
    /// The order ([`EpochOptions::shuffle`]).
    pub shuffle: Shuffle,
    /// [`EpochOptions::seed`].
    pub seed: u64,
    /// [`EpochOptions::epoch`].
    pub epoch: u64,
    /// [`EpochOptions::shard`].
    pub shard: Shard,
    /// [`EpochOptions::worker`].
    pub worker: Shard,
    /// [`EpochOptions::batch_size`].
    pub batch_size: u64,
    /// [`EpochOptions::drop_last`].
    pub drop_last: bool,
    /// [`EpochOptions::buffer_rows`].
    pub buffer_rows: u64,
    /// Rows of the lake the state was taken over.
    pub total_rows: u64,
    /// Batches already returned.
    pub position: u64,
}

impl EpochState {
    /// The state as a JSON object (every field by name; shards as `[index, count]`).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "shuffle": self.shuffle.as_str(),
            "seed": self.seed,
            "epoch": self.epoch,
            "shard": [self.shard.index, self.shard.count],
            "worker": [self.worker.index, self.worker.count],
            "batch_size": self.batch_size,
            "drop_last": self.drop_last,
            "buffer_rows": self.buffer_rows,
            "total_rows": self.total_rows,
            "position": self.position,
        })
    }

    /// A state from [`EpochState::to_json`]'s object; a missing or mistyped field is an
    /// [`ErrorKind::InvalidArgument`] naming it.
    pub fn from_json(v: &serde_json::Value) -> Result<Self> {
        let field = |name: &str| {
            v.get(name)
                .ok_or_else(|| Error::invalid(format!("epoch state: no field {name:?}")))
        };
        let num = |name: &str| {
            field(name)?.as_u64().ok_or_else(|| {
                Error::invalid(format!("epoch state: {name:?} must be an integer >= 0"))
            })
        };
        let shard = |name: &str| -> Result<Shard> {
            let pair = field(name)?
                .as_array()
                .filter(|a| a.len() == 2)
                .and_then(|a| Some((a[0].as_u64()?, a[1].as_u64()?)))
                .ok_or_else(|| {
                    Error::invalid(format!("epoch state: {name:?} must be [index, count]"))
                })?;
            Ok(Shard {
                index: pair.0,
                count: pair.1,
            })
        };
        let shuffle = field("shuffle")?
            .as_str()
            .ok_or_else(|| Error::invalid("epoch state: \"shuffle\" must be a string"))?
            .parse()?;
        let drop_last = field("drop_last")?
            .as_bool()
            .ok_or_else(|| Error::invalid("epoch state: \"drop_last\" must be a boolean"))?;
        Ok(EpochState {
            shuffle,
            seed: num("seed")?,
            epoch: num("epoch")?,
            shard: shard("shard")?,
            worker: shard("worker")?,
            batch_size: num("batch_size")?,
            drop_last,
            buffer_rows: num("buffer_rows")?,
            total_rows: num("total_rows")?,
            position: num("position")?,
        })
    }
}

// --- the pseudo-random permutation ---------------------------------------------------------

/// The finalizer of splitmix64: a bijective mix of 64 bits.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A key from several numbers (order matters).
fn key(parts: &[u64]) -> u64 {
    parts.iter().fold(0x6261_7a61_6e00_0001, |s, &p| {
        mix(s ^ mix(p.wrapping_add(0x9E37_79B9_7F4A_7C15)))
    })
}

/// Feistel rounds of [`Perm`].
const ROUNDS: usize = 6;

/// A pseudo-random permutation of `0..n`: a balanced Feistel network over the smallest even
/// number of bits that holds `n − 1`, walked again until the value falls below `n` (each
/// walk stays on the cycle of the start, so this is a bijection of `0..n`; fewer than four
/// steps are expected). O(1) memory, a pure function of `(n, key)`.
#[derive(Debug, Clone)]
struct Perm {
    n: u64,
    half: u32,
    mask: u64,
    keys: [u64; ROUNDS],
}

impl Perm {
    fn new(n: u64, key: u64) -> Perm {
        let bits = (64 - n.saturating_sub(1).leading_zeros()).max(2);
        let bits = bits + (bits & 1);
        let half = bits / 2;
        let mut s = key;
        let keys = std::array::from_fn(|_| {
            s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
            mix(s)
        });
        Perm {
            n,
            half,
            mask: (1u64 << half) - 1,
            keys,
        }
    }

    fn network(&self, x: u64) -> u64 {
        let (mut l, mut r) = (x >> self.half, x & self.mask);
        for k in self.keys {
            let f = mix(r ^ k) & self.mask;
            (l, r) = (r, l ^ f);
        }
        (l << self.half) | r
    }

    /// `π(i)` for `i < n`.
    fn at(&self, i: u64) -> u64 {
        let mut x = i;
        loop {
            x = self.network(x);
            if x < self.n {
                return x;
            }
        }
    }
}

// --- the plan ------------------------------------------------------------------------------

/// Which row each position of the epoch sequence is.
#[derive(Debug, Clone)]
enum Order {
    Identity,
    Global(Perm),
    /// Units laid end to end: each unit's first global row and its first position (both in
    /// epoch order), and the position after the last unit.
    Units {
        first_row: Vec<u64>,
        first_pos: Vec<u64>,
    },
}

impl Order {
    /// The global row runs of positions `q` (`q.end <= n`), in position order.
    fn runs(&self, q: Range<u64>, out: &mut Vec<Range<u64>>) {
        match self {
            Order::Identity => out.push(q),
            Order::Global(p) => out.extend(q.map(|i| {
                let g = p.at(i);
                g..g + 1
            })),
            Order::Units {
                first_row,
                first_pos,
            } => {
                let mut at = q.start;
                // The unit holding `at`: the last whose first position is <= at.
                let mut k = first_pos.partition_point(|&s| s <= at).saturating_sub(1);
                while at < q.end {
                    let unit_end = first_pos.get(k + 1).copied().unwrap_or(u64::MAX);
                    let end = unit_end.min(q.end);
                    let row = first_row[k] + (at - first_pos[k]);
                    out.push(row..row + (end - at));
                    at = end;
                    k += 1;
                }
            }
        }
    }

    fn row(&self, q: u64) -> u64 {
        let mut one = Vec::with_capacity(1);
        self.runs(q..q + 1, &mut one);
        one[0].start
    }
}

/// The layout of one epoch for one rank and worker (the module documentation gives the
/// rules): a pure function of the options and the map, computed without reading a file.
///
/// Positions below are relative to the rank's first position unless said otherwise. Read
/// windows are laid from the rank's start, so the batches of a rank are the same whatever
/// the number of its workers.
#[derive(Debug, Clone)]
pub struct EpochPlan {
    n: u64,
    shuffle: Shuffle,
    seed: u64,
    epoch: u64,
    batch_size: u64,
    order: Order,
    /// The rank's first position in the padded sequence (`p ≥ n` wraps to `p mod n`).
    rank_start: u64,
    /// Positions of the rank.
    rank_len: u64,
    /// This worker's positions.
    part: Range<u64>,
    /// Positions per read window (a multiple of the batch size).
    window: u64,
}

impl EpochPlan {
    /// Batches of this part.
    pub fn num_batches(&self) -> u64 {
        self.num_rows().div_ceil(self.batch_size)
    }

    /// Rows of this part (padding included).
    pub fn num_rows(&self) -> u64 {
        self.part.end - self.part.start
    }

    /// The positions of batch `b` of the part.
    fn batch_span(&self, b: u64) -> Range<u64> {
        let first = self.part.start + b * self.batch_size;
        first..(first + self.batch_size).min(self.part.end)
    }

    /// The positions of window `w` of the rank.
    fn window_range(&self, w: u64) -> Range<u64> {
        let start = w * self.window;
        start..(start + self.window).min(self.rank_len)
    }

    /// The order of the rows within window `w`: `None` for the identity.
    fn window_perm(&self, w: u64) -> Option<Perm> {
        let r = self.window_range(w);
        match self.shuffle {
            Shuffle::Block => Some(Perm::new(
                r.end - r.start,
                key(&[self.seed, self.epoch, 2, self.rank_start + r.start]),
            )),
            _ => None,
        }
    }

    /// The position whose row batch position `pos` of window `w` holds.
    fn source(&self, w: u64, perm: Option<&Perm>, pos: u64) -> u64 {
        match perm {
            Some(p) => {
                let start = self.window_range(w).start;
                start + p.at(pos - start)
            }
            None => pos,
        }
    }

    /// The global row runs of positions `r`, in position order (wrapping at `n`).
    fn runs(&self, r: Range<u64>) -> Vec<Range<u64>> {
        let mut runs = Vec::new();
        let (mut p, end) = (self.rank_start + r.start, self.rank_start + r.end);
        while p < end {
            let q = p % self.n;
            let len = (end - p).min(self.n - q);
            self.order.runs(q..q + len, &mut runs);
            p += len;
        }
        runs
    }

    /// The global rows of batch `b`, in the order the batch holds them (no file is read).
    pub fn batch_rows(&self, b: u64) -> Vec<u64> {
        if b >= self.num_batches() {
            return Vec::new();
        }
        let span = self.batch_span(b);
        let w = span.start / self.window;
        let perm = self.window_perm(w);
        span.map(|pos| {
            let src = self.source(w, perm.as_ref(), pos);
            self.order.row((self.rank_start + src) % self.n)
        })
        .collect()
    }
}

impl Lake {
    /// The units of [`Shuffle::Block`] in map order: each a global row range, a block or a
    /// piece of at most `max_len` rows of one (a file whose blocks do not cover its rows in
    /// order is one unit).
    fn units(&self, max_len: u64) -> Result<Vec<Range<u64>>> {
        let mut units = Vec::new();
        for i in 0..self.total_files() {
            let (first, rows) = {
                let e = self.map().entry(i);
                (e.first_global_row, e.row_count)
            };
            if rows == 0 {
                continue;
            }
            let blocks = self.blocks(i)?;
            let mut next = 0u64;
            let covers = !blocks.is_empty()
                && blocks.iter().all(|b| {
                    let ok = b.first_row == next;
                    next += b.row_count;
                    ok
                })
                && next == rows;
            let ranges: Vec<Range<u64>> = if covers {
                blocks
                    .iter()
                    .filter(|b| b.row_count > 0)
                    .map(|b| b.first_row..b.first_row + b.row_count)
                    .collect()
            } else {
                std::iter::once(0..rows).collect()
            };
            for r in ranges {
                let mut s = r.start;
                while s < r.end {
                    let e = s.saturating_add(max_len).min(r.end);
                    units.push(first + s..first + e);
                    s = e;
                }
            }
        }
        Ok(units)
    }

    /// The plan of an epoch with these options (checked: batch size, buffer, shards), without
    /// reading a file.
    pub fn epoch_plan(&self, o: &EpochOptions) -> Result<EpochPlan> {
        if o.batch_size == 0 {
            return Err(Error::invalid("batch_size must be at least 1"));
        }
        if o.buffer_rows == 0 {
            return Err(Error::invalid("buffer_rows must be at least 1"));
        }
        o.shard.check("rank", "world_size")?;
        o.worker.check("worker", "num_workers")?;
        let n = self.total_rows();
        let bs = o.batch_size as u64;
        let order = match o.shuffle {
            Shuffle::None => Order::Identity,
            Shuffle::Global => Order::Global(Perm::new(n, key(&[o.seed, o.epoch, 1]))),
            Shuffle::Block => {
                let units = self.units((o.buffer_rows as u64 / 4).max(1))?;
                let perm = Perm::new(units.len() as u64, key(&[o.seed, o.epoch, 3]));
                let mut first_row = Vec::with_capacity(units.len());
                let mut first_pos = Vec::with_capacity(units.len());
                let mut pos = 0u64;
                for k in 0..units.len() as u64 {
                    let u = &units[perm.at(k) as usize];
                    first_row.push(u.start);
                    first_pos.push(pos);
                    pos += u.end - u.start;
                }
                if pos != n {
                    return Err(Error::new(
                        ErrorKind::Corrupt,
                        format!(
                            "the map of {} holds {pos} rows in its files' entries but counts {n}",
                            self.root().display()
                        ),
                    ));
                }
                Order::Units {
                    first_row,
                    first_pos,
                }
            }
        };
        let w = o.shard.count;
        // Rows per rank, and batches per rank.
        let (per_rank, batches) = if o.drop_last {
            let r = (n / w) / bs * bs;
            (r, r / bs)
        } else {
            let r = n.div_ceil(w);
            (r, r.div_ceil(bs))
        };
        let k = o.worker.count as u128;
        let b0 = (o.worker.index as u128 * batches as u128 / k) as u64;
        let b1 = ((o.worker.index as u128 + 1) * batches as u128 / k) as u64;
        let part = (b0 * bs).min(per_rank)..(b1 * bs).min(per_rank);
        let window_rows = o.buffer_rows as u64;
        Ok(EpochPlan {
            n,
            shuffle: o.shuffle,
            seed: o.seed,
            epoch: o.epoch,
            batch_size: bs,
            order,
            rank_start: o.shard.index * per_rank,
            rank_len: per_rank,
            part,
            window: (window_rows / bs).max(1) * bs,
        })
    }

    /// A reader of one epoch with these options, from its first batch or, with `state`, from
    /// the batch after the state's (the state must come from a reader with the same options
    /// over this lake).
    pub fn epoch(
        self: &Arc<Self>,
        options: &EpochOptions,
        state: Option<&EpochState>,
    ) -> Result<EpochReader> {
        let plan = self.epoch_plan(options)?;
        let scan = ScanOptions {
            columns: options.columns.clone(),
            with_gid: options.with_gid,
            with_path: options.with_path,
            batch_size: 0,
            cancel: options.cancel.clone(),
            string_views: false,
        };
        let schema = self.scan_schema(&scan)?;
        let mut reader = EpochReader {
            lake: Arc::clone(self),
            state: EpochState {
                shuffle: options.shuffle,
                seed: options.seed,
                epoch: options.epoch,
                shard: options.shard,
                worker: options.worker,
                batch_size: options.batch_size as u64,
                drop_last: options.drop_last,
                buffer_rows: options.buffer_rows as u64,
                total_rows: self.total_rows(),
                position: 0,
            },
            plan,
            scan,
            schema,
            loaded: None,
            ahead: options.batch_size as u64,
            done: false,
            cache: (options.shuffle == Shuffle::Global)
                .then(|| BlockCache::filling(epoch_cache_bytes(self))),
        };
        if let Some(s) = state {
            let mine = EpochState {
                position: s.position,
                ..reader.state
            };
            if *s != mine {
                return Err(Error::invalid(format!(
                    "the epoch state {} does not belong to this reader {} (every field but \
                     position must match)",
                    s.to_json(),
                    mine.to_json()
                )));
            }
            if s.position > reader.plan.num_batches() {
                return Err(Error::new(
                    ErrorKind::OutOfRange,
                    format!(
                        "epoch state position {} is past the {} batches of this part",
                        s.position,
                        reader.plan.num_batches()
                    ),
                ));
            }
            reader.state.position = s.position;
        }
        Ok(reader)
    }

    /// The lake cut into at most `parts` consecutive global row ranges at block boundaries
    /// (the units of [`Shuffle::Block`] for a buffer of `u64::MAX` rows), each cut at the
    /// boundary nearest an equal share of the rows: the read tasks of a parallel reader.
    /// Empty ranges are left out.
    pub fn balanced_ranges(&self, parts: usize) -> Result<Vec<Range<u64>>> {
        if parts == 0 {
            return Err(Error::invalid("parts must be at least 1"));
        }
        let n = self.total_rows();
        let bounds: Vec<u64> = self.units(u64::MAX)?.iter().map(|u| u.end).collect();
        let mut cuts = vec![0u64];
        for k in 1..parts as u64 {
            let ideal = (u128::from(n) * u128::from(k) / parts as u128) as u64;
            let i = bounds.partition_point(|&b| b < ideal);
            let best = [i.checked_sub(1), Some(i)]
                .into_iter()
                .flatten()
                .filter_map(|j| bounds.get(j).copied())
                .min_by_key(|&b| b.abs_diff(ideal));
            if let Some(b) = best
                && b > *cuts.last().unwrap_or(&0)
                && b < n
            {
                cuts.push(b);
            }
        }
        cuts.push(n);
        Ok(cuts
            .windows(2)
            .filter(|w| w[1] > w[0])
            .map(|w| w[0]..w[1])
            .collect())
    }
}

/// The rows of the loaded window: its batches in position order, and where each starts.
struct Loaded {
    /// The positions read.
    range: Range<u64>,
    batches: Vec<RecordBatch>,
    starts: Vec<usize>,
    perm: Option<Perm>,
}

impl Loaded {
    /// True when batch positions `span` are among those read.
    fn holds(&self, span: &Range<u64>) -> bool {
        self.range.start <= span.start && span.end <= self.range.end
    }

    /// (batch, row) of local position `i`.
    fn at(&self, i: usize) -> (usize, usize) {
        let b = self.starts.partition_point(|&s| s <= i) - 1;
        (b, i - self.starts[b])
    }
}

/// One epoch of a lake for one rank and worker, batch by batch ([`Lake::epoch`]).
pub struct EpochReader {
    lake: Arc<Lake>,
    plan: EpochPlan,
    state: EpochState,
    scan: ScanOptions,
    schema: SchemaRef,
    loaded: Option<Loaded>,
    /// Positions the next read of an identity order covers (doubling up to the window).
    ahead: u64,
    done: bool,
    /// The decoded-block cache of a [`Shuffle::Global`] epoch.
    cache: Option<BlockCache>,
}

impl std::fmt::Debug for EpochReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EpochReader")
            .field("state", &self.state)
            .field("batches", &self.plan.num_batches())
            .finish()
    }
}

impl EpochReader {
    /// The schema of every batch.
    pub fn schema(&self) -> SchemaRef {
        Arc::clone(&self.schema)
    }

    /// The bytes of Arrow memory the epoch's own decoded-block cache holds ([`Shuffle::Global`];
    /// 0 for the other orders).
    pub fn cached_bytes(&self) -> u64 {
        self.cache.as_ref().map_or(0, BlockCache::bytes)
    }

    /// The plan this reader follows.
    pub fn plan(&self) -> &EpochPlan {
        &self.plan
    }

    /// Where the reader is: give it to [`Lake::epoch`] to go on from the next batch.
    pub fn state(&self) -> EpochState {
        self.state
    }

    /// True when the next batch reads data files (its window is not read yet); false when it
    /// comes from memory or the part is over.
    pub fn next_reads_files(&self) -> bool {
        let b = self.state.position;
        if self.done || b >= self.plan.num_batches() {
            return false;
        }
        let span = self.plan.batch_span(b);
        self.loaded.as_ref().is_none_or(|l| !l.holds(&span))
    }

    /// Reads positions `r` (of window `w` when its rows are permuted).
    fn load(&self, w: u64, r: Range<u64>) -> Result<Loaded> {
        let m = r.end - r.start;
        let runs = self.plan.runs(r.clone());
        let batches: Vec<RecordBatch> = match self.plan.order {
            Order::Global(_) => {
                let rows: Vec<u64> = runs.iter().map(|r| r.start).collect();
                vec![match &self.cache {
                    Some(cache) => self.lake.take_in(&rows, &self.scan, cache)?,
                    None => self.lake.take(&rows, &self.scan)?,
                }]
            }
            _ => {
                let read: Vec<Result<Vec<RecordBatch>>> = runs
                    .into_par_iter()
                    .map(|run| self.lake.scan(run, &self.scan)?.collect_batches())
                    .collect();
                let mut all = Vec::new();
                for part in read {
                    all.extend(part?);
                }
                all
            }
        };
        let mut starts = Vec::with_capacity(batches.len());
        let mut rows = 0usize;
        for b in &batches {
            starts.push(rows);
            rows += b.num_rows();
        }
        if rows as u64 != m {
            return Err(Error::new(
                ErrorKind::Corrupt,
                format!(
                    "epoch window of {m} rows of {}: read {rows}",
                    self.lake.root().display()
                ),
            ));
        }
        Ok(Loaded {
            range: r,
            batches,
            starts,
            perm: self.plan.window_perm(w),
        })
    }

    fn step(&mut self) -> Result<Option<RecordBatch>> {
        CancelToken::check(self.scan.cancel.as_ref())?;
        let b = self.state.position;
        if b >= self.plan.num_batches() {
            return Ok(None);
        }
        let span = self.plan.batch_span(b);
        let w = span.start / self.plan.window;
        if self.loaded.as_ref().is_none_or(|l| !l.holds(&span)) {
            // The old rows are dropped before the new ones are read.
            self.loaded = None;
            let r = if self.plan.shuffle == Shuffle::Block {
                self.plan.window_range(w)
            } else {
                let r = span.start..(span.start + self.ahead).min(self.plan.part.end);
                self.ahead = (self.ahead * 2).min(self.plan.window);
                r
            };
            self.loaded = Some(self.load(w, r)?);
        }
        let loaded = self
            .loaded
            .as_ref()
            .ok_or_else(|| Error::new(ErrorKind::Other, "epoch: no window (internal)"))?;
        let batch = match &loaded.perm {
            None if loaded.batches.len() == 1 => loaded.batches[0].slice(
                (span.start - loaded.range.start) as usize,
                (span.end - span.start) as usize,
            ),
            perm => {
                let picks: Vec<(usize, usize)> = span
                    .clone()
                    .map(|pos| {
                        let src = self.plan.source(w, perm.as_ref(), pos);
                        loaded.at((src - loaded.range.start) as usize)
                    })
                    .collect();
                crate::scan::interleave_rows(Arc::clone(&self.schema), &loaded.batches, &picks)?
            }
        };
        let used_up = span.end >= loaded.range.end;
        self.state.position += 1;
        if used_up {
            self.loaded = None;
        }
        Ok(Some(batch))
    }

    /// The next batch, `None` at the end of the part. After an error the reader ends (its
    /// state stays at the last batch returned, so a new reader can try again from there).
    pub fn next_batch(&mut self) -> Option<Result<RecordBatch>> {
        if self.done {
            return None;
        }
        let step = self.step();
        crate::scan::fused(&mut self.done, step)
    }
}

impl Iterator for EpochReader {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_batch()
    }
}

#[cfg(test)]
mod tests;
