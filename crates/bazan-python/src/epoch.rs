//! Training epochs from Python (`LakeMap.iter_batches` with the epoch arguments): the facade's
//! [`bazan::EpochReader`] as a stream of pyarrow record batches with its resumable state, and
//! the row ranges of parallel readers (`bazan.ray`).

use std::sync::{Arc, Mutex, PoisonError};

use arrow_schema::SchemaRef;
use bazan::{CancelToken, EpochOptions, EpochReader, EpochState, Shard};
use pyo3::exceptions::PyStopIteration;
use pyo3::prelude::*;

use crate::blocking::{self, OnInterrupt};
use crate::errors::{self, IntoPy};
use crate::export::{to_batch, to_schema};
use crate::fork::fork_safe;
use crate::lake::PyLake;

fn to_shard(pair: (u64, u64)) -> Shard {
    Shard {
        index: pair.0,
        count: pair.1,
    }
}

/// A reader of one epoch of `lake` (see `bazan.lake.LakeMap.iter_batches`); `state` is the
/// JSON text of a state from `EpochStream.state_json`.
#[pyfunction]
#[pyo3(signature = (lake, batch_size, *, columns=None, with_gid=false, with_path=false,
    shuffle="none", seed=0, epoch=0, shard=(0, 1), worker=(0, 1), drop_last=false,
    buffer_rows=bazan::epoch::DEFAULT_BUFFER_ROWS, state=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn epoch_stream(
    py: Python<'_>,
    lake: PyRef<'_, PyLake>,
    batch_size: usize,
    columns: Option<Vec<String>>,
    with_gid: bool,
    with_path: bool,
    shuffle: &str,
    seed: u64,
    epoch: u64,
    shard: (u64, u64),
    worker: (u64, u64),
    drop_last: bool,
    buffer_rows: usize,
    state: Option<&str>,
) -> PyResult<EpochStream> {
    let cancel = CancelToken::new();
    let options = EpochOptions {
        batch_size,
        columns,
        with_gid,
        with_path,
        shuffle: shuffle.parse::<bazan::Shuffle>().py(py)?,
        seed,
        epoch,
        shard: to_shard(shard),
        worker: to_shard(worker),
        drop_last,
        buffer_rows,
        cancel: Some(cancel.clone()),
    };
    let state = match state {
        None => None,
        Some(text) => {
            let value: serde_json::Value = serde_json::from_str(text)
                .map_err(|e| errors::invalid(py, format!("epoch state: {e}")))?;
            Some(EpochState::from_json(&value).py(py)?)
        }
    };
    let reader = lake.lake().epoch(&options, state.as_ref()).py(py)?;
    Ok(EpochStream {
        schema: reader.schema(),
        num_batches: reader.plan().num_batches(),
        num_rows: reader.plan().num_rows(),
        state: Mutex::new(reader.state()),
        reader: Mutex::new(Some(reader)),
        cancel,
    })
}

/// The lake cut into at most `parts` row ranges at block boundaries, balanced by rows, as
/// `(start, stop)` pairs.
#[pyfunction]
pub(crate) fn balanced_ranges(
    py: Python<'_>,
    lake: PyRef<'_, PyLake>,
    parts: usize,
) -> PyResult<Vec<(u64, u64)>> {
    let ranges = lake.lake().balanced_ranges(parts).py(py)?;
    Ok(ranges.into_iter().map(|r| (r.start, r.end)).collect())
}

/// One epoch of a lake for one rank and worker; every `__next__` that reads data files does
/// so on a worker thread with the GIL released and Ctrl-C polled, and a batch already read
/// (a slice of the read window) is returned from the calling thread.
#[pyclass(frozen, module = "bazan._bazan", name = "EpochStream")]
pub(crate) struct EpochStream {
    schema: SchemaRef,
    num_batches: u64,
    num_rows: u64,
    state: Mutex<EpochState>,
    reader: Mutex<Option<EpochReader>>,
    cancel: CancelToken,
}

#[pymethods]
impl EpochStream {
    /// The schema of every batch (a pyarrow.Schema).
    #[getter]
    fn schema<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_schema(py, Arc::clone(&self.schema))
    }

    /// Batches of this part of the epoch.
    #[getter]
    fn num_batches(&self) -> u64 {
        self.num_batches
    }

    /// Rows of this part of the epoch (padding included).
    #[getter]
    fn num_rows(&self) -> u64 {
        self.num_rows
    }

    /// The state after the last batch returned, as JSON text.
    fn state_json(&self) -> String {
        let state = *self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.to_json().to_string()
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let taken = self
            .reader
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let Some(mut reader) = taken else {
            return Err(PyStopIteration::new_err(()));
        };
        let reads = reader.next_reads_files();
        let work = move || {
            let next = fork_safe(|| reader.next_batch());
            Ok((reader, next))
        };
        let (reader, next) = if reads {
            blocking::run(py, OnInterrupt::Cancel(&self.cancel), None, work)?
        } else {
            blocking::run_short(py, OnInterrupt::Cancel(&self.cancel), 0, work)?
        };
        match next {
            None => Err(PyStopIteration::new_err(())),
            Some(Err(e)) => Err(errors::to_py(py, e)),
            Some(Ok(batch)) => {
                *self.state.lock().unwrap_or_else(PoisonError::into_inner) = reader.state();
                *self.reader.lock().unwrap_or_else(PoisonError::into_inner) = Some(reader);
                to_batch(py, batch)
            }
        }
    }

    /// Stops the stream (the next `__next__` raises StopIteration).
    fn close(&self) {
        self.cancel.cancel();
        self.reader
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
    }
}

/// Registers the epoch functions and class in the module, and notes this process as the
/// one that loaded it (see [`fork_safe`]).
pub(crate) fn add(m: &Bound<'_, PyModule>) -> PyResult<()> {
    crate::fork::note_home();
    m.add_function(wrap_pyfunction!(epoch_stream, m)?)?;
    m.add_function(wrap_pyfunction!(balanced_ranges, m)?)?;
    m.add_class::<EpochStream>()?;
    Ok(())
}
