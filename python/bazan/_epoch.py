"""Epoch iteration of a lake (``LakeMap.iter_batches`` with the epoch arguments): the
iterator class, argument checks, and the reopening of a map in a child process.

The rules (the epoch order, the shards, the remainder, the two shuffles and their cost) are
in ``docs/training.md`` and in the documentation of ``crates/bazan/src/epoch/mod.rs``.
"""

from __future__ import annotations

import json
import operator
from typing import Any, Dict, Iterator, Optional, Tuple

import pyarrow as pa

from ._errors import InvalidArgumentError

#: Rows of the read window of ``shuffle="block"`` (and of the unshuffled epoch) by default.
DEFAULT_BUFFER_ROWS = 65536

_SHUFFLES = {False: "none", None: "none", "none": "none", "block": "block", "global": "global"}


def shuffle_name(shuffle: Any) -> str:
    """The extension's name of a ``shuffle`` argument (``False``, ``"block"``,
    ``"global"``); ``True`` means ``"global"``."""
    if shuffle is True:
        return "global"
    try:
        return _SHUFFLES[shuffle]
    except (KeyError, TypeError):
        raise InvalidArgumentError(
            f"shuffle must be False, 'block' or 'global', not {shuffle!r}"
        ) from None


def pair(name: str, value: Any, first: str, second: str) -> Tuple[int, int]:
    """A ``(index, count)`` argument: two ints, ``0 <= index < count``."""
    try:
        a, b = value
        a, b = operator.index(a), operator.index(b)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a pair of ints ({first}, {second}), not {value!r}") from None
    if isinstance(value, (str, bytes)):
        raise TypeError(f"{name} must be a pair of ints ({first}, {second}), not {value!r}")
    if b < 1:
        raise InvalidArgumentError(f"{name}: {second} must be at least 1, not {b}")
    if not 0 <= a < b:
        raise InvalidArgumentError(f"{name}: {first} {a} is out of range for {second} {b} (0 to {b - 1})")
    return int(a), int(b)


def seed_value(name: str, value: Any) -> int:
    """A seed or epoch number: an int, taken modulo 2**64 (negative seeds are allowed)."""
    if isinstance(value, bool):
        raise TypeError(f"{name} must be an int, not bool")
    try:
        v = operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an int, not {type(value).__name__}") from None
    return int(v) % (1 << 64)


class EpochIterator:
    """One epoch of a lake for one rank (and worker), as ``pyarrow.RecordBatch`` es of
    ``batch_size`` rows (a part's last batch may be shorter unless ``drop_last``).

    ``state_dict()`` after any batch is a small dict; ``LakeMap.iter_batches(..., state=s)``
    with the same arguments goes on with exactly the next batch. ``len(it)`` is the number
    of batches of this part, ``position`` the number already returned. The iterator also
    reads like a ``pyarrow.RecordBatchReader`` (``schema``, ``read_next_batch``,
    ``read_all``, ``__arrow_c_stream__``).
    """

    __slots__ = ("_stream", "_schema")

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self._schema: Optional[pa.Schema] = None

    @property
    def schema(self) -> pa.Schema:
        """The schema of every batch."""
        if self._schema is None:
            self._schema = self._stream.schema
        return self._schema

    @property
    def num_rows(self) -> int:
        """Rows of this part of the epoch (the wrap-around padding included)."""
        return self._stream.num_rows

    @property
    def position(self) -> int:
        """Batches already returned."""
        return self.state_dict()["position"]

    def __len__(self) -> int:
        return self._stream.num_batches

    def __iter__(self) -> Iterator[pa.RecordBatch]:
        return self

    def __next__(self) -> pa.RecordBatch:
        return next(self._stream)

    def read_next_batch(self) -> pa.RecordBatch:
        """The next batch; ``StopIteration`` at the end."""
        return next(self._stream)

    def read_all(self) -> pa.Table:
        """Every remaining batch as one table."""
        return pa.Table.from_batches(list(self), schema=self.schema)

    def state_dict(self) -> Dict[str, Any]:
        """Where the iterator is: the arguments that fix the order (``shuffle``, ``seed``,
        ``epoch``, ``shard``, ``worker``, ``batch_size``, ``drop_last``, ``buffer_rows``), the
        lake's ``total_rows``, and ``position`` (batches returned). Plain JSON data."""
        state = json.loads(self._stream.state_json())
        state["shard"] = tuple(state["shard"])
        state["worker"] = tuple(state["worker"])
        return state

    def close(self) -> None:
        """Stops the iterator (the next ``next()`` raises ``StopIteration``)."""
        self._stream.close()

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        """The remaining batches as an Arrow C stream."""
        reader = pa.RecordBatchReader.from_batches(self.schema, self)
        return reader.__arrow_c_stream__(requested_schema)

    def __repr__(self) -> str:
        s = self.state_dict()
        return (
            f"EpochIterator(shuffle={s['shuffle']!r}, seed={s['seed']}, epoch={s['epoch']}, "
            f"shard={s['shard']}, worker={s['worker']}, batch {s['position']} of {len(self)})"
        )


def state_json(state: Any) -> Optional[str]:
    """The extension's form of a ``state=`` argument (a ``state_dict()``), or ``None``."""
    if state is None:
        return None
    if not isinstance(state, dict):
        raise TypeError(f"state must be a dict from state_dict(), not {type(state).__name__}")
    s = dict(state)
    for key in ("shard", "worker"):
        if key in s and isinstance(s[key], tuple):
            s[key] = list(s[key])
    return json.dumps(s)
