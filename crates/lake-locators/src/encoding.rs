//! Text encodings of the row formats' bytes: UTF-8 (checked) or Latin-1 (every byte is the
//! code point of the same value), their names, and the transcoding to UTF-8. A leaf module:
//! the [`crate::Locator`] contract names [`TextEncoding`]
//! ([`crate::Locator::with_text_encoding`]), and the text core ([`crate::text`]) feeds
//! transcoded text to arrow-csv with it.

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

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
