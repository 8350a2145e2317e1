//! The transcoding feed of text to arrow-csv; the encodings themselves are
//! [`crate::encoding`]'s (re-exported here for the text core).

pub use crate::encoding::{TextEncoding, UnknownEncoding, latin1_to_utf8};

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
    use std::borrow::Cow;

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
