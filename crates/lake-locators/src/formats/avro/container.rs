//! A hand-written walker over the Avro object container file (OCF) layout, because
//! apache-avro hides block boundaries: the header (magic, metadata map, sync marker), then
//! blocks of `[count: long][size: long][data: size bytes][sync: 16 bytes]`. Every length read
//! from the file is checked against the bytes that remain before anything is allocated.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

use super::FORMAT;

/// The OCF magic.
const MAGIC: &[u8; 4] = b"Obj\x01";

/// A buffered file reader that knows its position and the file's length.
pub(super) struct Source {
    path: PathBuf,
    inner: BufReader<File>,
    pos: u64,
    len: u64,
}

/// The parsed container header.
pub(super) struct Header {
    /// The metadata map (`avro.schema`, `avro.codec`, user keys).
    pub meta: HashMap<String, Vec<u8>>,
    /// The 16-byte sync marker that ends every block.
    pub sync: [u8; 16],
    /// The byte offset of the first block.
    pub data_start: u64,
}

/// One data block's framing: where it starts, its object count and data length.
#[derive(Debug, Clone, Copy)]
pub(super) struct BlockFrame {
    /// Offset of the block's object count.
    pub first_byte: u64,
    /// Objects in the block.
    pub count: u64,
    /// Offset of the (possibly compressed) data.
    pub data_at: u64,
    /// Length of the data.
    pub size: u64,
    /// Offset just past the block's sync marker.
    pub end: u64,
}

impl Source {
    /// Opens `path` for walking.
    pub(super) fn open(path: &Path) -> Result<Self> {
        let (file, len) = crate::columnar::open(path)?;
        Ok(Source {
            path: path.to_path_buf(),
            // Small: the block walk reads a few framing bytes per block and seeks past the
            // data, and block data is read with one large read that bypasses the buffer.
            inner: BufReader::with_capacity(512, file),
            pos: 0,
            len,
        })
    }

    /// The file length.
    pub(super) fn len(&self) -> u64 {
        self.len
    }

    pub(super) fn bad(&self, message: impl Into<String>, at: u64) -> Error {
        Error::malformed(&self.path, FORMAT, message).at_byte(at)
    }

    /// Moves to `at` (within the file).
    pub(super) fn seek(&mut self, at: u64) -> Result<()> {
        if at > self.len {
            return Err(self.bad(format!("offset {at} is past the end of the file"), at));
        }
        let delta = at as i64 - self.pos as i64;
        self.inner
            .seek_relative(delta)
            .map_err(|e| Error::io(&self.path, e))?;
        self.pos = at;
        Ok(())
    }

    fn byte(&mut self) -> Result<u8> {
        let mut b = [0u8];
        self.exact(&mut b)?;
        Ok(b[0])
    }

    fn exact(&mut self, buf: &mut [u8]) -> Result<()> {
        let at = self.pos;
        if at + buf.len() as u64 > self.len {
            return Err(self.bad(
                format!(
                    "{} bytes needed at byte {at}, but the file ends at byte {}",
                    buf.len(),
                    self.len
                ),
                at,
            ));
        }
        self.inner
            .read_exact(buf)
            .map_err(|e| Error::io(&self.path, e))?;
        self.pos += buf.len() as u64;
        Ok(())
    }

    /// `len` bytes, checked against the rest of the file before allocating.
    pub(super) fn bytes(&mut self, len: u64, what: &str) -> Result<Vec<u8>> {
        let at = self.pos;
        if len > self.len - at {
            return Err(self.bad(
                format!(
                    "{what} of {len} bytes at byte {at} runs past the end of the file ({} bytes)",
                    self.len
                ),
                at,
            ));
        }
        let mut buf = vec![0u8; len as usize];
        self.exact(&mut buf)?;
        Ok(buf)
    }

    /// A zigzag-encoded variable-length `long`.
    pub(super) fn long(&mut self) -> Result<i64> {
        let at = self.pos;
        let mut value: u64 = 0;
        for i in 0..10 {
            let b = self.byte()?;
            value |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok((value >> 1) as i64 ^ -((value & 1) as i64));
            }
        }
        Err(self.bad("variable-length integer longer than 10 bytes", at))
    }

    /// A non-negative `long` used as a length or count.
    fn length(&mut self, what: &str) -> Result<u64> {
        let at = self.pos;
        let v = self.long()?;
        u64::try_from(v).map_err(|_| self.bad(format!("negative {what} {v}"), at))
    }

    /// Reads the container header from the start of the file.
    pub(super) fn header(&mut self) -> Result<Header> {
        self.seek(0)?;
        let mut magic = [0u8; 4];
        if self.len < 4 {
            return Err(self.bad(
                format!("{} bytes is too short for an Avro file", self.len),
                0,
            ));
        }
        self.exact(&mut magic)?;
        if &magic != MAGIC {
            return Err(self.bad("the file does not start with the Avro magic Obj\\x01", 0));
        }
        let mut meta = HashMap::new();
        loop {
            let at = self.pos;
            let mut count = self.long()?;
            if count == 0 {
                break;
            }
            if count < 0 {
                count = count
                    .checked_neg()
                    .ok_or_else(|| self.bad("invalid metadata block count", at))?;
                // A negative count is followed by the block's byte size, which is not needed.
                self.long()?;
            }
            for _ in 0..count {
                let key_len = self.length("metadata key length")?;
                let key = self.bytes(key_len, "metadata key")?;
                let key = String::from_utf8(key)
                    .map_err(|_| self.bad("metadata key is not UTF-8", at))?;
                let value_len = self.length("metadata value length")?;
                let value = self.bytes(value_len, "metadata value")?;
                meta.insert(key, value);
            }
        }
        let mut sync = [0u8; 16];
        self.exact(&mut sync)?;
        Ok(Header {
            meta,
            sync,
            data_start: self.pos,
        })
    }

    /// Reads the framing of the block at the current position (leaving the position at its
    /// data), or `None` at the end of the file.
    pub(super) fn frame(&mut self) -> Result<Option<BlockFrame>> {
        let first_byte = self.pos;
        if first_byte == self.len {
            return Ok(None);
        }
        let count = self.length("block object count")?;
        let size = self.length("block size")?;
        let data_at = self.pos;
        let end = data_at
            .checked_add(size)
            .and_then(|e| e.checked_add(16))
            .filter(|&e| e <= self.len)
            .ok_or_else(|| {
                self.bad(
                    format!(
                        "block declares {size} bytes of data at byte {data_at}, past the end of the file ({} bytes)",
                        self.len
                    ),
                    first_byte,
                )
            })?;
        Ok(Some(BlockFrame {
            first_byte,
            count,
            data_at,
            size,
            end,
        }))
    }

    /// Checks the sync marker that ends `frame` (the position must be at its data's end).
    pub(super) fn check_sync(&mut self, frame: &BlockFrame, sync: &[u8; 16]) -> Result<()> {
        self.seek(frame.data_at + frame.size)?;
        let mut marker = [0u8; 16];
        self.exact(&mut marker)?;
        if &marker != sync {
            return Err(self.bad(
                "block does not end with the file's sync marker",
                frame.data_at + frame.size,
            ));
        }
        Ok(())
    }
}
