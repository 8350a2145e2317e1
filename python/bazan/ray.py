"""Ray Data over a lake, without a copy: :func:`read_lake` returns a ``ray.data.Dataset``
whose read tasks are block ranges of the map.

>>> import ray, bazan.ray
>>> ds = bazan.ray.read_lake("data/", columns=["id", "text"])
>>> ds.count()                       # from the map: no file is read
>>> ds.map_batches(fn, batch_format="pyarrow").take_batch(256)

Each read task is a run of consecutive blocks of the map (row groups, stripes, record
batches, checkpoint strides) cut so that the tasks hold about the same number of rows; a task
reads its rows with the facade (``LakeMap.iter_batches``) in the Ray worker, where the map is
reopened from its pickle (root, options, cache budget). Every task's row count and the schema
come from the map. This module imports ``ray`` only when :func:`read_lake` is called.
"""

from __future__ import annotations

from typing import Any, Iterator, List, Optional, Sequence

import pyarrow as pa

__all__ = ["LakeDatasource", "read_lake"]

#: Rows per block a read task hands to Ray.
DEFAULT_BATCH_ROWS = 65536


def _read_range(lake: Any, start: int, stop: int, columns: Optional[List[str]], batch_rows: int) -> Iterator[pa.Table]:
    for batch in lake.iter_batches(batch_rows, columns, start, stop):
        yield pa.Table.from_batches([batch])


def _datasource_class() -> type:
    from ray.data.block import BlockMetadata
    from ray.data.datasource import Datasource, ReadTask

    class LakeDatasource(Datasource):
        """A Ray Data ``Datasource`` over a lake map: read tasks are block ranges of the map
        balanced by rows (at most ``parallelism`` of them)."""

        def __init__(self, lake: Any, columns: Optional[Sequence[str]] = None,
                     batch_rows: int = DEFAULT_BATCH_ROWS) -> None:
            super().__init__()
            from .lake import LakeMap, load_map

            self._lake = lake if isinstance(lake, LakeMap) else load_map(lake)
            self._columns = None if columns is None else list(columns)
            self._batch_rows = int(batch_rows)
            # Checks the columns now (an unknown one raises InvalidArgumentError).
            self._schema = self._lake._lake.scan_schema(self._columns, False, False)

        def get_name(self) -> str:
            """The name Ray shows for this source."""
            return "BazanLake"

        def estimate_inmemory_data_size(self) -> Optional[int]:
            """The lake's bytes on disk, from the map."""
            return self._lake.total_bytes

        def get_read_tasks(self, parallelism: int, per_task_row_limit: Optional[int] = None,
                           data_context: Any = None) -> List[Any]:
            """Read tasks of row ranges balanced by rows and cut at block boundaries, each
            with its row count and schema from the map."""
            from . import _bazan

            lake = self._lake
            total = max(lake.total_rows, 1)
            tasks = []
            for start, stop in _bazan.balanced_ranges(lake._lake, max(int(parallelism), 1)):
                meta = BlockMetadata(
                    num_rows=stop - start,
                    size_bytes=lake.total_bytes * (stop - start) // total,
                    input_files=None,
                    exec_stats=None,
                )
                tasks.append(
                    ReadTask(
                        lambda s=start, e=stop: _read_range(lake, s, e, self._columns, self._batch_rows),
                        meta,
                        schema=self._schema,
                        per_task_row_limit=per_task_row_limit,
                    )
                )
            return tasks

    LakeDatasource.__module__ = __name__
    LakeDatasource.__qualname__ = "LakeDatasource"
    return LakeDatasource


def read_lake(lake: Any, *, columns: Optional[Sequence[str]] = None, parallelism: int = -1,
              batch_rows: int = DEFAULT_BATCH_ROWS, **read_args: Any) -> Any:
    """The rows of ``lake`` (a :class:`bazan.lake.LakeMap` or a root path) as a
    ``ray.data.Dataset`` in the unified schema (or ``columns``, in that order).

    ``parallelism``: the number of read tasks at most (``-1``: Ray's choice); the tasks are
    runs of blocks holding about the same number of rows. ``batch_rows``: rows per block
    handed to Ray. Other keyword arguments go to ``ray.data.read_datasource`` (``num_cpus``,
    ``concurrency``, ``ray_remote_args``, ...)."""
    import ray.data

    source = __getattr__("LakeDatasource")(lake, columns, batch_rows)
    if parallelism is not None and parallelism > 0:
        read_args.setdefault("override_num_blocks", parallelism)
    return ray.data.read_datasource(source, **read_args)


def __getattr__(name: str) -> Any:
    if name == "LakeDatasource":
        cls = globals().get("_LakeDatasource")
        if cls is None:
            cls = _datasource_class()
            globals()["_LakeDatasource"] = cls
            globals()["LakeDatasource"] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
