"""The Lake Map from Python: map a directory of data files once, then read any global row of
the whole lake by seeking straight to the right block.

>>> import bazan.lake as bl
>>> m = bl.create_map("data/")            # writes data/.br_map.bazan, as `bazan map create`
>>> m.total_rows, m.schema                 # the unified schema of every file
>>> m.slice(1_000_000, 5)                  # a pyarrow.Table
>>> m.take([7, 3, 99_999])                 # rows in the order given
>>> for batch in m.iter_batches(batch_size=65536): ...
>>> polars.DataFrame(m); duckdb.sql("select count(*) from m")   # any Arrow consumer

Maps written here and by the ``bazan`` command are the same file: each reads the other's.
Every long call releases the GIL and stops on Ctrl-C (``KeyboardInterrupt``) within a
fraction of a second, leaving no map or temporary file behind.

**Unified schema.** A lake's files need not share a schema. The columns of the lake are the
union of all files' columns in first-seen order (map order, the byte order of the paths).
Each name has one type: equal types stay; null with anything becomes that type; integers of
different widths become int64; an integer with a float becomes float64; any other mismatch
becomes large_string (values cast to text). A file lacking a column yields nulls there.
``with_gid=True`` adds ``_gid`` (the global row number, int64) and ``with_path=True`` adds
``_path`` (the file's path relative to the root, dictionary-encoded string).
"""

from __future__ import annotations

import copy
import json
import os
import warnings
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

import pyarrow as pa

from . import _bazan, _progress
from ._errors import InvalidArgumentError, OutOfRangeError

__all__ = [
    "DoctorReport",
    "LakeMap",
    "create_map",
    "doctor_lake_map",
    "load_map",
    "register_handler",
    "registered_handlers",
    "unregister_handler",
    "update_map",
    "UpdateReport",
]

PathLike = Union[str, "os.PathLike[str]"]
DEFAULT_STRIDE = 65536
DEFAULT_BATCH_SIZE = 65536


def _root(root: Any) -> str:
    if isinstance(root, (str, os.PathLike)):
        return os.fspath(root)
    raise TypeError(f"root must be a path (str or os.PathLike), not {type(root).__name__}")


def _int(name: str, value: Any, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        try:
            import operator

            value = operator.index(value)
        except TypeError:
            raise TypeError(f"{name} must be an int, not {type(value).__name__}") from None
    if value < minimum:
        raise InvalidArgumentError(f"{name} must be at least {minimum}, not {value}")
    return int(value)


def _columns(columns: Any, name: str = "columns") -> Optional[List[str]]:
    if columns is None:
        return None
    if isinstance(columns, (str, bytes)):
        raise TypeError(f"{name} must be a list of column names, not a single {type(columns).__name__}")
    try:
        out = list(columns)
    except TypeError:
        raise TypeError(f"{name} must be a list of column names, not {type(columns).__name__}") from None
    for c in out:
        if not isinstance(c, str):
            raise TypeError(f"{name} must hold str column names, not {type(c).__name__}")
    return out


def _fingerprint(value: Any, name: str = "fingerprint") -> str:
    if value not in ("metadata", "blake3"):
        raise InvalidArgumentError(f"{name} must be 'metadata' or 'blake3', not {value!r}")
    return value


def create_map(
    root: PathLike,
    *,
    stride: int = DEFAULT_STRIDE,
    fingerprint: str = "metadata",
    stats_columns: Optional[Sequence[str]] = None,
    skip_errors: bool = False,
    threads: Optional[int] = None,
    progress: _progress.ProgressArg = None,
    encoding: str = "utf-8",
    storage_options: Optional[Mapping[str, str]] = None,
    map: Optional[str] = None,
) -> "LakeMap":
    """Maps the lake at ``root`` and writes ``<root>/.br_map.bazan`` atomically, exactly as
    ``bazan map create`` does; returns the map, ready to read.

    - ``stride``: rows per checkpoint of the row formats (CSV, JSON, MsgPack, XLSX).
    - ``fingerprint``: ``"metadata"`` (size and mtime) or ``"blake3"`` (also a digest of
      every file, so the doctor sees same-size edits).
    - ``stats_columns``: ``None`` for min/max statistics of every supported column, ``[]``
      for none, or a list of column names (names that no file has get a ``UserWarning``).
    - ``skip_errors``: leave unreadable files out (listed in ``LakeMap.failures`` as
      ``(path, message)``) instead of failing.
    - ``threads``: worker threads (``None``: every core).
    - ``progress``: ``None`` shows a bar on stderr when it is a terminal; ``True``/``False``
      force it on/off; a callable receives ``(files_done, files_total, bytes_done,
      bytes_total)`` from the calling thread.
    - ``encoding``: how CSV, TSV, PSV and TXT files are read, ``"utf-8"`` (bytes that are
      not UTF-8 are refused with the row and byte offset) or ``"latin-1"`` (every byte is
      a character, as Python's ``open(..., encoding="latin-1")`` reads it). Stored in the
      map: every later read and :func:`update_map` use it. Another name raises
      :class:`InvalidArgumentError` (a ``ValueError``).
    - ``root`` may be a URL of a lake in an object store: ``s3://bucket/prefix``,
      ``gs://…``, ``az://…`` / ``abfs[s]://…`` (``http(s)://`` lakes are read-only). The map
      is then written beside the data at ``PREFIX/.br_map.bazan`` in one conditional PUT.
    - ``storage_options``: options of that store by object_store's key names (as polars and
      deltalake take them: ``aws_endpoint``, ``aws_region``, ``aws_allow_http``,
      ``aws_access_key_id``, ``google_service_account``, ``azure_storage_account_name``,
      …), over the store's standard environment variables.
    - ``map``: where to keep the map instead (a local path or a URL), e.g. for a read-only
      bucket.

    A registered handler's exception propagates as itself, with the path in its notes, and
    no map is written. Ctrl-C raises ``KeyboardInterrupt`` and leaves no map behind.
    """
    root = _root(root)
    stride = _int("stride", stride)
    fingerprint = _fingerprint(fingerprint)
    stats = _columns(stats_columns, "stats_columns")
    if not isinstance(skip_errors, bool):
        raise TypeError(f"skip_errors must be a bool, not {type(skip_errors).__name__}")
    if threads is not None:
        threads = _int("threads", threads)
    if not isinstance(encoding, str):
        raise TypeError(f"encoding must be a str, not {type(encoding).__name__}")
    callback = _progress.resolve(progress, "map")
    try:
        lake, failures, notes = _bazan.create_map(
            root,
            stride=stride,
            fingerprint=fingerprint,
            stats_columns=stats,
            skip_errors=skip_errors,
            threads=threads,
            progress=callback,
            encoding=encoding,
            storage_options=_storage_options(storage_options),
            map=_map_location(map),
        )
    finally:
        _progress.close(callback)
    for note in notes:
        warnings.warn(note, UserWarning, stacklevel=2)
    return LakeMap(lake, failures)


class UpdateReport:
    """What :func:`update_map` changed: ``created`` (the lake had no map), ``added``,
    ``modified`` and ``removed`` (relative paths, map order), ``kept`` (entries reused
    without reading their file), ``failures`` (``(path, message)`` left out with
    ``skip_errors``), and ``map`` (the updated :class:`LakeMap`). :meth:`to_dict` is the
    object ``bazan map update --json`` prints."""

    __slots__ = ("map", "_report")

    def __init__(self, lake: Any, report: Dict[str, Any]) -> None:
        self._report = report
        self.map = LakeMap(lake, self.failures)

    @property
    def created(self) -> bool:
        """True when the lake had no map and one was created."""
        return self._report["created"]

    @property
    def added(self) -> List[str]:
        """Paths of new files that were indexed."""
        return list(self._report["added"])

    @property
    def modified(self) -> List[str]:
        """Paths of changed files that were indexed again."""
        return list(self._report["modified"])

    @property
    def removed(self) -> List[str]:
        """Paths whose files are gone, dropped from the map."""
        return list(self._report["removed"])

    @property
    def kept(self) -> int:
        """Entries kept without reading their files."""
        return self._report["kept"]

    @property
    def failures(self) -> List[Tuple[str, str]]:
        """Files left out with ``skip_errors``, as ``(path, message)``."""
        return [(f["path"], f["message"]) for f in self._report["failures"]]

    def to_dict(self) -> Dict[str, Any]:
        """The report as plain data, the object ``bazan map update --json`` prints: the keys
        above (``failures`` as ``{path, message}`` dicts), ``map`` (the map file's path) and
        the updated map's ``total_files``, ``total_rows`` and ``total_bytes``."""
        return copy.deepcopy(self._report)

    def __repr__(self) -> str:
        return (f"UpdateReport(created={self.created}, added={len(self.added)}, "
                f"modified={len(self.modified)}, removed={len(self.removed)}, kept={self.kept})")


def update_map(
    root: PathLike,
    *,
    skip_errors: bool = False,
    threads: Optional[int] = None,
    progress: _progress.ProgressArg = None,
    storage_options: Optional[Mapping[str, str]] = None,
    map: Optional[str] = None,
) -> UpdateReport:
    """Brings ``<root>/.br_map.bazan`` up to date as ``bazan map update`` does: entries whose
    file is unchanged under the map's own fingerprint mode are kept without reading the file,
    new and changed files are indexed, entries of missing files are dropped, and the map is
    written atomically (the result equals what :func:`create_map` would write). A lake
    without a map gets one with the default options. Ctrl-C leaves the old map in place."""
    root = _root(root)
    if not isinstance(skip_errors, bool):
        raise TypeError(f"skip_errors must be a bool, not {type(skip_errors).__name__}")
    if threads is not None:
        threads = _int("threads", threads)
    callback = _progress.resolve(progress, "map")
    try:
        out = _bazan.update_map(
            root,
            skip_errors=skip_errors,
            threads=threads,
            progress=callback,
            storage_options=_storage_options(storage_options),
            map=_map_location(map),
        )
    finally:
        _progress.close(callback)
    lake, report = out
    return UpdateReport(lake, json.loads(report))


def load_map(
    root: PathLike,
    *,
    storage_options: Optional[Mapping[str, str]] = None,
    map: Optional[str] = None,
) -> "LakeMap":
    """Loads ``<root>/.br_map.bazan`` (memory-mapped: the map's size, not the lake's, sets
    the cost). A lake without a map raises :class:`bazan.NotFoundError`.

    ``root`` may be an object-store URL (``s3://bucket/prefix``, ``gs://…``, ``az://…``,
    ``http(s)://…``): the map is fetched once, and reads fetch only the byte ranges of the
    blocks they touch, each on the condition that the object still has the ETag the map
    stored. ``storage_options`` and ``map`` are those of :func:`create_map`."""
    opts = _storage_options(storage_options)
    where = _map_location(map)
    m = LakeMap(_bazan.load_map(_root(root), storage_options=opts, map=where), [])
    m._open = {k: v for k, v in (("storage_options", opts), ("map", where)) if v is not None}
    return m


def doctor_lake_map(
    root: PathLike,
    *,
    fingerprint: Optional[str] = None,
    storage_options: Optional[Mapping[str, str]] = None,
    map: Optional[str] = None,
) -> "DoctorReport":
    """Compares the map of the lake at ``root`` with the files on disk now (for a lake in an
    object store: with one listing of its prefix, by size and ETag); see
    :meth:`LakeMap.doctor`."""
    return load_map(root, storage_options=storage_options, map=map).doctor(fingerprint=fingerprint)


def _storage_options(options: Any) -> Optional[Dict[str, str]]:
    if options is None:
        return None
    if not isinstance(options, Mapping):
        raise TypeError(f"storage_options must be a mapping, not {type(options).__name__}")
    out: Dict[str, str] = {}
    for k, v in options.items():
        if not isinstance(k, str):
            raise TypeError(f"storage_options keys must be str, not {type(k).__name__}")
        out[k] = v if isinstance(v, str) else ("true" if v is True else "false" if v is False else str(v))
    return out


def _map_location(map: Any) -> Optional[str]:
    if map is None:
        return None
    if isinstance(map, (str, os.PathLike)):
        return os.fspath(map)
    raise TypeError(f"map must be a path or URL string, not {type(map).__name__}")


class DoctorReport:
    """What the Lake Doctor found: lists of paths relative to the lake root, in map order.

    - ``healthy``: files that exist and whose fingerprint matches;
    - ``modified``: files that exist but changed;
    - ``unindexed``: files discovery finds that the map has no entry for;
    - ``missing``: entries whose file is gone;
    - ``errors``: paths that could not be checked, as dicts ``{path, kind, message}``;
    - ``ok``: true when every entry is healthy and nothing else was found.
    """

    __slots__ = ("fingerprint", "healthy", "modified", "unindexed", "missing", "errors")

    def __init__(
        self,
        fingerprint: str,
        healthy: List[str],
        modified: List[str],
        unindexed: List[str],
        missing: List[str],
        errors: List[Dict[str, str]],
    ) -> None:
        self.fingerprint = fingerprint
        self.healthy = healthy
        self.modified = modified
        self.unindexed = unindexed
        self.missing = missing
        self.errors = errors

    @property
    def ok(self) -> bool:
        """True when the map matches the disk: nothing modified, unindexed, missing or
        unreadable."""
        return not (self.modified or self.unindexed or self.missing or self.errors)

    def to_dict(self) -> Dict[str, Any]:
        """The report as a dict (``healthy`` as a list of paths, plus ``ok``)."""
        return {
            "fingerprint": self.fingerprint,
            "healthy": list(self.healthy),
            "modified": list(self.modified),
            "unindexed": list(self.unindexed),
            "missing": list(self.missing),
            "errors": [dict(e) for e in self.errors],
            "ok": self.ok,
        }

    def __repr__(self) -> str:
        return (
            f"DoctorReport(ok={self.ok}, healthy={len(self.healthy)}, modified={self.modified!r}, "
            f"unindexed={self.unindexed!r}, missing={self.missing!r}, errors={len(self.errors)})"
        )


def _indices(indices: Any) -> Any:
    """A list of ints or an Arrow integer array for the extension."""
    if isinstance(indices, (list, tuple)):
        return list(indices)
    if isinstance(indices, range):
        return pa.array(indices, type=pa.int64())
    if isinstance(indices, (int, str, bytes)):
        raise TypeError(f"indices must be a sequence of ints, not {type(indices).__name__}")
    if isinstance(indices, pa.ChunkedArray):
        return indices.combine_chunks()
    if hasattr(indices, "__arrow_c_array__"):
        return indices
    try:
        arr = pa.array(indices)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):
        try:
            arr = pa.chunked_array(indices).combine_chunks()
        except Exception:
            raise TypeError(
                f"indices must be a sequence of ints or an integer array, not {type(indices).__name__}"
            ) from None
    return arr


# --- processes: pickling, fork ------------------------------------------------------------
# A LakeMap pickles to what reopens it (see LakeMap.__reduce__). After os.fork() (a
# multiprocessing or DataLoader worker started with "fork"), each LakeMap opens its map again
# in the child on first use: the parent's handle (its memory-mapped map, its block cache) is
# never used there. The extension runs a child's parallel reads on a thread pool of the
# child's own (crates/bazan-python/src/epoch.rs).
_FORK_GENERATION = 0


def _after_fork_in_child() -> None:
    global _FORK_GENERATION
    _FORK_GENERATION += 1


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _reopen(state: Dict[str, Any]) -> "LakeMap":
    """The map ``LakeMap.__reduce__`` describes, opened in this process."""
    m = load_map(state["root"], **state.get("open", {}))
    m._open = dict(state.get("open", {}))
    if state.get("cache_bytes") is not None:
        m.cache_bytes = state["cache_bytes"]
    m.failures = [tuple(f) for f in state.get("failures", [])]
    return m


class LakeMap:
    """A loaded Lake Map: the rows of every file of a lake as one table, read on demand.

    ``len(m)`` is the number of rows; ``m[i]`` is one row as a dict (negative ``i`` counts
    from the end) and ``m[a:b]`` a ``pyarrow.Table``. The map implements the Arrow PyCapsule
    stream interface (``__arrow_c_stream__``), so ``pyarrow.table(m)``,
    ``polars.DataFrame(m)`` and ``duckdb.sql("select ... from m")`` read the whole lake as a
    stream, one batch at a time.
    """

    __slots__ = ("_handle", "_generation", "_root", "_open", "_schema", "failures")

    def __init__(self, lake: Any, failures: Sequence[Tuple[str, str]] = ()) -> None:
        self._handle = lake
        self._generation = _FORK_GENERATION
        self._root: str = lake.root
        #: Keyword arguments of :func:`load_map` besides the root that reopen this map in
        #: another process (empty for a local lake).
        self._open: Dict[str, Any] = {}
        self._schema: Optional[pa.Schema] = None
        #: Files left out by ``create_map(skip_errors=True)``, as ``(path, message)``.
        self.failures: List[Tuple[str, str]] = list(failures)

    @property
    def _lake(self) -> Any:
        """The extension's lake; in a child made by fork, the map opened again there."""
        if self._generation != _FORK_GENERATION:
            budget = self._handle.cache_bytes
            fresh = load_map(self._root, **self._open)._handle
            fresh.cache_bytes = budget
            self._handle = fresh
            self._generation = _FORK_GENERATION
        return self._handle

    def __reduce__(self) -> Any:
        """Pickles to what reopens the map: its root, the options it was loaded with, the
        block cache's budget and the failures list. Unpickling loads the map (not the
        lake's files) in the receiving process: a DataLoader worker or a multiprocessing
        child started with "spawn" or "forkserver", a Ray task."""
        state = {
            "root": self._root,
            "open": dict(self._open),
            "cache_bytes": self._lake.cache_bytes,
            "failures": [list(f) for f in self.failures],
        }
        return (_reopen, (state,))

    # --- facts from the map -------------------------------------------------------------
    @property
    def root(self) -> str:
        """The lake root."""
        return self._lake.root

    @property
    def map_path(self) -> str:
        """The path of the map file (``<root>/.br_map.bazan``)."""
        return self._lake.map_path

    @property
    def total_rows(self) -> int:
        """Rows in the lake (the sum over its files)."""
        return self._lake.total_rows

    @property
    def total_files(self) -> int:
        """Files in the map."""
        return self._lake.total_files

    @property
    def total_bytes(self) -> int:
        """Bytes of the mapped files."""
        return self._lake.total_bytes

    @property
    def cache_bytes(self) -> int:
        """The budget of the decoded-block cache that :meth:`take` fills, in bytes of Arrow
        memory (256 MiB when the map is loaded). Arrow record batches that ``take`` reads (it
        decodes them whole anyway) and Parquet row groups it touches a second time are kept
        decoded, least recently used leaving first, so that random takes over and over (a
        training loop) decode each block once; every take still checks each file's size and
        mtime against the map. Set it to 0 to turn the cache off and empty it."""
        return self._lake.cache_bytes

    @cache_bytes.setter
    def cache_bytes(self, budget: int) -> None:
        if isinstance(budget, bool) or not isinstance(budget, int):
            raise TypeError(f"cache_bytes must be an int, not {type(budget).__name__}")
        if budget < 0:
            raise ValueError(f"cache_bytes must be 0 or more, not {budget}")
        self._lake.cache_bytes = budget

    @property
    def cached_bytes(self) -> int:
        """Bytes of Arrow memory the decoded-block cache holds now."""
        return self._lake.cached_bytes

    @property
    def fingerprint(self) -> str:
        """The map's fingerprint mode, ``"metadata"`` or ``"blake3"``."""
        return self._lake.fingerprint

    @property
    def stride(self) -> int:
        """The map's checkpoint stride (rows)."""
        return self._lake.stride

    @property
    def text_encoding(self) -> str:
        """How the map reads its CSV, TSV, PSV and TXT files: ``"utf-8"`` or ``"latin-1"``."""
        return self._lake.text_encoding

    @property
    def schema(self) -> pa.Schema:
        """The unified schema of the lake (see the module documentation), without the
        virtual ``_gid`` and ``_path`` columns."""
        if self._schema is None:
            self._schema = self._lake.schema()
        return self._schema

    def __len__(self) -> int:
        return self._lake.total_rows

    def entries(self) -> pa.Table:
        """The map table as stored, one row per file (``path``, ``format``, ``size_bytes``,
        ``mtime_ms``, ``row_count``, ``first_global_row``, ...)."""
        return self._lake.entries()

    def to_dict(self) -> Dict[str, Any]:
        """The whole map as the object ``bazan map show --json`` prints."""
        return json.loads(self._lake.to_json())

    def locate_row(self, g: int) -> Tuple[str, int]:
        """``(path, local_row)`` of global row ``g``, from the map alone (no file is read).
        A row outside ``[0, total_rows)`` raises :class:`bazan.OutOfRangeError` (an
        :class:`IndexError`)."""
        g = _int("g", g, -(2**63))
        path, local_row, _index, _format = self._lake.locate_row(g)
        return path, local_row

    # --- reading rows --------------------------------------------------------------------
    def slice(
        self,
        start: int,
        length: int,
        columns: Optional[Sequence[str]] = None,
        with_gid: bool = False,
        with_path: bool = False,
    ) -> pa.Table:
        """Global rows ``[start, start + length)``, clamped at the end of the lake, as a
        ``pyarrow.Table`` in the unified schema (or ``columns``, in that order). Only the
        blocks holding those rows are read. A file changed since the map was made raises
        :class:`bazan.StaleFileError` naming it."""
        start = _int("start", start, 0)
        length = _int("length", length, 0)
        return self._lake.slice(start, length, _columns(columns), bool(with_gid), bool(with_path))

    def take(
        self,
        indices: Any,
        columns: Optional[Sequence[str]] = None,
        with_gid: bool = False,
        with_path: bool = False,
    ) -> pa.Table:
        """Global rows ``indices`` (a sequence of ints, a numpy or Arrow integer array;
        negative numbers count from the end; repeats allowed) as a ``pyarrow.Table`` in the
        order given. Each needed block is decoded at most once per call; Arrow record batches
        and Parquet row groups touched again are kept decoded (see :attr:`cache_bytes`)."""
        return self._lake.take(_indices(indices), _columns(columns), bool(with_gid), bool(with_path))

    def __getitem__(self, key: Union[int, slice]) -> Any:
        if isinstance(key, slice):
            start, stop, step = key.indices(self._lake.total_rows)
            if step == 1:
                return self._lake.slice(start, max(stop - start, 0), None, False, False)
            return self._lake.take(pa.array(range(start, stop, step), type=pa.int64()), None, False, False)
        if isinstance(key, bool) or not isinstance(key, int):
            try:
                import operator

                key = operator.index(key)
            except TypeError:
                raise TypeError(f"LakeMap indices must be int or slice, not {type(key).__name__}") from None
        total = self._lake.total_rows
        if not -total <= key < total:
            raise OutOfRangeError(f"row {key} is out of range for a lake of {total} rows")
        rows = self._lake.take([key], None, False, False).to_pylist()
        return rows[0]

    def __iter__(self) -> Iterator[Dict[str, Any]]:
        for batch in self.iter_batches():
            yield from batch.to_pylist()

    def iter_batches(
        self,
        batch_size: int = DEFAULT_BATCH_SIZE,
        columns: Optional[Sequence[str]] = None,
        start: int = 0,
        stop: Optional[int] = None,
        *,
        with_gid: bool = False,
        with_path: bool = False,
        shuffle: Union[bool, str] = False,
        seed: int = 0,
        epoch: int = 0,
        shard: Tuple[int, int] = (0, 1),
        worker: Tuple[int, int] = (0, 1),
        drop_last: bool = False,
        buffer_rows: Optional[int] = None,
        state: Optional[Dict[str, Any]] = None,
    ) -> Any:
        """Global rows ``[start, stop)`` (``stop=None``: to the end) as a
        ``pyarrow.RecordBatchReader`` of at most ``batch_size`` rows per batch. Batches are
        decoded as they are pulled: memory is bounded by a batch and one file block, not by
        the lake.

        **Training epochs.** With any of the keyword arguments below the result is an
        :class:`bazan._epoch.EpochIterator` over one epoch of the whole lake (``start`` and
        ``stop`` then stay at their defaults): every row once per epoch over all shards, in
        batches of exactly ``batch_size`` rows (but a part's last one), in an order that is a
        pure function of ``(seed, epoch)``, the arguments and the map.

        - ``shuffle``: ``False`` (lake order), ``"block"`` (a random order of the map's
          blocks, then the rows of each window of ``buffer_rows`` rows shuffled together:
          sequential reads, memory bounded by the window) or ``"global"`` (a random
          permutation of every row, read with the batched ``take`` and its block cache).
        - ``seed``, ``epoch``: the order's key; each epoch has its own order.
        - ``shard=(rank, world_size)``: this data-parallel rank's share. Every rank gets the
          same number of batches: without ``drop_last`` the last ranks are padded with the
          first rows of the epoch order (fewer than ``world_size`` rows in all, as
          ``DistributedSampler`` does); with ``drop_last`` every batch is full and fewer than
          ``world_size * (batch_size + 1)`` rows are left out of the epoch.
        - ``worker=(index, num_workers)``: this worker's consecutive run of the rank's
          batches (what ``bazan.torch`` passes from ``get_worker_info()``).
        - ``buffer_rows``: rows of the read window (65,536 by default).
        - ``state``: a ``state_dict()`` of an iterator made with the same arguments: this one
          starts with the batch after it.

        Bad shards, an unknown column or a state from other arguments raise
        :class:`InvalidArgumentError`; a file changed since the map was made raises
        :class:`bazan.StaleFileError` naming it when its rows are read. See
        ``docs/training.md``.
        """
        epoch_args = (
            shuffle not in (False, None) or seed != 0 or epoch != 0 or tuple(shard) != (0, 1)
            or tuple(worker) != (0, 1) or drop_last or buffer_rows is not None or state is not None
        )
        if epoch_args:
            from . import _epoch

            if start != 0 or stop is not None:
                raise InvalidArgumentError(
                    "start and stop read a row range; an epoch (shuffle, seed, epoch, shard, "
                    "worker, drop_last, buffer_rows, state) always covers the whole lake"
                )
            if not isinstance(drop_last, bool):
                raise TypeError(f"drop_last must be a bool, not {type(drop_last).__name__}")
            stream = _bazan.epoch_stream(
                self._lake,
                _int("batch_size", batch_size, 1),
                columns=_columns(columns),
                with_gid=bool(with_gid),
                with_path=bool(with_path),
                shuffle=_epoch.shuffle_name(shuffle),
                seed=_epoch.seed_value("seed", seed),
                epoch=_epoch.seed_value("epoch", epoch),
                shard=_epoch.pair("shard", shard, "rank", "world_size"),
                worker=_epoch.pair("worker", worker, "index", "num_workers"),
                drop_last=drop_last,
                buffer_rows=_int("buffer_rows", _epoch.DEFAULT_BUFFER_ROWS if buffer_rows is None else buffer_rows, 1),
                state=_epoch.state_json(state),
            )
            return _epoch.EpochIterator(stream)
        batch_size = _int("batch_size", batch_size, 1)
        start = _int("start", start, 0)
        total = self._lake.total_rows
        stop = total if stop is None else min(_int("stop", stop, 0), total)
        stream = self._lake.scan(start, max(stop, start), batch_size, _columns(columns), bool(with_gid), bool(with_path))
        return pa.RecordBatchReader.from_batches(stream.schema, stream)

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        """The whole lake as an Arrow C stream (the Arrow PyCapsule interface)."""
        return self.iter_batches().__arrow_c_stream__(requested_schema)

    # --- checking the disk ---------------------------------------------------------------
    def doctor(
        self, fingerprint: Optional[str] = None, *, progress: _progress.ProgressArg = False
    ) -> DoctorReport:
        """Compares the map with the files on disk now (the Lake Doctor): healthy, modified,
        unindexed and missing files, with the map's fingerprint mode. ``fingerprint`` may
        name that mode; a ``"blake3"`` check needs a map made with ``fingerprint="blake3"``
        (a ``"metadata"`` map stores no digests)."""
        if fingerprint is not None:
            fingerprint = _fingerprint(fingerprint)
            if fingerprint != self.fingerprint:
                if fingerprint == "blake3":
                    raise InvalidArgumentError(
                        "fingerprint='blake3' needs a map made with fingerprint='blake3'; "
                        f"the map of {self.root} stores no digests (fingerprint {self.fingerprint!r})"
                    )
                raise InvalidArgumentError(
                    f"fingerprint={fingerprint!r}: the doctor checks a map with the mode it was "
                    f"made with ({self.fingerprint!r})"
                )
        callback = _progress.resolve(progress, "doctor")
        try:
            raw = json.loads(self._lake.doctor(callback))
        finally:
            _progress.close(callback)
        drift = set(raw["modified"]) | set(raw["missing"]) | {e["path"] for e in raw["errors"]}
        paths = self.entries().column("path").to_pylist()
        healthy = [p for p in paths if p not in drift]
        return DoctorReport(
            raw["fingerprint"],
            healthy,
            list(raw["modified"]),
            list(raw["unindexed"]),
            list(raw["missing"]),
            [{"path": e["path"], "kind": e["kind"], "message": e["message"]} for e in raw["errors"]],
        )

    def __repr__(self) -> str:
        return f"LakeMap(root={self.root!r}, files={self.total_files}, rows={self.total_rows})"


# --- dynamic handlers ---------------------------------------------------------------------


def _annotate(e: BaseException, name: str, path: str) -> None:
    note = f"in the bazan handler {name!r} for {path}"
    if hasattr(e, "add_note"):
        if note not in getattr(e, "__notes__", ()):
            e.add_note(note)
    else:  # Python < 3.11: the note is kept for programs that read it
        notes = list(getattr(e, "__notes__", []))
        if note not in notes:
            notes.append(note)
            try:
                e.__notes__ = notes  # type: ignore[attr-defined]
            except AttributeError:
                pass


def _to_reader(obj: Any, name: str, path: str) -> pa.RecordBatchReader:
    if isinstance(obj, pa.RecordBatchReader):
        return obj
    if isinstance(obj, pa.Table):
        return obj.to_reader()
    if isinstance(obj, pa.RecordBatch):
        return pa.RecordBatchReader.from_batches(obj.schema, [obj])
    if hasattr(obj, "__arrow_c_stream__"):
        return pa.RecordBatchReader.from_stream(obj)
    if hasattr(obj, "__arrow_c_array__"):
        batch = pa.record_batch(obj)
        return pa.RecordBatchReader.from_batches(batch.schema, [batch])
    raise TypeError(
        f"the read function of handler {name!r} returned {type(obj).__name__} for {path}; "
        "expected an Arrow table or stream (an object with __arrow_c_stream__)"
    )


def _batches(reader: pa.RecordBatchReader, name: str, path: str) -> Iterator[pa.RecordBatch]:
    try:
        for batch in reader:
            yield batch
    except Exception as e:
        _annotate(e, name, path)
        raise


_HANDLERS: Dict[str, str] = {}


def register_handler(
    extension: str,
    *,
    count_rows: Callable[[str], int],
    read: Callable[[str, int, Optional[int], Optional[List[str]]], Any],
    name: Optional[str] = None,
) -> None:
    """Registers Python functions as the handler of files ending in ``.extension`` for this
    process (a new extension, or one with a built-in handler, which it then overrides).

    - ``count_rows(path) -> int``: the rows of the file at ``path``;
    - ``read(path, start, length, columns)``: rows ``[start, start + length)`` of the file
      (``length`` is ``None`` for "to the end"; ``columns`` a list of names or ``None``) as
      any Arrow table or stream object (pyarrow, polars, arro3, DuckDB results, ...). It is
      also called once with ``length=0`` while mapping, for the file's schema.

    ``create_map`` then indexes such files with it (their map entries store no blocks), and
    ``slice``, ``take`` and ``iter_batches`` read them through it. ``name`` is the
    ``format`` stored in the map (default: the extension). An exception raised by either
    function propagates as itself, with the path in its notes, and no map is written.
    """
    if not isinstance(extension, str):
        raise TypeError(f"extension must be a str, not {type(extension).__name__}")
    if not callable(count_rows):
        raise TypeError(f"count_rows must be callable, not {type(count_rows).__name__}")
    if not callable(read):
        raise TypeError(f"read must be callable, not {type(read).__name__}")
    ext = extension.lstrip(".").lower()
    if name is None:
        name = ext
    elif not isinstance(name, str) or not name:
        raise InvalidArgumentError(f"name must be a non-empty str, not {name!r}")
    label = name

    def _count(path: str) -> int:
        try:
            n = count_rows(path)
        except Exception as e:
            _annotate(e, label, path)
            raise
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise TypeError(
                f"count_rows of handler {label!r} returned {n!r} for {path}; expected an int >= 0"
            )
        return n

    def _read(path: str, start: int, length: Optional[int], columns: Optional[List[str]]) -> Any:
        try:
            reader = _to_reader(read(path, start, length, columns), label, path)
        except Exception as e:
            _annotate(e, label, path)
            raise
        return reader.schema, _batches(reader, label, path)

    _bazan.register_handler(extension, name, _count, _read)
    _HANDLERS[ext] = name


def unregister_handler(extension: str) -> bool:
    """Removes the handler registered for ``.extension``; returns whether there was one.
    Files with a built-in handler go back to it."""
    if not isinstance(extension, str):
        raise TypeError(f"extension must be a str, not {type(extension).__name__}")
    _HANDLERS.pop(extension.lstrip(".").lower(), None)
    return _bazan.unregister_handler(extension)


def registered_handlers() -> Dict[str, str]:
    """The handlers registered in this process: extension -> handler name."""
    return {ext: _HANDLERS.get(ext, ext) for ext in _bazan.registered_extensions()}
