//! Helpers shared by the unit tests of this crate: a seeded pseudo-random generator, the
//! number of random cases of a differential test, and random byte soup.

/// Marsaglia's xorshift64: a fixed seed gives the same cases on every run.
pub(crate) struct XorShift(pub(crate) u64);

impl XorShift {
    /// The next 64 random bits.
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number below `n` (> 0).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// The number of random cases a differential test runs: `n`, or `n` times the value of
/// `BAZAN_STRESS` for a long soak of the fast paths against the portable ones.
pub(crate) fn stress_cases(n: usize) -> usize {
    let times = std::env::var("BAZAN_STRESS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(1);
    n * times.max(1)
}

/// `len` random bytes of `alphabet`: for differential tests of indexers.
pub(crate) fn byte_soup(seed: u64, len: usize, alphabet: &[u8]) -> Vec<u8> {
    let mut rng = XorShift(seed | 1);
    (0..len)
        .map(|_| alphabet[rng.below(alphabet.len())])
        .collect()
}

/// The debug text of local rows `[start, start + n)` of `path` read by `locator` under
/// `schema`, from the checkpoints of `blocks` (or from the file's start without them).
pub(crate) fn read_text(
    locator: &dyn crate::locator::Locator,
    path: &std::path::Path,
    schema: &arrow_schema::SchemaRef,
    blocks: Option<&[crate::locator::Block]>,
    start: u64,
    n: u64,
) -> String {
    let request = crate::locator::ReadRequest {
        rows: start..start + n,
        blocks,
        schema: Some(schema.clone()),
        ..Default::default()
    };
    let batches: Vec<_> = locator
        .read(path, &request)
        .unwrap()
        .collect::<crate::error::Result<_>>()
        .unwrap();
    format!("{batches:?}")
}

/// Reads rows of the file at `path` with `loc` on a pool of two threads, in one batch (large
/// enough to be decoded in two halves at once) and in batches too small to share, and checks
/// that both give the same rows (a file of 20,000 rows).
pub(crate) fn assert_halves_equal_small_batches(loc: &dyn crate::Locator, path: &std::path::Path) {
    use crate::locator::{IndexOptions, ReadRequest};
    let index = loc.index(path, &IndexOptions::default()).unwrap();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    for (start, end) in [(0, 20_000), (3, 4_000), (12_345, 19_999), (7_000, 7_300)] {
        let read = |batch_size| -> Vec<arrow_array::RecordBatch> {
            let request = ReadRequest {
                rows: start..end,
                blocks: Some(&index.blocks),
                schema: Some(index.schema.clone()),
                projection: None,
                batch_size,
            };
            pool.install(|| {
                loc.read(path, &request)
                    .unwrap()
                    .collect::<Result<_, _>>()
                    .unwrap()
            })
        };
        let whole = read(100_000);
        let small = read(200);
        let concat = |b: &[arrow_array::RecordBatch]| {
            arrow_select::concat::concat_batches(&index.schema, b).unwrap()
        };
        // One batch, or two halves decoded at once when the rows are many (20,000 are).
        let rows: Vec<usize> = whole.iter().map(|b| b.num_rows()).collect();
        assert!(rows.len() <= 2, "rows {start}..{end}: {rows:?}");
        if end - start == 20_000 {
            assert_eq!(rows.len(), 2, "rows {start}..{end} were not shared");
            // Split at the fine checkpoint nearest the middle (39 x 256 rows), which the map
            // knows, rather than at a middle found by skipping the first half.
            assert_eq!(rows[0], 9_984);
        }
        assert_eq!(rows.iter().sum::<usize>() as u64, end - start);
        assert_eq!(concat(&whole), concat(&small), "rows {start}..{end}");
    }
}
