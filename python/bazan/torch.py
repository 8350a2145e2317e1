"""PyTorch datasets over a lake, without converting it to anything.

>>> from bazan.torch import LakeDataset, LakeIterableDataset, collate
>>> ds = LakeIterableDataset("data/", batch_size=256, shuffle="block", format="torch")
>>> loader = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=4)
>>> for epoch in range(3):
...     ds.set_epoch(epoch)
...     for batch in loader: ...                   # a dict of tensors per batch

>>> maps = LakeDataset("data/", format="torch")   # map-style: any sampler
>>> loader = DataLoader(maps, batch_size=256, shuffle=True, collate_fn=collate, num_workers=2)

- :class:`LakeIterableDataset` is the epoch iterator of ``LakeMap.iter_batches``: every row
  once per epoch over the data-parallel ranks (``shard``, from ``torch.distributed`` when it
  is initialized) and over the DataLoader workers of each rank (from
  ``torch.utils.data.get_worker_info()``), with ``set_epoch`` and a resumable position.
- :class:`LakeDataset` is map-style: ``ds[i]`` is one row, and ``__getitems__`` reads the
  whole batch a ``BatchSampler`` asks for with one ``take`` (pass ``collate_fn=collate``).

``format="arrow"`` yields ``pyarrow`` record batches (tables for ``LakeDataset``);
``format="torch"`` yields a dict of column name to a tensor for numeric, boolean and temporal
columns (a tensor over Arrow's own buffer, without a copy, when the column has no nulls;
tensors made so are read-only in fact: do not write into them) and to a list for the others
(strings stay lists).

This module imports ``torch`` only when one of its classes or functions is used. The lake may
be given as a :class:`bazan.lake.LakeMap` or as a root path; it pickles to what reopens it, so
workers started with "fork", "spawn" or "forkserver" all read it.
"""

from __future__ import annotations

import warnings
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union

import pyarrow as pa

__all__ = ["LakeDataset", "LakeIterableDataset", "collate", "to_torch"]


def _torch() -> Any:
    try:
        import torch
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("bazan.torch needs PyTorch: pip install torch") from e
    return torch


def _lake(lake: Any) -> Any:
    from .lake import LakeMap, load_map

    if isinstance(lake, LakeMap):
        return lake
    return load_map(lake)


_FORMATS = ("arrow", "torch")


def _format(value: Any) -> str:
    if value not in _FORMATS:
        from ._errors import InvalidArgumentError

        raise InvalidArgumentError(f"format must be 'arrow' or 'torch', not {value!r}")
    return value


def _column_tensor(torch: Any, col: pa.Array) -> Any:
    t = col.type
    if pa.types.is_timestamp(t) or pa.types.is_duration(t) or pa.types.is_date64(t) or pa.types.is_time64(t):
        col = col.view(pa.int64())
        t = col.type
    elif pa.types.is_date32(t) or pa.types.is_time32(t):
        col = col.view(pa.int32())
        t = col.type
    if pa.types.is_integer(t) or pa.types.is_floating(t):
        if col.null_count == 0:
            return torch.from_numpy(col.to_numpy(zero_copy_only=True))
        # Nulls: NaN in a float tensor (a copy).
        return torch.from_numpy(col.to_numpy(zero_copy_only=False).astype("float64", copy=False))
    if pa.types.is_boolean(t) and col.null_count == 0:
        # Arrow packs booleans in bits: one copy to bytes.
        return torch.from_numpy(col.to_numpy(zero_copy_only=False))
    return None


def to_torch(batch: Union[pa.RecordBatch, pa.Table]) -> Dict[str, Any]:
    """A batch as a dict of column name to a tensor (numeric, boolean and temporal columns;
    zero-copy where Arrow's buffer allows it, see the module documentation) or to a list of
    Python values (the other columns)."""
    torch = _torch()
    out: Dict[str, Any] = {}
    with warnings.catch_warnings():
        # Arrow buffers are immutable: torch warns about every tensor made over one.
        warnings.filterwarnings("ignore", message="The given NumPy array is not writable")
        for name, col in zip(batch.schema.names, batch.columns):
            if isinstance(col, pa.ChunkedArray):
                col = col.combine_chunks()
            tensor = _column_tensor(torch, col)
            out[name] = tensor if tensor is not None else col.to_pylist()
    return out


def collate(batch: Any) -> Any:
    """The ``collate_fn`` for :class:`LakeDataset`: a batch it read whole (a table or a dict
    of tensors) passes as it is; anything else goes to torch's ``default_collate``."""
    if isinstance(batch, (pa.Table, pa.RecordBatch, dict)):
        return batch
    return _torch().utils.data.default_collate(batch)


def _rank_shard(shard: Optional[Tuple[int, int]]) -> Tuple[int, int]:
    if shard is not None:
        return tuple(shard)  # type: ignore[return-value]
    torch = _torch()
    dist = getattr(torch, "distributed", None)
    if dist is not None and dist.is_available() and dist.is_initialized():
        return (dist.get_rank(), dist.get_world_size())
    return (0, 1)


def _resume_plan(done: int, counts: Sequence[int]) -> Tuple[List[int], int]:
    """Where the workers of a DataLoader are after it returned ``done`` batches: the batches
    each worker had returned, and the worker whose batch comes next. A DataLoader takes one
    batch from each worker in turn, skipping the workers that have run out."""
    taken = [0] * len(counts)
    left = done
    while True:
        active = [i for i, c in enumerate(counts) if taken[i] < c]
        if not active:
            return taken, 0
        if left == 0:
            return taken, active[0]
        # Whole rounds over the active workers at once.
        rounds = min(left // len(active), min(counts[i] - taken[i] for i in active))
        if rounds == 0:
            for i in active[:left]:
                taken[i] += 1
            return taken, active[left]
        for i in active:
            taken[i] += rounds
        left -= rounds * len(active)


def _build() -> Dict[str, type]:
    torch = _torch()
    base_map = torch.utils.data.Dataset
    base_iter = torch.utils.data.IterableDataset

    class LakeDataset(base_map):  # type: ignore[misc,valid-type]
        """Map-style dataset over the rows of a lake: ``len(ds)`` rows, ``ds[i]`` one row
        (a dict), and ``ds.__getitems__(indices)`` the rows a ``BatchSampler`` chose, read
        with one ``take`` (a ``pyarrow.Table``, or a dict of tensors with
        ``format="torch"``). Use ``collate_fn=bazan.torch.collate``."""

        def __init__(
            self,
            lake: Any,
            columns: Optional[Sequence[str]] = None,
            *,
            format: str = "arrow",
            with_gid: bool = False,
        ) -> None:
            self.lake = _lake(lake)
            self.columns = None if columns is None else list(columns)
            self.format = _format(format)
            self.with_gid = bool(with_gid)

        def __len__(self) -> int:
            return len(self.lake)

        def __getitems__(self, indices: Sequence[int]) -> Any:
            table = self.lake.take(list(indices), self.columns, with_gid=self.with_gid)
            return to_torch(table) if self.format == "torch" else table

        def __getitem__(self, index: int) -> Any:
            table = self.lake.take([index], self.columns, with_gid=self.with_gid)
            if self.format == "torch":
                return {k: v[0] for k, v in to_torch(table).items()}
            return table.to_pylist()[0]

        def __repr__(self) -> str:
            return f"LakeDataset({self.lake!r}, format={self.format!r})"

    class LakeIterableDataset(base_iter):  # type: ignore[misc,valid-type]
        """One epoch of a lake per iteration, in batches (use ``DataLoader(ds,
        batch_size=None, ...)``): the rows of this rank (``shard=(rank, world_size)``, by
        default from ``torch.distributed`` when initialized, else the whole lake), split
        between the DataLoader's workers. Every row once per epoch over all ranks and
        workers, every rank the same number of batches; ``set_epoch(e)`` before each epoch
        gives it its own order. ``len(ds)`` is the number of batches of this rank.

        Resuming: after ``k`` batches of an epoch, ``ds.load_state_dict({"epoch": e,
        "batches": k})`` makes the next iteration return exactly the batches after the
        first ``k`` (for the worker count it is iterated with; ``state_dict(k)`` builds
        that dict)."""

        def __init__(
            self,
            lake: Any,
            batch_size: int,
            *,
            columns: Optional[Sequence[str]] = None,
            shuffle: Union[bool, str] = "block",
            seed: int = 0,
            shard: Optional[Tuple[int, int]] = None,
            drop_last: bool = False,
            buffer_rows: Optional[int] = None,
            format: str = "arrow",
            with_gid: bool = False,
            with_path: bool = False,
        ) -> None:
            self.lake = _lake(lake)
            self.batch_size = batch_size
            self.columns = None if columns is None else list(columns)
            self.shuffle = shuffle
            self.seed = seed
            self.shard = _rank_shard(shard)
            self.drop_last = drop_last
            self.buffer_rows = buffer_rows
            self.format = _format(format)
            self.with_gid = with_gid
            self.with_path = with_path
            self.epoch = 0
            self._resume = 0
            # Checks every argument now, in the main process.
            self._iterator((0, 1))

        def _iterator(self, worker: Tuple[int, int], state: Optional[Dict[str, Any]] = None) -> Any:
            return self.lake.iter_batches(
                self.batch_size,
                self.columns,
                with_gid=self.with_gid,
                with_path=self.with_path,
                shuffle=self.shuffle,
                seed=self.seed,
                epoch=self.epoch,
                shard=self.shard,
                worker=worker,
                drop_last=self.drop_last,
                buffer_rows=self.buffer_rows,
                state=state,
            )

        def set_epoch(self, epoch: int) -> None:
            """The epoch of the next iterations (its own order), from its first batch."""
            self.epoch = epoch
            self._resume = 0

        def state_dict(self, batches: int) -> Dict[str, int]:
            """The resume point after ``batches`` batches of the current epoch."""
            return {"epoch": self.epoch, "batches": int(batches)}

        def load_state_dict(self, state: Dict[str, int]) -> None:
            """Makes the next iteration start after ``state["batches"]`` batches of epoch
            ``state["epoch"]``."""
            self.epoch = state["epoch"]
            self._resume = int(state["batches"])

        def __len__(self) -> int:
            return len(self._iterator((0, 1)))

        def __iter__(self) -> Iterator[Any]:
            info = torch.utils.data.get_worker_info()
            worker = (info.id, info.num_workers) if info is not None else (0, 1)
            if self._resume:
                # The DataLoader starts again with its worker 0: worker p of this run reads
                # the batches of worker p + next of the interrupted run, from where that one
                # had stopped, so that the batches come out in the uninterrupted order.
                k = worker[1]
                counts = [len(self._iterator((i, k))) for i in range(k)]
                taken, nxt = _resume_plan(self._resume, counts)
                worker = ((worker[0] + nxt) % k, k)
                it = self._iterator(worker)
                if taken[worker[0]]:
                    state = it.state_dict()
                    state["position"] = taken[worker[0]]
                    it = self._iterator(worker, state)
            else:
                it = self._iterator(worker)
            for batch in it:
                yield to_torch(batch) if self.format == "torch" else batch

        def __repr__(self) -> str:
            return (
                f"LakeIterableDataset({self.lake!r}, batch_size={self.batch_size}, "
                f"shuffle={self.shuffle!r}, shard={self.shard}, epoch={self.epoch})"
            )

    for cls in (LakeDataset, LakeIterableDataset):
        cls.__module__ = __name__
        cls.__qualname__ = cls.__name__
    return {"LakeDataset": LakeDataset, "LakeIterableDataset": LakeIterableDataset}


def __getattr__(name: str) -> Any:
    # The dataset classes derive from torch's, so they are made on first use (importing
    # torch then, not when bazan.torch is imported).
    if name in ("LakeDataset", "LakeIterableDataset"):
        classes = _build()
        globals().update(classes)
        return classes[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
