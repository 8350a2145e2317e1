//! The I/O seam: one trait for "bytes at an offset", implemented for files, memory maps and
//! in-memory buffers, plus a recording wrapper that logs every range read.
//!
//! Everything above this module (the index walk, chunk and page reading) asks for byte ranges
//! through [`ChunkReader`] and parses them as slices; nothing else touches the file. This is
//! what lets a test prove which bytes a lookup did *not* read (see [`RecordingReader`]).

use std::fs::File;
use std::sync::{Arc, Mutex};

use bytes::Bytes;

use crate::error::{Error, Result};

/// A source of bytes addressed by absolute offset, like arrow-rs's Parquet `ChunkReader`.
///
/// Implementations must return exactly `len` bytes or an error; a range past the end of the
/// source is an error naming the range, never a short read.
pub trait ChunkReader: Send + Sync {
    /// Total length of the source in bytes.
    fn len(&self) -> u64;

    /// True when the source holds no bytes.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `len` bytes starting at absolute offset `offset`.
    fn get_bytes(&self, offset: u64, len: usize) -> Result<Bytes>;
}

/// Checks that `[offset, offset + len)` lies inside a source of `total` bytes.
pub(crate) fn check_range(offset: u64, len: usize, total: u64) -> Result<()> {
    let end = offset.checked_add(len as u64);
    match end {
        Some(end) if end <= total => Ok(()),
        _ => Err(Error::OutOfRange {
            offset,
            len: len as u64,
            file_len: total,
        }),
    }
}

impl ChunkReader for Bytes {
    fn len(&self) -> u64 {
        Bytes::len(self) as u64
    }

    fn get_bytes(&self, offset: u64, len: usize) -> Result<Bytes> {
        check_range(offset, len, Bytes::len(self) as u64)?;
        let start = offset as usize;
        Ok(self.slice(start..start + len))
    }
}

impl ChunkReader for File {
    fn len(&self) -> u64 {
        self.metadata().map(|m| m.len()).unwrap_or(0)
    }

    fn get_bytes(&self, offset: u64, len: usize) -> Result<Bytes> {
        check_range(offset, len, ChunkReader::len(self))?;
        let mut buf = vec![0u8; len];
        read_exact_at(self, &mut buf, offset).map_err(|source| Error::Io {
            offset,
            len: len as u64,
            source,
        })?;
        Ok(Bytes::from(buf))
    }
}

/// Positional read that does not move a shared file cursor, so one `File` can serve several
/// readers at once (unlike `try_clone` + `seek`, which share the descriptor's offset).
#[cfg(unix)]
fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt;
    file.read_exact_at(buf, offset)
}

/// Positional read for Windows, looping because `seek_read` may return short reads.
#[cfg(windows)]
fn read_exact_at(file: &File, mut buf: &mut [u8], mut offset: u64) -> std::io::Result<()> {
    use std::os::windows::fs::FileExt;
    while !buf.is_empty() {
        match file.seek_read(buf, offset)? {
            0 => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            n => {
                buf = &mut buf[n..];
                offset += n as u64;
            }
        }
    }
    Ok(())
}

impl<R: ChunkReader + ?Sized> ChunkReader for Arc<R> {
    fn len(&self) -> u64 {
        (**self).len()
    }

    fn get_bytes(&self, offset: u64, len: usize) -> Result<Bytes> {
        (**self).get_bytes(offset, len)
    }
}

impl<R: ChunkReader + ?Sized> ChunkReader for Box<R> {
    fn len(&self) -> u64 {
        (**self).len()
    }

    fn get_bytes(&self, offset: u64, len: usize) -> Result<Bytes> {
        (**self).get_bytes(offset, len)
    }
}

/// One read recorded by [`RecordingReader`]: an absolute offset and a length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadRecord {
    /// Absolute offset of the first byte read.
    pub offset: u64,
    /// Number of bytes read.
    pub len: u64,
}

/// Wraps a [`ChunkReader`] and records every range asked of it, in order.
///
/// Used by tests to show what a read touched (and, above all, what it did not).
#[derive(Debug)]
pub struct RecordingReader<R> {
    inner: R,
    log: Mutex<Vec<ReadRecord>>,
}

impl<R: ChunkReader> RecordingReader<R> {
    /// Starts recording reads of `inner`.
    pub fn new(inner: R) -> Self {
        Self {
            inner,
            log: Mutex::new(Vec::new()),
        }
    }

    /// Every read so far, in order.
    pub fn reads(&self) -> Vec<ReadRecord> {
        self.log.lock().map(|l| l.clone()).unwrap_or_default()
    }

    /// Returns the reads so far and starts a fresh log.
    pub fn take_reads(&self) -> Vec<ReadRecord> {
        self.log
            .lock()
            .map(|mut l| std::mem::take(&mut *l))
            .unwrap_or_default()
    }
}

impl<R: ChunkReader> ChunkReader for RecordingReader<R> {
    fn len(&self) -> u64 {
        self.inner.len()
    }

    fn get_bytes(&self, offset: u64, len: usize) -> Result<Bytes> {
        if let Ok(mut log) = self.log.lock() {
            log.push(ReadRecord {
                offset,
                len: len as u64,
            });
        }
        self.inner.get_bytes(offset, len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_reader_checks_ranges() {
        let src = Bytes::from_static(b"TsFile\x04");
        assert_eq!(src.get_bytes(0, 6).unwrap().as_ref(), b"TsFile");
        assert!(matches!(
            src.get_bytes(5, 3),
            Err(Error::OutOfRange {
                offset: 5,
                len: 3,
                ..
            })
        ));
        assert!(src.get_bytes(u64::MAX, 2).is_err());
    }

    #[test]
    fn file_reader_reads_at_offsets() {
        use std::io::Write;
        let mut tmp = tempfile::NamedTempFile::new().unwrap();
        tmp.write_all(b"0123456789").unwrap();
        let file = File::open(tmp.path()).unwrap();
        assert_eq!(ChunkReader::len(&file), 10);
        assert_eq!(file.get_bytes(3, 4).unwrap().as_ref(), b"3456");
        assert!(file.get_bytes(8, 4).is_err());
    }

    #[test]
    fn recording_reader_logs_ranges() {
        let rec = RecordingReader::new(Bytes::from_static(b"abcdef"));
        rec.get_bytes(1, 2).unwrap();
        rec.get_bytes(4, 1).unwrap();
        assert_eq!(
            rec.take_reads(),
            vec![
                ReadRecord { offset: 1, len: 2 },
                ReadRecord { offset: 4, len: 1 }
            ]
        );
        assert!(rec.reads().is_empty());
    }
}
