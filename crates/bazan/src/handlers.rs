//! The handler registry every front end uses: the built-in locators of `lake-locators`, the
//! `.tsfile` handler, and the handlers registered at run time for this process.

use std::collections::BTreeMap;
use std::sync::{Arc, PoisonError, RwLock};

use lake_locators::Locator;
use lake_map::HandlerRegistry;

use crate::error::{Error, Result};
use crate::tsfile::TsFileLocator;

/// Handlers registered with [`register_handler`], by lower-case extension.
static REGISTERED: RwLock<BTreeMap<String, Arc<dyn Locator>>> = RwLock::new(BTreeMap::new());

fn normalise(extension: &str) -> Result<String> {
    let ext = extension.trim_start_matches('.').to_ascii_lowercase();
    if ext.is_empty() || ext.contains(['/', '\\', '.']) {
        return Err(Error::invalid(format!(
            "extension {extension:?} is not a file extension (expected e.g. \"csv\" or \".csv\")"
        )));
    }
    Ok(ext)
}

/// Registers `locator` as the handler of files ending in `.extension` for this process: new
/// maps index such files with it (overriding a built-in handler of that extension; their
/// entries then store no blocks), and slices of such entries read through it.
pub fn register_handler(extension: &str, locator: Arc<dyn Locator>) -> Result<()> {
    let ext = normalise(extension)?;
    REGISTERED
        .write()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(ext, locator);
    Ok(())
}

/// Removes the handler registered for `.extension`; true when there was one.
pub fn unregister_handler(extension: &str) -> Result<bool> {
    let ext = normalise(extension)?;
    Ok(REGISTERED
        .write()
        .unwrap_or_else(PoisonError::into_inner)
        .remove(&ext)
        .is_some())
}

/// The extensions registered at run time, sorted.
pub fn registered_extensions() -> Vec<String> {
    REGISTERED
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .keys()
        .cloned()
        .collect()
}

/// The handlers of this process: the built-in locators, the `.tsfile` handler and every
/// handler registered with [`register_handler`] (which win over the others).
pub fn handlers() -> HandlerRegistry {
    let mut registry = HandlerRegistry::builtin();
    registry.register(Arc::new(TsFileLocator));
    for (ext, locator) in REGISTERED
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
    {
        registry.register_extension(ext, Arc::clone(locator));
    }
    registry
}
