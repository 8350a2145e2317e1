//! `cargo xtask bench codecs`: decode throughput of every value encoding on 1M values (in
//! values per second, best of several runs on one core) and LZ4/ZSTD decompression of an
//! 8 MB page payload (GB/s of output). Targets of issue 4: PLAIN and TS_2DIFF ≥ 300M
//! values/s, GORILLA and CHIMP ≥ 150M values/s, LZ4 ≥ 1 GB/s.

use std::hint::black_box;
use std::time::{Duration, Instant};

use anyhow::Context;
use tsfile_format::compression;
use tsfile_format::encoding::{self, ValueDecoder, ValueEncoder};
use tsfile_format::types::{CompressionType, TSDataType, TSEncoding};

const N: usize = 1_000_000;
const RUNS: usize = 7;

/// Deterministic sample data: millisecond timestamps with jitter, a sensor-like random walk
/// with two decimals, small integers.
struct Data {
    times: Vec<i64>,
    ints: Vec<i32>,
    doubles: Vec<f64>,
    floats: Vec<f32>,
}

fn data() -> Data {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut rnd = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut t = 1_700_000_000_000i64;
    let mut level = 2000i64;
    let mut times = Vec::with_capacity(N);
    let mut ints = Vec::with_capacity(N);
    let mut doubles = Vec::with_capacity(N);
    for _ in 0..N {
        t += 1000 + (rnd() % 5) as i64;
        level += (rnd() % 21) as i64 - 10;
        times.push(t);
        ints.push((rnd() % 1000) as i32);
        doubles.push(level as f64 / 100.0);
    }
    let floats = doubles.iter().map(|&d| d as f32).collect();
    Data {
        times,
        ints,
        doubles,
        floats,
    }
}

/// Best time of `RUNS` runs of `f`.
fn best(mut f: impl FnMut() -> anyhow::Result<usize>) -> anyhow::Result<Duration> {
    let mut best = Duration::MAX;
    for _ in 0..RUNS {
        let start = Instant::now();
        let n = f()?;
        let el = start.elapsed();
        anyhow::ensure!(n == N, "decoded {n} values, expected {N}");
        best = best.min(el);
    }
    Ok(best)
}

fn encode(e: TSEncoding, t: TSDataType, d: &Data) -> anyhow::Result<Vec<u8>> {
    let mut out = Vec::new();
    match encoding::encoder(e, t)? {
        ValueEncoder::Int64(mut x) => {
            x.put_slice(&d.times);
            x.flush(&mut out);
        }
        ValueEncoder::Int32(mut x) => {
            x.put_slice(&d.ints);
            x.flush(&mut out);
        }
        ValueEncoder::Double(mut x) => {
            x.put_slice(&d.doubles);
            x.flush(&mut out);
        }
        ValueEncoder::Float(mut x) => {
            x.put_slice(&d.floats);
            x.flush(&mut out);
        }
        other => anyhow::bail!("no sample data for {other:?}"),
    }
    Ok(out)
}

fn decode_time(e: TSEncoding, t: TSDataType, bytes: &[u8]) -> anyhow::Result<Duration> {
    // Reused output buffers: the figure is decoding, not allocation.
    let mut i64s = Vec::with_capacity(N);
    let mut i32s = Vec::with_capacity(N);
    let mut f64s = Vec::with_capacity(N);
    let mut f32s = Vec::with_capacity(N);
    best(|| {
        let n = match encoding::decoder(e, t, bytes, 0)? {
            ValueDecoder::Int64(mut d) => {
                i64s.clear();
                let n = d.decode_all(&mut i64s, N)?;
                black_box(&i64s);
                n
            }
            ValueDecoder::Int32(mut d) => {
                i32s.clear();
                let n = d.decode_all(&mut i32s, N)?;
                black_box(&i32s);
                n
            }
            ValueDecoder::Double(mut d) => {
                f64s.clear();
                let n = d.decode_all(&mut f64s, N)?;
                black_box(&f64s);
                n
            }
            ValueDecoder::Float(mut d) => {
                f32s.clear();
                let n = d.decode_all(&mut f32s, N)?;
                black_box(&f32s);
                n
            }
            other => anyhow::bail!("unexpected {other:?}"),
        };
        Ok(n)
    })
}

/// Runs the benchmark and prints its figures.
pub fn run() -> anyhow::Result<()> {
    let d = data();
    use TSDataType as T;
    use TSEncoding as E;
    let cases: &[(E, T, &str, f64)] = &[
        (E::Plain, T::Int64, "timestamps", 300.0),
        (E::Ts2Diff, T::Int64, "timestamps", 300.0),
        (E::Plain, T::Double, "random walk", 300.0),
        (E::Plain, T::Int32, "0..1000", 0.0),
        (E::Ts2Diff, T::Int32, "0..1000", 300.0),
        (E::Rle, T::Int32, "0..1000", 0.0),
        (E::Zigzag, T::Int32, "0..1000", 0.0),
        (E::Rle, T::Int64, "timestamps", 0.0),
        (E::Gorilla, T::Double, "random walk", 150.0),
        (E::Gorilla, T::Float, "random walk", 150.0),
        (E::Gorilla, T::Int64, "timestamps", 150.0),
        (E::Chimp, T::Double, "random walk", 150.0),
        (E::Chimp, T::Int64, "timestamps", 150.0),
        (E::Ts2Diff, T::Double, "random walk (lossy)", 0.0),
        (E::Sprintz, T::Int64, "timestamps", 0.0),
        (E::Sprintz, T::Double, "random walk", 0.0),
        (E::Rlbe, T::Int64, "timestamps", 0.0),
        (E::Rlbe, T::Double, "random walk", 0.0),
    ];
    println!(
        "{:<10} {:<7} {:<20} {:>10} {:>12} {:>8}",
        "encoding", "type", "data", "bytes", "Mvalues/s", "target"
    );
    for &(e, t, what, target) in cases {
        let bytes = encode(e, t, &d).with_context(|| format!("{e:?} {t:?}"))?;
        let el = decode_time(e, t, &bytes).with_context(|| format!("{e:?} {t:?}"))?;
        let rate = N as f64 / el.as_secs_f64() / 1e6;
        let verdict = if target == 0.0 {
            String::new()
        } else if rate >= target {
            format!("≥{target:.0} ok")
        } else {
            format!("<{target:.0} MISS")
        };
        println!(
            "{:<10} {:<7} {:<20} {:>10} {:>12.0} {:>8}",
            e.name(),
            t.name(),
            what,
            bytes.len(),
            rate,
            verdict
        );
    }
    // Decompression of a PLAIN DOUBLE page of 1M values (8 MB).
    let page = encode(E::Plain, T::Double, &d)?;
    for c in [
        CompressionType::Lz4,
        CompressionType::Zstd,
        CompressionType::Snappy,
    ] {
        let z = compression::compress(c, &page)?;
        let mut out = Vec::with_capacity(page.len());
        let mut bestd = Duration::MAX;
        for _ in 0..RUNS {
            out.clear();
            let start = Instant::now();
            compression::decompress_into(c, &z, page.len(), 0, &mut out)?;
            bestd = bestd.min(start.elapsed());
            black_box(&out);
        }
        anyhow::ensure!(out == page, "{c:?} round trip");
        println!(
            "{:<10} decompress {} → {} bytes: {:.2} GB/s{}",
            c.name(),
            z.len(),
            page.len(),
            page.len() as f64 / bestd.as_secs_f64() / 1e9,
            if c == CompressionType::Lz4 {
                " (target ≥ 1 GB/s)"
            } else {
                ""
            }
        );
    }
    Ok(())
}
