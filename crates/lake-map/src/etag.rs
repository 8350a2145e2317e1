//! The optional eleventh column of a schema-3 map, `etag`: each object's ETag as its store
//! returned it, for lakes in object stores.

use std::sync::Arc;

use arrow_array::ArrayRef;
use arrow_schema::{DataType, Field, Schema, SchemaRef};

/// The name of the optional eleventh column of a schema-3 map: the ETag of each object of a
/// lake in an object store, as the store returned it.
pub const ETAG_COLUMN: &str = "etag";

/// `schema` and `columns` with the nullable Utf8 `etag` column appended.
pub(crate) fn with_etag_column(
    schema: &SchemaRef,
    mut columns: Vec<ArrayRef>,
    etag: ArrayRef,
) -> (SchemaRef, Vec<ArrayRef>) {
    let mut fields: Vec<Field> = schema.fields().iter().map(|f| f.as_ref().clone()).collect();
    fields.push(Field::new(ETAG_COLUMN, DataType::Utf8, true));
    columns.push(etag);
    (
        Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone())),
        columns,
    )
}
