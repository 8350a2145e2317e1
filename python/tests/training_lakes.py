"""Lakes and helpers shared by the training-loop tests (test_training.py, test_ray.py)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Dict, List, Sequence

import pyarrow as pa
import pyarrow.parquet as pq


def varied_lake(root: Path) -> Path:
    """A lake whose blocks have very different sizes: one Parquet row, Parquet row groups of
    13 and of 5,000 rows, Arrow IPC record batches of 2 to 3,000 rows, CSV checkpoints every
    100 rows (map it with ``stride=100``), an empty file and NDJSON lines. Files sort in the
    order written, and column ``id`` is the global row number."""
    root.mkdir(parents=True)
    next_id = [0]

    def table(n: int) -> pa.Table:
        start = next_id[0]
        next_id[0] += n
        ids = list(range(start, start + n))
        return pa.table(
            {
                "id": pa.array(ids, pa.int64()),
                "x": pa.array([i * 0.5 for i in ids], pa.float64()),
                "name": pa.array([f"row{i}" for i in ids], pa.string()),
            }
        )

    pq.write_table(table(1), root / "a_one.parquet")
    pq.write_table(table(130), root / "b_groups13.parquet", row_group_size=13)
    pq.write_table(table(12_000), root / "c_groups5000.parquet", row_group_size=5000)
    parts = [table(n) for n in (2, 3000, 17, 900)]
    with pa.ipc.new_file(str(root / "d_batches.arrow"), parts[0].schema) as w:
        for t in parts:
            w.write_table(t)
    rows = table(2500)
    lines = ["id,x,name"] + [f"{i},{x},{s}" for i, x, s in zip(*(rows.column(c).to_pylist() for c in ("id", "x", "name")))]
    (root / "e_rows.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (root / "f_empty.csv").write_text("id,x,name\n", encoding="utf-8")
    rows = table(333)
    (root / "g_lines.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in rows.to_pylist()), encoding="utf-8"
    )
    return root


def gids(batch) -> List[int]:
    """The ``_gid`` column of a batch (pyarrow) or of a dict of tensors."""
    if isinstance(batch, dict):
        return [int(v) for v in batch["_gid"]]
    return batch.column("_gid").to_pylist()


def check_cover(per_rank: Sequence[Sequence[List[int]]], n: int, world: int, batch_size: int,
                drop_last: bool, where: str) -> None:
    """Every rank has the same number of batches, and the rows read are every row once (with
    ``drop_last``: distinct rows, all batches full) or every row once plus the documented
    wrap-around padding (the first rows of the order again, ``world * ceil(n / world) - n``
    of them)."""
    counts = [len(b) for b in per_rank]
    assert len(set(counts)) == 1, f"{where}: batches per rank {counts}"
    seen: Counter = Counter(g for batches in per_rank for b in batches for g in b)
    total = sum(seen.values())
    if drop_last:
        per = (n // world) // batch_size * batch_size
        assert total == world * per, f"{where}: {total} rows read, expected {world * per}"
        assert max(seen.values(), default=1) == 1, f"{where}: a row read twice"
        assert all(len(b) == batch_size for batches in per_rank for b in batches), where
        assert n - total < world * (batch_size + 1), where
    else:
        per = -(-n // world)
        assert total == world * per, f"{where}: {total} rows read, expected {world * per}"
        assert set(seen) == set(range(n)), f"{where}: rows missing {sorted(set(range(n)) - set(seen))[:10]}"
        twice = [g for g, c in seen.items() if c == 2]
        assert max(seen.values()) <= 2 and len(twice) == world * per - n, f"{where}: padding {len(twice)}"


def flat(batches: Sequence[List[int]]) -> List[int]:
    return [g for b in batches for g in b]


def summary(d: Dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in d.items())
