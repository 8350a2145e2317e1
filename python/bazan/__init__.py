"""Bazan: the Lake Map and Apache TsFile as a Python library, Arrow in and out.

- :mod:`bazan.lake`: map a directory of data files (Parquet, ORC, Avro, Arrow IPC, CSV/TSV,
  NDJSON/JSON, MsgPack, XLSX, TsFile, and formats you register) once, then read any global
  row range of the whole lake as ``pyarrow`` data by seeking straight to the right block;
  detect drift between the map and the disk.
- :mod:`bazan.tsfile`: describe, read and write Apache TsFile files.
- :func:`bazan.sql`: SQL (Apache DataFusion) over lakes, TsFiles and Arrow data.

Results are ``pyarrow.Table`` / ``pyarrow.RecordBatchReader`` objects, passed from Rust
without copying through the Arrow C data interface; every argument that takes data accepts
any object with ``__arrow_c_stream__`` (pyarrow, polars, DuckDB, arro3).

Errors are :class:`BazanError` subclasses (see :mod:`bazan._errors`).
"""

from . import lake, tsfile
from ._bazan import __version__
from ._errors import (
    BazanError,
    BazanIOError,
    CorruptFileError,
    InvalidArgumentError,
    NotFoundError,
    OutOfRangeError,
    PermissionDeniedError,
    StaleFileError,
    UnsupportedFormatError,
)
from .lake import (
    DoctorReport,
    LakeMap,
    UpdateReport,
    create_map,
    doctor_lake_map,
    load_map,
    register_handler,
    unregister_handler,
    update_map,
)
from .sql import sql

__all__ = [
    "BazanError",
    "BazanIOError",
    "CorruptFileError",
    "DoctorReport",
    "InvalidArgumentError",
    "LakeMap",
    "NotFoundError",
    "OutOfRangeError",
    "PermissionDeniedError",
    "StaleFileError",
    "UnsupportedFormatError",
    "__version__",
    "create_map",
    "doctor_lake_map",
    "lake",
    "load_map",
    "register_handler",
    "sql",
    "tsfile",
    "unregister_handler",
    "update_map",
    "UpdateReport",
]
