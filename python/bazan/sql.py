"""SQL over lakes, TsFiles and Arrow data with Apache DataFusion (the ``bazan-sql`` crate).

>>> import bazan
>>> m = bazan.lake.load_map("testdata/lake")
>>> bazan.sql("select _path, count(*) as n from lake group by _path", lake=m)

A lake table has the lake's unified schema plus ``_gid`` (the global row) and ``_path``;
``count(*)`` comes from the map without reading a file, filters on ``_gid`` and ``_path``
read only the blocks and files they name, and min/max statistics skip files.
"""

from os import PathLike
from typing import Any, Optional, Union

import pyarrow as pa

from . import _bazan
from .lake import LakeMap

__all__ = ["sql"]


def sql(query: str, *, threads: Optional[int] = None, **tables: Any) -> pa.Table:
    """Runs ``query`` and returns its rows as a ``pyarrow.Table``.

    Each keyword names a table: a :class:`bazan.lake.LakeMap`, a path (a lake directory
    with a map, or a ``.tsfile`` — a TsFile with several tables is registered as
    ``NAME_TABLE`` for each), or any object with ``__arrow_c_stream__`` (pyarrow, polars,
    DuckDB results; read once, when the query starts). ``threads`` bounds the query's
    workers (``None``: every core).

    A query that does not parse or plan raises :class:`bazan.InvalidArgumentError` (a
    ``ValueError``) with DataFusion's message; a file changed since its map was made raises
    :class:`bazan.StaleFileError`. The GIL is released while the query runs.
    """
    if not isinstance(query, str):
        raise TypeError(f"query must be a str, not {type(query).__name__}")
    if threads is not None and (not isinstance(threads, int) or isinstance(threads, bool)):
        raise TypeError(f"threads must be an int, not {type(threads).__name__}")
    resolved = {}
    for name, value in tables.items():
        if isinstance(value, LakeMap):
            value = value._lake
        elif isinstance(value, (str, PathLike)):
            value = str(value)
        resolved[name] = value
    return _bazan.sql(query, resolved, threads=threads)
