"""The training-loop benchmark (run by `cargo xtask bench python` after bench.py, on the same
lake and venv): shuffled epochs, batch 256, of bazan against Hugging Face `datasets`.

    python training.py LAKE RESULTS.json [--threads N] [--quick] [--only MODE,...]

Every figure is measured in a fresh subprocess (its peak RSS is the process's `ru_maxrss`),
with N threads for every tool (`RAYON_NUM_THREADS`, pyarrow's CPU and I/O pools):

a. rows per second of one shuffled epoch, batch 256, files in the page cache: bazan
   `LakeMap.iter_batches(256, shuffle="global")` and `shuffle="block"` over the whole lake
   (its unified schema), against `datasets` on each file (a dataset holds one schema)
   map-style on its Arrow cache with random index batches (`ds[perm[i:i + 256]]`, what a
   `DataLoader` with a random `BatchSampler` asks for) and
   `to_iterable_dataset().with_format("arrow").shuffle(buffer_size=65536)` (Arrow out, as
   bazan's: `datasets`' fastest format for both, twelve times its Python dicts' rate for the
   iterable shuffle and six times numpy's for random access); `datasets`' one-time cache build
   (`load_dataset`) is counted apart and together;
b. time to the first shuffled batch from a fresh lake (no map, no `datasets` cache): the map
   and one batch for bazan, `load_dataset` of every file (a shuffled batch may draw from any
   of them) and one batch for `datasets`; cold (the lake's files dropped from the page cache
   with `posix_fadvise(DONTNEED)` first, median of three) and warm (best of three);
c. the peak RSS of each run.

The peers' exact calls are in CALLS, printed with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FILES = ["quoted.csv", "wide.csv", "events.ndjson", "sales.parquet", "batches.arrow"]
KINDS = {".csv": "csv", ".ndjson": "json", ".parquet": "parquet", ".arrow": "arrow"}
BATCH = 256
BUFFER = 65536

CALLS = {
    "bazan_global": 'm = bazan.lake.load_map(LAKE); for b in m.iter_batches(256, shuffle="global", seed=0): ...',
    "bazan_block": 'm = bazan.lake.load_map(LAKE); for b in m.iter_batches(256, shuffle="block", seed=0, '
                   "buffer_rows=65536): ...",
    "datasets_map": 'per file F: ds = datasets.load_dataset(KIND, data_files=F, split="train", cache_dir=C)'
                    '.with_format("arrow"); perm = numpy.random.default_rng(0).permutation(len(ds)); '
                    "for i in range(0, len(ds), 256): b = ds[perm[i:i + 256]]",
    "datasets_iterable": 'per file F: ds = datasets.load_dataset(KIND, data_files=F, split="train", cache_dir=C); '
                         'for b in ds.to_iterable_dataset().with_format("arrow").shuffle(seed=0, '
                         "buffer_size=65536).iter(batch_size=256): ...",
    "bazan_first": 'm = bazan.lake.create_map(LAKE, threads=N, progress=False); '
                   'next(m.iter_batches(256, shuffle=S, seed=0))',
    "datasets_first": "load_dataset of every file as above, then the first batch of the first file",
}
MODES = ["bazan_global", "bazan_block", "datasets_map", "datasets_iterable"]


def peak_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def remove_map(lake: Path) -> None:
    for p in lake.glob(".br_map*"):
        p.unlink()


def lake_files(lake: Path):
    return [lake / f for f in FILES if (lake / f).exists()]


def drop_cache(paths) -> bool:
    """Drops files from the page cache; False when the kernel refused."""
    ok = True
    for p in paths:
        try:
            fd = os.open(p, os.O_RDONLY)
            try:
                os.fsync(fd)
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)
        except (OSError, AttributeError):
            ok = False
    return ok


def read_through(paths) -> None:
    """Reads files once so that they are in the page cache."""
    for p in paths:
        with open(p, "rb") as f:
            while f.read(1 << 24):
                pass


def set_threads(threads: int) -> None:
    import pyarrow as pa

    pa.set_cpu_count(threads)
    pa.set_io_thread_count(threads)


def bazan_run(mode: str, lake: Path, threads: int, out: dict) -> None:
    import bazan.lake as bl

    shuffle = "global" if "global" in mode else "block"
    if mode.endswith("_first"):
        remove_map(lake)
        t = time.perf_counter()
        m = bl.create_map(lake, threads=threads, progress=False)
        b = next(m.iter_batches(BATCH, shuffle=shuffle, seed=0))
        out["first_batch_s"] = time.perf_counter() - t
        out["rows"] = b.num_rows
        return
    m = bl.load_map(lake)
    t = time.perf_counter()
    rows = 0
    for b in m.iter_batches(BATCH, shuffle=shuffle, seed=0, buffer_rows=BUFFER):
        rows += b.num_rows
    out["epoch_s"] = time.perf_counter() - t
    out["rows"] = rows
    out["columns"] = b.num_columns


def datasets_run(mode: str, lake: Path, cache: Path, out: dict) -> None:
    import datasets
    import numpy as np

    datasets.disable_progress_bars()
    first = mode.endswith("_first")
    t0 = time.perf_counter()
    dsets = []
    build = 0.0
    for f in lake_files(lake):
        t = time.perf_counter()
        ds = datasets.load_dataset(KINDS[f.suffix], data_files=str(f), split="train", cache_dir=str(cache))
        build += time.perf_counter() - t
        dsets.append(ds)
    rows = 0
    epoch = 0.0
    for ds in dsets:
        t = time.perf_counter()
        if mode.startswith("datasets_map"):
            ds = ds.with_format("arrow")
            n = len(ds)
            perm = np.random.default_rng(0).permutation(n)
            for i in range(0, n, BATCH):
                rows += ds[perm[i:i + BATCH]].num_rows
                if first:
                    break
        else:
            it = ds.to_iterable_dataset().with_format("arrow").shuffle(seed=0, buffer_size=BUFFER)
            for batch in it.iter(batch_size=BATCH):
                rows += batch.num_rows
                if first:
                    break
        epoch += time.perf_counter() - t
        if first:
            out["first_batch_s"] = time.perf_counter() - t0
            break
    out["build_s"] = build
    out["epoch_s"] = epoch
    out["rows"] = rows
    out["cache_bytes"] = sum(p.stat().st_size for p in cache.rglob("*") if p.is_file())


def one(mode: str, lake: Path, cache: Path, threads: int, cold: bool) -> dict:
    """One measurement in this process."""
    out: dict = {"mode": mode, "cold": cold}
    set_threads(threads)
    if cold:
        out["page_cache_dropped"] = drop_cache(lake_files(lake))
    if mode.startswith("bazan"):
        bazan_run(mode, lake, threads, out)
    else:
        datasets_run(mode, lake, cache, out)
    out["peak_rss"] = peak_rss()
    return out


def run(mode: str, lake: Path, threads: int, cold: bool = False) -> dict:
    cache = Path(tempfile.mkdtemp(prefix="bazan-train-bench-"))
    try:
        if not cold:
            read_through(lake_files(lake))
        env = dict(os.environ, RAYON_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads),
                   HF_DATASETS_OFFLINE="1", HF_HUB_OFFLINE="1")
        args = [sys.executable, __file__, "--one", mode, str(lake), str(cache), str(threads), str(int(cold))]
        p = subprocess.run(args, capture_output=True, text=True, env=env)
        if p.returncode != 0:
            return {"mode": mode, "error": (p.stderr.strip().splitlines() or ["failed"])[-1]}
        return json.loads(p.stdout.strip().splitlines()[-1])
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def first_batch(mode: str, lake: Path, threads: int, runs: int) -> dict:
    """Cold (median) and warm (best) time to the first shuffled batch from a fresh lake."""
    cold = [run(mode + "_first", lake, threads, cold=True) for _ in range(runs)]
    warm = [run(mode + "_first", lake, threads) for _ in range(runs)]
    for r in cold + warm:
        if "error" in r:
            return {"error": r["error"]}
    return {
        "cold_s": statistics.median(r["first_batch_s"] for r in cold),
        "cold_runs_s": [r["first_batch_s"] for r in cold],
        "warm_s": min(r["first_batch_s"] for r in warm),
        "warm_runs_s": [r["first_batch_s"] for r in warm],
        "peak_rss": max(r["peak_rss"] for r in cold + warm),
        "page_cache_dropped": all(r.get("page_cache_dropped", False) for r in cold),
    }


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--one":
        _, _, mode, lake, cache, threads, cold = sys.argv
        print(json.dumps(one(mode, Path(lake), Path(cache), int(threads), cold == "1")))
        return 0
    ap = argparse.ArgumentParser()
    ap.add_argument("lake", type=Path)
    ap.add_argument("results", type=Path)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="one first-batch run per mode, not three")
    ap.add_argument("--only", default="", help="comma-separated modes (default: all)")
    a = ap.parse_args()
    results: dict = {"calls": CALLS, "threads": a.threads, "batch": BATCH, "buffer_rows": BUFFER}
    modes = [m for m in MODES if not a.only or m in a.only.split(",")]
    try:
        import datasets

        results["datasets_version"] = datasets.__version__
    except ImportError:
        results["datasets"] = "peer unavailable: datasets is not installed"
        modes = [m for m in modes if not m.startswith("datasets")]
    import bazan
    import bazan.lake as bl

    results["bazan_version"] = bazan.__version__
    # The epoch runs read a lake with a map (made here when missing, outside any timing).
    try:
        bl.load_map(a.lake)
    except bazan.BazanError:
        bl.create_map(a.lake, threads=a.threads, progress=False)
    for mode in modes:
        results[mode] = run(mode, a.lake, a.threads)
        print(mode, json.dumps(results[mode]), file=sys.stderr)
        results[mode + "_first"] = first_batch(mode, a.lake, a.threads, 1 if a.quick else 3)
        print(mode + "_first", json.dumps(results[mode + "_first"]), file=sys.stderr)
    # The lake keeps a map for the other benches (each first-batch run makes a new one).
    bl.load_map(a.lake)
    a.results.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
