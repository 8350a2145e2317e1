//! The handler registry: the built-in locators of `lake-locators` plus dynamic handlers
//! registered at run time for an extension (a new one, or overriding a built-in one).
//!
//! A file is handled by the dynamic handler of its extension when there is one, else by the
//! built-in locator of that extension. Entries written by a dynamic handler store no blocks
//! (`row_groups_json = []`), so map-backed reads of them go through the handler from the start
//! of the file.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use lake_locators::Locator;
use lake_locators::csv::TextEncoding;

/// Which locator handles a file, and whether it is a dynamic handler.
#[derive(Clone)]
pub struct Handler {
    /// The locator.
    pub locator: Arc<dyn Locator>,
    /// True for a handler registered at run time (its blocks are not stored).
    pub dynamic: bool,
}

impl Handler {
    /// This handler for a map whose text files are read in `encoding`: a built-in locator
    /// of a format with a text encoding ([`Locator::with_text_encoding`], the delimited
    /// formats) becomes one of that encoding; any other handler, and every dynamic one,
    /// stays as it is.
    pub fn with_text_encoding(self, encoding: TextEncoding) -> Handler {
        if self.dynamic || encoding == TextEncoding::Utf8 {
            return self;
        }
        match self.locator.with_text_encoding(encoding) {
            Some(locator) => Handler {
                locator,
                dynamic: false,
            },
            None => self,
        }
    }
}

impl std::fmt::Debug for Handler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handler")
            .field("name", &self.locator.name())
            .field("dynamic", &self.dynamic)
            .finish()
    }
}

/// Built-in locators plus dynamic handlers by extension.
#[derive(Clone)]
pub struct HandlerRegistry {
    builtin: Vec<Arc<dyn Locator>>,
    dynamic: BTreeMap<String, Arc<dyn Locator>>,
}

impl std::fmt::Debug for HandlerRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let builtin: Vec<&str> = self.builtin.iter().map(|l| l.name()).collect();
        let dynamic: Vec<(&str, &str)> = self
            .dynamic
            .iter()
            .map(|(e, l)| (e.as_str(), l.name()))
            .collect();
        f.debug_struct("HandlerRegistry")
            .field("builtin", &builtin)
            .field("dynamic", &dynamic)
            .finish()
    }
}

impl Default for HandlerRegistry {
    fn default() -> Self {
        Self::builtin()
    }
}

impl HandlerRegistry {
    /// The built-in locators of `lake-locators`, no dynamic handler.
    pub fn builtin() -> Self {
        Self::with_locators(lake_locators::registry::builtin())
    }

    /// A registry of exactly these built-in locators (tests, embedders).
    pub fn with_locators(builtin: Vec<Arc<dyn Locator>>) -> Self {
        HandlerRegistry {
            builtin,
            dynamic: BTreeMap::new(),
        }
    }

    /// An empty registry.
    pub fn empty() -> Self {
        Self::with_locators(Vec::new())
    }

    /// Registers `locator` as the dynamic handler of every extension it declares (lower-cased),
    /// replacing a built-in or earlier dynamic handler of the same extension.
    pub fn register(&mut self, locator: Arc<dyn Locator>) -> &mut Self {
        for ext in locator.extensions() {
            self.dynamic
                .insert(ext.to_ascii_lowercase(), Arc::clone(&locator));
        }
        self
    }

    /// Registers `locator` as the dynamic handler of one extension only.
    pub fn register_extension(&mut self, ext: &str, locator: Arc<dyn Locator>) -> &mut Self {
        self.dynamic.insert(ext.to_ascii_lowercase(), locator);
        self
    }

    /// The handler of a file extension (compared case-insensitively, without the dot).
    pub fn for_extension(&self, ext: &str) -> Option<Handler> {
        // Discovery asks once per file: no allocation for an extension already in lower case.
        let lower;
        let ext = if ext.bytes().any(|b| b.is_ascii_uppercase()) {
            lower = ext.to_ascii_lowercase();
            lower.as_str()
        } else {
            ext
        };
        if let Some(locator) = self.dynamic.get(ext) {
            return Some(Handler {
                locator: Arc::clone(locator),
                dynamic: true,
            });
        }
        self.builtin
            .iter()
            .find(|l| l.extensions().contains(&ext))
            .map(|l| Handler {
                locator: Arc::clone(l),
                dynamic: false,
            })
    }

    /// The handler of a path, by the text after the last `.` of its file name (Rust's
    /// [`Path::extension`]: no extension for `csv` or `.csv`, an empty one for `weird.`).
    pub fn for_path(&self, path: &Path) -> Option<Handler> {
        let ext = path.extension()?.to_str()?;
        if ext.is_empty() {
            return None;
        }
        self.for_extension(ext)
    }

    /// The handler that reads a stored entry: the handler of the entry's extension when it
    /// produces the stored `format`, else the built-in locator producing that format.
    pub fn for_entry(&self, path: &str, format: &str) -> Option<Handler> {
        if let Some(h) = self.for_path(Path::new(path))
            && (h.locator.formats().contains(&format) || h.locator.name() == format)
        {
            return Some(h);
        }
        self.builtin
            .iter()
            .find(|l| l.formats().contains(&format))
            .map(|l| Handler {
                locator: Arc::clone(l),
                dynamic: false,
            })
    }

    /// Every extension with a handler, sorted.
    pub fn extensions(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .builtin
            .iter()
            .flat_map(|l| l.extensions().iter().map(|e| e.to_string()))
            .chain(self.dynamic.keys().cloned())
            .collect();
        out.sort();
        out.dedup();
        out
    }
}
