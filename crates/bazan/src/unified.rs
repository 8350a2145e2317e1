//! The unified schema of a lake: one schema over files of many formats and schemas, so that
//! any global row range reads as one table.
//!
//! The rule (also in `docs/lake-map.md`): the columns are the union of every file's columns
//! in first-seen order (map order, which is path order); a name has one type: equal types
//! stay, `Null` with anything becomes that type, integers of different widths become Int64,
//! integers with floats (or floats of different widths) become Float64, and any other
//! mismatch becomes LargeUtf8 with the values cast to text. A file that lacks a column reads
//! as nulls in it. Every unified column is nullable.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, new_null_array};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use lake_locators::types::schema_from_json;

use lake_map::{HandlerRegistry, LakeMap};

use crate::error::Result;
use crate::handlers::handlers;
pub use crate::widen::merge_types;

/// The unified schema and each file's own schema, by entry index.
#[derive(Debug, Clone)]
pub(crate) struct Unified {
    pub(crate) schema: SchemaRef,
    pub(crate) files: Vec<SchemaRef>,
}

/// The unified schema of a list of file schemas, in order.
pub fn unify<'a>(schemas: impl IntoIterator<Item = &'a Schema>) -> Schema {
    let mut fields: Vec<(String, DataType)> = Vec::new();
    let mut at: HashMap<String, usize> = HashMap::new();
    for s in schemas {
        for f in s.fields() {
            match at.get(f.name()) {
                Some(&i) => fields[i].1 = merge_types(&fields[i].1, f.data_type()),
                None => {
                    at.insert(f.name().clone(), fields.len());
                    fields.push((f.name().clone(), f.data_type().clone()));
                }
            }
        }
    }
    Schema::new(
        fields
            .into_iter()
            .map(|(n, t)| Field::new(n, t, true))
            .collect::<Vec<_>>(),
    )
}

/// The unified schema of a map's files (maps of schema 1 and 2 store no file schema: those
/// files' first rows are read for it).
pub(crate) fn compute(map: &LakeMap) -> Result<Unified> {
    // Files of one lake mostly share a handful of schemas: parse each text once.
    let mut parsed: HashMap<String, SchemaRef> = HashMap::new();
    let mut files = Vec::with_capacity(map.total_files());
    for i in 0..map.total_files() {
        let e = map.entry(i);
        let schema = match e.schema_value()? {
            Some(v) => {
                let key = v.to_string();
                match parsed.get(&key) {
                    Some(s) => Arc::clone(s),
                    None => {
                        let s = schema_from_json(&v)?;
                        parsed.insert(key, Arc::clone(&s));
                        s
                    }
                }
            }
            // Maps of schema 1 and 2 store no schema: the file's first rows tell it.
            None => legacy_schema(map, i)?,
        };
        files.push(schema);
    }
    let registry = handlers();
    let votes: Vec<Schema> = files
        .iter()
        .enumerate()
        .map(|(i, s)| vote(map, &registry, i, s))
        .collect::<Result<_>>()?;
    let schema = Arc::new(unify(votes.iter()));
    Ok(Unified { schema, files })
}

/// The types file `i` brings to the unified schema. A column with no value in the file has
/// no type to give (inference made it Utf8 only for want of values): it votes `Null`, so a
/// header-only CSV or an all-empty column does not turn every other file's numbers into
/// text. That is every column of a file without rows, and, in a format whose schema is
/// inferred from its values ([`lake_locators::Locator::infers_schema`] of the entry's
/// handler), a Utf8 column that the map's statistics (when it keeps them for that column;
/// they are gathered from every value) show to hold no value.
fn vote(map: &LakeMap, registry: &HandlerRegistry, i: usize, schema: &SchemaRef) -> Result<Schema> {
    let e = map.entry(i);
    let stats_kept = &map.config().stats_columns;
    let inferred = registry
        .for_entry(e.path, e.format)
        .is_some_and(|h| h.locator.infers_schema());
    let stats = if e.row_count > 0 && inferred && !stats_kept.is_none() {
        e.stats()?
    } else {
        None
    };
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .map(|f| {
            let empty = e.row_count == 0
                || (f.data_type() == &DataType::Utf8
                    && stats_kept.wants(f.name())
                    && stats.as_ref().is_some_and(|s| !s.contains_key(f.name())));
            if empty {
                Field::new(f.name(), DataType::Null, true)
            } else {
                f.as_ref().clone()
            }
        })
        .collect();
    Ok(Schema::new(fields))
}

fn legacy_schema(map: &LakeMap, i: usize) -> Result<SchemaRef> {
    let e = map.entry(i);
    let segment = lake_map::Segment {
        index: i,
        local_start: 0,
        len: e.row_count.min(1),
    };
    let mut batches = map.read_segment(&segment, None, &handlers())?;
    match batches.next() {
        Some(b) => Ok(b?.schema()),
        None => Ok(Arc::new(Schema::empty())),
    }
}

/// One column in the unified type (see [`crate::widen::cast_array`]).
pub(crate) fn conform_array(a: &ArrayRef, to: &DataType) -> Result<ArrayRef> {
    Ok(crate::widen::cast_array(a, to)?)
}

/// The columns of `batch` (one file's rows) in the fields of `target`: cast where the
/// unified type differs, nulls where the file lacks the column.
pub(crate) fn conform_columns(batch: &RecordBatch, target: &[Arc<Field>]) -> Result<Vec<ArrayRef>> {
    let n = batch.num_rows();
    // The null columns of one type share one array: a wide unified schema gives a file's
    // rows many columns it lacks, and an allocation (zeroed, then freed by the consumer)
    // per column showed in the profile of short slices.
    let mut nulls: Vec<(&DataType, ArrayRef)> = Vec::new();
    target
        .iter()
        .map(|f| match batch.column_by_name(f.name()) {
            Some(a) => conform_array(a, f.data_type()),
            None => {
                let ty = f.data_type();
                if let Some((_, a)) = nulls.iter().find(|(t, _)| *t == ty) {
                    return Ok(Arc::clone(a));
                }
                let a = new_null_array(ty, n);
                nulls.push((ty, Arc::clone(&a)));
                Ok(a)
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Array, Int32Array, StringArray};

    #[test]
    fn missing_columns_of_one_type_share_one_null_array() {
        let schema = Arc::new(Schema::new(vec![Field::new("a", DataType::Int32, true)]));
        let a: ArrayRef = Arc::new(Int32Array::from(vec![1, 2, 3]));
        let batch = RecordBatch::try_new(schema, vec![a]).unwrap();
        let target: Vec<Arc<Field>> = [
            ("a", DataType::Int64),
            ("x", DataType::Int64),
            ("y", DataType::Utf8),
            ("z", DataType::Int64),
        ]
        .into_iter()
        .map(|(n, t)| Arc::new(Field::new(n, t, true)))
        .collect();
        let cols = conform_columns(&batch, &target).unwrap();
        assert_eq!(cols[0].null_count(), 0);
        assert!(
            cols[1..]
                .iter()
                .all(|c| c.len() == 3 && c.null_count() == 3)
        );
        assert_eq!(cols[2].data_type(), &DataType::Utf8);
        assert!(Arc::ptr_eq(&cols[1], &cols[3]));
    }

    #[test]
    fn type_rule() {
        use DataType::*;
        assert_eq!(merge_types(&Int32, &Int64), Int64);
        assert_eq!(merge_types(&UInt8, &Int16), Int64);
        assert_eq!(merge_types(&Int32, &Float32), Float64);
        assert_eq!(merge_types(&Float32, &Float64), Float64);
        assert_eq!(merge_types(&Null, &Utf8), Utf8);
        assert_eq!(merge_types(&Boolean, &Null), Boolean);
        assert_eq!(merge_types(&Utf8, &Utf8), Utf8);
        assert_eq!(merge_types(&Utf8, &Int64), LargeUtf8);
        assert_eq!(merge_types(&Boolean, &Int64), LargeUtf8);
        assert_eq!(merge_types(&Utf8, &LargeUtf8), LargeUtf8);
    }

    #[test]
    fn union_keeps_first_seen_order() {
        let a = Schema::new(vec![
            Field::new("b", DataType::Int32, false),
            Field::new("a", DataType::Utf8, true),
        ]);
        let c = Schema::new(vec![
            Field::new("c", DataType::Null, true),
            Field::new("b", DataType::Float64, true),
        ]);
        let u = unify([&a, &c]);
        let names: Vec<(&str, &DataType)> = u
            .fields()
            .iter()
            .map(|f| (f.name().as_str(), f.data_type()))
            .collect();
        assert_eq!(
            names,
            vec![
                ("b", &DataType::Float64),
                ("a", &DataType::Utf8),
                ("c", &DataType::Null)
            ]
        );
        assert!(u.fields().iter().all(|f| f.is_nullable()));
    }

    #[test]
    fn conform_casts_and_fills() {
        let batch = RecordBatch::try_from_iter([(
            "x",
            Arc::new(Int32Array::from(vec![Some(1), None])) as ArrayRef,
        )])
        .expect("batch");
        let target = vec![
            Arc::new(Field::new("x", DataType::LargeUtf8, true)),
            Arc::new(Field::new("y", DataType::Int64, true)),
        ];
        let cols = conform_columns(&batch, &target).expect("conformed");
        let x = cols[0]
            .as_any()
            .downcast_ref::<arrow_array::LargeStringArray>()
            .expect("large utf8");
        assert_eq!(x.value(0), "1");
        assert!(x.is_null(1));
        assert_eq!(cols[1].null_count(), 2);
        let s: ArrayRef = Arc::new(StringArray::from(vec!["a"]));
        assert_eq!(conform_array(&s, &DataType::Utf8).expect("same").len(), 1);
    }
}
