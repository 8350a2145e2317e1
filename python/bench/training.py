"""The training-loop benchmark (run by `cargo xtask bench python` after bench.py, on the same
lake and venv): one shuffled epoch, batch 256, of bazan against Hugging Face `datasets`.

    python training.py LAKE RESULTS.json [--threads N] [--quick]

Figures, each measured in a fresh subprocess (its peak RSS is the process's `ru_maxrss`):

a. rows per second of one shuffled epoch, batch 256: bazan `LakeMap.iter_batches(256,
   shuffle="global")` and `shuffle="block"` over the whole lake (its unified schema), against
   `datasets` on each file (a dataset holds one schema) map-style on its Arrow cache with a
   random permutation (`ds.with_format("arrow")[indices]` per batch) and
   `to_iterable_dataset().shuffle(buffer_size=65536)` with `.iter(batch_size=256)`;
   `datasets`' one-time cache build (`load_dataset`) is counted apart and together;
b. time to the first shuffled batch from a fresh lake (no map, no datasets cache);
c. the peak RSS of each run.

The peers' exact calls are printed with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
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
    "bazan_global": 'm.iter_batches(256, shuffle="global", seed=0)',
    "bazan_block": 'm.iter_batches(256, shuffle="block", seed=0, buffer_rows=65536)',
    "datasets_map": 'ds = load_dataset(kind, data_files=f, split="train").with_format("arrow"); '
                    "ds[perm[i:i + 256]] for each batch of a random permutation",
    "datasets_iterable": 'load_dataset(kind, data_files=f, split="train").to_iterable_dataset()'
                         ".shuffle(seed=0, buffer_size=65536).iter(batch_size=256)",
}


def peak_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def remove_map(lake: Path) -> None:
    for p in lake.glob(".br_map*"):
        p.unlink()


def one(mode: str, lake: Path, cache: Path, threads: int) -> dict:
    """One measurement in this process."""
    out: dict = {"mode": mode}
    if mode.startswith("bazan"):
        import bazan.lake as bl

        shuffle = "global" if "global" in mode else "block"
        if mode.endswith("_first"):
            remove_map(lake)
            t = time.perf_counter()
            m = bl.create_map(lake, threads=threads, progress=False)
            it = m.iter_batches(BATCH, shuffle=shuffle, seed=0)
            b = next(it)
            out["first_batch_s"] = time.perf_counter() - t
            out["rows"] = b.num_rows
        else:
            m = bl.load_map(lake)
            t = time.perf_counter()
            rows = sum(b.num_rows for b in m.iter_batches(BATCH, shuffle=shuffle, seed=0))
            out["epoch_s"] = time.perf_counter() - t
            out["rows"] = rows
    else:
        import datasets
        import numpy as np

        datasets.disable_progress_bars()
        rows = 0
        build = 0.0
        epoch = 0.0
        first = None
        for name in FILES:
            f = lake / name
            if not f.exists():
                continue
            kind = KINDS[f.suffix]
            t = time.perf_counter()
            ds = datasets.load_dataset(kind, data_files=str(f), split="train", cache_dir=str(cache))
            build += time.perf_counter() - t
            n = len(ds)
            t = time.perf_counter()
            if mode.startswith("datasets_map"):
                ds = ds.with_format("arrow")
                perm = np.random.default_rng(0).permutation(n)
                for i in range(0, n, BATCH):
                    batch = ds[perm[i:i + BATCH]]
                    rows += batch.num_rows
                    if first is None:
                        first = time.perf_counter()
                    if mode.endswith("_first"):
                        break
            else:
                it = ds.to_iterable_dataset().shuffle(seed=0, buffer_size=BUFFER)
                for batch in it.iter(batch_size=BATCH):
                    rows += len(next(iter(batch.values())))
                    if first is None:
                        first = time.perf_counter()
                    if mode.endswith("_first"):
                        break
            epoch += time.perf_counter() - t
            if mode.endswith("_first"):
                # The first batch, after every file of the lake is loaded (a shuffled batch
                # draws from the whole lake).
                continue
        out["build_s"] = build
        out["epoch_s"] = epoch
        out["rows"] = rows
        if mode.endswith("_first"):
            out["first_batch_s"] = build + epoch / max(len(FILES), 1)
        out["cache_bytes"] = sum(p.stat().st_size for p in cache.rglob("*") if p.is_file())
    out["peak_rss"] = peak_rss()
    return out


def run(mode: str, lake: Path, threads: int) -> dict:
    cache = Path(tempfile.mkdtemp(prefix="bazan-train-bench-"))
    try:
        env = dict(os.environ, RAYON_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
        p = subprocess.run([sys.executable, __file__, "--one", mode, str(lake), str(cache), str(threads)],
                           capture_output=True, text=True, env=env)
        if p.returncode != 0:
            return {"mode": mode, "error": p.stderr.strip().splitlines()[-1:] or ["failed"]}
        return json.loads(p.stdout.strip().splitlines()[-1])
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--one":
        _, _, mode, lake, cache, threads = sys.argv
        print(json.dumps(one(mode, Path(lake), Path(cache), int(threads))))
        return 0
    ap = argparse.ArgumentParser()
    ap.add_argument("lake", type=Path)
    ap.add_argument("results", type=Path)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    results: dict = {"calls": CALLS, "threads": a.threads}
    try:
        import datasets  # noqa: F401

        peers = ["datasets_map", "datasets_iterable"]
    except ImportError:
        peers = []
        results["datasets"] = "peer unavailable: datasets is not installed"
    for mode in ["bazan_global", "bazan_block"] + peers:
        results[mode] = run(mode, a.lake, a.threads)
        results[mode + "_first"] = run(mode + "_first", a.lake, a.threads)
        print(mode, results[mode], results[mode + "_first"], file=sys.stderr)
    # The lake keeps a map for the other benches.
    import bazan.lake as bl

    bl.load_map(a.lake)
    a.results.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
