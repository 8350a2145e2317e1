"""``bazan.ray.read_lake``: a Ray Data dataset over a lake on a local ``ray.init(num_cpus=2)``:
row count and schema from the map, ``take_batch``, ``map_batches`` and the full read equal to
the lake, read tasks that are block ranges balanced by rows."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import bazan
import bazan.lake as bl
from training_lakes import varied_lake

ray = pytest.importorskip("ray", reason="ray[data] is in python/requirements-test.txt")

import bazan.ray as bray  # noqa: E402


@pytest.fixture(scope="module")
def varied(tmp_path_factory: pytest.TempPathFactory) -> bl.LakeMap:
    root = varied_lake(tmp_path_factory.mktemp("ray") / "lake")
    return bl.create_map(root, stride=100, progress=False)


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             configure_logging=False)
    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False
    # take_batch then returns the first rows of the lake.
    ctx.execution_options.preserve_order = True
    try:
        yield ray
    finally:
        ray.shutdown()


def test_read_tasks_are_block_ranges_balanced_by_rows(varied):
    source = bray.LakeDatasource(varied, ["id"])
    tasks = source.get_read_tasks(4)
    rows = [t.metadata.num_rows for t in tasks]
    assert sum(rows) == varied.total_rows and 1 < len(tasks) <= 4
    # The biggest task is within one block (5,000 rows) of an equal share.
    assert max(rows) <= varied.total_rows // len(tasks) + 5000
    assert all(t.schema == pa.schema([("id", pa.int64())]) for t in tasks)
    got = [g for t in tasks for block in t() for g in block.column("id").to_pylist()]
    assert got == list(range(varied.total_rows))


def test_read_lake_equals_the_lake(varied, local_ray):
    ds = bray.read_lake(varied, columns=["id", "name"], parallelism=3)
    assert ds.count() == varied.total_rows
    assert ds.schema().names == ["id", "name"]
    first = ds.take_batch(100, batch_format="pyarrow")
    assert first.column("id").to_pylist() == list(range(100))
    doubled = ds.map_batches(lambda t: pa.table({"id2": pc.multiply(t.column("id"), 2)}),
                             batch_format="pyarrow")
    ids = sorted(r["id2"] for r in doubled.take_all())
    assert ids == [2 * i for i in range(varied.total_rows)]
    whole = pa.concat_tables(
        [pa.Table.from_batches([b]) if isinstance(b, pa.RecordBatch) else b
         for b in ds.iter_batches(batch_format="pyarrow", batch_size=None)]
    ).sort_by("id")
    assert whole.equals(varied.slice(0, varied.total_rows, ["id", "name"]))


def test_read_lake_from_a_path_and_an_unknown_column(varied, local_ray):
    assert bray.read_lake(varied.root, parallelism=2).count() == varied.total_rows
    with pytest.raises(bazan.InvalidArgumentError, match="nope"):
        bray.read_lake(varied, columns=["nope"])
