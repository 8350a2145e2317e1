//! A Parquet `ChunkReader` over a file that is not on this machine: every range the reader
//! asks for is fetched through a [`RangeRead`], so indexing an object reads its footer (and
//! page index, and whatever statistics need) rather than the whole object.

use std::io::Read;
use std::ops::Range;

use bytes::Bytes;
use parquet::errors::{ParquetError, Result as ParquetResult};
use parquet::file::reader::{ChunkReader, Length};

use crate::locator::bytes::RangeRead;

/// Bytes fetched per step by a sequential reader ([`ChunkReader::get_read`]).
const STEP: u64 = 1 << 20;

/// A remote file of `len` bytes read through `read`.
pub(crate) struct RangedReader {
    pub(crate) read: RangeRead,
    pub(crate) len: u64,
}

impl RangedReader {
    fn fetch(&self, range: Range<u64>) -> ParquetResult<Bytes> {
        if range.end > self.len {
            return Err(ParquetError::EOF(format!(
                "range {}..{} is past the end of the file ({} bytes)",
                range.start, range.end, self.len
            )));
        }
        let want = range.end - range.start;
        let got = (self.read)(range.clone()).map_err(|e| ParquetError::External(Box::new(e)))?;
        if got.len() as u64 != want {
            return Err(ParquetError::EOF(format!(
                "range {}..{}: {} bytes arrived",
                range.start,
                range.end,
                got.len()
            )));
        }
        Ok(got)
    }
}

impl Length for RangedReader {
    fn len(&self) -> u64 {
        self.len
    }
}

/// Reads a remote file from an offset on, one fetched step at a time.
pub(crate) struct RangedRead {
    read: RangeRead,
    len: u64,
    pos: u64,
    buf: Bytes,
}

impl Read for RangedRead {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if self.buf.is_empty() {
            if self.pos >= self.len {
                return Ok(0);
            }
            let end = self.pos.saturating_add(STEP).min(self.len);
            self.buf = (self.read)(self.pos..end)?;
            if self.buf.is_empty() {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    format!("no bytes arrived at offset {}", self.pos),
                ));
            }
            self.pos += self.buf.len() as u64;
        }
        let n = out.len().min(self.buf.len());
        out[..n].copy_from_slice(&self.buf.split_to(n));
        Ok(n)
    }
}

impl ChunkReader for RangedReader {
    type T = RangedRead;

    fn get_read(&self, start: u64) -> ParquetResult<Self::T> {
        Ok(RangedRead {
            read: self.read.clone(),
            len: self.len,
            pos: start.min(self.len),
            buf: Bytes::new(),
        })
    }

    fn get_bytes(&self, start: u64, length: usize) -> ParquetResult<Bytes> {
        let end = start
            .checked_add(length as u64)
            .ok_or_else(|| ParquetError::EOF(format!("range {start}+{length} overflows")))?;
        self.fetch(start..end)
    }
}
