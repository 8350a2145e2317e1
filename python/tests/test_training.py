"""Training-loop reading (issue 48): shuffled, sharded, resumable epochs of
``LakeMap.iter_batches``, pickling and fork/spawn safety of a ``LakeMap``, and the
``bazan.torch`` datasets in real ``torch.utils.data.DataLoader`` worker processes.

Exactly-once is checked on a generated lake with blocks of very different sizes and on the
conformance lake, for world sizes 1-4, DataLoader worker counts 0-3, both shuffles and
``drop_last``; the memory bound of ``shuffle="block"`` is measured in a subprocess.
"""

from __future__ import annotations

import multiprocessing as mp
import pickle
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow as pa
import pytest

import bazan
import bazan.lake as bl
from training_lakes import check_cover, flat, gids, varied_lake

torch = pytest.importorskip("torch", reason="torch is in python/requirements-test.txt")
from torch.utils.data import DataLoader  # noqa: E402

from bazan.torch import LakeDataset, LakeIterableDataset, collate, to_torch  # noqa: E402

MODES = ["block", "global"]

# Three DataLoader workers on a 2-core machine are the point of some tests.
pytestmark = pytest.mark.filterwarnings("ignore:This DataLoader will create:UserWarning")


@pytest.fixture(scope="module")
def varied(tmp_path_factory: pytest.TempPathFactory) -> bl.LakeMap:
    root = varied_lake(tmp_path_factory.mktemp("varied") / "lake")
    return bl.create_map(root, stride=100, progress=False)


def epoch_batches(m: bl.LakeMap, **kw) -> list:
    kw.setdefault("columns", ["_gid"])
    return [gids(b) for b in m.iter_batches(**kw)]


def rank_batches(m, *, world, rank, workers, shuffle, drop_last, bs, epoch=0, seed=3, buffer_rows=None,
                 loader=True, columns=("id", "_gid")):
    """The batches rank ``rank`` gets: through a real DataLoader with ``workers`` worker
    processes (0: in this process), or with ``loader=False`` by iterating each worker's split
    here as a worker would."""
    ds = LakeIterableDataset(m, bs, columns=list(columns), shuffle=shuffle, seed=seed,
                             shard=(rank, world), drop_last=drop_last, buffer_rows=buffer_rows)
    ds.set_epoch(epoch)
    if loader:
        batches = list(DataLoader(ds, batch_size=None, num_workers=workers))
    else:
        batches = []
        for w in range(max(workers, 1)):
            batches += list(m.iter_batches(bs, list(columns), shuffle=shuffle, seed=seed, epoch=epoch,
                                           shard=(rank, world), worker=(w, max(workers, 1)),
                                           drop_last=drop_last, buffer_rows=buffer_rows))
    if "id" in columns:
        for b in batches:
            assert b.column("id").to_pylist() == gids(b), "the data is the row's"
    return [gids(b) for b in batches]


@pytest.mark.parametrize("drop_last", [False, True])
@pytest.mark.parametrize("shuffle", MODES)
def test_every_row_once_per_epoch_over_ranks_and_dataloader_workers(varied, shuffle, drop_last):
    n = varied.total_rows
    for world in range(1, 5):
        for workers in range(0, 4):
            per_rank = [
                rank_batches(varied, world=world, rank=r, workers=workers, shuffle=shuffle,
                             drop_last=drop_last, bs=64, buffer_rows=1000)
                for r in range(world)
            ]
            check_cover(per_rank, n, world, 64, drop_last,
                        f"{shuffle} drop_last={drop_last} world={world} workers={workers}")
            # The batches of a rank do not depend on its worker count.
            if workers > 1:
                one = rank_batches(varied, world=world, rank=0, workers=0, shuffle=shuffle,
                                   drop_last=drop_last, bs=64, buffer_rows=1000)
                assert sorted(map(tuple, per_rank[0])) == sorted(map(tuple, one))


@pytest.mark.parametrize("shuffle,drop_last", [("block", False), ("block", True), ("global", False)])
def test_every_row_once_on_the_conformance_lake(shared_lake, shuffle, drop_last):
    # World sizes and worker counts paired (each pair is a full epoch; the 45 files of every
    # format are slow to read at random in a debug build, so "global" takes the two ends).
    n = shared_lake.total_rows
    pairs = ((1, 0), (2, 1), (3, 2), (4, 3)) if shuffle == "block" else ((1, 0), (4, 3))
    for world, workers in pairs:
        per_rank = [
            rank_batches(shared_lake, world=world, rank=r, workers=workers, shuffle=shuffle,
                         drop_last=drop_last, bs=1000, loader=False, columns=["_gid"],
                         buffer_rows=1 << 18)
            for r in range(world)
        ]
        check_cover(per_rank, n, world, 1000, drop_last,
                    f"conformance {shuffle} drop_last={drop_last} world={world} workers={workers}")


def test_the_conformance_lake_through_dataloader_workers(shared_lake):
    per_rank = [
        rank_batches(shared_lake, world=2, rank=r, workers=2, shuffle="block", drop_last=False, bs=4096,
                     columns=["_gid"])
        for r in range(2)
    ]
    check_cover(per_rank, shared_lake.total_rows, 2, 4096, False, "conformance, 2 ranks x 2 workers")


@pytest.mark.parametrize("shuffle", MODES)
def test_the_order_is_a_pure_function_of_seed_and_epoch(varied, shuffle):
    kw = dict(batch_size=50, shuffle=shuffle, buffer_rows=2000)
    a = epoch_batches(varied, seed=5, epoch=1, **kw)
    assert a == epoch_batches(varied, seed=5, epoch=1, **kw)
    assert a != epoch_batches(varied, seed=5, epoch=2, **kw)
    assert a != epoch_batches(varied, seed=6, epoch=1, **kw)
    assert flat(a) != list(range(varied.total_rows))
    # Across processes too (a DataLoader's workers), and through a reopened map.
    again = rank_batches(bl.load_map(varied.root), world=1, rank=0, workers=2, shuffle=shuffle,
                         drop_last=False, bs=50, epoch=1, seed=5, buffer_rows=2000)
    assert sorted(map(tuple, again)) == sorted(map(tuple, a))


def test_block_shuffle_reads_blocks_in_random_order_and_mixes_them(varied):
    order = flat(epoch_batches(varied, batch_size=100, shuffle="block", buffer_rows=4000, seed=1))
    window = order[:4000]
    # The first window mixes rows of several blocks, not one run of rows.
    assert len({g // 500 for g in window}) >= 4
    runs = sum(1 for a, b in zip(window, window[1:]) if b == a + 1)
    assert runs < len(window) // 10


def test_without_shuffle_an_epoch_is_the_lake_in_order_in_full_batches(varied):
    batches = epoch_batches(varied, batch_size=999, shard=(0, 1), buffer_rows=5000)
    assert flat(batches) == list(range(varied.total_rows))
    assert all(len(b) == 999 for b in batches[:-1])


@pytest.mark.parametrize("shuffle", [False, "block", "global"])
def test_resuming_equals_the_uninterrupted_epoch(varied, shuffle):
    kw = dict(batch_size=70, columns=["id", "_gid"], shuffle=shuffle, seed=9, epoch=4,
              shard=(1, 3), buffer_rows=700)
    whole = [gids(b) for b in varied.iter_batches(**kw)]
    for stop in (1, 9, 10, 11, len(whole) - 1, len(whole)):
        it = varied.iter_batches(**kw)
        head = [gids(next(it)) for _ in range(stop)]
        state = it.state_dict()
        assert state["position"] == stop and it.position == stop
        state = pickle.loads(pickle.dumps(state))
        rest = [gids(b) for b in varied.iter_batches(**kw, state=state)]
        assert head + rest == whole, f"stop {stop}"
    with pytest.raises(bazan.InvalidArgumentError, match="does not belong"):
        varied.iter_batches(**{**kw, "seed": 10}, state=state)


@pytest.mark.parametrize("workers", [0, 2, 3])
def test_iterable_dataset_resumes_after_k_batches_with_workers(varied, workers):
    ds = LakeIterableDataset(varied, 64, columns=["_gid"], shuffle="global", seed=2, buffer_rows=1000)
    ds.set_epoch(3)
    whole = [gids(b) for b in DataLoader(ds, batch_size=None, num_workers=workers)]
    assert len(whole) == len(ds)
    for k in (1, 7, len(whole) - 2):
        ds.load_state_dict(ds.state_dict(k))
        rest = [gids(b) for b in DataLoader(ds, batch_size=None, num_workers=workers)]
        assert rest == whole[k:], f"k={k}"
    ds.set_epoch(3)
    assert [gids(b) for b in DataLoader(ds, batch_size=None, num_workers=workers)] == whole


def test_bad_shards_columns_and_arguments_raise_one_clear_error(varied):
    with pytest.raises(bazan.InvalidArgumentError, match="world_size must be at least 1"):
        varied.iter_batches(10, shard=(0, 0))
    with pytest.raises(bazan.InvalidArgumentError, match="rank 4 is out of range"):
        varied.iter_batches(10, shard=(4, 4))
    with pytest.raises(bazan.InvalidArgumentError, match="nope"):
        varied.iter_batches(10, columns=["nope"], shuffle="global")
    with pytest.raises(bazan.InvalidArgumentError, match="shuffle"):
        varied.iter_batches(10, shuffle="random")
    with pytest.raises(bazan.InvalidArgumentError, match="start and stop"):
        varied.iter_batches(10, start=5, shuffle="block")
    with pytest.raises(ValueError, match="format"):
        LakeDataset(varied, format="numpy")


def _stale_lake(tmp_path: Path) -> bl.LakeMap:
    root = tmp_path / "stale"
    root.mkdir()
    for i in range(4):
        (root / f"p{i}.csv").write_text("id\n" + "".join(f"{i * 1000 + r}\n" for r in range(1000)))
    return bl.create_map(root, stride=100, progress=False)


def _touch_all(root: str) -> None:
    for p in sorted(Path(root).glob("*.csv")):
        with open(p, "a") as f:
            f.write("99999\n")


def test_a_file_changed_mid_epoch_raises_stale_naming_it(tmp_path):
    m = _stale_lake(tmp_path)
    it = m.iter_batches(100, shuffle="block", buffer_rows=200)
    next(it)
    _touch_all(m.root)
    with pytest.raises(bazan.StaleFileError, match=r"p\d\.csv"):
        for _ in it:
            pass


def test_a_stale_file_in_a_dataloader_worker_raises_not_hangs(tmp_path):
    m = _stale_lake(tmp_path)
    ds = LakeIterableDataset(m, 100, shuffle="global", buffer_rows=200)
    _touch_all(m.root)
    with pytest.raises(bazan.StaleFileError, match=r"p\d\.csv"):
        list(DataLoader(ds, batch_size=None, num_workers=2, timeout=120))


def test_a_lake_map_pickles_to_what_reopens_it(varied):
    budget = varied.cache_bytes
    varied.cache_bytes = 12345678
    try:
        back = pickle.loads(pickle.dumps(varied))
    finally:
        varied.cache_bytes = budget
    assert back.root == varied.root and back.total_rows == varied.total_rows
    assert back.cache_bytes == 12345678
    assert back.slice(100, 50).equals(varied.slice(100, 50))
    assert back.failures == varied.failures


def _child_take(m: bl.LakeMap, rows: list) -> list:
    return m.take(rows, ["id"]).column("id").to_pylist()


def _child_epoch(m: bl.LakeMap) -> list:
    return [gids(b) for b in m.iter_batches(500, ["_gid"], shuffle="global", seed=4)]


_INHERITED = None


def _inherited_take(rows: list) -> list:
    return _INHERITED.take(rows, ["id"]).column("id").to_pylist()


@pytest.mark.parametrize("method", ["fork", "spawn", "forkserver"])
def test_multiprocessing_children_read_the_lake(varied, method):
    global _INHERITED
    # The parent reads first, so that its thread pools and its map are in use when it forks.
    rows = [5, 17000, 3, 12345, 18000, 0]
    assert _child_take(varied, rows) == rows
    expected_epoch = _child_epoch(varied)
    _INHERITED = varied
    ctx = mp.get_context(method)
    with ctx.Pool(2) as pool:
        assert pool.apply_async(_child_take, (varied, rows)).get(timeout=120) == rows
        assert pool.apply_async(_child_epoch, (varied,)).get(timeout=120) == expected_epoch
        if method == "fork":
            # The map inherited through fork (not pickled) reopens itself in the child.
            assert pool.apply_async(_inherited_take, (rows,)).get(timeout=120) == rows


def test_map_style_dataset_with_a_batch_sampler_in_two_workers(varied):
    ds = LakeDataset(varied, ["id", "name"], with_gid=True)
    assert len(ds) == varied.total_rows
    assert ds[7] == {"id": 7, "name": "row7", "_gid": 7}
    loader = DataLoader(ds, batch_size=512, shuffle=True, collate_fn=collate, num_workers=2,
                        generator=torch.Generator().manual_seed(0))
    seen = []
    for table in loader:
        assert isinstance(table, pa.Table) and table.num_rows <= 512
        assert table.column("id").to_pylist() == gids(table)
        seen += gids(table)
    assert sorted(seen) == list(range(varied.total_rows))
    tensors = LakeDataset(varied, ["id", "x", "name"], format="torch")
    batch = next(iter(DataLoader(tensors, batch_size=8, collate_fn=collate, num_workers=2)))
    assert batch["id"].tolist() == list(range(8)) and batch["id"].dtype == torch.int64
    assert batch["x"].dtype == torch.float64 and batch["name"] == [f"row{i}" for i in range(8)]


def test_torch_format_is_zero_copy_for_numeric_columns_without_nulls():
    batch = pa.record_batch({"a": pa.array([1, 2, 3], pa.int64()), "b": pa.array([1.5, None, 2.5]),
                             "c": pa.array([True, False, True]), "s": pa.array(["x", "y", None])})
    t = to_torch(batch)
    assert t["a"].data_ptr() == batch.column(0).buffers()[1].address
    assert t["a"].tolist() == [1, 2, 3]
    assert t["b"].isnan().tolist() == [False, True, False]
    assert t["c"].tolist() == [True, False, True]
    assert t["s"] == ["x", "y", None]


def test_iterable_dataset_in_torch_format_through_workers(varied):
    ds = LakeIterableDataset(varied, 128, columns=["id", "x", "_gid"], shuffle="block", format="torch",
                             shard=(1, 2), buffer_rows=2048)
    got = []
    for batch in DataLoader(ds, batch_size=None, num_workers=2):
        assert isinstance(batch["id"], torch.Tensor)
        assert torch.equal(batch["id"], batch["_gid"])
        got += batch["_gid"].tolist()
    assert len(got) == -(-varied.total_rows // 2)


def test_iterable_dataset_pickles_for_spawned_workers(varied):
    ds = LakeIterableDataset(varied, 256, columns=["_gid"], shuffle="global", seed=8)
    ds.set_epoch(2)
    spawned = [gids(b) for b in DataLoader(ds, batch_size=None, num_workers=2,
                                           multiprocessing_context="spawn")]
    forked = [gids(b) for b in DataLoader(ds, batch_size=None, num_workers=2,
                                          multiprocessing_context="fork")]
    assert spawned == forked
    assert sorted(flat(spawned)) == list(range(varied.total_rows))


MEMORY_SCRIPT = textwrap.dedent(
    """
    import sys
    import bazan.lake as bl
    def peak():
        # VmHWM, not ru_maxrss: the latter keeps the high-water mark of the process that
        # called exec (pytest's, with torch loaded).
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    m = bl.load_map(sys.argv[1])
    buffer_rows = int(sys.argv[2])
    # The code paths of an epoch run once before the baseline (their pages count in RSS).
    next(iter(m.iter_batches(256, shuffle="block", buffer_rows=1000, seed=2)))
    base = peak()
    rows = 0
    for b in m.iter_batches(256, shuffle="block", buffer_rows=buffer_rows, seed=1):
        rows += b.num_rows
    epoch = peak()
    whole = m.slice(0, m.total_rows)
    print(rows, epoch - base, peak() - base)
    """
)


def test_block_shuffle_memory_is_bounded_by_the_buffer(tmp_path):
    import pyarrow.parquet as pq

    root = tmp_path / "big"
    root.mkdir()
    # 16 files of 50,000 rows with a 200-byte string: about 170 MB decoded.
    rows, files, width = 50_000, 16, 200
    import numpy as np

    rng = np.random.default_rng(0)
    for f in range(files):
        data = rng.integers(97, 123, size=rows * width, dtype=np.uint8).tobytes()
        offsets = pa.array(np.arange(0, (rows + 1) * width, width, dtype=np.int32))
        text = pa.StringArray.from_buffers(rows, offsets.buffers()[1], pa.py_buffer(data))
        ids = pa.array(np.arange(f * rows, (f + 1) * rows, dtype=np.int64))
        pq.write_table(pa.table({"id": ids, "text": text}), root / f"part{f:02d}.parquet",
                       row_group_size=10_000, compression="none")
    m = bl.create_map(root, progress=False)
    lake_bytes = rows * files * (width + 12)
    buffer_rows = rows * files // 10
    buffer_bytes = buffer_rows * (width + 12)
    out = subprocess.run([sys.executable, "-c", MEMORY_SCRIPT, m.root, str(buffer_rows)],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    read, grew, whole = map(int, out.stdout.split())
    assert read == rows * files
    print(f"block shuffle: buffer {buffer_bytes >> 20} MiB, lake {lake_bytes >> 20} MiB; peak RSS "
          f"growth over the epoch {grew >> 20} MiB, reading the whole lake at once {whole >> 20} MiB")
    # The window, its blocks as decoded while it is read, the batch being built, and a
    # constant for the readers and the allocator's per-thread caches (measured in a debug
    # build: a 17 MB buffer grew 96 MiB, a 34 MB one 110 MiB; the whole lake at once 350 MiB).
    assert grew < 2 * buffer_bytes + (112 << 20), f"grew {grew >> 20} MiB"
    assert whole > lake_bytes // 2 and grew < whole // 2


@pytest.mark.skipif(not hasattr(signal, "pthread_kill"), reason="needs POSIX signals")
def test_ctrl_c_stops_an_epoch_read_under_way(tmp_path):
    """Ctrl-C while a window of 30 files is read (each read takes a tenth of a second through
    a registered handler): KeyboardInterrupt within a fraction of the read's time."""
    import threading
    import time

    root = tmp_path / "slow"
    root.mkdir()
    for i in range(30):
        (root / f"f{i:02d}.slowepoch").write_text("x")

    def count_rows(path):
        return 100

    def read(path, start, length, columns):
        time.sleep(0.1)
        n = 100 - start if length is None else length
        return pa.table({"x": pa.array(range(start, start + n), pa.int64())})

    bl.register_handler("slowepoch", count_rows=count_rows, read=read)
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        m = bl.create_map(root, progress=False)
        it = m.iter_batches(100, shuffle="block", buffer_rows=3000, seed=1)
        timer = threading.Timer(0.3, signal.pthread_kill,
                                (threading.main_thread().ident, signal.SIGINT))
        t = time.perf_counter()
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            next(it)
        took = time.perf_counter() - t
        timer.join()
        t = time.perf_counter()
        assert sum(b.num_rows for b in m.iter_batches(100, shuffle="block", buffer_rows=3000)) == 3000
        whole = time.perf_counter() - t
    finally:
        signal.signal(signal.SIGINT, old)
        bl.unregister_handler("slowepoch")
    # Uninterrupted, the window takes 1.5 s on two threads.
    assert whole > 1.2 and took < 1.0, (took, whole)
