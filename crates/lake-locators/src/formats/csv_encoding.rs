//! The text encoding of delimited files: UTF-8 (the default, whose bytes are checked) or
//! Latin-1 (ISO-8859-1: every byte is a character, `0x80`–`0xFF` being U+0080–U+00FF).
//!
//! The record structure (quotes, delimiters, line ends) is ASCII in both, so a Latin-1 file's
//! checkpoints stay byte offsets of the file itself. Indexing a Latin-1 file that holds bytes
//! above `0x7F` transcodes it to UTF-8 in memory and runs the same scan (types inferred
//! alike; string bounds, as UTF-8 preserves code-point order, equal to Latin-1's byte
//! order), then maps the checkpoint and error offsets back to the file's bytes. Reading
//! seeks on the file's bytes and transcodes only the records it hands to arrow-csv.

use std::borrow::Cow;
use std::fmt;
use std::path::Path;
use std::str::FromStr;

use arrow_array::RecordBatch;

use super::{EXTENSIONS, Header, Text, index_bytes, read_file, split, take, with_row};
use crate::error::{Error, Result};
use crate::locator::{BatchIter, FileIndex, IndexOptions, Locator, ReadRequest, RowsRequest};
use crate::text::rowread::finish_blocks;
use crate::text::scan::FileBytes;

/// How the bytes of delimited text files (CSV, TSV, PSV, TXT) are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TextEncoding {
    /// UTF-8; a byte sequence that is not UTF-8 is refused with its row and byte offset.
    #[default]
    Utf8,
    /// Latin-1 (ISO-8859-1): each byte is the code point of the same value.
    Latin1,
}

/// A text encoding name that is neither UTF-8 nor Latin-1.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown text encoding {0:?} (expected utf-8 or latin-1)")]
pub struct UnknownEncoding(pub String);

impl TextEncoding {
    /// The stored name: `utf-8` or `latin-1`.
    pub fn as_str(self) -> &'static str {
        match self {
            TextEncoding::Utf8 => "utf-8",
            TextEncoding::Latin1 => "latin-1",
        }
    }

    /// `bytes` of this encoding as UTF-8 (borrowed when nothing changes).
    pub fn to_utf8(self, bytes: &[u8]) -> Cow<'_, [u8]> {
        match self {
            TextEncoding::Latin1 if !bytes.is_ascii() => Cow::Owned(latin1_to_utf8(bytes)),
            _ => Cow::Borrowed(bytes),
        }
    }
}

impl fmt::Display for TextEncoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for TextEncoding {
    type Err = UnknownEncoding;

    /// `utf-8` (or `utf8`), `latin-1` (or `latin1`, `iso-8859-1`), in any case.
    fn from_str(s: &str) -> std::result::Result<Self, UnknownEncoding> {
        match s.to_ascii_lowercase().as_str() {
            "utf-8" | "utf8" => Ok(TextEncoding::Utf8),
            "latin-1" | "latin1" | "iso-8859-1" => Ok(TextEncoding::Latin1),
            _ => Err(UnknownEncoding(s.to_string())),
        }
    }
}

/// Latin-1 bytes as UTF-8: bytes `0x80`–`0xFF` become two bytes each.
pub fn latin1_to_utf8(bytes: &[u8]) -> Vec<u8> {
    let high = bytes.iter().filter(|&&b| b >= 0x80).count();
    let mut out = Vec::with_capacity(bytes.len() + high);
    for &b in bytes {
        if b < 0x80 {
            out.push(b);
        } else {
            out.push(0xC0 | (b >> 6));
            out.push(0x80 | (b & 0x3F));
        }
    }
    out
}

/// The file offsets of ascending offsets `utf8` into the UTF-8 transcoding of Latin-1 `raw`.
fn raw_offsets(raw: &[u8], utf8: &[u64]) -> Vec<u64> {
    let (mut r, mut u) = (0usize, 0u64);
    utf8.iter()
        .map(|&t| {
            while u < t && r < raw.len() {
                u += if raw[r] < 0x80 { 1 } else { 2 };
                r += 1;
            }
            r as u64
        })
        .collect()
}

/// The index of the (already line-end converted) bytes `data` of a file in `encoding`.
pub(super) fn index_text(
    path: &Path,
    data: &[u8],
    options: &IndexOptions,
    encoding: TextEncoding,
) -> Result<(Header, FileIndex)> {
    if encoding == TextEncoding::Utf8 || data.is_ascii() {
        return index_bytes(path, data, options);
    }
    let utf8 = latin1_to_utf8(data);
    match index_bytes(path, &utf8, options) {
        Ok((h, mut index)) => {
            let firsts: Vec<u64> = index.blocks.iter().filter_map(|b| b.first_byte).collect();
            let mut raw = raw_offsets(data, &firsts).into_iter();
            for b in &mut index.blocks {
                if b.first_byte.is_some() {
                    b.first_byte = raw.next();
                }
            }
            finish_blocks(&mut index.blocks, index.row_count, data.len() as u64);
            Ok((h, index))
        }
        Err(e) => {
            let mut e = with_row(path, &utf8, e);
            if let Error::Malformed {
                offset: Some(at), ..
            } = &mut e
            {
                *at = raw_offsets(data, &[*at])[0];
            }
            Err(e)
        }
    }
}

/// The locator of the delimited formats in a given text encoding (the registry's built-in
/// [`super::DelimitedLocator`] reads UTF-8). Its name, extensions and formats are the
/// built-in one's, so a map reads the files it indexed with either.
#[derive(Debug, Clone, Copy, Default)]
pub struct DelimitedTextLocator {
    encoding: TextEncoding,
}

impl DelimitedTextLocator {
    /// A locator reading delimited text in `encoding`.
    pub fn new(encoding: TextEncoding) -> Self {
        DelimitedTextLocator { encoding }
    }

    /// The encoding it reads.
    pub fn encoding(&self) -> TextEncoding {
        self.encoding
    }
}

impl Locator for DelimitedTextLocator {
    fn name(&self) -> &str {
        "csv"
    }

    fn extensions(&self) -> &[&str] {
        EXTENSIONS
    }

    fn formats(&self) -> &[&str] {
        EXTENSIONS
    }

    fn index(&self, path: &Path, options: &IndexOptions) -> Result<FileIndex> {
        if self.encoding == TextEncoding::Utf8 {
            return super::DelimitedLocator.index(path, options);
        }
        // A Latin-1 file is scanned by one thread (the split scan checks UTF-8), unless it
        // is ASCII.
        let data = Text::new(FileBytes::open_whole(path)?);
        if data.is_ascii()
            && let Some(index) = split::index_split(path, options)?
        {
            return Ok(index);
        }
        index_text(path, &data, options, self.encoding)
            .map(|(_, index)| index)
            .map_err(|e| with_row(path, &data, e))
    }

    fn read(&self, path: &Path, request: &ReadRequest<'_>) -> Result<BatchIter> {
        read_file(path, request, self.encoding)
    }

    fn read_rows(&self, path: &Path, request: &RowsRequest<'_>) -> Result<Vec<RecordBatch>> {
        take::read_rows(path, request, self.encoding)
    }
}

/// Feeds `text` (in `encoding`) to an arrow-csv decoder until it takes no more (a full
/// batch).
pub(super) fn feed(
    decoder: &mut arrow_csv::reader::Decoder,
    text: &[u8],
    encoding: TextEncoding,
) -> std::result::Result<(), arrow_schema::ArrowError> {
    let utf8 = encoding.to_utf8(text);
    let mut text: &[u8] = &utf8;
    while !text.is_empty() {
        let n = decoder.decode(text)?;
        if n == 0 {
            break;
        }
        text = &text[n..];
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_and_print() {
        for s in ["utf-8", "UTF8", "Utf-8"] {
            assert_eq!(s.parse::<TextEncoding>(), Ok(TextEncoding::Utf8));
        }
        for s in ["latin-1", "Latin1", "ISO-8859-1"] {
            assert_eq!(s.parse::<TextEncoding>(), Ok(TextEncoding::Latin1));
        }
        let e = "cp1252".parse::<TextEncoding>().unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown text encoding \"cp1252\" (expected utf-8 or latin-1)"
        );
        assert_eq!(TextEncoding::Latin1.to_string(), "latin-1");
        assert_eq!(TextEncoding::default(), TextEncoding::Utf8);
    }

    #[test]
    fn latin1_transcodes_every_byte() {
        let all: Vec<u8> = (0..=255u8).collect();
        let utf8 = latin1_to_utf8(&all);
        let expected: String = (0..=255u8).map(char::from).collect();
        assert_eq!(std::str::from_utf8(&utf8).unwrap(), expected);
        assert_eq!(
            &*TextEncoding::Latin1.to_utf8(b"caf\xe9"),
            "café".as_bytes()
        );
        assert!(matches!(
            TextEncoding::Latin1.to_utf8(b"abc"),
            Cow::Borrowed(_)
        ));
        assert_eq!(&*TextEncoding::Utf8.to_utf8(b"caf\xe9"), b"caf\xe9");
    }

    #[test]
    fn offsets_map_back_to_the_file() {
        let raw = b"a\xe9b\xff\xfec";
        // UTF-8: a C3 A9 b C3 BF C3 BE c
        assert_eq!(
            raw_offsets(raw, &[0, 1, 3, 4, 8, 9]),
            vec![0, 1, 2, 3, 5, 6]
        );
    }
}
