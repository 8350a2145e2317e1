//! DICTIONARY (§8.6) for TEXT and STRING: `VarInt entry_count`, the entries (VarInt length +
//! bytes, in first-seen order), then an RLE stream of INT32 indices.

use std::collections::HashMap;

use super::plain::read_uvarint_at;
use super::rle::{RleDecoder, RleEncoder};
use super::{Decoder, Encoder};
use crate::error::{Error, Result};

fn zigzag32(raw: u64) -> i32 {
    let raw = raw as u32;
    ((raw >> 1) as i32) ^ -((raw & 1) as i32)
}

/// The DICTIONARY decoder; values borrow the page buffer.
#[derive(Debug)]
pub struct DictionaryDecoder<'a> {
    entries: Vec<&'a [u8]>,
    indices: RleDecoder<'a, i32>,
    scratch: Vec<i32>,
    base: u64,
    indices_at: u64,
}

impl<'a> DictionaryDecoder<'a> {
    /// Parses the dictionary of a value stream at absolute offset `base`.
    pub fn new(data: &'a [u8], base: u64) -> Result<Self> {
        let mut pos = 0;
        if data.is_empty() {
            // An empty stream (no value) has no dictionary either.
            return Ok(Self {
                entries: Vec::new(),
                indices: RleDecoder::new(data, base),
                scratch: Vec::new(),
                base,
                indices_at: base,
            });
        }
        let count = zigzag32(read_uvarint_at(data, &mut pos, 5, base, "dictionary size")?);
        // Every entry takes at least one byte: a larger count is a lie.
        if count < 0 || count as usize > data.len() - pos {
            return Err(Error::LengthOutOfBounds {
                what: "dictionary entries",
                offset: base,
                declared: i64::from(count),
                available: (data.len() - pos) as u64,
            });
        }
        let mut entries = Vec::with_capacity(count as usize);
        for _ in 0..count {
            let at = pos;
            let len = zigzag32(read_uvarint_at(
                data,
                &mut pos,
                5,
                base,
                "dictionary entry length",
            )?);
            if len < 0 || len as usize > data.len() - pos {
                return Err(Error::LengthOutOfBounds {
                    what: "dictionary entry",
                    offset: base + at as u64,
                    declared: i64::from(len),
                    available: (data.len() - pos) as u64,
                });
            }
            entries.push(&data[pos..pos + len as usize]);
            pos += len as usize;
        }
        Ok(Self {
            entries,
            indices: RleDecoder::new(&data[pos..], base + pos as u64),
            scratch: Vec::new(),
            base,
            indices_at: base + pos as u64,
        })
    }
}

impl<'a> Decoder<&'a [u8]> for DictionaryDecoder<'a> {
    fn decode(&mut self, out: &mut Vec<&'a [u8]>, max: usize) -> Result<usize> {
        self.scratch.clear();
        let n = self.indices.decode(&mut self.scratch, max)?;
        out.reserve(n);
        for &i in &self.scratch {
            let Some(v) = usize::try_from(i).ok().and_then(|i| self.entries.get(i)) else {
                return Err(Error::Invalid {
                    what: "dictionary index",
                    offset: self.indices_at,
                    reason: format!(
                        "index {i} outside a dictionary of {} entries (page at byte {})",
                        self.entries.len(),
                        self.base
                    ),
                });
            };
            out.push(v);
        }
        Ok(n)
    }

    fn skip(&mut self, n: usize) -> Result<usize> {
        self.indices.skip(n)
    }
}

/// The DICTIONARY encoder (Java `DictionaryEncoder`).
#[derive(Debug, Default)]
pub struct DictionaryEncoder {
    map: HashMap<Vec<u8>, i32>,
    entries: Vec<Vec<u8>>,
    entry_bytes: usize,
    indices: RleEncoder<i32>,
}

impl Encoder<[u8]> for DictionaryEncoder {
    fn put(&mut self, v: &[u8]) {
        let i = match self.map.get(v) {
            Some(&i) => i,
            None => {
                let i = self.entries.len() as i32;
                self.map.insert(v.to_vec(), i);
                self.entries.push(v.to_vec());
                self.entry_bytes += v.len() + 5;
                i
            }
        };
        self.indices.put(&i);
    }

    fn flush(&mut self, out: &mut Vec<u8>) {
        if self.entries.is_empty() {
            return;
        }
        let mut w = crate::cursor::Writer::from_vec(std::mem::take(out));
        w.write_varint(self.entries.len() as i32);
        for e in &self.entries {
            w.write_var_bin(Some(e));
        }
        *out = w.into_inner();
        self.indices.flush(out);
        self.map.clear();
        self.entries.clear();
        self.entry_bytes = 0;
    }

    fn estimated_size(&self) -> usize {
        self.entry_bytes + self.indices.estimated_size()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_example() {
        let words = ["aa", "bb", "aa", "aa", "cc", "aa", "bb", "aa", "aa", "dd"];
        let mut e = DictionaryEncoder::default();
        for w in words {
            e.put(w.as_bytes());
        }
        let mut out = Vec::new();
        e.flush(&mut out);
        let expected = [
            0x08, 0x04, 0x61, 0x61, 0x04, 0x62, 0x62, 0x04, 0x63, 0x63, 0x04, 0x64, 0x64, 0x07,
            0x02, 0x05, 0x02, 0x10, 0x84, 0x30, 0x00,
        ];
        assert_eq!(out, expected);
        let mut d = DictionaryDecoder::new(&out, 0).unwrap();
        let mut back = Vec::new();
        d.decode_all(&mut back, usize::MAX).unwrap();
        let back: Vec<&str> = back
            .iter()
            .map(|b| std::str::from_utf8(b).unwrap())
            .collect();
        assert_eq!(back, words);
    }
}
