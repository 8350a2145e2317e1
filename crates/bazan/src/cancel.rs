//! [`CancelToken`]: a flag another thread sets to stop a long run (map creation, a scan).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// A cancellation flag shared between the caller and a running operation. Cloning shares the
/// flag. A cancelled operation ends with [`crate::ErrorKind::Interrupted`] and writes nothing.
#[derive(Debug, Clone, Default)]
pub struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    /// A new, unset token.
    pub fn new() -> Self {
        Self::default()
    }

    /// Asks every operation holding this token to stop.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// True once [`CancelToken::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// The shared flag, for the engine crates.
    pub(crate) fn flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.0)
    }

    /// An `Interrupted` error when cancelled.
    pub(crate) fn check(token: Option<&CancelToken>) -> crate::Result<()> {
        match token {
            Some(t) if t.is_cancelled() => Err(crate::Error::new(
                crate::ErrorKind::Interrupted,
                "interrupted",
            )),
            _ => Ok(()),
        }
    }
}
