//! A minimal JSON object tokenizer for the indexing pass: it walks one flat object, feeds
//! each member's value to the column's type accumulator and returns where the object ends.
//! Nested objects and arrays are reported, so the caller falls back to arrow-json's own
//! inference (which gives them Struct/List types).

use crate::locator::StatsColumns;
use crate::text::infer::Columns;
use crate::text::numbers::json_number_end;
use crate::text::scan::{json_string_scan, skip_ws};

/// Why an object could not be scanned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ObjError {
    /// Invalid JSON at this byte.
    Syntax(usize, &'static str),
    /// A nested object or array (a member value starting at this byte).
    Nested(usize),
}

/// Decodes the JSON string `data[open..end]` (quotes included) when it holds escapes.
fn unescape(data: &[u8], open: usize, end: usize) -> Result<String, ObjError> {
    serde_json::from_slice::<String>(&data[open..end])
        .map_err(|_| ObjError::Syntax(open, "invalid string escape"))
}

/// Scans the object starting at `start` (its `{`), recording every member into `cols`;
/// returns the position just past its `}`.
#[cfg(test)]
pub(crate) fn scan_object(
    data: &[u8],
    start: usize,
    cols: &mut Columns,
    wanted: &StatsColumns,
) -> Result<usize, ObjError> {
    scan_object_in(data, data, start, cols, wanted)
}

/// Like [`scan_object`] over `data`, a prefix of `full` (a line of the file): `full` only
/// lets numbers be read a word at a time past the end of `data`, where the byte after the
/// line (its `\n`) ends a number just as the end of `data` would.
pub(crate) fn scan_object_in(
    data: &[u8],
    full: &[u8],
    start: usize,
    cols: &mut Columns,
    wanted: &StatsColumns,
) -> Result<usize, ObjError> {
    // A prefix in memory, checked by address: comparing the bytes would make every debug
    // build quadratic in the file size (`full` runs to the end of the file).
    debug_assert!(std::ptr::eq(full.as_ptr(), data.as_ptr()) && data.len() <= full.len());
    if data.get(start) != Some(&b'{') {
        return Err(ObjError::Syntax(start, "expected an object"));
    }
    let mut pos = skip_ws(data, start + 1);
    if data.get(pos) == Some(&b'}') {
        return Ok(pos + 1);
    }
    let mut hint = 0;
    loop {
        if data.get(pos) != Some(&b'"') {
            return Err(ObjError::Syntax(pos, "expected a member name"));
        }
        let (idx, key_end) = match cols.expected_key(hint, data, pos + 1) {
            Some(key_end) => (hint, key_end),
            None => {
                let (key_end, escaped) = json_string_scan(data, pos)
                    .ok_or(ObjError::Syntax(pos, "string never closes"))?;
                let raw_key = &data[pos + 1..key_end - 1];
                let idx = if escaped {
                    let key = unescape(data, pos, key_end)?;
                    cols.index_of(key.as_bytes(), hint, wanted)
                } else {
                    cols.index_of(raw_key, hint, wanted)
                };
                (idx, key_end)
            }
        };
        hint = idx + 1;
        pos = skip_ws(data, key_end);
        if data.get(pos) != Some(&b':') {
            return Err(ObjError::Syntax(pos, "expected ':'"));
        }
        pos = skip_ws(data, pos + 1);
        let col = &mut cols.cols[idx];
        match data.get(pos) {
            Some(b'"') => {
                let (end, escaped) = json_string_scan(data, pos)
                    .ok_or(ObjError::Syntax(pos, "string never closes"))?;
                if col.tracks() {
                    let raw = &data[pos + 1..end - 1];
                    if escaped {
                        let s = unescape(data, pos, end)?;
                        col.text(s.as_bytes());
                    } else {
                        col.text(raw);
                    }
                } else {
                    col.text(b"");
                }
                pos = end;
            }
            Some(b'-' | b'0'..=b'9')
                if let Some((end, kind)) = json_number_end(full, pos)
                    && end <= data.len() =>
            {
                col.known_number(full, pos, end, kind, None);
                pos = end;
            }
            Some(b'-' | b'0'..=b'9') => {
                let mut end = pos + 1;
                while let Some(b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E') = data.get(end) {
                    end += 1;
                }
                if !col.number_text(&data[pos..end]) {
                    return Err(ObjError::Syntax(pos, "invalid number"));
                }
                pos = end;
            }
            Some(b't') if data[pos..].starts_with(b"true") => {
                col.boolean(b"true");
                pos += 4;
            }
            Some(b'f') if data[pos..].starts_with(b"false") => {
                col.boolean(b"false");
                pos += 5;
            }
            Some(b'n') if data[pos..].starts_with(b"null") => pos += 4,
            Some(b'{' | b'[') => return Err(ObjError::Nested(pos)),
            _ => return Err(ObjError::Syntax(pos, "expected a value")),
        }
        pos = skip_ws(data, pos);
        match data.get(pos) {
            Some(b',') => pos = skip_ws(data, pos + 1),
            Some(b'}') => return Ok(pos + 1),
            _ => return Err(ObjError::Syntax(pos, "expected ',' or '}'")),
        }
    }
}

#[cfg(test)]
mod tests {
    use arrow_schema::DataType;

    use super::*;

    #[test]
    fn flat_objects() {
        let mut cols = Columns::default();
        let all = StatsColumns::All;
        let data = br#"{"a": 1, "b": "x\u00e9", "c": true, "d": null} {"b":"y","a":2.5,"e":-3}"#;
        let end = scan_object(data, 0, &mut cols, &all).unwrap();
        assert_eq!(data[end - 1], b'}');
        let start = skip_ws(data, end);
        let end2 = scan_object(data, start, &mut cols, &all).unwrap();
        assert_eq!(end2, data.len());
        let schema = cols.schema();
        let types: Vec<_> = schema
            .fields()
            .iter()
            .map(|f| f.data_type().clone())
            .collect();
        assert_eq!(
            types,
            [
                DataType::Float64,
                DataType::Utf8,
                DataType::Boolean,
                DataType::Utf8,
                DataType::Int64
            ]
        );
        let stats = cols.stats();
        assert_eq!(
            stats["b"],
            crate::locator::ColumnStats::Str {
                min_str: "xé".into(),
                max_str: "y".into()
            }
        );
        assert_eq!(
            scan_object(br#"{"a":[1]}"#, 0, &mut cols, &all),
            Err(ObjError::Nested(5))
        );
        assert!(matches!(
            scan_object(br#"{"a":1"#, 0, &mut cols, &all),
            Err(ObjError::Syntax(6, _))
        ));
    }
}
