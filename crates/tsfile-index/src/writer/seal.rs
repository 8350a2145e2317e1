//! Buffering and encoding the columns of aligned devices on parallel threads. The time
//! column and every value column of every device are independent jobs: a value job appends
//! its column's new rows to the series buffer, then encodes the pages that are full (or,
//! with nothing buffered, encodes them straight from the batch and buffers the rest); the
//! jobs are handed out one at a time from a shared counter (the longest first) to the calling
//! thread and its helpers, and their results are put back in job order, so the bytes never
//! depend on the scheduling.

use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

use arrow_array::ArrayRef;
use tsfile_format::types::TSDataType;

use super::arrow as conv;
use super::buffer::Values;
use super::chunk::{self, EncodedPage, codec_of};
use super::device::{Device, Series};
use super::error::WriteResult;
use super::options::WriterOptions;

/// Rows below which the jobs run on the calling thread alone (a thread costs more than it
/// saves there).
const PARALLEL_ROWS: usize = 4096;

/// The new rows of one device for [`append_and_seal`]: the batch rows `rows` (whose times
/// are already buffered unless `times` is given) and the batch column of each series, `None`
/// when the batch lacks it (the rows are null there).
pub(crate) struct NewRows<'a> {
    pub(crate) rows: &'a [Range<usize>],
    /// The times of `rows` when the device had no buffered rows and `rows` is one run: they
    /// were not buffered, and only those of the rows left unsealed will be.
    pub(crate) times: Option<&'a [i64]>,
    pub(crate) column: &'a dyn Fn(&str) -> Option<&'a ArrayRef>,
}

/// Encodes the pages `pages` (row ranges of the buffered rows) of an aligned device: the
/// time column first, then every series in measurement order.
pub(crate) fn encode_aligned(
    dev: &Device,
    pages: &[Range<usize>],
    opts: &WriterOptions,
) -> WriteResult<Vec<Vec<EncodedPage>>> {
    let rows = pages.last().map_or(0, |r| r.end);
    let jobs: Vec<(Option<&Series>, usize)> = std::iter::once(None)
        .chain(dev.series.values().map(Some))
        .map(|s| (s, rows * width(s.map(|s| s.schema.data_type))))
        .collect();
    parallel_map(jobs, rows, |(series, _)| match series {
        None => chunk::time_pages(&dev.times, pages, opts),
        Some(s) => chunk::value_pages(
            codec_of(&s.schema),
            &s.values,
            &s.validity,
            &dev.times,
            pages,
            opts,
        ),
    })
    .into_iter()
    .collect()
}

/// Encodes the complete pages of the aligned devices `devs` as soon as they are full, when
/// pages are cut by the point count alone, so that at most one page of rows stays buffered
/// per column.
pub(crate) fn seal_full_pages(devs: &mut [&mut Device], opts: &WriterOptions) -> WriteResult<()> {
    let mut devs: Vec<(&mut Device, Option<NewRows<'_>>)> =
        devs.iter_mut().map(|d| (&mut **d, None)).collect();
    append_and_seal(&mut devs, opts)
}

/// Appends the new rows of each device to its series buffers, then encodes the complete
/// pages as [`seal_full_pages`] does, every column of every device a job of one parallel
/// pass. A column with nothing buffered encodes its full pages straight from the batch and
/// buffers only the rows after them.
pub(crate) fn append_and_seal(
    devs: &mut [(&mut Device, Option<NewRows<'_>>)],
    opts: &WriterOptions,
) -> WriteResult<()> {
    let max = opts.max_points_per_page.max(1);
    // The times of each device: its buffer, or the batch's when it was empty (direct).
    let times_of = |dev: &Device, new: &Option<NewRows<'_>>| -> (bool, usize) {
        match new.as_ref().and_then(|n| n.times) {
            Some(t) => (true, t.len()),
            None => (false, dev.times.len()),
        }
    };
    let mut plans: Vec<Vec<Range<usize>>> = Vec::with_capacity(devs.len());
    for (dev, new) in devs.iter() {
        let rows = times_of(dev, new).1;
        let full = dev.aligned
            && rows >= max
            && chunk::points_only(dev.series.values().map(|s| &s.values), opts);
        let m = if full { rows / max * max } else { 0 };
        plans.push((0..m).step_by(max).map(|s| s..s + max).collect());
    }
    let mut jobs: Vec<Job<'_>> = Vec::new();
    // Per device with full pages: its index and the time job's index.
    let mut time_jobs: Vec<(usize, usize)> = Vec::new();
    let mut rows_total = 0;
    for (i, ((dev, new), pages)) in devs.iter_mut().zip(&plans).enumerate() {
        let times: &[i64] = match new.as_ref().and_then(|n| n.times) {
            Some(t) => t,
            None => &dev.times,
        };
        let rows = times.len();
        rows_total += rows;
        if !pages.is_empty() {
            time_jobs.push((i, jobs.len()));
            jobs.push(Job {
                times,
                series: None,
                append: Append::Nothing,
                pages,
                cost: rows * width(None),
            });
        }
        for (name, s) in dev.series.iter_mut() {
            let append = match new {
                None => Append::Nothing,
                Some(n) => match (n.column)(name) {
                    Some(a) => Append::Rows(a, n.rows),
                    None => Append::Nulls(n.rows.iter().map(ExactSizeIterator::len).sum()),
                },
            };
            if pages.is_empty() {
                // Nothing to encode: the rows are buffered here, since a job per column
                // would cost more than the copy when there are many small devices.
                append_rows(s, append)?;
                continue;
            }
            let cost = rows * width(Some(s.schema.data_type));
            jobs.push(Job {
                times,
                series: Some(s),
                append,
                pages,
                cost,
            });
        }
    }
    let mut results: Vec<Vec<EncodedPage>> = parallel_map(jobs, rows_total, |j| j.run(opts))
        .into_iter()
        .collect::<WriteResult<_>>()?;
    for (i, job) in time_jobs {
        devs[i].0.time_sealed.append(&mut results[job]);
    }
    // The times of the rows left unsealed stay buffered.
    for ((dev, new), pages) in devs.iter_mut().zip(&plans) {
        let m = pages.last().map_or(0, |r| r.end);
        match new.as_ref().and_then(|n| n.times) {
            Some(t) => dev.times.extend_from_slice(&t[m..]),
            None => drop(dev.times.drain(..m)),
        }
    }
    Ok(())
}

/// What a value job appends before encoding.
enum Append<'a> {
    Nothing,
    /// Rows `.1` of the batch column `.0`.
    Rows(&'a ArrayRef, &'a [Range<usize>]),
    /// That many null rows (the batch lacks the column).
    Nulls(usize),
}

/// One column of one device: the time column (`series` = None) or a series.
struct Job<'a> {
    /// The device's times: its buffer (the new rows' included), or the new rows' times in
    /// the batch when nothing was buffered ([`NewRows::times`]).
    times: &'a [i64],
    series: Option<&'a mut Series>,
    append: Append<'a>,
    /// The full pages to encode (row ranges of the buffered rows), possibly none.
    pages: &'a [Range<usize>],
    /// A rough cost, to start the longest jobs first.
    cost: usize,
}

impl Job<'_> {
    /// The time job returns its pages; a value job keeps its pages in its series (and drops
    /// the rows they hold from the buffers) and returns none.
    fn run(self, opts: &WriterOptions) -> WriteResult<Vec<EncodedPage>> {
        let Some(s) = self.series else {
            return chunk::time_pages(self.times, self.pages, opts);
        };
        if let Append::Rows(a, [run]) = self.append
            && s.validity.is_empty()
            && self.times.len() == run.len()
            && !self.pages.is_empty()
        {
            // Nothing buffered and the new rows one run of the batch: the full pages are
            // encoded from the batch column, two at a time through small buffers that stay
            // in cache, and only the rows after them are buffered.
            return direct(s, a, run, self.times, self.pages, opts);
        }
        append_rows(s, self.append)?;
        let Some(m) = self.pages.last().map(|r| r.end) else {
            return Ok(Vec::new());
        };
        let pages = chunk::value_pages(
            codec_of(&s.schema),
            &s.values,
            &s.validity,
            self.times,
            self.pages,
            opts,
        )?;
        s.sealed.extend(pages);
        let present = s.validity[..m].iter().filter(|p| **p).count();
        s.values.drain_front(present);
        s.validity.drain(..m);
        Ok(Vec::new())
    }
}

/// Appends the new rows `append` to the buffers of series `s`.
fn append_rows(s: &mut Series, append: Append<'_>) -> WriteResult<()> {
    match append {
        Append::Nothing => {}
        Append::Rows(a, rows) => {
            let n = rows.iter().map(ExactSizeIterator::len).sum();
            s.validity.reserve(n);
            s.values.reserve(n);
            conv::append(
                &mut s.values,
                a,
                rows,
                s.schema.data_type,
                Some(&mut s.validity),
                None,
            )?;
        }
        Append::Nulls(n) => s.validity.extend(std::iter::repeat_n(false, n)),
    }
    Ok(())
}

/// The full pages `pages` of series `s` (nothing buffered) from rows `run` of the batch
/// column `a`, whose times are `times`; the rows after the last page go to the buffers.
fn direct(
    s: &mut Series,
    a: &ArrayRef,
    run: &Range<usize>,
    times: &[i64],
    pages: &[Range<usize>],
    opts: &WriterOptions,
) -> WriteResult<Vec<EncodedPage>> {
    let data_type = s.schema.data_type;
    let mut pager = chunk::ValuePager::new(codec_of(&s.schema), opts)?;
    let mut bufs = [
        (Values::new(data_type), Vec::new()),
        (Values::new(data_type), Vec::new()),
    ];
    for pair in pages.chunks(2) {
        for (p, (values, validity)) in pair.iter().zip(bufs.iter_mut()) {
            values.clear();
            validity.clear();
            let rows = run.start + p.start..run.start + p.end;
            conv::append(values, a, &[rows], data_type, Some(validity), None)?;
        }
        let inputs: Vec<chunk::PageInput<'_>> = pair
            .iter()
            .zip(bufs.iter())
            .map(|(p, (values, validity))| chunk::PageInput {
                rows: validity,
                values: values.slice(0..values.len()),
                times: &times[p.clone()],
            })
            .collect();
        pager.encode(&inputs, &mut s.sealed)?;
    }
    let m = pages.last().map_or(0, |r| r.end);
    let rest = run.start + m..run.end;
    if !rest.is_empty() {
        conv::append(
            &mut s.values,
            a,
            &[rest],
            data_type,
            Some(&mut s.validity),
            None,
        )?;
    }
    Ok(Vec::new())
}

/// The bytes of a value of the column, as a rough relative cost (the time column is cheap to
/// encode: its deltas are mostly equal).
fn width(data_type: Option<TSDataType>) -> usize {
    match data_type {
        None => 4,
        Some(TSDataType::Boolean) => 1,
        Some(TSDataType::Int32 | TSDataType::Date | TSDataType::Float) => 4,
        Some(_) => 8,
    }
}

/// A job and its cost, for [`parallel_map`].
trait Costed {
    fn cost(&self) -> usize;
}

impl Costed for Job<'_> {
    fn cost(&self) -> usize {
        self.cost
    }
}

impl<T> Costed for (T, usize) {
    fn cost(&self) -> usize {
        self.1
    }
}

/// `f` over `jobs`, results in job order; on several threads (the calling one included)
/// when there are enough rows to be worth it. Jobs are taken longest first.
fn parallel_map<J: Send + Costed, R: Send>(
    jobs: Vec<J>,
    rows: usize,
    f: impl Fn(J) -> R + Sync,
) -> Vec<R> {
    // Asked once: the answer involves reading the process's CPU quota from the system.
    static CPUS: OnceLock<usize> = OnceLock::new();
    let cpus = *CPUS.get_or_init(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    let threads = cpus.min(jobs.len());
    if threads < 2 || rows < PARALLEL_ROWS {
        return jobs.into_iter().map(&f).collect();
    }
    let mut order: Vec<usize> = (0..jobs.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(jobs[i].cost()));
    // Each job is taken exactly once, by whichever thread draws its number.
    let slots: Vec<Mutex<Option<J>>> = jobs.into_iter().map(|j| Mutex::new(Some(j))).collect();
    let next = AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        loop {
            let k = next.fetch_add(1, Ordering::Relaxed);
            let Some(&i) = order.get(k) else {
                break;
            };
            let job = slots[i]
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .take();
            if let Some(job) = job {
                done.push((i, f(job)));
            }
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
