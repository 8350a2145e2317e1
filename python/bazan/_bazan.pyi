"""Type stubs of the extension module ``bazan._bazan`` (the Rust side of the package). The
public API is :mod:`bazan.lake` and :mod:`bazan.tsfile`, which wrap these."""

from os import PathLike
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Union

import pyarrow as pa

__version__: str

_Path = Union[str, PathLike[str]]
_Progress = Optional[Callable[[int, int, int, int], object]]

def create_map(
    root: _Path,
    *,
    stride: int,
    fingerprint: str,
    stats_columns: Optional[List[str]],
    skip_errors: bool,
    threads: Optional[int],
    progress: _Progress,
    encoding: str = "utf-8",
    storage_options: Optional[Dict[str, str]] = None,
    map: Optional[str] = None,
) -> Tuple[Lake, List[Tuple[str, str]], List[str]]:
    """Builds and writes the map of the lake at ``root``; returns it with the files left out
    and the warnings about the options."""

def update_map(
    root: _Path,
    *,
    skip_errors: bool,
    threads: Optional[int],
    progress: _Progress,
    storage_options: Optional[Dict[str, str]] = None,
    map: Optional[str] = None,
) -> Tuple[Lake, str]:
    """Updates the map of the lake at ``root``; returns it with the report of what changed
    (the ``bazan map update --json`` object, as JSON text)."""
def load_map(
    root: _Path, *, storage_options: Optional[Dict[str, str]] = None, map: Optional[str] = None
) -> Lake:
    """Loads the map of the lake at ``root`` (a folder or an object-store URL)."""

def register_handler(
    extension: str,
    name: str,
    count_rows: Callable[[str], int],
    read: Callable[[str, int, Optional[int], Optional[List[str]]], Tuple[pa.Schema, Iterator[pa.RecordBatch]]],
) -> None:
    """Registers Python callables as the handler of ``extension``."""

def unregister_handler(extension: str) -> bool:
    """Removes the handler of ``extension``; true when there was one."""

def registered_extensions() -> List[str]:
    """The extensions with a registered handler."""

class Lake:
    """A loaded Lake Map."""

    @property
    def root(self) -> str: ...
    @property
    def total_rows(self) -> int: ...
    @property
    def total_files(self) -> int: ...
    @property
    def total_bytes(self) -> int: ...
    @property
    def cache_bytes(self) -> int: ...
    @cache_bytes.setter
    def cache_bytes(self, budget: int) -> None: ...
    @property
    def cached_bytes(self) -> int: ...
    @property
    def fingerprint(self) -> str: ...
    @property
    def stride(self) -> int: ...
    @property
    def text_encoding(self) -> str: ...
    @property
    def map_path(self) -> str: ...
    def schema(self) -> pa.Schema: ...
    def scan_schema(
        self, columns: Optional[List[str]] = None, with_gid: bool = False, with_path: bool = False
    ) -> pa.Schema: ...
    def entries(self) -> pa.Table: ...
    def to_json(self) -> str: ...
    def locate_row(self, g: int) -> Tuple[str, int, int, str]: ...
    def slice(
        self,
        start: int,
        length: int,
        columns: Optional[List[str]] = None,
        with_gid: bool = False,
        with_path: bool = False,
    ) -> pa.Table: ...
    def take(
        self,
        indices: Any,
        columns: Optional[List[str]] = None,
        with_gid: bool = False,
        with_path: bool = False,
    ) -> pa.Table: ...
    def scan(
        self,
        start: int,
        stop: int,
        batch_size: int,
        columns: Optional[List[str]] = None,
        with_gid: bool = False,
        with_path: bool = False,
    ) -> BatchStream: ...
    def doctor(self, progress: _Progress = None) -> str: ...

class BatchStream:
    """A stream of record batches of a lake."""

    @property
    def schema(self) -> pa.Schema: ...
    def __iter__(self) -> BatchStream: ...
    def __next__(self) -> pa.RecordBatch: ...
    def close(self) -> None: ...

def epoch_stream(
    lake: Lake,
    batch_size: int,
    *,
    columns: Optional[List[str]] = None,
    with_gid: bool = False,
    with_path: bool = False,
    shuffle: str = "none",
    seed: int = 0,
    epoch: int = 0,
    shard: Tuple[int, int] = (0, 1),
    worker: Tuple[int, int] = (0, 1),
    drop_last: bool = False,
    buffer_rows: int = 65536,
    state: Optional[str] = None,
) -> EpochStream:
    """A reader of one epoch of ``lake`` (``state``: JSON text from ``state_json``)."""

def balanced_ranges(lake: Lake, parts: int) -> List[Tuple[int, int]]:
    """The lake cut into at most ``parts`` row ranges at block boundaries, balanced by rows."""

class EpochStream:
    """One epoch of a lake for one rank and worker."""

    @property
    def schema(self) -> pa.Schema: ...
    @property
    def num_batches(self) -> int: ...
    @property
    def num_rows(self) -> int: ...
    def state_json(self) -> str: ...
    def __iter__(self) -> EpochStream: ...
    def __next__(self) -> pa.RecordBatch: ...
    def close(self) -> None: ...

def tsfile_info(path: _Path) -> Dict[str, Any]:
    """The ``bazan tsfile info --json`` object of a file."""

def tsfile_read(
    path: _Path,
    *,
    table: Optional[str] = None,
    device: Optional[str] = None,
    columns: Optional[List[str]] = None,
    start_time: Optional[int] = None,
    end_time: Optional[int] = None,
    tags: Sequence[Tuple[str, str]] = ...,
) -> pa.Table:
    """The rows of one table or device."""

def tsfile_write(
    path: _Path,
    data: Any,
    *,
    table: str,
    time: str,
    tags: List[str],
    encodings: List[Tuple[str, str]],
    compression: Optional[str],
) -> Tuple[int, int]:
    """Writes Arrow data as one table of a new TsFile; returns ``(rows, bytes)``."""

def sql(
    query: str,
    tables: Dict[str, Any],
    *,
    threads: Optional[int] = None,
    trust_map: bool = False,
    workers: Optional[List[str]] = None,
    stream: bool = False,
) -> Union[pa.Table, pa.RecordBatchReader]:
    """Runs ``query`` over ``tables`` (name -> Lake, path or Arrow stream object); answers
    from the map are checked fresh unless ``trust_map``; ``workers`` runs it on ``bazan
    worker`` processes; ``stream`` returns a reader of the running query's batches."""
    ...

def run_cli(args: List[str]) -> int:
    """Runs the ``bazan`` command line; returns its exit code."""
