"""SQL over lakes, TsFiles and Arrow data with Apache DataFusion (the ``bazan-sql`` crate).

>>> import bazan
>>> m = bazan.lake.load_map("testdata/lake")
>>> bazan.sql("select _path, count(*) as n from lake group by _path", lake=m)

A lake table has the lake's unified schema plus ``_gid`` (the global row) and ``_path``;
``count(*)`` comes from the map without reading a file (each file checked unchanged
first), filters on ``_gid`` and ``_path`` read only the blocks and files they name, and
min/max statistics skip files. Strings of lake tables and ``_path`` come back as
``string_view`` (Arrow's string views, the type the query computes in).

``stream=True`` returns a ``pyarrow.RecordBatchReader`` instead of a table: its batches
come as the query produces them, so a query over a large lake is read in the memory of a
few batches.
"""

from os import PathLike
from typing import Any, Optional, Sequence, Union

import pyarrow as pa

from . import _bazan
from .lake import LakeMap

__all__ = ["sql"]


def sql(
    query: str,
    *,
    threads: Optional[int] = None,
    trust_map: bool = False,
    workers: Optional[Sequence[str]] = None,
    stream: bool = False,
    **tables: Any,
) -> Union[pa.Table, pa.RecordBatchReader]:
    """Runs ``query`` and returns its rows as a ``pyarrow.Table``, or with ``stream=True``
    as a ``pyarrow.RecordBatchReader`` whose batches come as the query produces them (the
    query is planned, and a bad query raises, before it returns; an error of the run, such
    as a file changed since it was mapped, is raised by the reader as pyarrow's
    ``ArrowException`` naming the file; Ctrl-C takes effect between batches).

    Each keyword names a table: a :class:`bazan.lake.LakeMap`, a path (a lake directory
    with a map, or a ``.tsfile`` — a TsFile with several tables is registered as
    ``NAME_TABLE`` for each), or any object with ``__arrow_c_stream__`` (pyarrow, polars,
    DuckDB results; read once, when the query starts). ``threads`` bounds the query's
    workers (``None``: every core).

    Answers that come from the map alone (``count(*)``, ``_gid`` and ``_path``, files
    skipped by their statistics) are checked first: every file they stand for must still
    have the size and mtime the map stored, else :class:`bazan.StaleFileError` names it, as a
    read of its rows would. ``trust_map=True`` skips that check and answers from the map.

    ``workers`` runs the query on ``bazan worker`` processes (``"http://HOST:PORT"`` or
    ``"HOST:PORT"`` each), which must see the lakes at the same paths; ``threads`` is then
    the partitions of each task. A worker that does not answer is left out with a
    ``UserWarning``; one of another bazan version refuses the query.

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
    if not isinstance(trust_map, bool):
        raise TypeError(f"trust_map must be a bool, not {type(trust_map).__name__}")
    if not isinstance(stream, bool):
        raise TypeError(f"stream must be a bool, not {type(stream).__name__}")
    if workers is not None:
        if isinstance(workers, str) or not all(isinstance(w, str) for w in workers):
            raise TypeError("workers must be a sequence of str")
        workers = list(workers)
        if not workers:
            raise ValueError("workers must name at least one worker")
    return _bazan.sql(
        query, resolved, threads=threads, trust_map=trust_map, workers=workers, stream=stream
    )
