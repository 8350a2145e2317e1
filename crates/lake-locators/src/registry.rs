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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_formats_read_whole_are_the_text_and_row_formats() {
        for (ext, whole) in [
            ("csv", true),
            ("tsv", true),
            ("ndjson", true),
            ("json", true),
            ("msgpack", true),
            ("parquet", false),
            ("arrow", false),
            ("orc", false),
        ] {
            let locator = for_extension(ext).expect(ext);
            assert_eq!(locator.reads_whole_file(), whole, "{ext}");
        }
    }

    #[test]
    fn prefetch_is_a_hint_that_never_fails() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("a.csv");
        std::fs::write(&path, b"a\n1\n").expect("write");
        crate::prefetch_file(&path, 4);
        crate::prefetch_file(&path, u64::MAX);
        crate::prefetch_file(&dir.path().join("absent.csv"), 10);
        let empty = dir.path().join("empty.csv");
        std::fs::write(&empty, b"").expect("write");
        crate::prefetch_file(&empty, 10);
    }
}
