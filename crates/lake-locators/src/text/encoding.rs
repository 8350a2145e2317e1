//! Text encodings of the row formats' bytes: UTF-8 (checked) or Latin-1 (every byte is the
//! code point of the same value), their names, and the transcoding to UTF-8 done before
//! text is handed to arrow-csv.

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

/// Feeds `text` (in `encoding`) to an arrow-csv decoder until it takes no more (a full
/// batch).
pub(crate) fn feed(
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
}
