//! The built-in locators, found by extension or by the `format` name stored in a map.

use std::sync::Arc;

use crate::locator::Locator;

/// Every built-in locator, one per format family.
pub fn builtin() -> Vec<Arc<dyn Locator>> {
    vec![
        Arc::new(crate::parquet::ParquetLocator),
        Arc::new(crate::orc::OrcLocator),
        Arc::new(crate::avro::AvroLocator),
        Arc::new(crate::ipc::ArrowFileLocator),
        Arc::new(crate::ipc::ArrowStreamLocator),
        Arc::new(crate::msgpack::MsgPackLocator),
        Arc::new(crate::xlsx::XlsxLocator),
        Arc::new(crate::json::JsonLocator),
        Arc::new(crate::csv::DelimitedLocator),
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
