//! An I/O seam for Parquet: [`TraceReader`] wraps a file as a Parquet `ChunkReader` and
//! records every byte range the reader asks for, so tests (and curious users) can check which
//! parts of a file an operation touched. With [`ReadLog::off`] it records nothing and serves
//! as the locator's bounded reader: a range past the end of the file is an error before any
//! buffer is allocated for it (the plain `File` reader reserves the requested length first).

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::ops::Range;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use parquet::errors::{ParquetError, Result as ParquetResult};
use parquet::file::reader::{ChunkReader, Length};

/// The byte ranges read so far, shared between a [`TraceReader`] and its observers.
#[derive(Debug, Clone)]
pub struct ReadLog(Option<Arc<Mutex<Vec<Range<u64>>>>>);

impl Default for ReadLog {
    /// A log that records.
    fn default() -> Self {
        ReadLog(Some(Arc::default()))
    }
}

impl ReadLog {
    /// A log that records nothing.
    pub fn off() -> Self {
        ReadLog(None)
    }

    /// Records one read.
    fn push(&self, range: Range<u64>) {
        if range.is_empty() {
            return;
        }
        if let Some(Ok(mut log)) = self.0.as_ref().map(|l| l.lock()) {
            log.push(range);
        }
    }

    /// Every range read so far, in call order.
    pub fn ranges(&self) -> Vec<Range<u64>> {
        match &self.0 {
            Some(l) => l.lock().map(|l| l.clone()).unwrap_or_default(),
            None => Vec::new(),
        }
    }

    /// Forgets the ranges recorded so far.
    pub fn clear(&self) {
        if let Some(Ok(mut log)) = self.0.as_ref().map(|l| l.lock()) {
            log.clear();
        }
    }
}

/// A file that records the byte ranges a Parquet reader fetches from it.
#[derive(Debug)]
pub struct TraceReader {
    file: File,
    len: u64,
    log: ReadLog,
}

impl TraceReader {
    /// Wraps `file`; reads are recorded in `log`.
    pub fn new(file: File, log: ReadLog) -> std::io::Result<Self> {
        let len = file.metadata()?.len();
        Ok(TraceReader { file, len, log })
    }
}

impl Length for TraceReader {
    fn len(&self) -> u64 {
        self.len
    }
}

/// A file positioned at some offset that logs every read it makes from the operating system
/// (below any buffering, so read-ahead is counted too).
#[derive(Debug)]
pub struct LoggedFile {
    file: File,
    pos: u64,
    log: ReadLog,
}

impl Read for LoggedFile {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.file.read(buf)?;
        self.log.push(self.pos..self.pos + n as u64);
        self.pos += n as u64;
        Ok(n)
    }
}

impl ChunkReader for TraceReader {
    type T = BufReader<LoggedFile>;

    fn get_read(&self, start: u64) -> ParquetResult<Self::T> {
        let mut file = self.file.try_clone()?;
        file.seek(SeekFrom::Start(start))?;
        Ok(BufReader::new(LoggedFile {
            file,
            pos: start,
            log: self.log.clone(),
        }))
    }

    fn get_bytes(&self, start: u64, length: usize) -> ParquetResult<Bytes> {
        let end = start.checked_add(length as u64).filter(|&e| e <= self.len);
        let Some(end) = end else {
            return Err(ParquetError::EOF(format!(
                "range {start}+{length} is past the end of the file ({} bytes)",
                self.len
            )));
        };
        // Read into the spare capacity: zeroing a column chunk's worth of buffer first cost
        // as much as the kernel's copy into it.
        let mut buf = Vec::with_capacity(length);
        let mut file = &self.file;
        file.seek(SeekFrom::Start(start))?;
        file.take(length as u64).read_to_end(&mut buf)?;
        if buf.len() != length {
            return Err(ParquetError::EOF(format!(
                "range {start}+{length}: the file ended after {} bytes of it",
                buf.len()
            )));
        }
        self.log.push(start..end);
        Ok(buf.into())
    }
}
