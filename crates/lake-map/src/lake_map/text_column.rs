//! The JSON columns of a loaded map (`row_groups_json`, `stats_json`, `schema_json`) as
//! bytes, plain or dictionary-encoded, and decoded from the map file chunk by chunk on first
//! use (`docs/lake-map.md` §2): loading a map reads only the columns it checks, and
//! `locate_row` decodes the blocks of one record batch of the map, not of every entry.

use std::sync::{Arc, OnceLock};

use arrow_array::cast::AsArray;
use arrow_array::types::Int32Type;
use arrow_array::{Array, ArrayRef, BinaryArray, Int32Array, StringArray};
use arrow_schema::DataType;

/// Stands in for a value that cannot be read (bytes that are not UTF-8, a chunk of the map
/// file that does not decode): it fails to parse as JSON, so the entry's reader reports the
/// damage instead of reading garbage.
pub(crate) const DAMAGED: &str = "<invalid UTF-8 in the map>";

/// Decodes chunk `c` of a column from the map file: the array of its rows, or why not.
pub(crate) type ChunkDecoder =
    Arc<dyn Fn(usize) -> std::result::Result<ArrayRef, String> + Send + Sync>;

/// The values of one chunk.
#[derive(Debug)]
enum Chunk {
    Plain(BinaryArray),
    Dict {
        keys: Int32Array,
        values: BinaryArray,
    },
    /// The chunk did not decode, or holds nulls where the column has none.
    Damaged,
}

impl Chunk {
    /// A Utf8, Binary or dictionary (Int32 keys, Utf8 or Binary values) array, or `None`
    /// for another type.
    fn of(array: &ArrayRef) -> Option<Chunk> {
        match array.data_type() {
            DataType::Binary => Some(Chunk::Plain(array.as_binary::<i32>().clone())),
            DataType::Utf8 => Some(Chunk::Plain(BinaryArray::from(
                array.as_string::<i32>().clone(),
            ))),
            DataType::Dictionary(k, _) if k.as_ref() == &DataType::Int32 => {
                let dict = array.as_dictionary::<Int32Type>();
                let values = match Chunk::of(dict.values())? {
                    Chunk::Plain(v) => v,
                    _ => return None,
                };
                Some(Chunk::Dict {
                    keys: dict.keys().clone(),
                    values,
                })
            }
            _ => None,
        }
    }

    fn len(&self) -> Option<usize> {
        match self {
            Chunk::Plain(a) => Some(a.len()),
            Chunk::Dict { keys, .. } => Some(keys.len()),
            Chunk::Damaged => None,
        }
    }

    fn has_nulls(&self) -> bool {
        match self {
            Chunk::Plain(a) => a.null_count() > 0,
            Chunk::Dict { keys, values } => keys.null_count() > 0 || values.null_count() > 0,
            Chunk::Damaged => false,
        }
    }

    fn get(&self, i: usize) -> Option<&[u8]> {
        match self {
            Chunk::Plain(a) => (!a.is_null(i)).then(|| a.value(i)),
            Chunk::Dict { keys, values } => {
                if keys.is_null(i) {
                    return None;
                }
                match usize::try_from(keys.value(i)) {
                    Ok(k) if k < values.len() => (!values.is_null(k)).then(|| values.value(k)),
                    _ => Some(DAMAGED.as_bytes()),
                }
            }
            Chunk::Damaged => Some(DAMAGED.as_bytes()),
        }
    }
}

/// One text column of a map: its chunks (one record batch of the map file each, or one for
/// a map built in memory), each decoded on first use.
#[derive(Clone)]
pub(crate) struct TextColumn {
    /// The first row of each chunk, then the row count.
    starts: Arc<[usize]>,
    chunks: Arc<[OnceLock<Chunk>]>,
    decode: Option<ChunkDecoder>,
    nullable: bool,
    /// The null count of each chunk as the map file's record batch metadata states it, so
    /// that whether a row is null is known without decoding its chunk when the chunk has no
    /// nulls or only nulls.
    null_counts: Option<Arc<[usize]>>,
}

impl std::fmt::Debug for TextColumn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TextColumn")
            .field("rows", &self.len())
            .field("chunks", &self.chunks.len())
            .field("nullable", &self.nullable)
            .finish()
    }
}

impl TextColumn {
    /// A column decoded already (`array` of Utf8, Binary or dictionary type), or `None` for
    /// another type.
    pub(crate) fn decoded(array: &ArrayRef, nullable: bool) -> Option<TextColumn> {
        let chunk = Chunk::of(array)?;
        let cell = OnceLock::new();
        let _ = cell.set(chunk);
        Some(TextColumn {
            starts: Arc::from(vec![0, array.len()]),
            chunks: Arc::from(vec![cell]),
            decode: None,
            nullable,
            null_counts: None,
        })
    }

    /// A column of chunks that `decode` reads on first use; `starts` holds the first row of
    /// each chunk, then the row count.
    pub(crate) fn lazy(starts: Arc<[usize]>, decode: ChunkDecoder, nullable: bool) -> TextColumn {
        let n = starts.len().saturating_sub(1);
        TextColumn {
            starts,
            chunks: (0..n).map(|_| OnceLock::new()).collect(),
            decode: Some(decode),
            nullable,
            null_counts: None,
        }
    }

    /// The same column, with the null count of each chunk as the map file states it
    /// (ignored unless there is one per chunk).
    pub(crate) fn with_null_counts(mut self, counts: Vec<usize>) -> TextColumn {
        if counts.len() == self.chunks.len() {
            self.null_counts = Some(Arc::from(counts));
        }
        self
    }

    /// True when row `i` is null. A chunk the map file states to have no nulls, or only
    /// nulls, is not decoded. Panics when out of range, like slice indexing.
    pub(crate) fn is_null(&self, i: usize) -> bool {
        assert!(i < self.len(), "row {i} of {}", self.len());
        let c = self.chunk_of(i);
        if let Some(counts) = &self.null_counts {
            let rows = self.starts[c + 1] - self.starts[c];
            match counts[c] {
                0 => return false,
                n if n == rows => return true,
                _ => {}
            }
        }
        self.chunk(c).get(i - self.starts[c]).is_none()
    }

    /// The dictionary values of a dictionary-encoded column (those of its first chunk: the
    /// map file holds one dictionary per column), `None` for a plain column or a damaged
    /// chunk.
    pub(crate) fn dictionary_values(&self) -> Option<BinaryArray> {
        if self.chunks.is_empty() {
            return None;
        }
        match self.chunk(0) {
            Chunk::Dict { values, .. } => Some(values.clone()),
            _ => None,
        }
    }

    /// The chunk holding row `i`.
    fn chunk_of(&self, i: usize) -> usize {
        if self.chunks.len() == 1 {
            0
        } else {
            self.starts.partition_point(|&s| s <= i) - 1
        }
    }

    /// True when the column holds nulls (a column with nulls where it may have none is
    /// refused at load when it is decoded then, and damaged when it is decoded later).
    pub(crate) fn has_nulls(&self) -> bool {
        (0..self.chunks.len()).any(|c| self.chunk(c).has_nulls())
    }

    /// Rows.
    pub(crate) fn len(&self) -> usize {
        self.starts.last().copied().unwrap_or(0)
    }

    fn chunk(&self, c: usize) -> &Chunk {
        self.chunks[c].get_or_init(|| {
            let Some(decode) = &self.decode else {
                return Chunk::Damaged;
            };
            let rows = self.starts[c + 1] - self.starts[c];
            match decode(c).ok().and_then(|a| Chunk::of(&a)) {
                Some(chunk)
                    if chunk.len() == Some(rows) && (self.nullable || !chunk.has_nulls()) =>
                {
                    chunk
                }
                _ => Chunk::Damaged,
            }
        })
    }

    /// The bytes of row `i` (`None` for a null). Panics when out of range, like slice
    /// indexing.
    pub(crate) fn get(&self, i: usize) -> Option<&[u8]> {
        assert!(i < self.len(), "row {i} of {}", self.len());
        let c = self.chunk_of(i);
        self.chunk(c).get(i - self.starts[c])
    }

    /// Row `i` as text (`None` for a null; [`DAMAGED`] for bytes that are not UTF-8).
    pub(crate) fn str(&self, i: usize) -> Option<&str> {
        self.get(i)
            .map(|b| std::str::from_utf8(b).unwrap_or(DAMAGED))
    }

    /// The whole column as a plain Utf8 array, or the first row that cannot be read.
    pub(crate) fn to_utf8(&self) -> std::result::Result<StringArray, usize> {
        // A column built in memory (one plain chunk): the same buffers, checked as UTF-8.
        if self.chunks.len() == 1
            && let Some(Chunk::Plain(a)) = self.chunks[0].get()
            && let Ok(s) = StringArray::try_from_binary(a.clone())
        {
            return Ok(s);
        }
        let n = self.len();
        let mut bytes = 0usize;
        for i in 0..n {
            bytes += self.get(i).map_or(0, <[u8]>::len);
        }
        let mut b = arrow_array::builder::StringBuilder::with_capacity(n, bytes);
        for i in 0..n {
            match self.get(i) {
                None => b.append_null(),
                Some(v) => {
                    let s = std::str::from_utf8(v).map_err(|_| i)?;
                    if std::ptr::eq(v, DAMAGED.as_bytes()) {
                        return Err(i);
                    }
                    b.append_value(s);
                }
            }
        }
        Ok(b.finish())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::DictionaryArray;

    #[test]
    fn plain_dictionary_and_lazy_columns_read_the_same() {
        let plain: ArrayRef = Arc::new(StringArray::from(vec![Some("a"), None, Some("bc")]));
        let col = TextColumn::decoded(&plain, true).expect("utf8");
        assert_eq!(
            (col.str(0), col.str(1), col.str(2)),
            (Some("a"), None, Some("bc"))
        );
        assert!(col.has_nulls());
        let dict: DictionaryArray<Int32Type> = vec![Some("x"), Some("y"), None, Some("x")]
            .into_iter()
            .collect();
        let dict: ArrayRef = Arc::new(dict);
        let col = TextColumn::decoded(&dict, true).expect("dictionary");
        assert_eq!(col.to_utf8().expect("reads"), {
            StringArray::from(vec![Some("x"), Some("y"), None, Some("x")])
        });
        // Two chunks of 2 and 1 rows, decoded on first use; the second never decodes.
        let decode: ChunkDecoder = Arc::new(|c| match c {
            0 => Ok(Arc::new(StringArray::from(vec!["p", "q"])) as ArrayRef),
            _ => Err("damaged".to_string()),
        });
        let col = TextColumn::lazy(Arc::from(vec![0, 2, 3]), decode, false);
        assert_eq!((col.str(0), col.str(1)), (Some("p"), Some("q")));
        assert_eq!(col.str(2), Some(DAMAGED));
        assert_eq!(col.to_utf8(), Err(2));
        // A null in a column without nulls, or a chunk of the wrong length, is damage.
        let decode: ChunkDecoder =
            Arc::new(|_| Ok(Arc::new(StringArray::from(vec![Some("p"), None])) as ArrayRef));
        let col = TextColumn::lazy(Arc::from(vec![0, 2]), decode, false);
        assert_eq!(col.str(1), Some(DAMAGED));
        let decode: ChunkDecoder =
            Arc::new(|_| Ok(Arc::new(StringArray::from(vec!["p"])) as ArrayRef));
        let col = TextColumn::lazy(Arc::from(vec![0, 2]), decode, true);
        assert_eq!(col.str(0), Some(DAMAGED));
        // Bytes that are not UTF-8.
        let bad: ArrayRef = Arc::new(BinaryArray::from(vec![&b"\xff"[..]]));
        let col = TextColumn::decoded(&bad, false).expect("binary");
        assert_eq!(col.str(0), Some(DAMAGED));
        assert_eq!(col.to_utf8(), Err(0));
    }
}
