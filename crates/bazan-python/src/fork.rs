//! Fork safety of the extension's parallel reads: a child made by `fork` (a DataLoader or
//! `multiprocessing` worker) inherits the state of rayon's global pool but none of its
//! threads, so work handed to it there would wait forever. [`fork_safe`] runs such work on a
//! pool of the child's own. (The Python side reopens each `LakeMap` in the child, and the
//! worker threads of `blocking` are per process already.)

use std::sync::{Arc, Mutex, OnceLock, PoisonError};

/// The process that loaded the extension.
static HOME_PID: OnceLock<u32> = OnceLock::new();

/// The rayon pool of a forked child, with the process it belongs to.
static CHILD_POOL: Mutex<Option<(u32, Arc<rayon::ThreadPool>)>> = Mutex::new(None);

/// Runs `work` where its parallel reads (rayon) can run: in the process that loaded the
/// extension, as it is (on rayon's global pool); in a child made by `fork`, inside a pool of
/// the child's own. A forked child inherits the global pool's state but none of its threads,
/// so work handed to that pool would wait forever.
pub(crate) fn fork_safe<T: Send>(work: impl FnOnce() -> T + Send) -> T {
    let pid = std::process::id();
    if HOME_PID.get().is_none_or(|&home| home == pid) {
        return work();
    }
    let pool = {
        let mut slot = CHILD_POOL.lock().unwrap_or_else(PoisonError::into_inner);
        match &*slot {
            Some((owner, pool)) if *owner == pid => Some(Arc::clone(pool)),
            _ => {
                // A pool made by a parent that was itself a child: its threads are not here
                // either, and nothing may run its destructor.
                std::mem::forget(slot.take());
                let built = rayon::ThreadPoolBuilder::new()
                    .thread_name(|i| format!("bazan-rayon-{i}"))
                    .build()
                    .ok()
                    .map(Arc::new);
                if let Some(p) = &built {
                    *slot = Some((pid, Arc::clone(p)));
                }
                built
            }
        }
    };
    match pool {
        Some(pool) => pool.install(work),
        // No thread could be started: the work runs here (rayon then runs sequentially
        // only when the global pool also fails; this is the last resort).
        None => work(),
    }
}

/// Notes this process as the one that loaded the extension (called once at module load).
pub(crate) fn note_home() {
    let _ = HOME_PID.set(std::process::id());
}
