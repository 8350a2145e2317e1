//! Recognises a data file's format by its magic bytes, for direct reads of files without a
//! known extension (`bazan read`). Discovery in a lake never sniffs: it goes by extension.

use std::io::Read;
use std::path::Path;

use crate::error::{Error, Result};

/// A format recognised by its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sniffed {
    /// Parquet (`PAR1`).
    Parquet,
    /// ORC (`ORC`).
    Orc,
    /// Avro object container (`Obj\x01`).
    Avro,
    /// Arrow IPC file or Feather v2 (`ARROW1`).
    ArrowFile,
    /// Arrow IPC stream (a continuation marker `0xFFFFFFFF` and a message length).
    ArrowStream,
    /// A ZIP archive, read as XLSX (`PK\x03\x04`).
    Xlsx,
    /// Apache TsFile (`TsFile`).
    TsFile,
}

impl Sniffed {
    /// The extension whose built-in locator reads this format (TsFile has none here).
    pub fn extension(self) -> &'static str {
        match self {
            Sniffed::Parquet => "parquet",
            Sniffed::Orc => "orc",
            Sniffed::Avro => "avro",
            Sniffed::ArrowFile => "arrow",
            Sniffed::ArrowStream => "arrows",
            Sniffed::Xlsx => "xlsx",
            Sniffed::TsFile => "tsfile",
        }
    }
}

/// The format whose magic `head` (the file's first bytes, 8 are enough) starts with.
pub fn sniff_bytes(head: &[u8]) -> Option<Sniffed> {
    if head.starts_with(b"PAR1") {
        Some(Sniffed::Parquet)
    } else if head.starts_with(b"ORC") {
        Some(Sniffed::Orc)
    } else if head.starts_with(b"Obj\x01") {
        Some(Sniffed::Avro)
    } else if head.starts_with(b"ARROW1") {
        Some(Sniffed::ArrowFile)
    } else if head.starts_with(b"TsFile") {
        Some(Sniffed::TsFile)
    } else if head.starts_with(b"PK\x03\x04") {
        Some(Sniffed::Xlsx)
    } else if head.len() >= 8
        && head[..4] == [0xff; 4]
        && i32::from_le_bytes([head[4], head[5], head[6], head[7]]) > 0
    {
        Some(Sniffed::ArrowStream)
    } else {
        None
    }
}

/// The format of the file at `path` by its first bytes, or `None` when no magic matches.
pub fn sniff_path(path: &Path) -> Result<Option<Sniffed>> {
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut head = Vec::with_capacity(8);
    file.take(8)
        .read_to_end(&mut head)
        .map_err(|e| Error::io(path, e))?;
    Ok(sniff_bytes(&head))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magics() {
        assert_eq!(sniff_bytes(b"PAR1\x15\x04"), Some(Sniffed::Parquet));
        assert_eq!(sniff_bytes(b"ORC\x0a"), Some(Sniffed::Orc));
        assert_eq!(sniff_bytes(b"Obj\x01\x04"), Some(Sniffed::Avro));
        assert_eq!(sniff_bytes(b"ARROW1\0\0"), Some(Sniffed::ArrowFile));
        assert_eq!(sniff_bytes(b"PK\x03\x04\x14\0"), Some(Sniffed::Xlsx));
        assert_eq!(sniff_bytes(b"TsFile\x04"), Some(Sniffed::TsFile));
        assert_eq!(
            sniff_bytes(&[0xff, 0xff, 0xff, 0xff, 0x10, 0, 0, 0]),
            Some(Sniffed::ArrowStream)
        );
        assert_eq!(sniff_bytes(b"gid,name"), None);
        assert_eq!(sniff_bytes(b"PA"), None);
        assert_eq!(sniff_bytes(&[0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]), None);
    }
}
