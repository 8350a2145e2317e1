//! Member order of first appearance for the reference inference: `serde_json::Map` (without
//! the `preserve_order` feature) hands arrow-json an object's members sorted by name, so
//! arrow-json's schema lists the members of one row alphabetically. Users' tools (pyarrow,
//! polars, DuckDB, Python's json) list them as the file first shows them, and so does the
//! byte walk of [`super::fast`]. [`KeyOrder`] records that order from the row bytes, and
//! [`KeyOrder::apply`] puts the reference schema's struct fields (nested ones too) in it.

use std::fmt;

use arrow_schema::{DataType, Field, Fields, Schema};
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

/// The member names of the objects at one place of the rows (the top level, a member's
/// value, or the elements of an array), in order of first appearance.
#[derive(Debug, Default)]
pub(crate) struct KeyOrder {
    members: Vec<(String, KeyOrder)>,
    /// The objects and arrays inside this place's arrays.
    items: Option<Box<KeyOrder>>,
}

impl KeyOrder {
    /// Adds the member order of the JSON value `row` (a row that does not parse adds what
    /// came before its error: the reference reports the error itself).
    pub(crate) fn add(&mut self, row: &[u8]) {
        let mut de = serde_json::Deserializer::from_slice(row);
        let _ = Seed(self).deserialize(&mut de);
    }

    fn member(&mut self, name: &str) -> &mut KeyOrder {
        let at = match self.members.iter().position(|(n, _)| n == name) {
            Some(i) => i,
            None => {
                self.members.push((name.to_string(), KeyOrder::default()));
                self.members.len() - 1
            }
        };
        &mut self.members[at].1
    }

    /// `schema` with the fields of every struct in order of first appearance (fields this
    /// order has not seen keep their place after the ones it has).
    pub(crate) fn apply(&self, schema: &Schema) -> Schema {
        Schema::new_with_metadata(self.fields(schema.fields()), schema.metadata().clone())
    }

    fn fields(&self, fields: &Fields) -> Fields {
        let rank = |f: &Field| {
            self.members
                .iter()
                .position(|(n, _)| n == f.name())
                .unwrap_or(usize::MAX)
        };
        let mut out: Vec<Field> = fields
            .iter()
            .map(|f| {
                let inner = self
                    .members
                    .iter()
                    .find(|(n, _)| n == f.name())
                    .map(|(_, o)| o);
                match inner {
                    Some(o) => f
                        .as_ref()
                        .clone()
                        .with_data_type(o.data_type(f.data_type())),
                    None => f.as_ref().clone(),
                }
            })
            .collect();
        // A stable sort: unseen fields keep their relative order.
        out.sort_by_key(rank);
        out.into()
    }

    fn data_type(&self, t: &DataType) -> DataType {
        match t {
            DataType::Struct(fields) => DataType::Struct(self.fields(fields)),
            DataType::List(item) => match &self.items {
                Some(items) => {
                    let f = item.as_ref().clone();
                    let t = items.data_type(f.data_type());
                    DataType::List(f.with_data_type(t).into())
                }
                None => t.clone(),
            },
            other => other.clone(),
        }
    }
}

/// Records the member order of one value into a [`KeyOrder`].
struct Seed<'a>(&'a mut KeyOrder);

impl<'de> DeserializeSeed<'de> for Seed<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Seed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_none<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let items = self.0.items.get_or_insert_default();
        while seq.next_element_seed(Seed(items))?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(name) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            map.next_value_seed(Seed(self.0.member(&name)))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn structs_follow_first_appearance() {
        let mut order = KeyOrder::default();
        order.add(br#"{"id":1,"v":[{"z":1,"a":2}],"s":{"y":1,"b":2}}"#);
        order.add(br#"{"s":{"c":1},"id":2,"w":3}"#);
        let item = Field::new(
            "item",
            DataType::Struct(
                vec![
                    Field::new("a", DataType::Int64, true),
                    Field::new("z", DataType::Int64, true),
                ]
                .into(),
            ),
            true,
        );
        let sorted = Schema::new(vec![
            Field::new("id", DataType::Int64, true),
            Field::new(
                "s",
                DataType::Struct(
                    vec![
                        Field::new("b", DataType::Int64, true),
                        Field::new("c", DataType::Int64, true),
                        Field::new("y", DataType::Int64, true),
                    ]
                    .into(),
                ),
                true,
            ),
            Field::new("v", DataType::List(item.into()), true),
            Field::new("w", DataType::Int64, true),
        ]);
        let got = order.apply(&sorted);
        let names =
            |fields: &Fields| -> Vec<String> { fields.iter().map(|f| f.name().clone()).collect() };
        assert_eq!(names(got.fields()), ["id", "v", "s", "w"]);
        let DataType::Struct(s) = got.field(2).data_type() else {
            panic!("s is a struct")
        };
        assert_eq!(names(s), ["y", "b", "c"]);
        let DataType::List(item) = got.field(1).data_type() else {
            panic!("v is a list")
        };
        let DataType::Struct(inner) = item.data_type() else {
            panic!("items are structs")
        };
        assert_eq!(names(inner), ["z", "a"]);
    }
}
