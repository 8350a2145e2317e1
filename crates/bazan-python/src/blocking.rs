//! Long calls off the calling thread: the work runs on a worker thread while the calling
//! thread waits with the GIL released, wakes every [`POLL`] to run Python's signal handlers
//! (Ctrl-C) and report progress, and turns a panic into a `bazan.BazanError`.
//!
//! On `KeyboardInterrupt` (or an exception from a progress callback) the operation's
//! [`CancelToken`] is set and the worker is waited for, so that a cancelled `create_map`
//! leaves neither a map nor a temporary file behind; then the exception is raised.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc::{RecvTimeoutError, sync_channel};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use bazan::{CancelToken, Progress, ProgressFn};
use pyo3::prelude::*;

use crate::errors;

/// How often the waiting thread checks for Ctrl-C and progress.
pub(crate) const POLL: Duration = Duration::from_millis(50);

/// Progress reported by worker threads, handed to a Python callable from the calling thread.
pub(crate) struct ProgressPump {
    latest: Arc<Mutex<Option<Progress>>>,
    sent: Option<Progress>,
    callback: Py<PyAny>,
}

impl ProgressPump {
    /// A pump calling `callback(files_done, files_total, bytes_done, bytes_total)`, and the
    /// engine callback that feeds it.
    pub(crate) fn new(callback: Py<PyAny>) -> (Self, ProgressFn) {
        let latest = Arc::new(Mutex::new(None));
        let feed = Arc::clone(&latest);
        let engine: ProgressFn = Arc::new(move |p: Progress| {
            *feed.lock().unwrap_or_else(PoisonError::into_inner) = Some(p);
        });
        let pump = ProgressPump {
            latest,
            sent: None,
            callback,
        };
        (pump, engine)
    }

    /// Calls the callback when the progress changed since the last call.
    pub(crate) fn tick(&mut self, py: Python<'_>) -> PyResult<()> {
        let now = *self.latest.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(p) = now
            && self.sent != Some(p)
        {
            self.sent = Some(p);
            self.callback.call1(
                py,
                (p.done_files, p.total_files, p.done_bytes, p.total_bytes),
            )?;
        }
        Ok(())
    }
}

/// What happens to the worker when the caller is interrupted.
#[derive(Clone, Copy)]
pub(crate) enum OnInterrupt<'a> {
    /// Set the token and wait for the worker to stop (it writes nothing then).
    Cancel(&'a CancelToken),
    /// Wait for the worker to finish (work that writes a file and cannot be stopped).
    Wait,
    /// Leave the worker to finish on its own and drop its result (work that writes nothing).
    Leave,
}

/// Runs `work` on a worker thread (see the module documentation).
pub(crate) fn run<T, F>(
    py: Python<'_>,
    on_interrupt: OnInterrupt<'_>,
    mut progress: Option<&mut ProgressPump>,
    work: F,
) -> PyResult<T>
where
    T: Send + 'static,
    F: FnOnce() -> bazan::Result<T> + Send + 'static,
{
    let (tx, rx) = sync_channel(1);
    let handle = std::thread::Builder::new()
        .name("bazan-python".into())
        .spawn(move || {
            let out = catch_unwind(AssertUnwindSafe(work));
            // The caller may have stopped listening (interrupted without a token).
            let _ = tx.send(out);
        })
        .map_err(|e| errors::internal(py, format!("cannot start a worker thread: {e}")))?;
    let mut rx = rx;
    loop {
        // The receiver is moved in and out: `detach` needs `Send` captures, and it is not `Sync`.
        let (back, got) = py.detach(move || {
            let got = rx.recv_timeout(POLL);
            (rx, got)
        });
        rx = back;
        match got {
            Ok(out) => {
                let _ = handle.join();
                if let Some(p) = progress.as_deref_mut() {
                    p.tick(py)?;
                }
                return match out {
                    Ok(result) => result.map_err(|e| errors::to_py(py, e)),
                    Err(payload) => Err(errors::from_panic(py, payload)),
                };
            }
            Err(RecvTimeoutError::Disconnected) => {
                let _ = handle.join();
                return Err(errors::internal(
                    py,
                    "the worker thread ended without a result",
                ));
            }
            Err(RecvTimeoutError::Timeout) => {}
        }
        let stop = match py.check_signals() {
            Err(e) => Some(e),
            Ok(()) => match progress.as_deref_mut() {
                Some(p) => p.tick(py).err(),
                None => None,
            },
        };
        if let Some(err) = stop {
            match on_interrupt {
                OnInterrupt::Cancel(token) => {
                    token.cancel();
                    let _ = py.detach(move || rx.recv());
                    let _ = handle.join();
                }
                OnInterrupt::Wait => {
                    let _ = py.detach(move || rx.recv());
                    let _ = handle.join();
                }
                OnInterrupt::Leave => {}
            }
            return Err(err);
        }
    }
}
