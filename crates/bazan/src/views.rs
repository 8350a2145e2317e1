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
/// order, with string columns as Utf8View where the format decodes them so: a built-in
/// Parquet entry is read with its stored schema's Utf8 columns typed Utf8View (the request
/// the locator honours); any other entry is read by [`LakeMap::read_segment`].
pub(crate) fn read_segment(
    map: &LakeMap,
    segment: &Segment,
    columns: &[String],
    registry: &HandlerRegistry,
) -> Result<BatchIter> {
    let e = map.entry(segment.index);
    let handler = registry
        .for_entry(e.path, e.format)
        .filter(|h| !h.dynamic && h.locator.name() == "parquet");
    let stored = match (&handler, e.schema_value()?) {
        (Some(_), Some(v)) => Some(schema_from_json(&v)?),
        _ => None,
    };
    let (Some(handler), Some(stored)) = (handler, stored) else {
        return Ok(map.read_segment(segment, Some(columns), registry)?);
    };
    let path = map.check_fresh(segment.index)?;
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

#[cfg(test)]
mod tests {
    use std::path::Path;

    use arrow_array::Array;
    use arrow_select::concat::concat_batches;

    use super::*;
    use crate::ScanOptions;

    /// A scan with string views returns the plain scan's values, its Utf8 columns as
    /// Utf8View, over Parquet files (decoded as views) and a CSV file (cast).
    #[test]
    fn views_hold_the_plain_strings() {
        let dir = tempfile::tempdir().unwrap();
        let data = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/lake"));
        for (from, to) in [
            ("nested/a/b/deep.parquet", "a.parquet"),
            ("📊 metrics.parquet", "b.parquet"),
            ("alpha.csv", "c.csv"),
        ] {
            std::fs::copy(data.join(from), dir.path().join(to)).unwrap();
        }
        let created = crate::create_map(dir.path(), &crate::CreateOptions::default()).unwrap();
        let lake = Arc::new(created.lake);
        let total = lake.total_rows();
        let scan = |string_views: bool| {
            let options = ScanOptions {
                with_path: true,
                string_views,
                ..ScanOptions::default()
            };
            let schema = lake.scan_schema(&options).unwrap();
            let batches = lake.scan(0..total, &options).unwrap();
            concat_batches(&schema, &batches.collect_batches().unwrap()).unwrap()
        };
        let (plain, views) = (scan(false), scan(true));
        assert_eq!(plain.num_rows() as u64, total);
        let mut strings = 0;
        for (i, f) in plain.schema().fields().iter().enumerate() {
            let v = views.column(i);
            if f.data_type() == &DataType::Utf8 {
                strings += 1;
                assert_eq!(views.schema().field(i).data_type(), &DataType::Utf8View);
                let back = arrow_cast::cast(v, &DataType::Utf8).unwrap();
                assert_eq!(back.to_data(), plain.column(i).to_data(), "{}", f.name());
            } else {
                assert_eq!(v.to_data(), plain.column(i).to_data(), "{}", f.name());
            }
        }
        assert!(strings > 0);
    }
}
