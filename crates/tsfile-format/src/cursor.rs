//! The byte cursor every decoder reads through, and its writing mirror.
//!
//! [`Cursor`] reads the primitive encodings of TsFile §2 from a byte slice that knows its
//! absolute base offset in the file. Every read returns [`Result`]: running past the end is a
//! [`Error::Truncated`] naming the field and the absolute offset. [`Writer`] produces the same
//! encodings, so that `decode(encode(x)) == x` and `encode(decode(bytes)) == bytes`.

use crate::error::{Error, Result};

/// A bounds-checked reader over a byte slice positioned at `base` in the file.
#[derive(Debug, Clone)]
pub struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
    base: u64,
}

impl<'a> Cursor<'a> {
    /// A cursor over `data`, whose first byte sits at absolute offset `base` in the file.
    pub fn new(data: &'a [u8], base: u64) -> Self {
        Self { data, pos: 0, base }
    }

    /// The absolute file offset of the next byte to read.
    pub fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// The position relative to the start of the slice.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Bytes left to read.
    pub fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    /// True when every byte has been read.
    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    /// The unread bytes, without consuming them.
    pub fn rest(&self) -> &'a [u8] {
        &self.data[self.pos..]
    }

    /// The whole underlying slice.
    pub fn data(&self) -> &'a [u8] {
        self.data
    }

    /// Takes the next `n` bytes.
    pub fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8]> {
        if n > self.remaining() {
            return Err(self.truncated(what, n));
        }
        let bytes = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(bytes)
    }

    /// Skips `n` bytes.
    pub fn skip(&mut self, n: usize, what: &'static str) -> Result<()> {
        self.take(n, what).map(|_| ())
    }

    /// Takes the next `N` bytes as an array.
    pub fn take_array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N]> {
        let bytes = self.take(N, what)?;
        let mut out = [0u8; N];
        out.copy_from_slice(bytes);
        Ok(out)
    }

    /// A sub-cursor over the next `n` bytes (consumed from this one), keeping absolute offsets.
    pub fn sub(&mut self, n: usize, what: &'static str) -> Result<Cursor<'a>> {
        let base = self.offset();
        let bytes = self.take(n, what)?;
        Ok(Cursor::new(bytes, base))
    }

    /// Checks that a length or count read from the input fits in what remains, given the
    /// minimum number of bytes each element occupies, and returns it as `usize`.
    pub fn check_len(
        &self,
        declared: i64,
        min_elem_bytes: usize,
        what: &'static str,
        at: u64,
    ) -> Result<usize> {
        let available = self.remaining() as u64;
        let fits = declared >= 0
            && (declared as u64).saturating_mul(min_elem_bytes.max(1) as u64) <= available;
        if !fits {
            return Err(Error::LengthOutOfBounds {
                what,
                offset: at,
                declared,
                available,
            });
        }
        Ok(declared as usize)
    }

    /// Reads one byte.
    pub fn read_u8(&mut self, what: &'static str) -> Result<u8> {
        Ok(self.take_array::<1>(what)?[0])
    }

    /// Reads a bool byte (`0` false, anything else true, as Java's `readBool`).
    pub fn read_bool(&mut self, what: &'static str) -> Result<bool> {
        Ok(self.read_u8(what)? != 0)
    }

    /// Reads a big-endian `i16`.
    pub fn read_i16(&mut self, what: &'static str) -> Result<i16> {
        Ok(i16::from_be_bytes(self.take_array(what)?))
    }

    /// Reads a big-endian `i32`.
    pub fn read_i32(&mut self, what: &'static str) -> Result<i32> {
        Ok(i32::from_be_bytes(self.take_array(what)?))
    }

    /// Reads a big-endian `i64`.
    pub fn read_i64(&mut self, what: &'static str) -> Result<i64> {
        Ok(i64::from_be_bytes(self.take_array(what)?))
    }

    /// Reads a big-endian `f32`.
    pub fn read_f32(&mut self, what: &'static str) -> Result<f32> {
        Ok(f32::from_be_bytes(self.take_array(what)?))
    }

    /// Reads a big-endian `f64`.
    pub fn read_f64(&mut self, what: &'static str) -> Result<f64> {
        Ok(f64::from_be_bytes(self.take_array(what)?))
    }

    /// Reads an unsigned LEB128 varint of a 32-bit value (`UVarInt`, 1–5 bytes).
    pub fn read_uvarint(&mut self, what: &'static str) -> Result<u32> {
        let start = self.offset();
        let mut value: u32 = 0;
        for i in 0..5 {
            let byte = self.read_u8(what)?;
            value |= u32::from(byte & 0x7F) << (7 * i);
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(Error::Invalid {
            what,
            offset: start,
            reason: "varint longer than 5 bytes".into(),
        })
    }

    /// Reads a ZigZag varint of a 32-bit value (`VarInt`).
    pub fn read_varint(&mut self, what: &'static str) -> Result<i32> {
        let raw = self.read_uvarint(what)?;
        Ok(((raw >> 1) as i32) ^ -((raw & 1) as i32))
    }

    /// Reads an unsigned LEB128 varint of a 64-bit value (1–10 bytes).
    pub fn read_uvarint64(&mut self, what: &'static str) -> Result<u64> {
        let start = self.offset();
        let mut value: u64 = 0;
        for i in 0..10 {
            let byte = self.read_u8(what)?;
            value |= u64::from(byte & 0x7F) << (7 * i);
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(Error::Invalid {
            what,
            offset: start,
            reason: "varint longer than 10 bytes".into(),
        })
    }

    /// Reads a ZigZag varint of a 64-bit value.
    pub fn read_varint64(&mut self, what: &'static str) -> Result<i64> {
        let raw = self.read_uvarint64(what)?;
        Ok(((raw >> 1) as i64) ^ -((raw & 1) as i64))
    }

    /// Reads `VarBin`: a `VarInt` length (−1 = null) and that many raw bytes.
    pub fn read_var_bin(&mut self, what: &'static str) -> Result<Option<&'a [u8]>> {
        let at = self.offset();
        let len = self.read_varint(what)?;
        if len == -1 {
            return Ok(None);
        }
        let n = self.check_len(i64::from(len), 1, what, at)?;
        self.take(n, what).map(Some)
    }

    /// Reads `VarStr`: a `VarInt` length (−1 = null, 0 = empty) and UTF-8 bytes.
    pub fn read_var_str(&mut self, what: &'static str) -> Result<Option<String>> {
        let at = self.offset();
        match self.read_var_bin(what)? {
            None => Ok(None),
            Some(bytes) => utf8(bytes, what, at).map(Some),
        }
    }

    /// Reads `Bin32`: an `i32` length (−1 = null) and that many raw bytes.
    pub fn read_bin32(&mut self, what: &'static str) -> Result<Option<&'a [u8]>> {
        let at = self.offset();
        let len = self.read_i32(what)?;
        if len == -1 {
            return Ok(None);
        }
        let n = self.check_len(i64::from(len), 1, what, at)?;
        self.take(n, what).map(Some)
    }

    /// Reads `Str32`: an `i32` length (−1 = null) and UTF-8 bytes.
    pub fn read_str32(&mut self, what: &'static str) -> Result<Option<String>> {
        let at = self.offset();
        match self.read_bin32(what)? {
            None => Ok(None),
            Some(bytes) => utf8(bytes, what, at).map(Some),
        }
    }

    fn truncated(&self, what: &'static str, needed: usize) -> Error {
        Error::Truncated {
            what,
            offset: self.offset(),
            needed: needed as u64,
            available: self.remaining() as u64,
        }
    }
}

fn utf8(bytes: &[u8], what: &'static str, offset: u64) -> Result<String> {
    String::from_utf8(bytes.to_vec()).map_err(|_| Error::InvalidUtf8 { what, offset })
}

/// The writing mirror of [`Cursor`]: appends TsFile primitive encodings to a buffer.
#[derive(Debug, Clone, Default)]
pub struct Writer {
    buf: Vec<u8>,
}

impl Writer {
    /// An empty writer.
    pub fn new() -> Self {
        Self::default()
    }

    /// A writer that appends to `buf`.
    pub fn from_vec(buf: Vec<u8>) -> Self {
        Self { buf }
    }

    /// The bytes written so far.
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf
    }

    /// Bytes written so far.
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// True when nothing was written.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// The written buffer.
    pub fn into_inner(self) -> Vec<u8> {
        self.buf
    }

    /// Appends raw bytes.
    pub fn write_bytes(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// Appends one byte.
    pub fn write_u8(&mut self, v: u8) {
        self.buf.push(v);
    }

    /// Appends a bool byte (`01` / `00`).
    pub fn write_bool(&mut self, v: bool) {
        self.buf.push(u8::from(v));
    }

    /// Appends a big-endian `i16`.
    pub fn write_i16(&mut self, v: i16) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    /// Appends a big-endian `i32`.
    pub fn write_i32(&mut self, v: i32) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    /// Appends a big-endian `i64`.
    pub fn write_i64(&mut self, v: i64) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    /// Appends a big-endian `f32`.
    pub fn write_f32(&mut self, v: f32) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    /// Appends a big-endian `f64`.
    pub fn write_f64(&mut self, v: f64) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    /// Appends a `UVarInt` (unsigned LEB128 of a 32-bit value).
    pub fn write_uvarint(&mut self, mut v: u32) {
        while v >= 0x80 {
            self.buf.push((v as u8 & 0x7F) | 0x80);
            v >>= 7;
        }
        self.buf.push(v as u8);
    }

    /// Appends a `VarInt` (ZigZag, then `UVarInt`).
    pub fn write_varint(&mut self, v: i32) {
        self.write_uvarint(((v << 1) ^ (v >> 31)) as u32);
    }

    /// Appends an unsigned LEB128 varint of a 64-bit value.
    pub fn write_uvarint64(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.buf.push((v as u8 & 0x7F) | 0x80);
            v >>= 7;
        }
        self.buf.push(v as u8);
    }

    /// Appends a ZigZag varint of a 64-bit value.
    pub fn write_varint64(&mut self, v: i64) {
        self.write_uvarint64(((v << 1) ^ (v >> 63)) as u64);
    }

    /// Appends `VarBin` (`None` = null, written as length −1).
    pub fn write_var_bin(&mut self, v: Option<&[u8]>) {
        match v {
            None => self.write_varint(-1),
            Some(bytes) => {
                self.write_varint(bytes.len() as i32);
                self.write_bytes(bytes);
            }
        }
    }

    /// Appends `VarStr` (`None` = null).
    pub fn write_var_str(&mut self, v: Option<&str>) {
        self.write_var_bin(v.map(str::as_bytes));
    }

    /// Appends `Bin32` (`None` = null).
    pub fn write_bin32(&mut self, v: Option<&[u8]>) {
        match v {
            None => self.write_i32(-1),
            Some(bytes) => {
                self.write_i32(bytes.len() as i32);
                self.write_bytes(bytes);
            }
        }
    }

    /// Appends `Str32` (`None` = null).
    pub fn write_str32(&mut self, v: Option<&str>) {
        self.write_bin32(v.map(str::as_bytes));
    }
}

/// The bytes of a hex string such as `"00 0a ff"` (whitespace ignored), for the unit tests'
/// byte-exact vectors.
#[cfg(test)]
pub(crate) fn hex(s: &str) -> Vec<u8> {
    let s: String = s.split_whitespace().collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_match_the_reference_vectors() {
        let cases: &[(i32, &[u8])] = &[
            (0, &[0x00]),
            (-1, &[0x01]),
            (1, &[0x02]),
            (3, &[0x06]),
            (20240102, &[0xcc, 0xdb, 0xa6, 0x13]),
        ];
        for &(v, bytes) in cases {
            let mut w = Writer::new();
            w.write_varint(v);
            assert_eq!(w.as_bytes(), bytes, "encoding {v}");
            assert_eq!(Cursor::new(bytes, 0).read_varint("v").unwrap(), v);
        }
        let mut w = Writer::new();
        w.write_uvarint(256);
        assert_eq!(w.as_bytes(), &[0x80, 0x02]);
    }

    #[test]
    fn var_str_null_and_empty() {
        assert_eq!(Cursor::new(&[0x01], 0).read_var_str("s").unwrap(), None);
        assert_eq!(
            Cursor::new(&[0x00], 0)
                .read_var_str("s")
                .unwrap()
                .as_deref(),
            Some("")
        );
    }

    #[test]
    fn truncation_names_field_and_absolute_offset() {
        let err = Cursor::new(&[0x00, 0x01], 100)
            .read_i32("chunk size")
            .unwrap_err();
        assert_eq!(
            err,
            Error::Truncated {
                what: "chunk size",
                offset: 100,
                needed: 4,
                available: 2
            }
        );
    }

    #[test]
    fn lying_length_is_refused_before_allocation() {
        // VarStr claiming 1,000,000 bytes with 1 byte left.
        let mut w = Writer::new();
        w.write_varint(1_000_000);
        w.write_u8(b'x');
        let err = Cursor::new(w.as_bytes(), 7)
            .read_var_str("name")
            .unwrap_err();
        assert!(
            matches!(
                err,
                Error::LengthOutOfBounds {
                    declared: 1_000_000,
                    ..
                }
            ),
            "{err}"
        );
    }

    #[test]
    fn varint64_round_trip_extremes() {
        for v in [0i64, -1, 1, i64::MIN, i64::MAX] {
            let mut w = Writer::new();
            w.write_varint64(v);
            assert_eq!(Cursor::new(w.as_bytes(), 0).read_varint64("v").unwrap(), v);
        }
    }
}
