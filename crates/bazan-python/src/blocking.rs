//! Long calls off the calling thread: the work runs on a worker thread while the calling
//! thread waits with the GIL released, wakes every [`POLL`] to run Python's signal handlers
//! (Ctrl-C) and report progress, and turns a panic into a `bazan.BazanError`.
//!
//! The worker threads are kept between calls (a small pool, see [`submit`]): starting a thread
//! per call cost a quarter of a millisecond on a short `slice` (the spawn, and a fresh malloc
//! arena whose memory is faulted in again every time).
//!
//! A call known to be short runs on the calling thread instead ([`run_short`]).
//!
//! On `KeyboardInterrupt` (or an exception from a progress callback) the operation's
//! [`CancelToken`] is set and the worker is waited for, so that a cancelled `create_map`
//! leaves neither a map nor a temporary file behind; then the exception is raised.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc::{RecvTimeoutError, Sender, channel, sync_channel};
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

/// Data read at most by a call that [`run_short`] runs on the calling thread: 16 MiB, a tenth
/// of a second or so to read from a cold disk or to decode, so that Ctrl-C still takes effect
/// well within a second.
pub(crate) const SHORT_BYTES: u64 = 16 << 20;

/// Runs `work`, which reads about `estimated_bytes` of data files: on the calling thread with
/// the GIL released when that is at most [`SHORT_BYTES`], else as [`run`] does.
///
/// The hand-over to a worker and back costs two thread wake-ups, and the result is then built
/// in one core's cache and handed to pyarrow on another's: together 30 to 250 µs on a
/// virtual machine, a fifth of a 1,000-row slice. A short call runs where it was made instead;
/// a Ctrl-C arriving meanwhile is raised as `KeyboardInterrupt` when it returns.
pub(crate) fn run_short<T, F>(
    py: Python<'_>,
    on_interrupt: OnInterrupt<'_>,
    estimated_bytes: u64,
    work: F,
) -> PyResult<T>
where
    T: Send + 'static,
    F: FnOnce() -> bazan::Result<T> + Send + 'static,
{
    if estimated_bytes > SHORT_BYTES {
        return run(py, on_interrupt, None, work);
    }
    match py.detach(move || catch_unwind(AssertUnwindSafe(|| crate::fork::fork_safe(work)))) {
        Ok(result) => result.map_err(|e| errors::to_py(py, e)),
        Err(payload) => Err(errors::from_panic(py, payload)),
    }
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
    submit(Box::new(move || {
        let out = catch_unwind(AssertUnwindSafe(|| crate::fork::fork_safe(work)));
        // The caller may have stopped listening (interrupted without a token).
        let _ = tx.send(out);
    }))
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
                if let Some(p) = progress.as_deref_mut() {
                    p.tick(py)?;
                }
                return match out {
                    Ok(result) => result.map_err(|e| errors::to_py(py, e)),
                    Err(payload) => Err(errors::from_panic(py, payload)),
                };
            }
            Err(RecvTimeoutError::Disconnected) => {
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
                }
                OnInterrupt::Wait => {
                    let _ = py.detach(move || rx.recv());
                }
                OnInterrupt::Leave => {}
            }
            return Err(err);
        }
    }
}

/// A unit of work for a pool thread.
type Job = Box<dyn FnOnce() + Send>;

/// Idle pool threads (each waits on its own channel), and the process they belong to: a
/// child made by `os.fork()` has none of its parent's threads, so it starts a pool of its own.
struct Pool {
    pid: u32,
    idle: Vec<Sender<Job>>,
}

/// The pool of worker threads kept between calls.
static POOL: Mutex<Pool> = Mutex::new(Pool {
    pid: 0,
    idle: Vec::new(),
});

/// Idle threads kept at most; a thread finishing a job when this many wait exits.
const MAX_IDLE: usize = 8;

/// The pool, emptied first when this is not the process that filled it.
fn pool() -> std::sync::MutexGuard<'static, Pool> {
    let mut pool = POOL.lock().unwrap_or_else(PoisonError::into_inner);
    let pid = std::process::id();
    if pool.pid != pid {
        // After a fork the senders lead to threads that do not exist in this process; their
        // channels are leaked rather than dropped (nothing may run a parent's destructors).
        std::mem::forget(std::mem::take(&mut pool.idle));
        pool.pid = pid;
    }
    pool
}

/// Runs `job` on an idle pool thread, or on a new one when none is idle.
fn submit(job: Job) -> std::io::Result<()> {
    let idle = pool().idle.pop();
    let job = match idle {
        Some(worker) => match worker.send(job) {
            Ok(()) => return Ok(()),
            // The thread is gone (a listed thread never exits; kept for safety).
            Err(std::sync::mpsc::SendError(job)) => job,
        },
        None => job,
    };
    let (tx, rx) = channel::<Job>();
    let pid = std::process::id();
    std::thread::Builder::new()
        .name("bazan-python".into())
        .spawn(move || {
            let mut job = Some(job);
            while let Some(work) = job.take() {
                work();
                {
                    let mut pool = pool();
                    if pool.pid != pid || pool.idle.len() >= MAX_IDLE {
                        return;
                    }
                    pool.idle.push(tx.clone());
                }
                job = rx.recv().ok();
            }
        })?;
    Ok(())
}
