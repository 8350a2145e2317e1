//! The type rule of the unified lake schema (`docs/lake-map.md` §10) for one column: the
//! type two disagreeing sources widen to, and the cast of values to it. A leaf module, so
//! that every reader that unifies (the lake scan, the TsFile handler across devices) uses
//! the same rule.

use std::sync::Arc;

use arrow_array::{Array, ArrayRef};
use arrow_cast::cast::{CastOptions, can_cast_types, cast_with_options};
use arrow_cast::display::{ArrayFormatter, FormatOptions};
use arrow_schema::{ArrowError, DataType};

/// The type a column gets when two files disagree.
pub fn merge_types(a: &DataType, b: &DataType) -> DataType {
    if a == b {
        return a.clone();
    }
    match (a, b) {
        (DataType::Null, t) | (t, DataType::Null) => t.clone(),
        (x, y) if x.is_integer() && y.is_integer() => DataType::Int64,
        (x, y) if is_number(x) && is_number(y) => DataType::Float64,
        _ => DataType::LargeUtf8,
    }
}

fn is_number(t: &DataType) -> bool {
    t.is_integer() || t.is_floating()
}

/// One column in the unified type: the same array when the type already fits, else a cast
/// (text through Arrow's display formatting where no cast exists).
pub(crate) fn cast_array(a: &ArrayRef, to: &DataType) -> Result<ArrayRef, ArrowError> {
    if a.data_type() == to {
        return Ok(Arc::clone(a));
    }
    if matches!(to, DataType::LargeUtf8) && !can_cast_types(a.data_type(), to) {
        let options = FormatOptions::default().with_null("");
        let f = ArrayFormatter::try_new(a.as_ref(), &options)?;
        let values: arrow_array::LargeStringArray = (0..a.len())
            .map(|i| (!a.is_null(i)).then(|| f.value(i).to_string()))
            .collect();
        return Ok(Arc::new(values));
    }
    let options = CastOptions {
        safe: true,
        ..CastOptions::default()
    };
    cast_with_options(a.as_ref(), to, &options)
}
