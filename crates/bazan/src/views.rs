//! String columns as Utf8View ([`crate::ScanOptions::string_views`]): Parquet files decode
//! them so directly (the views point into the decoded pages: no string is copied into an
//! offsets buffer first); the other formats return Utf8, which the scan casts.

use std::sync::Arc;

use arrow_schema::{DataType, Field, Schema};
use lake_locators::types::schema_from_json;
use lake_locators::{BatchIter, ReadRequest};
use lake_map::{HandlerRegistry, LakeMap, Segment};

use crate::error::Result;

/// The field a string-view scan returns for a unified field: Utf8 becomes Utf8View, any
/// other type stays.
pub(crate) fn view_field(f: &Field) -> Field {
    if f.data_type() == &DataType::Utf8 {
        f.clone().with_data_type(DataType::Utf8View)
    } else {
        f.clone()
    }
}

/// One segment of entry `segment.index` read after the stale check, `columns` in this
/// order, with string columns as Utf8View where the format decodes them so: an entry of a
/// built-in locator that decodes string views (Parquet,
/// [`lake_locators::Locator::decodes_string_views`]) is read with its stored schema's Utf8
/// columns typed Utf8View (the request the locator honours); any other entry is read by
/// [`LakeMap::read_segment`].
pub(crate) fn read_segment(
    map: &LakeMap,
    segment: &Segment,
    columns: &[String],
    registry: &HandlerRegistry,
) -> Result<BatchIter> {
    let e = map.entry(segment.index);
    let handler = registry
        .for_entry(e.path, e.format)
        .filter(|h| !h.dynamic && h.locator.decodes_string_views());
    let stored = match (&handler, e.schema_value()?) {
        (Some(_), Some(v)) => Some(schema_from_json(&v)?),
        _ => None,
    };
    let (Some(handler), Some(stored)) = (handler, stored) else {
        return Ok(map.read_segment(segment, Some(columns), registry)?);
    };
    let rows = segment.local_start..segment.local_start + segment.len;
    let path = map.prepare_read(segment.index, &[rows], handler.locator.byte_layout())?;
    let blocks = map.blocks(segment.index)?;
    let wanted: Vec<Field> = stored.fields().iter().map(|f| view_field(f)).collect();
    let request = ReadRequest {
        rows: segment.local_start..segment.local_start + segment.len,
        blocks: (!blocks.is_empty()).then_some(blocks.as_slice()),
        schema: Some(Arc::new(Schema::new(wanted))),
        projection: Some(columns),
        batch_size: 0,
    };
    Ok(handler.locator.read(&path, &request)?)
}
