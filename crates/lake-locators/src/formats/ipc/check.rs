//! Checks of Arrow IPC metadata before arrow-ipc converts or decodes it. arrow-ipc's schema
//! conversion panics on what a damaged flatbuffer may hold (a missing type table, an unknown
//! union mode or unit, big-endian decimals), and its reader trusts the record batch headers
//! (a batch without buffers, fewer field nodes than the schema has, buffers past the body
//! read as an empty batch or panic). These checks turn each into a one-line reason, so that
//! the panic guard is a last resort and a damaged file is never read as 0 rows.

use arrow_ipc::{
    DateUnit, Endianness, Field as FbField, IntervalUnit, Message, Precision, Schema as FbSchema,
    TimeUnit, Type, UnionMode,
};
use arrow_schema::{DataType, Schema};
use std::path::Path;

use crate::error::Error;

/// Why a big-endian file or stream is refused: arrow-ipc 59 reads only little-endian data.
pub(crate) const BIG_ENDIAN: &str = "big-endian IPC is not supported";

/// The error for a schema [`check_schema`] refused: unsupported for big-endian data,
/// malformed for the rest.
pub(crate) fn schema_error(path: &Path, format: &'static str, why: String, at: u64) -> Error {
    if why == BIG_ENDIAN {
        Error::Unsupported {
            path: path.to_path_buf(),
            message: format!("{BIG_ENDIAN} (byte order of the schema at byte {at})"),
        }
    } else {
        Error::malformed(path, format, why).at_byte(at)
    }
}

/// Deeper nesting than this is refused (arrow-ipc recurses once per level).
const MAX_DEPTH: usize = 64;

/// Why arrow-ipc must not convert the schema `fb`, or `Ok` when it can.
pub(crate) fn check_schema(fb: FbSchema<'_>) -> Result<(), String> {
    if fb.endianness() == Endianness::Big {
        return Err(BIG_ENDIAN.into());
    }
    let fields = fb.fields().ok_or("the schema has no field list")?;
    for (i, field) in fields.iter().enumerate() {
        check_field(field, 0).map_err(|e| format!("schema field {i}: {e}"))?;
    }
    Ok(())
}

/// Why arrow-ipc must not convert `field` (at nesting `depth`), its children included.
fn check_field(field: FbField<'_>, depth: usize) -> Result<(), String> {
    if depth > MAX_DEPTH {
        return Err(format!("types nested deeper than {MAX_DEPTH} levels"));
    }
    check_dictionary(field)?;
    check_type(field)?;
    if let Some(kids) = field.children() {
        for child in kids.iter() {
            check_field(child, depth + 1)?;
        }
    }
    Ok(())
}

/// The index type of a dictionary-encoded field.
fn check_dictionary(field: FbField<'_>) -> Result<(), String> {
    if let Some(dictionary) = field.dictionary() {
        let index = dictionary
            .indexType()
            .ok_or("a dictionary without an index type")?;
        if !matches!(index.bitWidth(), 8 | 16 | 32 | 64) {
            return Err(format!("dictionary index of {} bits", index.bitWidth()));
        }
    }
    Ok(())
}

/// The reason for a type table that is missing.
fn missing(what: &str) -> String {
    format!("a {what} type without its parameters")
}

/// The type of `field` (not its children): known, with the parameters and the number of
/// children arrow-ipc's conversion expects.
fn check_type(field: FbField<'_>) -> Result<(), String> {
    match field.type_type() {
        Type::Null
        | Type::Bool
        | Type::Binary
        | Type::BinaryView
        | Type::LargeBinary
        | Type::Utf8
        | Type::Utf8View
        | Type::LargeUtf8
        | Type::Struct_ => Ok(()),
        Type::Int | Type::FixedSizeBinary | Type::FloatingPoint | Type::Decimal => {
            check_number(field)
        }
        Type::Date | Type::Time | Type::Timestamp | Type::Duration | Type::Interval => {
            check_temporal(field)
        }
        Type::List
        | Type::LargeList
        | Type::ListView
        | Type::LargeListView
        | Type::FixedSizeList
        | Type::Map
        | Type::RunEndEncoded => check_nested(field),
        Type::Union => check_union(field),
        t => Err(format!("unknown type {t:?}")),
    }
}

/// The widths, precision and scale of integer, fixed-size binary, float and decimal types.
fn check_number(field: FbField<'_>) -> Result<(), String> {
    match field.type_type() {
        Type::Int => {
            let int = field.type_as_int().ok_or_else(|| missing("integer"))?;
            if !matches!(int.bitWidth(), 8 | 16 | 32 | 64) {
                return Err(format!("an integer of {} bits", int.bitWidth()));
            }
        }
        Type::FixedSizeBinary => {
            let fsb = field
                .type_as_fixed_size_binary()
                .ok_or_else(|| missing("fixed-size binary"))?;
            if fsb.byteWidth() < 0 {
                return Err(format!("a fixed-size binary of {} bytes", fsb.byteWidth()));
            }
        }
        Type::FloatingPoint => {
            let float = field
                .type_as_floating_point()
                .ok_or_else(|| missing("floating point"))?;
            if !matches!(
                float.precision(),
                Precision::HALF | Precision::SINGLE | Precision::DOUBLE
            ) {
                return Err(format!("a float of precision {:?}", float.precision()));
            }
        }
        Type::Decimal => {
            let d = field.type_as_decimal().ok_or_else(|| missing("decimal"))?;
            let max = match d.bitWidth() {
                32 => 9,
                64 => 18,
                128 => 38,
                256 => 76,
                w => return Err(format!("a decimal of {w} bits")),
            };
            let (p, s) = (d.precision(), d.scale());
            if !(1..=max).contains(&p) || i8::try_from(s).is_err() || s > p {
                return Err(format!(
                    "decimal precision {p} and scale {s} out of range (precision 1 to {max})"
                ));
            }
        }
        _ => {}
    }
    Ok(())
}

/// The units and widths of date, time, timestamp, duration and interval types.
fn check_temporal(field: FbField<'_>) -> Result<(), String> {
    match field.type_type() {
        Type::Date => {
            let date = field.type_as_date().ok_or_else(|| missing("date"))?;
            if !matches!(date.unit(), DateUnit::DAY | DateUnit::MILLISECOND) {
                return Err(format!("a date of unit {:?}", date.unit()));
            }
        }
        Type::Time => {
            let time = field.type_as_time().ok_or_else(|| missing("time"))?;
            let ok = matches!(
                (time.bitWidth(), time.unit()),
                (32, TimeUnit::SECOND | TimeUnit::MILLISECOND)
                    | (64, TimeUnit::MICROSECOND | TimeUnit::NANOSECOND)
            );
            if !ok {
                return Err(format!(
                    "a time of {} bits in unit {:?}",
                    time.bitWidth(),
                    time.unit()
                ));
            }
        }
        Type::Timestamp => {
            let ts = field
                .type_as_timestamp()
                .ok_or_else(|| missing("timestamp"))?;
            known_unit(ts.unit(), "timestamp")?;
        }
        Type::Duration => {
            let d = field
                .type_as_duration()
                .ok_or_else(|| missing("duration"))?;
            known_unit(d.unit(), "duration")?;
        }
        Type::Interval => {
            let i = field
                .type_as_interval()
                .ok_or_else(|| missing("interval"))?;
            if !matches!(
                i.unit(),
                IntervalUnit::YEAR_MONTH | IntervalUnit::DAY_TIME | IntervalUnit::MONTH_DAY_NANO
            ) {
                return Err(format!("an interval of unit {:?}", i.unit()));
            }
        }
        _ => {}
    }
    Ok(())
}

/// The children of list, map and run-end encoded types, and the size of a fixed-size list.
fn check_nested(field: FbField<'_>) -> Result<(), String> {
    let children = field.children().map_or(0, |c| c.len());
    let one_child = |what: &str| {
        if children == 1 {
            Ok(())
        } else {
            Err(format!("a {what} with {children} children instead of 1"))
        }
    };
    match field.type_type() {
        Type::List => one_child("list")?,
        Type::LargeList => one_child("large list")?,
        Type::ListView => one_child("list view")?,
        Type::LargeListView => one_child("large list view")?,
        Type::FixedSizeList => {
            one_child("fixed-size list")?;
            let fsl = field
                .type_as_fixed_size_list()
                .ok_or_else(|| missing("fixed-size list"))?;
            if fsl.listSize() < 0 {
                return Err(format!("a fixed-size list of {} values", fsl.listSize()));
            }
        }
        Type::Map => {
            one_child("map")?;
            field.type_as_map().ok_or_else(|| missing("map"))?;
        }
        Type::RunEndEncoded if children != 2 => {
            return Err(format!(
                "a run-end encoded type with {children} children instead of 2"
            ));
        }
        _ => {}
    }
    Ok(())
}

/// A union's mode, and type ids that fit its children.
fn check_union(field: FbField<'_>) -> Result<(), String> {
    let children = field.children().map_or(0, |c| c.len());
    let u = field.type_as_union().ok_or_else(|| missing("union"))?;
    if !matches!(u.mode(), UnionMode::Sparse | UnionMode::Dense) {
        return Err(format!("a union of mode {:?}", u.mode()));
    }
    if let Some(ids) = u.typeIds() {
        let ids: Vec<i32> = ids.iter().collect();
        let mut seen = ids.clone();
        seen.sort_unstable();
        seen.dedup();
        if ids.len() != children
            || seen.len() != ids.len()
            || ids.iter().any(|&i| !(0..=127).contains(&i))
        {
            return Err("a union whose type ids do not fit its children".into());
        }
    }
    Ok(())
}

fn known_unit(unit: TimeUnit, what: &str) -> Result<(), String> {
    match unit {
        TimeUnit::SECOND | TimeUnit::MILLISECOND | TimeUnit::MICROSECOND | TimeUnit::NANOSECOND => {
            Ok(())
        }
        u => Err(format!("a {what} of unit {u:?}")),
    }
}

/// Field nodes a record batch holds for a column of type `t`.
fn nodes(t: &DataType) -> usize {
    1 + match t {
        DataType::List(f)
        | DataType::LargeList(f)
        | DataType::ListView(f)
        | DataType::LargeListView(f)
        | DataType::FixedSizeList(f, _)
        | DataType::Map(f, _) => nodes(f.data_type()),
        DataType::Struct(fs) => fs.iter().map(|f| nodes(f.data_type())).sum(),
        DataType::Union(fs, _) => fs.iter().map(|(_, f)| nodes(f.data_type())).sum(),
        DataType::RunEndEncoded(a, b) => nodes(a.data_type()) + nodes(b.data_type()),
        _ => 0,
    }
}

/// Checks the field node lengths of a column of type `t` starting at node `*at` (in the
/// batch's depth-first order): a top-level column has the batch's rows, the children of a
/// struct or sparse union their parent's, the child of a fixed-size list its parent's times
/// the list size. arrow-ipc trusts these lengths when it slices buffers.
fn node_lengths(
    t: &DataType,
    lengths: &[i64],
    at: &mut usize,
    want: Option<i64>,
) -> Result<(), String> {
    let i = *at;
    let len = *lengths.get(i).ok_or("fewer field nodes than columns")?;
    *at += 1;
    if let Some(w) = want
        && len != w
    {
        return Err(format!(
            "field node {i} has {len} rows where {w} are expected"
        ));
    }
    match t {
        DataType::Struct(fs) => {
            for f in fs {
                node_lengths(f.data_type(), lengths, at, Some(len))?;
            }
        }
        DataType::Union(fs, mode) => {
            let child = match mode {
                arrow_schema::UnionMode::Sparse => Some(len),
                arrow_schema::UnionMode::Dense => None,
            };
            for (_, f) in fs.iter() {
                node_lengths(f.data_type(), lengths, at, child)?;
            }
        }
        DataType::FixedSizeList(f, size) => {
            let child = len
                .checked_mul(i64::from(*size))
                .ok_or_else(|| format!("field node {i}: {len} lists of {size} overflow"))?;
            node_lengths(f.data_type(), lengths, at, Some(child))?;
        }
        DataType::List(f)
        | DataType::LargeList(f)
        | DataType::ListView(f)
        | DataType::LargeListView(f)
        | DataType::Map(f, _) => node_lengths(f.data_type(), lengths, at, None)?,
        DataType::RunEndEncoded(a, b) => {
            node_lengths(a.data_type(), lengths, at, None)?;
            node_lengths(b.data_type(), lengths, at, None)?;
        }
        _ => {}
    }
    Ok(())
}

/// The fewest buffers a record batch holds for a column of type `t`.
fn min_buffers(t: &DataType) -> usize {
    match t {
        DataType::Null => 0,
        DataType::Utf8 | DataType::Binary | DataType::LargeUtf8 | DataType::LargeBinary => 3,
        DataType::List(f) | DataType::LargeList(f) | DataType::Map(f, _) => {
            2 + min_buffers(f.data_type())
        }
        DataType::ListView(f) | DataType::LargeListView(f) => 3 + min_buffers(f.data_type()),
        DataType::FixedSizeList(f, _) => 1 + min_buffers(f.data_type()),
        DataType::Struct(fs) => 1 + fs.iter().map(|f| min_buffers(f.data_type())).sum::<usize>(),
        DataType::Union(fs, mode) => {
            let own = match mode {
                arrow_schema::UnionMode::Sparse => 1,
                arrow_schema::UnionMode::Dense => 2,
            };
            own + fs
                .iter()
                .map(|(_, f)| min_buffers(f.data_type()))
                .sum::<usize>()
        }
        DataType::RunEndEncoded(a, b) => min_buffers(a.data_type()) + min_buffers(b.data_type()),
        _ => 2,
    }
}

/// Why the record batch or dictionary batch `message` (with a body of `body_len` bytes)
/// cannot hold columns of `schema`, or `Ok` for other messages and batches that fit.
pub(crate) fn check_batch(
    schema: &Schema,
    message: &Message<'_>,
    body_len: u64,
) -> Result<(), String> {
    let (batch, of_schema) = if let Some(b) = message.header_as_record_batch() {
        (b, true)
    } else if let Some(d) = message.header_as_dictionary_batch() {
        (d.data().ok_or("a dictionary batch without data")?, false)
    } else if message.header_as_schema().is_some() {
        return Err("a second schema message".into());
    } else {
        return Err(format!(
            "unexpected message type {:?}",
            message.header_type()
        ));
    };
    if batch.length() < 0 {
        return Err(format!("negative row count {}", batch.length()));
    }
    let field_nodes = batch.nodes().ok_or("a batch without field nodes")?;
    let buffers = batch.buffers().ok_or("a batch without buffers")?;
    if of_schema {
        let want: usize = schema.fields().iter().map(|f| nodes(f.data_type())).sum();
        if field_nodes.len() != want {
            return Err(format!(
                "a record batch of {} field nodes for a schema of {want}",
                field_nodes.len()
            ));
        }
        let least: usize = schema
            .fields()
            .iter()
            .map(|f| min_buffers(f.data_type()))
            .sum();
        if buffers.len() < least {
            return Err(format!(
                "a record batch of {} buffers where the schema needs {least}",
                buffers.len()
            ));
        }
    }
    for (i, n) in field_nodes.iter().enumerate() {
        if n.length() < 0 || n.null_count() < 0 || n.null_count() > n.length() {
            return Err(format!(
                "field node {i} has {} rows and {} nulls",
                n.length(),
                n.null_count()
            ));
        }
    }
    if of_schema {
        let lengths: Vec<i64> = field_nodes.iter().map(|n| n.length()).collect();
        let mut at = 0;
        for f in schema.fields() {
            node_lengths(f.data_type(), &lengths, &mut at, Some(batch.length()))?;
        }
    }
    for (i, b) in buffers.iter().enumerate() {
        let (Ok(offset), Ok(length)) = (u64::try_from(b.offset()), u64::try_from(b.length()))
        else {
            return Err(format!("buffer {i} has a negative position"));
        };
        if offset.checked_add(length).is_none_or(|e| e > body_len) {
            return Err(format!(
                "buffer {i} ({length} bytes at {offset}) runs past the message body of {body_len} bytes"
            ));
        }
    }
    Ok(())
}
