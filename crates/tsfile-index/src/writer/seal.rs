//! Encoding the pages of aligned devices on parallel threads: the time column and every
//! value column of every device are independent jobs, handed out one at a time from a shared
//! counter (the longest first) to the calling thread and its helpers, and their results are put
//! back in job order, so the bytes never depend on the scheduling.

use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};

use tsfile_format::types::TSDataType;

use super::chunk::{self, EncodedPage};
use super::device::{Device, Series};
use super::error::WriteResult;
use super::file::codec_of;
use super::options::WriterOptions;

/// Rows below which the pages are encoded on the calling thread alone (a thread costs more
/// than it saves there).
const PARALLEL_ROWS: usize = 4096;

/// Encodes the pages `pages` (row ranges of the buffered rows) of an aligned device: the
/// time column first, then every series in measurement order.
pub(crate) fn encode_aligned(
    dev: &Device,
    pages: &[Range<usize>],
    opts: &WriterOptions,
) -> WriteResult<Vec<Vec<EncodedPage>>> {
    let rows = pages.last().map_or(0, |r| r.end);
    let jobs: Vec<Job<'_>> = jobs_of(dev, pages).collect();
    parallel_map(&jobs, rows, |job| job.run(opts))
        .into_iter()
        .collect()
}

/// Encodes the complete pages of the aligned devices `devs` as soon as they are full, when
/// pages are cut by the point count alone, so that at most one page of rows stays buffered
/// per column. The pages of all devices are encoded in one parallel pass.
pub(crate) fn seal_full_pages(devs: &mut [&mut Device], opts: &WriterOptions) -> WriteResult<()> {
    let max = opts.max_points_per_page.max(1);
    // For each device to seal: its index in `devs` and the page ranges.
    let plans: Vec<(usize, Vec<Range<usize>>)> = devs
        .iter()
        .enumerate()
        .filter(|(_, d)| {
            d.aligned
                && d.times.len() >= max
                && chunk::points_only(d.series.values().map(|s| &s.values), opts)
        })
        .map(|(i, d)| {
            let m = d.times.len() / max * max;
            (i, (0..m).step_by(max).map(|s| s..s + max).collect())
        })
        .collect();
    if plans.is_empty() {
        return Ok(());
    }
    let results: Vec<Vec<EncodedPage>> = {
        let jobs: Vec<Job<'_>> = plans
            .iter()
            .flat_map(|(i, pages)| jobs_of(&*devs[*i], pages))
            .collect();
        let rows = plans.iter().map(|(i, _)| devs[*i].times.len()).sum();
        parallel_map(&jobs, rows, |job| job.run(opts))
            .into_iter()
            .collect::<WriteResult<_>>()?
    };
    let mut results = results.into_iter();
    for (i, pages) in &plans {
        let dev = &mut *devs[*i];
        let m = pages.last().map_or(0, |r| r.end);
        dev.time_sealed.extend(results.next().unwrap_or_default());
        dev.times.drain(..m);
        for s in dev.series.values_mut() {
            s.sealed.extend(results.next().unwrap_or_default());
            let present = s.validity[..m].iter().filter(|p| **p).count();
            s.values.drain_front(present);
            s.validity.drain(..m);
        }
    }
    Ok(())
}

/// One column of one device to encode: the time column (`series` = None) or a series.
struct Job<'a> {
    dev: &'a Device,
    series: Option<&'a Series>,
    pages: &'a [Range<usize>],
}

impl Job<'_> {
    fn run(&self, opts: &WriterOptions) -> WriteResult<Vec<EncodedPage>> {
        match self.series {
            None => chunk::time_pages(&self.dev.times, self.pages, opts),
            Some(s) => chunk::value_pages(
                codec_of(&s.schema),
                &s.values,
                &s.validity,
                &self.dev.times,
                self.pages,
                opts,
            ),
        }
    }

    /// A rough cost, to start the longest jobs first: rows times the value width.
    fn cost(&self) -> usize {
        let rows = self.pages.last().map_or(0, |r| r.end);
        let width = match self.series.map(|s| s.schema.data_type) {
            None => 4,
            Some(TSDataType::Boolean) => 1,
            Some(TSDataType::Int32 | TSDataType::Date | TSDataType::Float) => 4,
            Some(_) => 8,
        };
        rows * width
    }
}

/// The jobs of one device: its time column, then its series in measurement order.
fn jobs_of<'a>(dev: &'a Device, pages: &'a [Range<usize>]) -> impl Iterator<Item = Job<'a>> {
    std::iter::once(None)
        .chain(dev.series.values().map(Some))
        .map(move |series| Job { dev, series, pages })
}

/// `f` over `jobs`, results in job order; on several threads (the calling one included)
/// when there are enough rows to be worth it. Jobs are taken longest first.
fn parallel_map<'a, R: Send>(
    jobs: &[Job<'a>],
    rows: usize,
    f: impl Fn(&Job<'a>) -> R + Sync,
) -> Vec<R> {
    let threads = std::thread::available_parallelism()
        .map_or(1, std::num::NonZeroUsize::get)
        .min(jobs.len());
    if threads < 2 || rows < PARALLEL_ROWS {
        return jobs.iter().map(&f).collect();
    }
    let mut order: Vec<usize> = (0..jobs.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(jobs[i].cost()));
    let next = AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        loop {
            let k = next.fetch_add(1, Ordering::Relaxed);
            let Some(&i) = order.get(k) else {
                break;
            };
            done.push((i, f(&jobs[i])));
        }
        done
    };
    let mut out: Vec<(usize, R)> = std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..threads).map(|_| scope.spawn(work)).collect();
        let mut out = work();
        for h in helpers {
            out.extend(h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
        }
        out
    });
    out.sort_by_key(|(i, _)| *i);
    out.into_iter().map(|(_, r)| r).collect()
}
