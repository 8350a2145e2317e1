//! In-memory column buffers of the writer: the values of one series since the last flush,
//! typed, with a presence flag per row for aligned columns (nulls are not stored as values).

use tsfile_format::types::TSDataType;

use super::stats::PageSlice;

/// The buffered values of one column, only the present (non-null) ones.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Values {
    Boolean(Vec<bool>),
    Int32(Vec<i32>),
    Int64(Vec<i64>),
    Float(Vec<f32>),
    Double(Vec<f64>),
    /// TEXT, STRING and BLOB: `offsets` has one more entry than there are values.
    Binary {
        offsets: Vec<usize>,
        data: Vec<u8>,
    },
}

impl Values {
    /// An empty buffer for `data_type`.
    pub(crate) fn new(data_type: TSDataType) -> Self {
        match data_type {
            TSDataType::Boolean => Values::Boolean(Vec::new()),
            TSDataType::Int32 | TSDataType::Date => Values::Int32(Vec::new()),
            TSDataType::Float => Values::Float(Vec::new()),
            TSDataType::Double => Values::Double(Vec::new()),
            TSDataType::Text | TSDataType::String | TSDataType::Blob => Values::Binary {
                offsets: vec![0],
                data: Vec::new(),
            },
            _ => Values::Int64(Vec::new()),
        }
    }

    /// Reserves room for `n` more values.
    pub(crate) fn reserve(&mut self, n: usize) {
        match self {
            Values::Boolean(v) => v.reserve(n),
            Values::Int32(v) => v.reserve(n),
            Values::Int64(v) => v.reserve(n),
            Values::Float(v) => v.reserve(n),
            Values::Double(v) => v.reserve(n),
            Values::Binary { offsets, .. } => offsets.reserve(n),
        }
    }

    /// Number of values held.
    pub(crate) fn len(&self) -> usize {
        match self {
            Values::Boolean(v) => v.len(),
            Values::Int32(v) => v.len(),
            Values::Int64(v) => v.len(),
            Values::Float(v) => v.len(),
            Values::Double(v) => v.len(),
            Values::Binary { offsets, .. } => offsets.len() - 1,
        }
    }

    /// The raw size of value `i` in bytes, for page sealing (binary values count their
    /// length prefix).
    pub(crate) fn raw_size(&self, i: usize) -> usize {
        match self {
            Values::Boolean(_) => 1,
            Values::Int32(_) | Values::Float(_) => 4,
            Values::Int64(_) | Values::Double(_) => 8,
            Values::Binary { offsets, .. } => offsets[i + 1] - offsets[i] + 4,
        }
    }

    /// Bytes held, for the chunk-group memory threshold.
    pub(crate) fn memory(&self) -> usize {
        match self {
            Values::Boolean(v) => v.len(),
            Values::Int32(v) => v.len() * 4,
            Values::Float(v) => v.len() * 4,
            Values::Int64(v) => v.len() * 8,
            Values::Double(v) => v.len() * 8,
            Values::Binary { offsets, data } => offsets.len() * 8 + data.len(),
        }
    }

    /// Values `range` as a page slice.
    pub(crate) fn slice(&self, range: std::ops::Range<usize>) -> PageSlice<'_> {
        match self {
            Values::Boolean(v) => PageSlice::Boolean(&v[range]),
            Values::Int32(v) => PageSlice::Int32(&v[range]),
            Values::Int64(v) => PageSlice::Int64(&v[range]),
            Values::Float(v) => PageSlice::Float(&v[range]),
            Values::Double(v) => PageSlice::Double(&v[range]),
            Values::Binary { offsets, data } => {
                PageSlice::Binary(&offsets[range.start..range.end + 1], data)
            }
        }
    }

    /// Empties the buffer, keeping its type.
    pub(crate) fn clear(&mut self) {
        match self {
            Values::Boolean(v) => v.clear(),
            Values::Int32(v) => v.clear(),
            Values::Int64(v) => v.clear(),
            Values::Float(v) => v.clear(),
            Values::Double(v) => v.clear(),
            Values::Binary { offsets, data } => {
                offsets.truncate(1);
                data.clear();
            }
        }
    }

    /// Removes the first `n` values.
    pub(crate) fn drain_front(&mut self, n: usize) {
        match self {
            Values::Boolean(v) => drop(v.drain(..n)),
            Values::Int32(v) => drop(v.drain(..n)),
            Values::Int64(v) => drop(v.drain(..n)),
            Values::Float(v) => drop(v.drain(..n)),
            Values::Double(v) => drop(v.drain(..n)),
            Values::Binary { offsets, data } => {
                let cut = offsets[n];
                data.drain(..cut);
                offsets.drain(..n);
                offsets.iter_mut().for_each(|o| *o -= cut);
            }
        }
    }

    /// Appends one binary value (the caller checked the type).
    pub(crate) fn push_binary(&mut self, bytes: &[u8]) {
        if let Values::Binary { offsets, data } = self {
            data.extend_from_slice(bytes);
            offsets.push(data.len());
        }
    }
}
