//! Fast structural scanners of the row formats: the quote-aware delimited record scanner
//! (memchr over line breaks and quotes, no field parsing) and the JSON value skipper that
//! tracks strings and nesting depth. Both find record boundaries only; they never build values.
//!
//! Also the file access shared by the row formats: the bytes of a whole file, read into memory
//! when it is small and memory-mapped otherwise.

use std::fs::File;
use std::io::Read as _;
use std::ops::Deref;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use memchr::{memchr, memchr2};

use crate::error::{Error, Result};

/// Files of at most this many bytes are read into memory instead of mapped
/// ([`FileBytes::open`]).
///
/// A map costs an `mmap` and an `munmap` (which takes the process's address-space lock and,
/// with threads, flushes the other cores' TLBs) and a page fault or a populate per file,
/// whatever the file's size; a read costs one copy from the page cache, about 10 µs per
/// 100 KiB. On a lake of 30,000 files of 2-6 KB, `map create` spent 1.18 s of system time
/// against 0.68 s of user time mapping and unmapping them.
pub(crate) const READ_WHOLE_MAX: u64 = 256 << 10;

/// The bytes of a whole file: read into an aligned buffer (files of at most
/// [`READ_WHOLE_MAX`] bytes), memory-mapped (larger ones), or empty (a 0-byte file, which
/// cannot be mapped on every platform).
#[derive(Debug, Clone)]
pub(crate) struct FileBytes {
    map: Option<Arc<memmap2::Mmap>>,
    /// The bytes of a small file, read (64-byte aligned, as Arrow buffers are).
    read: Option<arrow_buffer::Buffer>,
}

impl FileBytes {
    /// Reads or maps `path` read-only, for reads that touch a small part of it.
    pub(crate) fn open(path: &Path) -> Result<Self> {
        Self::map(path, false)
    }

    /// Reads or maps `path` read-only, a map with its pages faulted in up front (one kernel
    /// call instead of a page fault per 4 KiB), for the indexing pass that reads every byte.
    pub(crate) fn open_whole(path: &Path) -> Result<Self> {
        Self::map(path, true)
    }

    fn map(path: &Path, populate: bool) -> Result<Self> {
        let file = File::open(path).map_err(|e| Error::io(path, e))?;
        let len = file.metadata().map_err(|e| Error::io(path, e))?.len();
        if len == 0 {
            return Ok(FileBytes {
                map: None,
                read: None,
            });
        }
        if len <= READ_WHOLE_MAX {
            return read_small(file, len as usize, path);
        }
        let mut options = memmap2::MmapOptions::new();
        if populate {
            options.populate();
        }
        // SAFETY: the map is read-only and private to this process. A concurrent writer that
        // truncates the file could fault the process, which is the documented risk of reading
        // data lakes in place; the lake map detects modified files by size and mtime first.
        let map = unsafe { options.map(&file) }.map_err(|e| Error::io(path, e))?;
        Ok(FileBytes {
            map: Some(Arc::new(map)),
            read: None,
        })
    }
}

/// The first `len` bytes of `file` (fewer if it ends sooner: it shrank since its length was
/// read), in an aligned buffer.
fn read_small(mut file: File, len: usize, path: &Path) -> Result<FileBytes> {
    let mut buf = arrow_buffer::MutableBuffer::from_len_zeroed(len);
    let mut got = 0;
    while got < len {
        match file.read(&mut buf.as_slice_mut()[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::io(path, e)),
        }
    }
    buf.truncate(got);
    Ok(FileBytes {
        map: None,
        read: Some(buf.into()),
    })
}

/// The bytes of one read-ahead request of [`FileBytes::prefetch_until`]: the readahead
/// window of many disks, the most one `MADV_WILLNEED` reads.
#[cfg(unix)]
const WILLNEED_STEP: usize = 128 << 10;

/// `MADV_WILLNEED` of `range` of `map` in steps of [`WILLNEED_STEP`], leaving out the steps
/// whose pages `resident` says are all in memory, until `stop` is set.
#[cfg(unix)]
fn ask_steps(
    map: &memmap2::Mmap,
    range: std::ops::Range<usize>,
    resident: Option<&Resident>,
    stop: &AtomicBool,
) {
    for r in willneed_steps(range, resident) {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let _ = map.advise_range(memmap2::Advice::WillNeed, r.start, r.len());
    }
}

/// The ranges of `ranges` that are not empty and lie inside `map`.
#[cfg(unix)]
fn within(
    map: &memmap2::Mmap,
    ranges: impl Iterator<Item = std::ops::Range<usize>>,
) -> Vec<std::ops::Range<usize>> {
    ranges
        .filter(|r| r.start < r.end && r.end <= map.len())
        .collect()
}

/// The requests of [`ask_steps`]: `range` cut into steps of [`WILLNEED_STEP`] bytes, in
/// order, without those whose pages `resident` says are all in memory.
#[cfg(unix)]
fn willneed_steps(
    range: std::ops::Range<usize>,
    resident: Option<&Resident>,
) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
    range
        .clone()
        .step_by(WILLNEED_STEP)
        .map(move |at| at..(at + WILLNEED_STEP).min(range.end))
        .filter(move |r| !resident.is_some_and(|m| m.all(r)))
}

/// A thread of its own that asks the disk for ranges of one file in the order given
/// ([`FileBytes::prefetch_until`]), so that the threads scanning the ranges before them never
/// wait for the requests. It stops at its next step once dropped (a scan that ends early
/// does not wait for the read-ahead of ranges it will not read).
pub(crate) struct Prefetcher<'scope> {
    to: Option<std::sync::mpsc::Sender<std::ops::Range<usize>>>,
    stop: &'scope AtomicBool,
    file: &'scope FileBytes,
}

impl<'scope> Prefetcher<'scope> {
    /// Starts the thread in `scope`; with no thread to be had, [`Prefetcher::ask`] makes the
    /// requests itself.
    pub(crate) fn start<'env>(
        scope: &'scope std::thread::Scope<'scope, 'env>,
        file: &'scope FileBytes,
        stop: &'scope AtomicBool,
    ) -> Self {
        let (to, from) = std::sync::mpsc::channel::<std::ops::Range<usize>>();
        let spawned = std::thread::Builder::new()
            .name("bazan-prefetch".into())
            .spawn_scoped(scope, move || {
                for r in from {
                    file.prefetch_until(r, stop);
                }
            });
        Prefetcher {
            to: spawned.is_ok().then_some(to),
            stop,
            file,
        }
    }

    /// Asks for the pages of `range` after those asked before.
    pub(crate) fn ask(&self, range: std::ops::Range<usize>) {
        match &self.to {
            Some(to) => {
                if let Err(e) = to.send(range) {
                    self.file.prefetch_until(e.0, self.stop);
                }
            }
            None => self.file.prefetch_until(range, self.stop),
        }
    }
}

impl Drop for Prefetcher<'_> {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        self.to = None;
    }
}

/// The longest range [`FileBytes::prepare_read`] reads alone (16 MiB).
pub(crate) const READ_ALONE_BYTES: usize = 16 << 20;

/// Asks the OS to read the first `len` bytes of the file at `path` into its page cache
/// (`MADV_WILLNEED` on Unix, in steps of the readahead window; nothing elsewhere), so that
/// indexing it later finds them there instead of waiting for the disk. The requests may wait
/// for the disk's queue: call it from a thread that does nothing else. Errors are ignored:
/// it is only a hint.
pub fn prefetch_file(path: &Path, len: u64) {
    if len <= READ_WHOLE_MAX {
        // A file that will be read, not mapped: `POSIX_FADV_WILLNEED` starts the read of its
        // pages without mapping it (opening it is the whole cost when it is in memory).
        #[cfg(target_os = "linux")]
        if let Ok(file) = File::open(path) {
            use std::os::fd::AsRawFd as _;
            let len = libc::off_t::try_from(len).unwrap_or(0);
            // SAFETY: the descriptor is open for the call; the advice only starts reads.
            let _ =
                unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, len, libc::POSIX_FADV_WILLNEED) };
        }
        return;
    }
    if let Ok(file) = FileBytes::open(path) {
        let len = usize::try_from(len).unwrap_or(usize::MAX).min(file.len());
        file.prefetch(0..len);
    }
}

/// Which pages of a span of a map are in memory now (`mincore`, Linux).
struct Resident {
    /// Byte offset of the span's first page in the map.
    start: usize,
    page: usize,
    /// Bit 0 of each byte: that page is resident.
    pages: Vec<u8>,
}

impl Resident {
    /// The residency of the pages under `ranges` (within the map), or `None` when the kernel
    /// does not say (then every range is advised).
    #[cfg(target_os = "linux")]
    fn of(map: &memmap2::Mmap, ranges: &[std::ops::Range<usize>]) -> Option<Resident> {
        let lo = ranges.iter().map(|r| r.start).min()?;
        let hi = ranges.iter().map(|r| r.end).max()?;
        // SAFETY: sysconf has no preconditions.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).ok()?;
        if page == 0 || hi > map.len() {
            return None;
        }
        let start = lo / page * page;
        let len = hi - start;
        let mut pages = vec![0u8; len.div_ceil(page)];
        // SAFETY: `start` is page-aligned inside the map (whose base is page-aligned) and
        // `start + len` is within it; `pages` has one byte per page of that span.
        let rc = unsafe {
            libc::mincore(
                map.as_ptr().add(start).cast_mut().cast(),
                len,
                pages.as_mut_ptr(),
            )
        };
        (rc == 0).then_some(Resident { start, page, pages })
    }

    #[cfg(not(target_os = "linux"))]
    fn of(_map: &memmap2::Mmap, _ranges: &[std::ops::Range<usize>]) -> Option<Resident> {
        None
    }

    /// True when every page of `r` (inside the span, not empty) is resident.
    fn all(&self, r: &std::ops::Range<usize>) -> bool {
        let first = (r.start - self.start) / self.page;
        let last = (r.end - 1 - self.start) / self.page;
        self.pages
            .get(first..=last)
            .is_some_and(|p| p.iter().all(|b| b & 1 == 1))
    }
}

impl FileBytes {
    /// Faults in the pages of `range` in one kernel call (`MADV_POPULATE_READ`), as
    /// [`FileBytes::open_whole`] does for the whole file, before a thread reads every byte
    /// of that range; a kernel without it faults them in as they are read.
    pub(crate) fn populate(&self, range: std::ops::Range<usize>) {
        #[cfg(target_os = "linux")]
        if let Some(map) = &self.map
            && range.start < range.end
            && range.end <= map.len()
        {
            let _ = map.advise_range(memmap2::Advice::PopulateRead, range.start, range.len());
        }
        #[cfg(not(target_os = "linux"))]
        let _ = range;
    }

    /// Asks the kernel to start reading the pages of `range` into the page cache in the
    /// background (`MADV_WILLNEED`), so that a later [`FileBytes::populate`] of it finds
    /// them there: the disk works on the next ranges while the threads scan these. See
    /// [`FileBytes::prefetch_until`].
    pub(crate) fn prefetch(&self, range: std::ops::Range<usize>) {
        self.prefetch_until(range, &AtomicBool::new(false));
    }

    /// [`FileBytes::prefetch`] of many small ranges (the headers of an Arrow file's batches):
    /// one `mincore` for all of them, then requests for those not all in memory.
    pub(crate) fn prefetch_ranges(&self, ranges: impl Iterator<Item = std::ops::Range<usize>>) {
        #[cfg(unix)]
        if let Some(map) = &self.map {
            let ranges = within(map, ranges);
            let resident = Resident::of(map, &ranges);
            let never = AtomicBool::new(false);
            for r in ranges {
                ask_steps(map, r, resident.as_ref(), &never);
            }
        }
        #[cfg(not(unix))]
        let _ = ranges;
    }

    /// [`FileBytes::prefetch`], one request per [`WILLNEED_STEP`] bytes that are not all in
    /// memory already (`mincore` first, so a warm file costs one call), until `stop` is set.
    ///
    /// One `MADV_WILLNEED` reads at most the kernel's readahead window for the file (often
    /// 128 KiB) whatever the length asked: a single request for a whole 128 MiB wave of
    /// ranges read its first 128 KiB, and each scan then waited for the disk, window after
    /// window (a cold 1.5 GB NDJSON file took 0.6-0.9 s longer than a warm one where the
    /// disk alone reads it in 0.8 s). The requests may wait for the disk's queue: callers
    /// that scan meanwhile make them from a thread of their own ([`Prefetcher`]).
    pub(crate) fn prefetch_until(&self, range: std::ops::Range<usize>, stop: &AtomicBool) {
        #[cfg(unix)]
        if let Some(map) = &self.map
            && range.start < range.end
            && range.end <= map.len()
        {
            let resident = Resident::of(map, std::slice::from_ref(&range));
            ask_steps(map, range, resident.as_ref(), stop);
        }
        #[cfg(not(unix))]
        let _ = (range, stop);
    }

    /// Readies the map for a read of `range` alone (a slice): a page fault reads no more than
    /// its page (`MADV_RANDOM`), and the pages of `range` are asked of the disk at once
    /// (`MADV_WILLNEED`, in steps of 128 KiB: one call reads at most the device's readahead
    /// window, often that much). Otherwise a cold read faults page by page, each fault reading
    /// a readahead window around it (8 MiB on some disks) before the next is asked for: a
    /// 1,000-row slice read 9 MB in 12 to 20 ms where it needs 0.7 MB. A range over
    /// [`READ_ALONE_BYTES`] is only prefetched: a long read keeps the kernel's readahead.
    pub(crate) fn prepare_read(&self, range: std::ops::Range<usize>) {
        self.prepare_ranges(std::iter::once(range));
    }

    /// Readies the map for reads of `ranges` alone (a take), as [`FileBytes::prepare_read`]
    /// does for one range: faults read only their page, and the ranges are asked of the disk
    /// at once. Ranges of more than [`READ_ALONE_BYTES`] in all are only prefetched (one
    /// request each, which the kernel bounds by its readahead window).
    pub(crate) fn prepare_ranges(&self, ranges: impl Iterator<Item = std::ops::Range<usize>>) {
        #[cfg(unix)]
        if let Some(map) = &self.map {
            let ranges = within(map, ranges);
            let total: usize = ranges.iter().map(|r| r.len()).sum();
            if total > READ_ALONE_BYTES {
                // One request per range starts the kernel's readahead there, which then
                // keeps ahead of the faults of the sequential read (asking for every step of
                // a read of gigabytes would wait for all of it to be queued first).
                for r in ranges {
                    let _ = map.advise_range(memmap2::Advice::WillNeed, r.start, r.len());
                }
                return;
            }
            let _ = map.advise(memmap2::Advice::Random);
            // A warm take finds its pages in memory: one `mincore` instead of a `madvise` per
            // range (a take of 870 Arrow record batches spent a fifth of its time in them).
            self.prefetch_ranges(ranges.into_iter());
        }
        #[cfg(not(unix))]
        let _ = ranges;
    }

    /// Drops this process's mapping of the pages of `range` (`MADV_DONTNEED`), which it has
    /// read: the page cache keeps them, a later read maps them again, and the resident set
    /// of an indexing pass stays within the ranges being read, whatever the file's size.
    pub(crate) fn release(&self, range: std::ops::Range<usize>) {
        #[cfg(unix)]
        if let Some(map) = &self.map
            && range.start < range.end
            && range.end <= map.len()
        {
            // SAFETY: the map is a private read-only file mapping: dropped pages read the
            // same file bytes again when touched, so every slice of it stays valid.
            let _ = unsafe {
                map.unchecked_advise_range(
                    memmap2::UncheckedAdvice::DontNeed,
                    range.start,
                    range.len(),
                )
            };
        }
        #[cfg(not(unix))]
        let _ = range;
    }

    /// The whole file as an Arrow buffer sharing the memory map (no copy).
    pub(crate) fn to_buffer(&self) -> arrow_buffer::Buffer {
        match &self.map {
            Some(map) => {
                let ptr = std::ptr::NonNull::from(&map[..]).cast::<u8>();
                // SAFETY: `ptr` and the length describe the mapped bytes, which stay valid and
                // unmodified (read-only map) while the `Arc` owner that the buffer keeps lives.
                unsafe { arrow_buffer::Buffer::from_custom_allocation(ptr, map.len(), map.clone()) }
            }
            None => match &self.read {
                Some(b) => b.clone(),
                None => arrow_buffer::Buffer::from_vec(Vec::<u8>::new()),
            },
        }
    }
}

impl Deref for FileBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match (&self.map, &self.read) {
            (Some(m), _) => m,
            (None, Some(b)) => b.as_slice(),
            (None, None) => &[],
        }
    }
}

/// Checks that `data` is UTF-8, naming the first bad byte.
pub(crate) fn check_utf8(path: &Path, format: &'static str, data: &[u8]) -> Result<()> {
    // simdutf8 says yes or no (3x std on the records of a quoted CSV); std finds the byte.
    if simdutf8::basic::from_utf8(data).is_ok() {
        return Ok(());
    }
    match std::str::from_utf8(data) {
        Ok(_) => Ok(()),
        Err(e) => {
            Err(Error::malformed(path, format, "invalid UTF-8").at_byte(e.valid_up_to() as u64))
        }
    }
}

/// Checks that `data[start..end]` is UTF-8 (a range that starts and ends on character
/// boundaries, such as a record), naming the first bad byte's absolute offset.
pub(crate) fn check_utf8_at(
    path: &Path,
    format: &'static str,
    data: &[u8],
    start: usize,
    end: usize,
) -> Result<()> {
    if simdutf8::basic::from_utf8(&data[start..end]).is_ok() {
        return Ok(());
    }
    match std::str::from_utf8(&data[start..end]) {
        Ok(_) => Ok(()),
        Err(e) => Err(Error::malformed(path, format, "invalid UTF-8")
            .at_byte((start + e.valid_up_to()) as u64)),
    }
}

/// Length of a UTF-8 byte-order mark at the start of `data` (0 or 3).
pub(crate) fn bom_len(data: &[u8]) -> usize {
    if data.starts_with(b"\xEF\xBB\xBF") {
        3
    } else {
        0
    }
}

/// Why a delimited scan stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ScanError {
    /// A quoted field opened at this byte never closes.
    UnterminatedQuote(usize),
}

/// Skips empty physical lines (`\n` or `\r\n`) starting at `pos`.
#[inline]
pub(crate) fn skip_empty_lines(data: &[u8], mut pos: usize) -> usize {
    loop {
        match data.get(pos) {
            Some(b'\n') => pos += 1,
            Some(b'\r') if data.get(pos + 1) == Some(&b'\n') => pos += 2,
            _ => return pos,
        }
    }
}

/// The end of the delimited record starting at `start` (just past its line break, or the end
/// of the data): a memchr scan over line breaks and quotes that tracks the quote state only.
/// A quote opens a quoted field only at a field start (after the delimiter or at the start of
/// the record), as in RFC 4180 and the `csv` crate; elsewhere it is a plain byte.
#[inline]
pub(crate) fn record_end(data: &[u8], start: usize, delim: u8) -> Result<usize, ScanError> {
    let mut pos = start;
    loop {
        let Some(i) = memchr2(b'\n', b'"', &data[pos..]) else {
            return Ok(data.len());
        };
        let p = pos + i;
        if data[p] == b'\n' {
            return Ok(p + 1);
        }
        if p != start && data[p - 1] != delim {
            pos = p + 1;
            continue;
        }
        pos = quoted_end(data, p)?;
    }
}

/// The position just past the closing quote of the quoted field opening at `open`.
#[inline]
pub(crate) fn quoted_end(data: &[u8], open: usize) -> Result<usize, ScanError> {
    let mut q = open + 1;
    loop {
        let Some(j) = memchr(b'"', &data[q..]) else {
            return Err(ScanError::UnterminatedQuote(open));
        };
        let e = q + j;
        if data.get(e + 1) == Some(&b'"') {
            q = e + 2;
        } else {
            return Ok(e + 1);
        }
    }
}

/// Skips JSON whitespace from `pos`.
#[inline]
pub(crate) fn skip_ws(data: &[u8], mut pos: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = data.get(pos) {
        pos += 1;
    }
    pos
}

/// The position just past the closing quote of the JSON string opening at `open`.
#[inline]
pub(crate) fn json_string_end(data: &[u8], open: usize) -> Option<usize> {
    json_string_scan(data, open).map(|(end, _)| end)
}

/// Like [`json_string_end`], and whether the string holds a backslash escape.
#[inline]
pub(crate) fn json_string_scan(data: &[u8], open: usize) -> Option<(usize, bool)> {
    // Most keys and values are short: a few words tested eight bytes at a time beat the
    // setup of a vectorised search and, unlike a byte loop, take no branch per byte; long
    // strings continue with memchr.
    let mut pos = open + 1;
    let mut escaped = false;
    let quotes = u64::from_ne_bytes([b'"'; 8]);
    let backslashes = u64::from_ne_bytes([b'\\'; 8]);
    let mut words = 0;
    while words < 4
        && let Some(bytes) = data.get(pos..pos + 8)
    {
        let mut word = [0u8; 8];
        word.copy_from_slice(bytes);
        let w = u64::from_le_bytes(word);
        let hits = zero_bytes(w ^ quotes) | zero_bytes(w ^ backslashes);
        if hits == 0 {
            pos += 8;
            words += 1;
            continue;
        }
        let p = pos + (hits.trailing_zeros() / 8) as usize;
        if data[p] == b'"' {
            return Some((p + 1, escaped));
        }
        // A backslash escapes exactly the next byte (`\uXXXX` continues with plain hex).
        escaped = true;
        pos = p + 2;
    }
    loop {
        if pos > data.len() {
            return None;
        }
        let i = memchr2(b'"', b'\\', &data[pos..])?;
        let p = pos + i;
        if data[p] == b'"' {
            return Some((p + 1, escaped));
        }
        // A backslash escapes exactly the next byte (`\uXXXX` continues with plain hex).
        escaped = true;
        pos = p + 2;
    }
}

/// Bits `from` and above of a 64-bit window mask (none for 64 or more).
#[inline(always)]
pub(crate) fn from_bit(from: usize) -> u64 {
    u32::try_from(from)
        .ok()
        .and_then(|f| u64::MAX.checked_shl(f))
        .unwrap_or(0)
}

/// Marks with its high bit every zero byte of `x` (exactly: no false positives).
#[inline(always)]
pub(crate) fn zero_bytes(x: u64) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    !(((x & LOW7) + LOW7) | x | LOW7)
}

/// The end of the JSON value starting at `start` (structural: strings and nesting depth are
/// tracked, nothing is built), or `None` when the data ends inside it.
pub(crate) fn json_value_end(data: &[u8], start: usize) -> Option<usize> {
    match data.get(start)? {
        b'"' => json_string_end(data, start),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut pos = start;
            while pos < data.len() {
                match data[pos] {
                    b'"' => {
                        pos = json_string_end(data, pos)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(pos + 1);
                        }
                    }
                    _ => {}
                }
                pos += 1;
            }
            None
        }
        _ => {
            // A scalar: up to the next structural byte or whitespace.
            let mut pos = start;
            while let Some(&b) = data.get(pos) {
                if matches!(b, b',' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r') {
                    break;
                }
                pos += 1;
            }
            Some(pos)
        }
    }
}

/// Where the next element of a JSON array starts after the element ending at `pos`:
/// `Ok(Some(start))` after a comma, `Ok(None)` at the closing bracket, or `Err(offset)` of the
/// unexpected byte (the data length when the array never closes).
pub(crate) fn array_next(data: &[u8], pos: usize) -> Result<Option<usize>, usize> {
    let p = skip_ws(data, pos);
    match data.get(p) {
        Some(b',') => Ok(Some(skip_ws(data, p + 1))),
        Some(b']') => Ok(None),
        _ => Err(p),
    }
}

/// The text of a quoted delimited field's inside, `text`, with each doubled quote read as one.
pub(crate) fn unescape_into(text: &[u8], out: &mut Vec<u8>) {
    out.clear();
    let mut rest = text;
    while let Some(i) = memchr(b'"', rest) {
        out.extend_from_slice(&rest[..=i]);
        // Skip the second quote of the pair.
        rest = rest.get(i + 2..).unwrap_or(&[]);
    }
    out.extend_from_slice(rest);
}

/// `bytes` written to a temporary file named `*suffix` and mapped as the scans map files; the
/// file lives as long as the handle returned with the map.
#[cfg(test)]
pub(crate) fn mapped_file(bytes: &[u8], suffix: &str) -> (tempfile::NamedTempFile, FileBytes) {
    use std::io::Write as _;
    let mut f = match tempfile::Builder::new().suffix(suffix).tempfile() {
        Ok(f) => f,
        Err(e) => panic!("temp file: {e}"),
    };
    if let Err(e) = f.write_all(bytes).and_then(|()| f.flush()) {
        panic!("writing the temp file: {e}");
    }
    match FileBytes::open(f.path()) {
        Ok(map) => (f, map),
        Err(e) => panic!("mapping the temp file: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pages of a file just written and read are resident; ranges ask only of theirs, and
    /// a take of them still reads the same bytes.
    #[cfg(target_os = "linux")]
    #[test]
    fn resident_pages_of_a_file_just_read() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("f.bin");
        // Larger than READ_WHOLE_MAX, so that it is mapped.
        let data: Vec<u8> = (0..400_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, &data).expect("write");
        assert_eq!(std::fs::read(&path).expect("read"), data);
        let file = FileBytes::open(&path).expect("map");
        let map = file.map.as_ref().expect("mapped");
        let ranges = [5..9, 70_000..70_001, 150_000..200_000];
        let resident = Resident::of(map, &ranges).expect("mincore answers");
        for r in &ranges {
            assert!(resident.all(r), "{r:?}");
        }
        assert_eq!(resident.start, 0);
        file.prepare_ranges(ranges.iter().cloned());
        assert_eq!(&file[150_000..200_000], &data[150_000..200_000]);
    }

    /// Files up to [`READ_WHOLE_MAX`] bytes are read into an aligned buffer, larger ones
    /// mapped; both give the file's bytes, as a slice and as an Arrow buffer.
    #[test]
    fn small_files_are_read_and_large_ones_mapped() {
        let dir = tempfile::tempdir().expect("dir");
        let max = READ_WHOLE_MAX as usize;
        for len in [0, 1, 4095, 4096, 5000, max, max + 1] {
            let path = dir.path().join(format!("f{len}.bin"));
            let data: Vec<u8> = (0..len).map(|i| (i * 7 % 253) as u8).collect();
            std::fs::write(&path, &data).expect("write");
            for file in [FileBytes::open(&path), FileBytes::open_whole(&path)] {
                let file = file.expect("open");
                assert_eq!(&file[..], &data[..], "{len}");
                assert_eq!(file.to_buffer().as_slice(), &data[..], "{len}");
                assert_eq!(file.map.is_some(), len > max, "{len}");
                assert_eq!(file.read.is_some(), len > 0 && len <= max, "{len}");
                if let Some(b) = &file.read {
                    assert_eq!(b.as_ptr().align_offset(64), 0, "{len}");
                }
                // The read-ahead and release calls are no-ops on read bytes.
                file.populate(0..file.len());
                file.prefetch(0..file.len());
                file.release(0..file.len());
                file.prepare_read(0..file.len());
                assert_eq!(&file[..], &data[..], "{len}");
            }
            prefetch_file(&path, len as u64);
        }
        match FileBytes::open(&dir.path().join("absent.csv")) {
            Err(e) => assert!(e.to_string().contains("absent.csv"), "{e}"),
            Ok(_) => panic!("an absent file opened"),
        }
    }

    /// Read-ahead requests cover a range in steps of at most [`WILLNEED_STEP`], in order,
    /// and leave out the steps whose pages are all in memory (a half-resident step is asked).
    #[cfg(unix)]
    #[test]
    fn willneed_steps_skip_resident_pages() {
        let step = WILLNEED_STEP;
        let all: Vec<_> = willneed_steps(10..3 * step + 7, None).collect();
        assert_eq!(
            all,
            vec![
                10..step + 10,
                step + 10..2 * step + 10,
                2 * step + 10..3 * step + 7
            ]
        );
        assert_eq!(willneed_steps(5..5, None).count(), 0);
        // Pages of 4 KiB from 0: the first step's pages in, the second's half in, the third's out.
        let page = 4096;
        let per = step / page;
        let mut pages = vec![1u8; per];
        pages.extend(std::iter::repeat_n(1u8, per / 2));
        pages.extend(std::iter::repeat_n(0u8, per - per / 2));
        pages.extend(std::iter::repeat_n(0u8, per));
        let resident = Resident {
            start: 0,
            page,
            pages,
        };
        let asked: Vec<_> = willneed_steps(0..3 * step, Some(&resident)).collect();
        assert_eq!(asked, vec![step..2 * step, 2 * step..3 * step]);
    }

    /// A prefetcher takes requests in and out of its file's bounds and lets its scope end once
    /// dropped, with requests still queued behind it.
    #[test]
    fn prefetcher_ends_with_its_scope() {
        let dir = match tempfile::tempdir() {
            Ok(d) => d,
            Err(e) => panic!("temp dir: {e}"),
        };
        let path = dir.path().join("f.bin");
        let data = vec![7u8; 3 << 20];
        if let Err(e) = std::fs::write(&path, &data) {
            panic!("writing {}: {e}", path.display());
        }
        let file = match FileBytes::open(&path) {
            Ok(f) => f,
            Err(e) => panic!("mapping {}: {e}", path.display()),
        };
        let stop = AtomicBool::new(false);
        std::thread::scope(|scope| {
            let ahead = Prefetcher::start(scope, &file, &stop);
            for k in 0..64 {
                ahead.ask(k * 4096..(k + 100) * 4096);
            }
            ahead.ask(0..file.len() + 1);
            let (hi, lo) = (9, 3);
            // An inverted range (start past end) asks for nothing.
            ahead.ask(hi..lo);
            assert_eq!(&file[..4], &[7, 7, 7, 7]);
        });
        assert!(stop.load(Ordering::Relaxed), "dropping it stops its thread");
        file.prefetch(0..file.len());
        let (hi, lo) = (4, 2);
        file.prefetch_ranges([0..10, hi..lo, 1 << 30..(1 << 30) + 1].into_iter());
    }

    /// The simdutf8 check with std's offset agrees with std alone on every byte soup.
    #[test]
    fn utf8_checks_equal_std() {
        let path = Path::new("t.csv");
        let alphabet = b"a,\n\xc3\xa9\xe6\x97\xa5\xff\x80\xed\xa0\xf0\x9f\x98\x80";
        for seed in 0..crate::testutil::stress_cases(2000) as u64 {
            let d = crate::testutil::byte_soup(seed + 1, 1 + (seed as usize % 200), alphabet);
            let want = std::str::from_utf8(&d).map_err(|e| e.valid_up_to());
            let got = check_utf8(path, "csv", &d).map_err(|e| e.to_string());
            let at = check_utf8_at(path, "csv", &d, 0, d.len()).map_err(|e| e.to_string());
            assert_eq!(got.is_ok(), want.is_ok(), "on {d:?}");
            assert_eq!(got, at, "on {d:?}");
            if let Err(off) = want {
                assert!(
                    got.unwrap_err().contains(&format!("byte {off}")),
                    "on {d:?}"
                );
            }
        }
    }

    #[test]
    fn records_with_quotes_and_empty_lines() {
        let data = b"a,b\n1,\"x\ny\"\n\n\r\n2,\"q\"\"\"\n3,4";
        let r0 = record_end(data, 0, b',').unwrap();
        assert_eq!(r0, 4);
        let r1 = record_end(data, r0, b',').unwrap();
        assert_eq!(&data[r0..r1], b"1,\"x\ny\"\n");
    }

    #[test]
    fn quote_inside_unquoted_field_is_plain() {
        let data = b"ab\"c,d\n\"e\"\n";
        assert_eq!(record_end(data, 0, b',').unwrap(), 7);
        assert_eq!(record_end(data, 7, b',').unwrap(), data.len());
    }

    #[test]
    fn unterminated_quote() {
        let data = b"1,\"abc\n2,3\n";
        assert_eq!(
            record_end(data, 0, b','),
            Err(ScanError::UnterminatedQuote(2))
        );
    }

    #[test]
    fn json_values() {
        let data = br#"{"a":"}\"","b":[1,{"c":2}]} , 5 ,"x\\" ]"#;
        let e = json_value_end(data, 0).unwrap();
        assert_eq!(&data[..e], br#"{"a":"}\"","b":[1,{"c":2}]}"#);
        let n = array_next(data, e).unwrap().unwrap();
        let e2 = json_value_end(data, n).unwrap();
        assert_eq!(&data[n..e2], b"5");
        let n2 = array_next(data, e2).unwrap().unwrap();
        let e3 = json_value_end(data, n2).unwrap();
        let long = br#""0123456789abcdef\"0123456789abcdef\\" x"#;
        assert_eq!(json_string_end(long, 0), Some(long.len() - 2));
        assert_eq!(json_string_end(br#""abc\"#, 0), None);
        assert_eq!(json_string_end(br#""0123456789abcdefghijklmnop\"#, 0), None);
        assert_eq!(&data[n2..e3], br#""x\\""#);
        assert_eq!(array_next(data, e3), Ok(None));
        assert_eq!(json_value_end(b"{\"a\":[1,2}", 0), None);
    }
}
