//! The one error type of `tsfile-format`: every failure names what was being decoded and the
//! absolute byte offset in the file where it happened.

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A decoding or encoding failure. Offsets are absolute file offsets (the cursor's base
/// offset plus its position), so a message can be checked with a hex dump of the file.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// The input ended before a value was complete.
    #[error("truncated {what} at byte {offset}: needed {needed} bytes, {available} available")]
    Truncated {
        /// The structure or field being read.
        what: &'static str,
        /// Absolute offset where the read started.
        offset: u64,
        /// Bytes the read needed.
        needed: u64,
        /// Bytes that remained.
        available: u64,
    },
    /// A code that the format does not define (data type, encoding, marker, ...).
    #[error("unknown {what} code {code} at byte {offset}")]
    UnknownCode {
        /// Which enumeration the code belongs to.
        what: &'static str,
        /// The code found.
        code: i64,
        /// Absolute offset of the code.
        offset: u64,
    },
    /// A value that is well-formed bytes but violates the format's rules.
    #[error("invalid {what} at byte {offset}: {reason}")]
    Invalid {
        /// The structure or field being read.
        what: &'static str,
        /// Absolute offset of the offending value.
        offset: u64,
        /// What rule was broken, for a human.
        reason: String,
    },
    /// A length or count read from the input that cannot fit in what remains.
    #[error("{what} at byte {offset} declares {declared} bytes, but only {available} remain")]
    LengthOutOfBounds {
        /// The structure or field being read.
        what: &'static str,
        /// Absolute offset of the length field.
        offset: u64,
        /// The declared length (may be negative when the input lies).
        declared: i64,
        /// Bytes that remained.
        available: u64,
    },
    /// A structure did not consume exactly the bytes its enclosing length declared.
    #[error("{what} at byte {offset} should span {expected} bytes but spans {actual}")]
    LengthMismatch {
        /// The structure being read.
        what: &'static str,
        /// Absolute offset of the structure.
        offset: u64,
        /// The declared length.
        expected: u64,
        /// The bytes actually consumed.
        actual: u64,
    },
    /// Text that is not valid UTF-8.
    #[error("{what} at byte {offset} is not valid UTF-8")]
    InvalidUtf8 {
        /// The field being read.
        what: &'static str,
        /// Absolute offset of the text.
        offset: u64,
    },
    /// A page payload failed to decompress, or inflated past its declared size.
    #[error("{codec} decompression failed at byte {offset}: {reason}")]
    Decompress {
        /// The compression codec's name.
        codec: &'static str,
        /// Absolute offset of the compressed payload.
        offset: u64,
        /// The codec's message.
        reason: String,
    },
    /// A feature that is valid in the format but not supported by this build or crate.
    #[error("unsupported {what}: {reason}")]
    Unsupported {
        /// What is not supported.
        what: &'static str,
        /// Why, and what to do about it.
        reason: String,
    },
    /// The file does not start (or end) with the `TsFile` magic.
    #[error("bad magic at byte {offset}: expected \"TsFile\", found {found:02x?}")]
    BadMagic {
        /// Absolute offset where the magic was expected.
        offset: u64,
        /// The bytes found there (at most 6).
        found: Vec<u8>,
    },
    /// A metadata index node broke one of the five checks of the index lookup rules.
    #[error("metadata index node at byte {offset} breaks rule \"{rule}\": {reason}")]
    IndexNode {
        /// The rule that was broken.
        rule: IndexNodeRule,
        /// Absolute offset of the node (or of the offending entry).
        offset: u64,
        /// What exactly was wrong, for a human.
        reason: String,
    },
}

/// The five checks of the index lookup rules, named in [`Error::IndexNode`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IndexNodeRule {
    /// 1. `child_count` is consistent with the number of complete entries in the node.
    ChildCount,
    /// 2. Entry keys are sorted by the node's key comparator.
    SortedKeys,
    /// 3. Entry offsets are monotonic and every referenced range is non-negative.
    MonotonicOffsets,
    /// 4. The last entry offset does not exceed `end_offset`.
    LastOffsetWithinEnd,
    /// 5. A child node has the level expected by its parent's node type.
    ChildLevel,
}

impl std::fmt::Display for IndexNodeRule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            IndexNodeRule::ChildCount => "child count matches complete entries",
            IndexNodeRule::SortedKeys => "entry keys sorted",
            IndexNodeRule::MonotonicOffsets => "entry offsets monotonic and non-negative",
            IndexNodeRule::LastOffsetWithinEnd => "last entry offset within end offset",
            IndexNodeRule::ChildLevel => "child level expected by parent",
        })
    }
}
