"""Apache TsFile (the columnar time-series file of Apache IoTDB) from Python: describe a file,
read a table or device as a ``pyarrow.Table``, and write Arrow data as a new file that the
official Apache TsFile readers read.

>>> import bazan.tsfile as ts
>>> ts.info("data.tsfile")["tables"]
>>> t = ts.read("data.tsfile", table="weather", columns=["time", "city", "temp"],
...             start_time=0, end_time=1_000)
>>> ts.write("out.tsfile", t, table="weather", time="time", tags=["city"])
"""

from __future__ import annotations

import os
from typing import Any, Dict, Mapping, Optional, Sequence, Union

import pyarrow as pa

from . import _bazan
from ._errors import InvalidArgumentError

__all__ = ["info", "read", "write"]

PathLike = Union[str, "os.PathLike[str]"]


def _path(path: Any, name: str = "path") -> str:
    if isinstance(path, (str, os.PathLike)):
        return os.fspath(path)
    raise TypeError(f"{name} must be a path (str or os.PathLike), not {type(path).__name__}")


def _names(value: Any, name: str) -> Optional[list]:
    if value is None:
        return None
    if isinstance(value, (str, bytes)):
        raise TypeError(f"{name} must be a list of names, not a single {type(value).__name__}")
    out = list(value)
    for v in out:
        if not isinstance(v, str):
            raise TypeError(f"{name} must hold str names, not {type(v).__name__}")
    return out


def _time(value: Any, name: str) -> Optional[int]:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int (the file's time unit), not {type(value).__name__}")
    return value


def info(path: PathLike) -> Dict[str, Any]:
    """The facts ``bazan tsfile info --json`` prints, as a dict: format version, file size,
    model (``"table"`` or ``"tree"``), tables with their columns, device and series counts,
    time range, properties and Bloom filter size."""
    return _bazan.tsfile_info(_path(path))


def read(
    path: PathLike,
    *,
    table: Optional[str] = None,
    device: Optional[str] = None,
    columns: Optional[Sequence[str]] = None,
    start_time: Optional[int] = None,
    end_time: Optional[int] = None,
    tags: Optional[Mapping[str, str]] = None,
) -> pa.Table:
    """The rows of one table (table model, ``table=``) or one device (tree model,
    ``device=`` its path) as a ``pyarrow.Table``: the same values as ``bazan tsfile query``.
    ``columns`` picks and orders columns (``"time"`` included); ``start_time`` and
    ``end_time`` bound the time range, inclusive; ``tags`` keeps the devices whose TAG
    columns equal the given values (table model).

    With neither ``table`` nor ``device``, a table-model file with exactly one table reads
    that table."""
    path = _path(path)
    if table is not None and not isinstance(table, str):
        raise TypeError(f"table must be a str, not {type(table).__name__}")
    if device is not None and not isinstance(device, str):
        raise TypeError(f"device must be a str, not {type(device).__name__}")
    if table is not None and device is not None:
        raise InvalidArgumentError("give table= (table model) or device= (tree model), not both")
    if table is None and device is None:
        tables = [t["name"] for t in info(path).get("tables", [])]
        if len(tables) != 1:
            raise InvalidArgumentError(
                "table= or device= is required"
                + (f" (tables: {', '.join(tables)})" if tables else " (a tree-model file: give device=)")
            )
        table = tables[0]
    tag_list = []
    if tags is not None:
        if not isinstance(tags, Mapping):
            raise TypeError(f"tags must be a mapping of TAG column to value, not {type(tags).__name__}")
        for k, v in tags.items():
            if not isinstance(k, str) or not isinstance(v, str):
                raise TypeError("tags must map str column names to str values")
            tag_list.append((k, v))
    return _bazan.tsfile_read(
        path,
        table=table,
        device=device,
        columns=_names(columns, "columns"),
        start_time=_time(start_time, "start_time"),
        end_time=_time(end_time, "end_time"),
        tags=tag_list,
    )


def write(
    path: PathLike,
    data: Any,
    *,
    table: str,
    time: str,
    tags: Sequence[str] = (),
    encodings: Optional[Mapping[str, str]] = None,
    compression: Optional[str] = None,
) -> int:
    """Writes ``data`` (any Arrow table or stream object: pyarrow, polars, DuckDB results,
    arro3, ...) as table ``table`` of a new table-model TsFile at ``path`` (replaced
    atomically when it exists); returns the rows written.

    ``time`` names the time column (integer or timestamp); ``tags`` the TAG columns, in
    order (stored as STRING); every other column is a FIELD. ``encodings`` maps FIELD
    columns to an encoding name (``"PLAIN"``, ``"RLE"``, ``"TS_2DIFF"``, ``"GORILLA"``, ...);
    ``compression`` is ``"UNCOMPRESSED"``, ``"SNAPPY"``, ``"GZIP"``, ``"LZ4"`` (the default),
    ``"ZSTD"`` or ``"LZMA2"``. Arrow types map as ``bazan tsfile import`` maps them; rows
    need not be sorted, but a timestamp repeated within a device is an error."""
    path = _path(path)
    if not isinstance(table, str):
        raise TypeError(f"table must be a str, not {type(table).__name__}")
    if not isinstance(time, str):
        raise TypeError(f"time must be a str, not {type(time).__name__}")
    tag_list = _names(tags, "tags") or []
    enc = []
    if encodings is not None:
        if not isinstance(encodings, Mapping):
            raise TypeError(f"encodings must be a mapping of column to encoding, not {type(encodings).__name__}")
        for k, v in encodings.items():
            if not isinstance(k, str) or not isinstance(v, str):
                raise TypeError("encodings must map str column names to str encoding names")
            enc.append((k, v))
    if compression is not None and not isinstance(compression, str):
        raise TypeError(f"compression must be a str, not {type(compression).__name__}")
    if not (hasattr(data, "__arrow_c_stream__") or hasattr(data, "__arrow_c_array__")):
        raise TypeError(
            f"data must be an Arrow table or stream (an object with __arrow_c_stream__), not {type(data).__name__}"
        )
    rows, _bytes = _bazan.tsfile_write(
        path, data, table=table, time=time, tags=tag_list, encodings=enc, compression=compression
    )
    return rows
