//! Statistics as the writers compute them (`docs/tsfile.md` §6): per page from the values,
//! then merged page → chunk → series. Sums are accumulated per page and added page by page,
//! like the official writers, so the floating-point sums come out bit-identical.

use std::ops::AddAssign;

use tsfile_format::statistics::{Statistics, StatisticsValues};
use tsfile_format::types::TSDataType;

/// An empty Statistics block of `data_type` (count 0). Its time range is the one given,
/// since an all-null value chunk still carries the times of its chunk group.
pub(crate) fn empty(data_type: TSDataType, start: i64, end: i64) -> Statistics {
    let values = match data_type {
        TSDataType::Boolean => StatisticsValues::Boolean {
            first: false,
            last: false,
            sum: 0,
        },
        TSDataType::Int32 | TSDataType::Date => StatisticsValues::Int32 {
            min: 0,
            max: 0,
            first: 0,
            last: 0,
            sum: 0,
        },
        TSDataType::Int64 | TSDataType::Timestamp => StatisticsValues::Int64 {
            min: 0,
            max: 0,
            first: 0,
            last: 0,
            sum: 0.0,
        },
        TSDataType::Float => StatisticsValues::Float {
            min: 0.0,
            max: 0.0,
            first: 0.0,
            last: 0.0,
            sum: 0.0,
        },
        TSDataType::Double => StatisticsValues::Double {
            min: 0.0,
            max: 0.0,
            first: 0.0,
            last: 0.0,
            sum: 0.0,
        },
        TSDataType::Text => StatisticsValues::Text {
            first: Some(Vec::new()),
            last: Some(Vec::new()),
        },
        TSDataType::String => StatisticsValues::String {
            first: Some(Vec::new()),
            last: Some(Vec::new()),
            min: Some(Vec::new()),
            max: Some(Vec::new()),
        },
        _ => StatisticsValues::None,
    };
    Statistics {
        count: 0,
        start_time: start,
        end_time: end,
        values,
    }
}

/// Statistics of the time column of one page: count and time range only.
pub(crate) fn of_times(times: &[i64]) -> Statistics {
    Statistics {
        count: times.len() as u32,
        start_time: times.first().copied().unwrap_or(0),
        end_time: times.last().copied().unwrap_or(0),
        values: StatisticsValues::None,
    }
}

/// Statistics of values of one page, given the timestamps of its first and last values.
/// `data_type` selects the typed part for binary values.
pub(crate) fn of_page(
    values: PageSlice<'_>,
    start_time: i64,
    end_time: i64,
    data_type: TSDataType,
) -> Statistics {
    let count = values.len() as u32;
    if count == 0 {
        return empty(data_type, start_time, end_time);
    }
    let values = match values {
        PageSlice::Boolean(v) => StatisticsValues::Boolean {
            first: v[0],
            last: v[v.len() - 1],
            sum: v.iter().filter(|b| **b).count() as i64,
        },
        PageSlice::Int32(v) => {
            let (min, max, sum) = min_max_sum(v, i64::from);
            StatisticsValues::Int32 {
                min,
                max,
                first: v[0],
                last: v[v.len() - 1],
                sum,
            }
        }
        PageSlice::Int64(v) => int64(v, min_max_sum(v, |x| x as f64)),
        PageSlice::Float(v) => float(v, min_max_sum(v, f64::from)),
        PageSlice::Double(v) => double(v, min_max_sum(v, |x| x)),
        PageSlice::Binary(offsets, data) => {
            let get = |i: usize| data[offsets[i]..offsets[i + 1]].to_vec();
            let n = offsets.len() - 1;
            match data_type {
                TSDataType::Text => StatisticsValues::Text {
                    first: Some(get(0)),
                    last: Some(get(n - 1)),
                },
                TSDataType::String => {
                    let slice = |i: usize| &data[offsets[i]..offsets[i + 1]];
                    let (mut min, mut max) = (slice(0), slice(0));
                    for i in 1..n {
                        let s = slice(i);
                        if s < min {
                            min = s;
                        }
                        if s > max {
                            max = s;
                        }
                    }
                    StatisticsValues::String {
                        first: Some(get(0)),
                        last: Some(get(n - 1)),
                        min: Some(min.to_vec()),
                        max: Some(max.to_vec()),
                    }
                }
                _ => StatisticsValues::None,
            }
        }
    };
    with(values, count as usize, start_time, end_time)
}

/// [`of_page`] of several pages (`(values, start_time, end_time)` each, at least one value
/// each). The floating-point sums are latency-bound chains that must keep their order, so
/// the pages go two at a time through one loop that advances both chains side by side.
pub(crate) fn of_pages(
    pages: &[(PageSlice<'_>, i64, i64)],
    data_type: TSDataType,
) -> Vec<Statistics> {
    let mut out = Vec::with_capacity(pages.len());
    let mut i = 0;
    while i < pages.len() {
        let (a, sa, ea) = pages[i];
        let pair = pages.get(i + 1).and_then(|&(b, sb, eb)| {
            let (va, vb) = match (a, b) {
                (PageSlice::Int64(x), PageSlice::Int64(y)) => {
                    let (p, q) = min_max_sum2(x, y, |v| v as f64);
                    (int64(x, p), int64(y, q))
                }
                (PageSlice::Float(x), PageSlice::Float(y)) => {
                    let (p, q) = min_max_sum2(x, y, f64::from);
                    (float(x, p), float(y, q))
                }
                (PageSlice::Double(x), PageSlice::Double(y)) => {
                    let (p, q) = min_max_sum2(x, y, |v| v);
                    (double(x, p), double(y, q))
                }
                _ => return None,
            };
            Some((with(va, a.len(), sa, ea), with(vb, b.len(), sb, eb)))
        });
        match pair {
            Some((p, q)) => {
                out.push(p);
                out.push(q);
                i += 2;
            }
            None => {
                out.push(of_page(a, sa, ea, data_type));
                i += 1;
            }
        }
    }
    out
}

fn with(values: StatisticsValues, count: usize, start_time: i64, end_time: i64) -> Statistics {
    Statistics {
        count: count as u32,
        start_time,
        end_time,
        values,
    }
}

fn int64(v: &[i64], (min, max, sum): (i64, i64, f64)) -> StatisticsValues {
    StatisticsValues::Int64 {
        min,
        max,
        first: v[0],
        last: v[v.len() - 1],
        sum,
    }
}

fn float(v: &[f32], (min, max, sum): (f32, f32, f64)) -> StatisticsValues {
    StatisticsValues::Float {
        min,
        max,
        first: v[0],
        last: v[v.len() - 1],
        sum,
    }
}

fn double(v: &[f64], (min, max, sum): (f64, f64, f64)) -> StatisticsValues {
    StatisticsValues::Double {
        min,
        max,
        first: v[0],
        last: v[v.len() - 1],
        sum,
    }
}

/// The values of one page, borrowed from a column buffer. Binary values are given as an
/// offsets slice (`n + 1` entries, absolute into `data`) and the data buffer.
#[derive(Debug, Clone, Copy)]
pub(crate) enum PageSlice<'a> {
    Boolean(&'a [bool]),
    Int32(&'a [i32]),
    Int64(&'a [i64]),
    Float(&'a [f32]),
    Double(&'a [f64]),
    Binary(&'a [usize], &'a [u8]),
}

impl PageSlice<'_> {
    /// Number of values.
    pub(crate) fn len(&self) -> usize {
        match self {
            PageSlice::Boolean(v) => v.len(),
            PageSlice::Int32(v) => v.len(),
            PageSlice::Int64(v) => v.len(),
            PageSlice::Float(v) => v.len(),
            PageSlice::Double(v) => v.len(),
            PageSlice::Binary(offsets, _) => offsets.len().saturating_sub(1),
        }
    }
}

/// The minimum, maximum and sum of a non-empty page, summed in order after `widen` so the
/// floating-point sums match the official writers bit for bit. A NaN is never taken as a
/// minimum or maximum, since it compares false.
fn min_max_sum<T: PartialOrd + Copy, S: AddAssign + Default>(
    v: &[T],
    widen: impl Fn(T) -> S,
) -> (T, T, S) {
    let (mut min, mut max, mut sum) = (v[0], v[0], S::default());
    for &x in v {
        if x < min {
            min = x;
        }
        if x > max {
            max = x;
        }
        sum += widen(x);
    }
    (min, max, sum)
}

/// [`min_max_sum`] of two non-empty pages in one loop: each page's minimum, maximum and sum
/// are updated in that page's order, exactly as page by page, but the two chains of
/// dependent additions run side by side.
fn min_max_sum2<T: PartialOrd + Copy, S: AddAssign + Default>(
    a: &[T],
    b: &[T],
    widen: impl Fn(T) -> S,
) -> ((T, T, S), (T, T, S)) {
    let (mut amin, mut amax, mut asum) = (a[0], a[0], S::default());
    let (mut bmin, mut bmax, mut bsum) = (b[0], b[0], S::default());
    let step = |x: T, min: &mut T, max: &mut T, sum: &mut S| {
        if x < *min {
            *min = x;
        }
        if x > *max {
            *max = x;
        }
        *sum += widen(x);
    };
    let n = a.len().min(b.len());
    for (&x, &y) in a[..n].iter().zip(&b[..n]) {
        step(x, &mut amin, &mut amax, &mut asum);
        step(y, &mut bmin, &mut bmax, &mut bsum);
    }
    for &x in &a[n..] {
        step(x, &mut amin, &mut amax, &mut asum);
    }
    for &y in &b[n..] {
        step(y, &mut bmin, &mut bmax, &mut bsum);
    }
    ((amin, amax, asum), (bmin, bmax, bsum))
}

/// Merges a later block's `(min, max, first, last, sum)` into `acc`'s, the same for every
/// numeric type: `first` moves when `next` starts earlier, `last` when it ends no earlier.
fn merge_numeric<T: PartialOrd + Copy, S: AddAssign + Copy>(
    acc: (&mut T, &mut T, &mut T, &mut T, &mut S),
    next: (&T, &T, &T, &T, &S),
    earlier: bool,
    later: bool,
) {
    let (min, max, first, last, sum) = acc;
    let (a, b, f, l, s) = next;
    if a < min {
        *min = *a;
    }
    if b > max {
        *max = *b;
    }
    *sum += *s;
    if earlier {
        *first = *f;
    }
    if later {
        *last = *l;
    }
}

/// Merges `next` (later in time) into `acc`. Blocks with count 0 contribute nothing.
pub(crate) fn merge(acc: &mut Statistics, next: &Statistics) {
    if next.count == 0 {
        return;
    }
    if acc.count == 0 {
        *acc = next.clone();
        return;
    }
    let later = next.end_time >= acc.end_time;
    let earlier = next.start_time < acc.start_time;
    acc.count += next.count;
    acc.start_time = acc.start_time.min(next.start_time);
    acc.end_time = acc.end_time.max(next.end_time);
    use StatisticsValues as V;
    match (&mut acc.values, &next.values) {
        (
            V::Boolean { first, last, sum },
            V::Boolean {
                first: f,
                last: l,
                sum: s,
            },
        ) => {
            *sum += s;
            if earlier {
                *first = *f;
            }
            if later {
                *last = *l;
            }
        }
        (
            V::Int32 {
                min,
                max,
                first,
                last,
                sum,
            },
            V::Int32 {
                min: a,
                max: b,
                first: f,
                last: l,
                sum: s,
            },
        ) => merge_numeric(
            (min, max, first, last, sum),
            (a, b, f, l, s),
            earlier,
            later,
        ),
        (
            V::Int64 {
                min,
                max,
                first,
                last,
                sum,
            },
            V::Int64 {
                min: a,
                max: b,
                first: f,
                last: l,
                sum: s,
            },
        ) => merge_numeric(
            (min, max, first, last, sum),
            (a, b, f, l, s),
            earlier,
            later,
        ),
        (
            V::Float {
                min,
                max,
                first,
                last,
                sum,
            },
            V::Float {
                min: a,
                max: b,
                first: f,
                last: l,
                sum: s,
            },
        ) => merge_numeric(
            (min, max, first, last, sum),
            (a, b, f, l, s),
            earlier,
            later,
        ),
        (
            V::Double {
                min,
                max,
                first,
                last,
                sum,
            },
            V::Double {
                min: a,
                max: b,
                first: f,
                last: l,
                sum: s,
            },
        ) => merge_numeric(
            (min, max, first, last, sum),
            (a, b, f, l, s),
            earlier,
            later,
        ),
        (V::Text { first, last }, V::Text { first: f, last: l }) => {
            if earlier {
                first.clone_from(f);
            }
            if later {
                last.clone_from(l);
            }
        }
        (
            V::String {
                first,
                last,
                min,
                max,
            },
            V::String {
                first: f,
                last: l,
                min: a,
                max: b,
            },
        ) => {
            if earlier {
                first.clone_from(f);
            }
            if later {
                last.clone_from(l);
            }
            if a < min {
                min.clone_from(a);
            }
            if b > max {
                max.clone_from(b);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int32_page_statistics_match_tv6() {
        let s = of_page(PageSlice::Int32(&[7, 8, 9]), 100, 102, TSDataType::Int32);
        let mut w = tsfile_format::cursor::Writer::new();
        s.encode(&mut w);
        let tv6: &[u8] = &[
            0x03, 0, 0, 0, 0, 0, 0, 0, 0x64, 0, 0, 0, 0, 0, 0, 0, 0x66, 0, 0, 0, 7, 0, 0, 0, 9, 0,
            0, 0, 7, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 0x18,
        ];
        assert_eq!(w.as_bytes(), tv6);
    }

    #[test]
    fn pages_in_pairs_equal_pages_one_by_one() {
        let bytes = |s: &Statistics| {
            let mut w = tsfile_format::cursor::Writer::new();
            s.encode(&mut w);
            w.into_inner()
        };
        let d1 = [0.0, -0.0, 1.5, f64::NAN, -2.25, 0.1];
        let d2 = [-0.0, 0.0, 0.3, 0.7];
        let d3 = [f64::NAN, 5.0, -1.0];
        let f1 = [0.5f32, -0.0, 0.0, 3.0e7, 0.1];
        let f2 = [0.2f32, 0.3];
        let i1 = [i64::MAX, 1, -5, i64::MIN];
        let i2 = [3i64, 9, 9, 2, 7, 1];
        let cases: Vec<(Vec<PageSlice<'_>>, TSDataType)> = vec![
            (
                vec![
                    PageSlice::Double(&d1),
                    PageSlice::Double(&d2),
                    PageSlice::Double(&d3),
                ],
                TSDataType::Double,
            ),
            (
                vec![PageSlice::Float(&f1), PageSlice::Float(&f2)],
                TSDataType::Float,
            ),
            (
                vec![PageSlice::Int64(&i2), PageSlice::Int64(&i1)],
                TSDataType::Int64,
            ),
            (
                vec![PageSlice::Int32(&[1, -4]), PageSlice::Int32(&[8])],
                TSDataType::Int32,
            ),
        ];
        for (slices, t) in cases {
            let pages: Vec<(PageSlice<'_>, i64, i64)> = slices
                .iter()
                .enumerate()
                .map(|(k, &s)| (s, 10 * k as i64, 10 * k as i64 + 5))
                .collect();
            let together: Vec<Vec<u8>> = of_pages(&pages, t).iter().map(bytes).collect();
            let alone: Vec<Vec<u8>> = pages
                .iter()
                .map(|&(s, a, b)| bytes(&of_page(s, a, b, t)))
                .collect();
            assert_eq!(together, alone, "{t:?}");
        }
    }

    #[test]
    fn merge_keeps_first_of_earlier_and_last_of_later() {
        let mut a = of_page(PageSlice::Int64(&[5, 1]), 1, 2, TSDataType::Int64);
        let b = of_page(PageSlice::Int64(&[9, -3]), 3, 4, TSDataType::Int64);
        merge(&mut a, &b);
        assert_eq!(a.count, 4);
        assert_eq!((a.start_time, a.end_time), (1, 4));
        assert_eq!(
            a.values,
            StatisticsValues::Int64 {
                min: -3,
                max: 9,
                first: 5,
                last: -3,
                sum: 12.0
            }
        );
        let mut e = empty(TSDataType::Int64, 0, 0);
        merge(&mut e, &b);
        assert_eq!(e.count, 2);
    }
}
