//! Value encodings of page payloads (reference §8): one decoder and one encoder per
//! encoding, and factories that pick them by ([`TSEncoding`], [`TSDataType`]).
//!
//! Decoders borrow the (decompressed) value stream of one page and expose
//! [`Decoder::decode`] (append up to `max` values) and [`Decoder::skip`] (drop up to `n`
//! values without materialising them), so a reader can stream a page in batches and never
//! build rows it drops. A decoder returns fewer values than asked only at the end of its
//! stream. Callers should pass the page's known value count as `max` (from the time stream
//! or the presence bitmap): a few encodings (RLE runs, TS_2DIFF zero-width blocks) expand
//! a small payload into many values, and `max` is what bounds the output.
//!
//! Encoders buffer the values of one page ([`Encoder::put`]) and write the flushed,
//! self-contained stream with [`Encoder::flush`], which also resets them for the next page.
//! They follow the Java writer wherever the two official libraries differ (§13, §14).

pub mod bits;
pub mod camel;
pub mod chimp;
pub mod dictionary;
pub mod gorilla;
pub mod gorilla_v1;
pub mod plain;
pub mod rlbe;
pub mod rle;
pub mod sprintz;
pub mod ts2diff;
pub mod zigzag;

use crate::error::{Error, Result};
use crate::types::{TSDataType, TSEncoding};

/// A streaming decoder of one page's values of type `T`.
pub trait Decoder<T> {
    /// Appends up to `max` values to `out` and returns how many were appended; fewer than
    /// `max` (possibly 0) only when the stream is exhausted.
    fn decode(&mut self, out: &mut Vec<T>, max: usize) -> Result<usize>;

    /// Drops up to `n` values and returns how many were dropped; fewer than `n` only when
    /// the stream is exhausted.
    fn skip(&mut self, n: usize) -> Result<usize>;

    /// Decodes every remaining value, but no more than `limit`.
    fn decode_all(&mut self, out: &mut Vec<T>, limit: usize) -> Result<usize> {
        let mut total = 0;
        while total < limit {
            let n = self.decode(out, limit - total)?;
            if n == 0 {
                break;
            }
            total += n;
        }
        Ok(total)
    }
}

/// Skips by decoding into a small scratch buffer: for encodings whose values depend on all
/// earlier ones, so that skipping costs decoding but never a page-sized allocation.
pub(crate) fn skip_by_decoding<T, D: Decoder<T> + ?Sized>(d: &mut D, n: usize) -> Result<usize> {
    let mut scratch = Vec::with_capacity(n.min(1024));
    let mut done = 0;
    while done < n {
        scratch.clear();
        let k = d.decode(&mut scratch, (n - done).min(1024))?;
        if k == 0 {
            break;
        }
        done += k;
    }
    Ok(done)
}

/// A decoder that decodes a whole block into a buffer at a time (RLBE, SPRINTZ): its
/// [`Decoder`] methods hand out the buffer through [`serve_blocks`], which refills it.
pub(crate) trait BlockDecoder<V> {
    /// The decoded block and the index of the next value to hand out.
    fn buffered(&mut self) -> (&[V], &mut usize);

    /// Decodes the next block into the buffer (from index 0); false at the end of the stream.
    fn next_block(&mut self) -> Result<bool>;
}

/// Hands out up to `max` values of a [`BlockDecoder`], appending them to `out` or dropping
/// them when it is `None` (for `skip`); fewer than `max` only at the end of the stream.
pub(crate) fn serve_blocks<V: Copy, D: BlockDecoder<V>>(
    d: &mut D,
    mut out: Option<&mut Vec<V>>,
    max: usize,
) -> Result<usize> {
    let mut n = 0;
    while n < max {
        let (buf, next) = d.buffered();
        let k = (buf.len() - *next).min(max - n);
        if k == 0 {
            if d.next_block()? {
                continue;
            }
            break;
        }
        if let Some(out) = out.as_deref_mut() {
            out.extend_from_slice(&buf[*next..*next + k]);
        }
        *next += k;
        n += k;
    }
    Ok(n)
}

/// An encoder of one page's values of type `T` (`[u8]` for TEXT, STRING and BLOB).
pub trait Encoder<T: ?Sized> {
    /// Buffers one value.
    fn put(&mut self, value: &T);

    /// Buffers several values.
    fn put_slice(&mut self, values: &[T])
    where
        T: Sized,
    {
        for v in values {
            self.put(v);
        }
    }

    /// Writes the encoded stream of every value put since the last flush to `out` and
    /// resets the encoder. Writes nothing when no value was put.
    fn flush(&mut self, out: &mut Vec<u8>);

    /// An estimate of the bytes [`Encoder::flush`] would write now, for page sealing.
    fn estimated_size(&self) -> usize;
}

/// A value decoder of any data type, as chosen by [`decoder`].
pub enum ValueDecoder<'a> {
    /// BOOLEAN.
    Boolean(Box<dyn Decoder<bool> + 'a>),
    /// INT32 and DATE.
    Int32(Box<dyn Decoder<i32> + 'a>),
    /// INT64 and TIMESTAMP (and the time column).
    Int64(Box<dyn Decoder<i64> + 'a>),
    /// FLOAT.
    Float(Box<dyn Decoder<f32> + 'a>),
    /// DOUBLE.
    Double(Box<dyn Decoder<f64> + 'a>),
    /// TEXT, STRING and BLOB; values borrow the page buffer.
    Binary(Box<dyn Decoder<&'a [u8]> + 'a>),
}

impl std::fmt::Debug for ValueDecoder<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self {
            ValueDecoder::Boolean(_) => "Boolean",
            ValueDecoder::Int32(_) => "Int32",
            ValueDecoder::Int64(_) => "Int64",
            ValueDecoder::Float(_) => "Float",
            ValueDecoder::Double(_) => "Double",
            ValueDecoder::Binary(_) => "Binary",
        };
        write!(f, "ValueDecoder::{kind}")
    }
}

impl ValueDecoder<'_> {
    /// Drops up to `n` values, whatever the type.
    pub fn skip(&mut self, n: usize) -> Result<usize> {
        match self {
            ValueDecoder::Boolean(d) => d.skip(n),
            ValueDecoder::Int32(d) => d.skip(n),
            ValueDecoder::Int64(d) => d.skip(n),
            ValueDecoder::Float(d) => d.skip(n),
            ValueDecoder::Double(d) => d.skip(n),
            ValueDecoder::Binary(d) => d.skip(n),
        }
    }
}

/// Options of the encoders that have parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EncoderOptions {
    /// `max_point_number` of the lossy TS_2DIFF/RLE wrapper on FLOAT/DOUBLE (§8.3): values
    /// are stored as `round(v · 10^p)`. Default 2, as both libraries.
    pub max_point_number: u32,
}

impl Default for EncoderOptions {
    fn default() -> Self {
        Self {
            max_point_number: 2,
        }
    }
}

/// A value encoder of any data type, as chosen by [`encoder`].
pub enum ValueEncoder {
    /// BOOLEAN.
    Boolean(Box<dyn Encoder<bool> + Send>),
    /// INT32 and DATE.
    Int32(Box<dyn Encoder<i32> + Send>),
    /// INT64 and TIMESTAMP (and the time column).
    Int64(Box<dyn Encoder<i64> + Send>),
    /// FLOAT.
    Float(Box<dyn Encoder<f32> + Send>),
    /// DOUBLE.
    Double(Box<dyn Encoder<f64> + Send>),
    /// TEXT, STRING and BLOB.
    Binary(Box<dyn Encoder<[u8]> + Send>),
}

impl std::fmt::Debug for ValueEncoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self {
            ValueEncoder::Boolean(_) => "Boolean",
            ValueEncoder::Int32(_) => "Int32",
            ValueEncoder::Int64(_) => "Int64",
            ValueEncoder::Float(_) => "Float",
            ValueEncoder::Double(_) => "Double",
            ValueEncoder::Binary(_) => "Binary",
        };
        write!(f, "ValueEncoder::{kind}")
    }
}

impl ValueEncoder {
    /// Writes the page's stream and resets the encoder (see [`Encoder::flush`]).
    pub fn flush(&mut self, out: &mut Vec<u8>) {
        match self {
            ValueEncoder::Boolean(e) => e.flush(out),
            ValueEncoder::Int32(e) => e.flush(out),
            ValueEncoder::Int64(e) => e.flush(out),
            ValueEncoder::Float(e) => e.flush(out),
            ValueEncoder::Double(e) => e.flush(out),
            ValueEncoder::Binary(e) => e.flush(out),
        }
    }

    /// See [`Encoder::estimated_size`].
    pub fn estimated_size(&self) -> usize {
        match self {
            ValueEncoder::Boolean(e) => e.estimated_size(),
            ValueEncoder::Int32(e) => e.estimated_size(),
            ValueEncoder::Int64(e) => e.estimated_size(),
            ValueEncoder::Float(e) => e.estimated_size(),
            ValueEncoder::Double(e) => e.estimated_size(),
            ValueEncoder::Binary(e) => e.estimated_size(),
        }
    }
}

fn unsupported(encoding: TSEncoding, data_type: TSDataType, dir: &str) -> Error {
    Error::Unsupported {
        what: "value encoding",
        reason: format!(
            "{dir} {} values of type {}",
            encoding.name(),
            data_type.name()
        ),
    }
}

/// The decoder of a page's value stream `data` (decompressed, the value part only), whose
/// bytes are attributed to absolute offset `base` in error messages. The aligned time
/// column (`VECTOR`) decodes as INT64.
pub fn decoder<'a>(
    encoding: TSEncoding,
    data_type: TSDataType,
    data: &'a [u8],
    base: u64,
) -> Result<ValueDecoder<'a>> {
    use TSDataType as T;
    use TSEncoding as E;
    let bad = || unsupported(encoding, data_type, "cannot decode");
    Ok(match data_type {
        T::Boolean => ValueDecoder::Boolean(match encoding {
            E::Plain => Box::new(plain::PlainBoolDecoder::new(data)),
            E::Rle => Box::new(rle::BoolRleDecoder::new(data, base)),
            _ => return Err(bad()),
        }),
        T::Int32 | T::Date => {
            ValueDecoder::Int32(int32_decoder(encoding, data, base).ok_or_else(bad)?)
        }
        T::Int64 | T::Timestamp | T::Vector => {
            ValueDecoder::Int64(int64_decoder(encoding, data, base).ok_or_else(bad)?)
        }
        T::Float => ValueDecoder::Float(match encoding {
            E::Plain => Box::new(plain::PlainFixedDecoder::<f32>::new(data, base)),
            E::Ts2Diff => Box::new(ts2diff::FloatWrapDecoder::<f32>::new(
                data,
                base,
                ts2diff::Inner::Ts2Diff,
            )?),
            E::Rle => Box::new(ts2diff::FloatWrapDecoder::<f32>::new(
                data,
                base,
                ts2diff::Inner::Rle,
            )?),
            E::Gorilla => Box::new(gorilla::GorillaDecoder::<f32>::new(data, base)),
            E::GorillaV1 => Box::new(gorilla_v1::GorillaV1Decoder::<f32>::new(data, base)),
            E::Chimp => Box::new(chimp::ChimpDecoder::<f32>::new(data, base)),
            E::Sprintz => Box::new(sprintz::SprintzDecoder::<f32>::new(data, base)),
            E::Rlbe => Box::new(rlbe::RlbeDecoder::<f32>::new(data, base)),
            _ => return Err(bad()),
        }),
        T::Double => ValueDecoder::Double(match encoding {
            E::Plain => Box::new(plain::PlainFixedDecoder::<f64>::new(data, base)),
            E::Ts2Diff => Box::new(ts2diff::FloatWrapDecoder::<f64>::new(
                data,
                base,
                ts2diff::Inner::Ts2Diff,
            )?),
            E::Rle => Box::new(ts2diff::FloatWrapDecoder::<f64>::new(
                data,
                base,
                ts2diff::Inner::Rle,
            )?),
            E::Gorilla => Box::new(gorilla::GorillaDecoder::<f64>::new(data, base)),
            E::GorillaV1 => Box::new(gorilla_v1::GorillaV1Decoder::<f64>::new(data, base)),
            E::Chimp => Box::new(chimp::ChimpDecoder::<f64>::new(data, base)),
            E::Sprintz => Box::new(sprintz::SprintzDecoder::<f64>::new(data, base)),
            E::Rlbe => Box::new(rlbe::RlbeDecoder::<f64>::new(data, base)),
            E::Camel => Box::new(camel::CamelDecoder::new(data, base)),
            _ => return Err(bad()),
        }),
        T::Text | T::String | T::Blob => ValueDecoder::Binary(match encoding {
            E::Plain => Box::new(plain::PlainBinaryDecoder::new(data, base)),
            E::Dictionary => Box::new(dictionary::DictionaryDecoder::new(data, base)?),
            _ => return Err(bad()),
        }),
        T::Unknown => return Err(bad()),
    })
}

/// The INT32/DATE decoder for `encoding`, or `None` when the encoding cannot carry them.
pub fn int32_decoder<'a>(
    encoding: TSEncoding,
    data: &'a [u8],
    base: u64,
) -> Option<Box<dyn Decoder<i32> + 'a>> {
    use TSEncoding as E;
    Some(match encoding {
        E::Plain => Box::new(plain::PlainVarIntDecoder::new(data, base)),
        E::Ts2Diff => Box::new(ts2diff::Ts2DiffDecoder::<i32>::new(data, base)),
        E::Rle => Box::new(rle::RleDecoder::<i32>::new(data, base)),
        E::Gorilla => Box::new(gorilla::GorillaDecoder::<i32>::new(data, base)),
        E::Zigzag => Box::new(zigzag::ZigzagDecoder::<i32>::new(data, base)),
        E::Chimp => Box::new(chimp::ChimpDecoder::<i32>::new(data, base)),
        E::Sprintz => Box::new(sprintz::SprintzDecoder::<i32>::new(data, base)),
        E::Rlbe => Box::new(rlbe::RlbeDecoder::<i32>::new(data, base)),
        _ => return None,
    })
}

/// The INT64/TIMESTAMP decoder for `encoding` (also the time column's), or `None` when the
/// encoding cannot carry them.
pub fn int64_decoder<'a>(
    encoding: TSEncoding,
    data: &'a [u8],
    base: u64,
) -> Option<Box<dyn Decoder<i64> + 'a>> {
    use TSEncoding as E;
    Some(match encoding {
        E::Plain => Box::new(plain::PlainFixedDecoder::<i64>::new(data, base)),
        E::Ts2Diff => Box::new(ts2diff::Ts2DiffDecoder::<i64>::new(data, base)),
        E::Rle => Box::new(rle::RleDecoder::<i64>::new(data, base)),
        E::Gorilla => Box::new(gorilla::GorillaDecoder::<i64>::new(data, base)),
        E::Zigzag => Box::new(zigzag::ZigzagDecoder::<i64>::new(data, base)),
        E::Chimp => Box::new(chimp::ChimpDecoder::<i64>::new(data, base)),
        E::Sprintz => Box::new(sprintz::SprintzDecoder::<i64>::new(data, base)),
        E::Rlbe => Box::new(rlbe::RlbeDecoder::<i64>::new(data, base)),
        _ => return None,
    })
}

/// The encoder of `encoding` for `data_type` with default options.
pub fn encoder(encoding: TSEncoding, data_type: TSDataType) -> Result<ValueEncoder> {
    encoder_with(encoding, data_type, EncoderOptions::default())
}

/// The encoder of `encoding` for `data_type`. GORILLA_V1 and CAMEL are read-only, and the
/// legacy DIFF/BITMAP/REGULAR/FREQ are refused, as by both official writers.
pub fn encoder_with(
    encoding: TSEncoding,
    data_type: TSDataType,
    options: EncoderOptions,
) -> Result<ValueEncoder> {
    use TSDataType as T;
    use TSEncoding as E;
    let bad = || unsupported(encoding, data_type, "cannot encode");
    let p = options.max_point_number;
    Ok(match data_type {
        T::Boolean => ValueEncoder::Boolean(match encoding {
            E::Plain => Box::new(plain::PlainEncoder::new()),
            E::Rle => Box::new(rle::BoolRleEncoder::default()),
            _ => return Err(bad()),
        }),
        T::Int32 | T::Date => ValueEncoder::Int32(match encoding {
            E::Plain => Box::new(plain::PlainEncoder::new()),
            E::Ts2Diff => Box::new(ts2diff::Ts2DiffEncoder::<i32>::default()),
            E::Rle => Box::new(rle::RleEncoder::<i32>::default()),
            E::Gorilla => Box::new(gorilla::GorillaEncoder::<i32>::default()),
            E::Zigzag => Box::new(zigzag::ZigzagEncoder::<i32>::default()),
            E::Chimp => Box::new(chimp::ChimpEncoder::<i32>::default()),
            E::Sprintz => Box::new(sprintz::SprintzEncoder::<i32>::default()),
            E::Rlbe => Box::new(rlbe::RlbeEncoder::<i32>::default()),
            _ => return Err(bad()),
        }),
        T::Int64 | T::Timestamp | T::Vector => ValueEncoder::Int64(match encoding {
            E::Plain => Box::new(plain::PlainEncoder::new()),
            E::Ts2Diff => Box::new(ts2diff::Ts2DiffEncoder::<i64>::default()),
            E::Rle => Box::new(rle::RleEncoder::<i64>::default()),
            E::Gorilla => Box::new(gorilla::GorillaEncoder::<i64>::default()),
            E::Zigzag => Box::new(zigzag::ZigzagEncoder::<i64>::default()),
            E::Chimp => Box::new(chimp::ChimpEncoder::<i64>::default()),
            E::Sprintz => Box::new(sprintz::SprintzEncoder::<i64>::default()),
            E::Rlbe => Box::new(rlbe::RlbeEncoder::<i64>::default()),
            _ => return Err(bad()),
        }),
        T::Float => ValueEncoder::Float(match encoding {
            E::Plain => Box::new(plain::PlainEncoder::new()),
            E::Ts2Diff => Box::new(ts2diff::FloatWrapEncoder::<f32>::new(
                p,
                ts2diff::Inner::Ts2Diff,
            )),
            E::Rle => Box::new(ts2diff::FloatWrapEncoder::<f32>::new(
                p,
                ts2diff::Inner::Rle,
            )),
            E::Gorilla => Box::new(gorilla::GorillaEncoder::<f32>::default()),
            E::Chimp => Box::new(chimp::ChimpEncoder::<f32>::default()),
            E::Sprintz => Box::new(sprintz::SprintzEncoder::<f32>::default()),
            E::Rlbe => Box::new(rlbe::RlbeEncoder::<f32>::default()),
            _ => return Err(bad()),
        }),
        T::Double => ValueEncoder::Double(match encoding {
            E::Plain => Box::new(plain::PlainEncoder::new()),
            E::Ts2Diff => Box::new(ts2diff::FloatWrapEncoder::<f64>::new(
                p,
                ts2diff::Inner::Ts2Diff,
            )),
            E::Rle => Box::new(ts2diff::FloatWrapEncoder::<f64>::new(
                p,
                ts2diff::Inner::Rle,
            )),
            E::Gorilla => Box::new(gorilla::GorillaEncoder::<f64>::default()),
            E::Chimp => Box::new(chimp::ChimpEncoder::<f64>::default()),
            E::Sprintz => Box::new(sprintz::SprintzEncoder::<f64>::default()),
            E::Rlbe => Box::new(rlbe::RlbeEncoder::<f64>::default()),
            _ => return Err(bad()),
        }),
        T::Text | T::String | T::Blob => ValueEncoder::Binary(match encoding {
            E::Plain => Box::new(plain::PlainEncoder::new()),
            E::Dictionary if data_type != T::Blob => {
                Box::new(dictionary::DictionaryEncoder::default())
            }
            _ => return Err(bad()),
        }),
        T::Unknown => return Err(bad()),
    })
}

/// Integer types shared by the integer codecs (two's complement, fixed width).
pub trait IntValue:
    Copy + Default + PartialEq + Eq + PartialOrd + Ord + std::fmt::Debug + Send + 'static
{
    /// Bit width: 32 or 64.
    const BITS: u32;
    /// The minimum value (GORILLA/CHIMP terminator).
    const MIN: Self;
    /// The maximum value.
    const MAX: Self;
    /// The two's complement bits, zero-extended.
    fn to_bits(self) -> u64;
    /// From the low `BITS` bits.
    fn from_bits(bits: u64) -> Self;
    /// Wrapping addition.
    fn wadd(self, o: Self) -> Self;
    /// Wrapping subtraction.
    fn wsub(self, o: Self) -> Self;
    /// Reads `BITS/8` big-endian bytes.
    fn read_be(b: &[u8]) -> Self;
    /// Appends `BITS/8` big-endian bytes.
    fn write_be(self, out: &mut Vec<u8>);
    /// Leading zeros of the bits.
    fn lz(self) -> u32 {
        (self.to_bits() << (64 - Self::BITS))
            .leading_zeros()
            .min(Self::BITS)
    }
}

macro_rules! int_value {
    ($t:ty, $u:ty, $n:expr) => {
        impl IntValue for $t {
            const BITS: u32 = $n * 8;
            const MIN: Self = <$t>::MIN;
            const MAX: Self = <$t>::MAX;
            #[inline(always)]
            fn to_bits(self) -> u64 {
                self as $u as u64
            }
            #[inline(always)]
            fn from_bits(bits: u64) -> Self {
                bits as $u as $t
            }
            #[inline(always)]
            fn wadd(self, o: Self) -> Self {
                self.wrapping_add(o)
            }
            #[inline(always)]
            fn wsub(self, o: Self) -> Self {
                self.wrapping_sub(o)
            }
            #[inline(always)]
            fn read_be(b: &[u8]) -> Self {
                let mut a = [0u8; $n];
                a.copy_from_slice(&b[..$n]);
                <$t>::from_be_bytes(a)
            }
            #[inline(always)]
            fn write_be(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_be_bytes());
            }
        }
    };
}
int_value!(i32, u32, 4);
int_value!(i64, u64, 8);

/// Float types and their bit-pattern integer twins, for the codecs that work on raw bits.
pub trait FloatValue: Copy + Default + PartialEq + std::fmt::Debug + Send + 'static {
    /// The integer type of the same width.
    type Int: IntValue;
    /// The raw bits (no NaN canonicalisation).
    fn to_int(self) -> Self::Int;
    /// From raw bits.
    fn from_int(i: Self::Int) -> Self;
}

impl FloatValue for f32 {
    type Int = i32;
    #[inline(always)]
    fn to_int(self) -> i32 {
        self.to_bits() as i32
    }
    #[inline(always)]
    fn from_int(i: i32) -> Self {
        f32::from_bits(i as u32)
    }
}

impl FloatValue for f64 {
    type Int = i64;
    #[inline(always)]
    fn to_int(self) -> i64 {
        self.to_bits() as i64
    }
    #[inline(always)]
    fn from_int(i: i64) -> Self {
        f64::from_bits(i as u64)
    }
}

/// The item side of an XOR decoder (GORILLA, CHIMP): a first value stored whole, then one
/// item per value, ended by the in-band terminator ([`BitsValue::TERMINATOR`]).
/// [`decode_xor`] is the one decoding loop of both.
pub(crate) trait XorItems<V: BitsValue> {
    /// True once the first value was read.
    fn started(&self) -> bool;
    /// True once the terminator was met (or the stream is empty).
    fn done(&self) -> bool;
    /// Notes that the terminator was met.
    fn set_done(&mut self);
    /// Reads the first value's bit pattern and starts the state from it.
    fn first(&mut self) -> Result<u64>;
    /// Appends up to `max` values by the decoder's fast path while it can (possibly none,
    /// setting `done` at the terminator) and returns how many.
    fn decode_fast(&mut self, out: &mut Vec<V>, max: usize) -> usize;
    /// The next item's bit pattern by the checked path.
    fn next_bits(&mut self) -> Result<u64>;
}

/// [`Decoder::decode`] of an XOR decoder: the first value, the fast path, then the checked
/// path up to `max` values or the terminator.
#[inline(always)]
pub(crate) fn decode_xor<V: BitsValue, D: XorItems<V>>(
    d: &mut D,
    out: &mut Vec<V>,
    max: usize,
) -> Result<usize> {
    let value = |bits: u64| V::from_int(<V::Int as IntValue>::from_bits(bits));
    let mut n = 0;
    if d.done() || max == 0 {
        return Ok(0);
    }
    if !d.started() {
        out.push(value(d.first()?));
        n += 1;
    }
    n += d.decode_fast(out, max - n);
    while n < max && !d.done() {
        let bits = d.next_bits()?;
        if bits == V::TERMINATOR {
            d.set_done();
            break;
        }
        out.push(value(bits));
        n += 1;
    }
    Ok(n)
}

/// A value the bit-pattern codecs (GORILLA, CHIMP, SPRINTZ, RLBE) carry: an integer, or a
/// float by its raw bits.
pub trait BitsValue: Copy + Default + PartialEq + std::fmt::Debug + Send + 'static {
    /// The integer the codec works on.
    type Int: IntValue;
    /// This value's integer.
    fn to_int(self) -> Self::Int;
    /// Back from the integer.
    fn from_int(i: Self::Int) -> Self;
    /// True for FLOAT/DOUBLE (some codecs write a float's first value or tail differently).
    const IS_FLOAT: bool;
    /// The in-band terminator of GORILLA and CHIMP: INT_MIN/LONG_MIN or the canonical NaN.
    const TERMINATOR: u64;
}

macro_rules! bits_int {
    ($t:ty, $term:expr) => {
        impl BitsValue for $t {
            type Int = $t;
            #[inline(always)]
            fn to_int(self) -> $t {
                self
            }
            #[inline(always)]
            fn from_int(i: $t) -> Self {
                i
            }
            const IS_FLOAT: bool = false;
            const TERMINATOR: u64 = $term;
        }
    };
}
bits_int!(i32, 0x8000_0000);
bits_int!(i64, 0x8000_0000_0000_0000);

impl BitsValue for f32 {
    type Int = i32;
    #[inline(always)]
    fn to_int(self) -> i32 {
        FloatValue::to_int(self)
    }
    #[inline(always)]
    fn from_int(i: i32) -> Self {
        FloatValue::from_int(i)
    }
    const IS_FLOAT: bool = true;
    const TERMINATOR: u64 = 0x7fc0_0000;
}

impl BitsValue for f64 {
    type Int = i64;
    #[inline(always)]
    fn to_int(self) -> i64 {
        FloatValue::to_int(self)
    }
    #[inline(always)]
    fn from_int(i: i64) -> Self {
        FloatValue::from_int(i)
    }
    const IS_FLOAT: bool = true;
    const TERMINATOR: u64 = 0x7ff8_0000_0000_0000;
}
