//! The built-in locators, found by extension or by the `format` name stored in a map.

use std::sync::Arc;

use crate::locator::Locator;

/// Every built-in locator, one per format family.
pub fn builtin() -> Vec<Arc<dyn Locator>> {
    vec![
        Arc::new(crate::formats::parquet::ParquetLocator),
        Arc::new(crate::formats::orc::OrcLocator),
        Arc::new(crate::formats::avro::AvroLocator),
        Arc::new(crate::formats::ipc::ArrowFileLocator),
        Arc::new(crate::formats::ipc::ArrowStreamLocator),
        Arc::new(crate::formats::msgpack::MsgPackLocator),
        Arc::new(crate::formats::xlsx::XlsxLocator),
        Arc::new(crate::formats::json::JsonLocator),
        Arc::new(crate::formats::csv::DelimitedLocator),
    ]
}

/// The built-in locator for a lower-case extension (without the dot).
pub fn for_extension(ext: &str) -> Option<Arc<dyn Locator>> {
    builtin()
        .into_iter()
        .find(|l| l.extensions().contains(&ext))
}

/// The built-in locator that produces a stored `format` name.
pub fn for_format(format: &str) -> Option<Arc<dyn Locator>> {
    builtin()
        .into_iter()
        .find(|l| l.formats().contains(&format))
}
