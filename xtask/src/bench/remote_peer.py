"""The peers of `cargo xtask bench remote`: polars, pyarrow and Hugging Face `datasets` (with
s3fs) reading rows of a lake in an S3 bucket (moto behind the bench's counting proxy).

Usage: python remote_peer.py SPEC_JSON, where the spec names the tool, the task and its files:

    {"tool": "polars" | "pyarrow" | "datasets", "task": "slice" | "take",
     "endpoint": "http://127.0.0.1:PORT", "bucket": "lake", "threads": 2,
     "files": [{"key": "real/quoted.csv", "format": "csv", "start": 9000, "len": 100}]}
     (for "take": {"key": ..., "format": ..., "rows": [local rows]})

Each call is built as Python source, printed in the result and run with `eval` on exactly that
text, so the call in the report is the call that ran. The set-up (imports, the file system
object, the storage options) is not timed; every call is. Prints one JSON object on its last
line: {"seconds": ..., "rows": ..., "setup": ..., "calls": [...]} or {"error": ...}.
"""

import json
import os
import sys
import tempfile
import time


def setup_source(tool, endpoint, threads):
    """The untimed set-up of `tool`, as source."""
    host = endpoint.split("://", 1)[1]
    if tool == "polars":
        return (
            f"os.environ['POLARS_MAX_THREADS'] = '{threads}'\n"
            "import polars as pl\n"
            f"so = {{'aws_endpoint_url': {endpoint!r}, 'aws_allow_http': 'true', "
            "'aws_access_key_id': 'x', 'aws_secret_access_key': 'y', 'aws_region': 'us-east-1'}\n"
        )
    if tool == "pyarrow":
        return (
            "import pyarrow as pa, pyarrow.csv as pacsv, pyarrow.dataset as pads, pyarrow.fs as pafs\n"
            f"pa.set_cpu_count({threads}); pa.set_io_thread_count({threads})\n"
            "fs = pafs.S3FileSystem(access_key='x', secret_key='y', region='us-east-1', "
            f"endpoint_override={host!r}, scheme='http')\n"
            "csv_format = pads.CsvFileFormat(parse_options=pacsv.ParseOptions(newlines_in_values=True))\n"
        )
    if tool == "datasets":
        return (
            "import datasets\n"
            "datasets.disable_progress_bars()\n"
            "so = {'key': 'x', 'secret': 'y', "
            f"'client_kwargs': {{'endpoint_url': {endpoint!r}, 'region_name': 'us-east-1'}}}}\n"
            "cache = tempfile.mkdtemp(prefix='bazan-remote-datasets-')\n"
        )
    raise SystemExit(f"unknown tool {tool!r}")


POLARS_SCAN = {"csv": "scan_csv", "ndjson": "scan_ndjson", "parquet": "scan_parquet", "arrow": "scan_ipc"}
PYARROW_FORMAT = {"csv": "csv_format", "ndjson": "'json'", "parquet": "'parquet'", "arrow": "'arrow'"}
DATASETS_BUILDER = {"csv": "csv", "ndjson": "json", "parquet": "parquet", "arrow": "arrow"}


def call_source(tool, task, bucket, f):
    """The timed call that reads the rows of file `f`, as source (an expression)."""
    fmt = f["format"]
    url = f"s3://{bucket}/{f['key']}"
    if task == "slice":
        start, n = f["start"], f["len"]
        if tool == "polars":
            return f"pl.{POLARS_SCAN[fmt]}({url!r}, storage_options=so).slice({start}, {n}).collect()"
        if tool == "pyarrow":
            return (
                f"pads.dataset({bucket + '/' + f['key']!r}, format={PYARROW_FORMAT[fmt]}, filesystem=fs)"
                f".take(pa.array(range({start}, {start + n})))"
            )
        if tool == "datasets":
            return (
                f"datasets.load_dataset({DATASETS_BUILDER[fmt]!r}, data_files={url!r}, storage_options=so, "
                f"cache_dir=cache, split='train').select(range({start}, {start + n}))"
            )
    rows = f["rows"]
    if tool == "polars":
        return f"pl.{POLARS_SCAN[fmt]}({url!r}, storage_options=so).select(pl.all().gather({rows})).collect()"
    if tool == "pyarrow":
        return (
            f"pads.dataset({bucket + '/' + f['key']!r}, format={PYARROW_FORMAT[fmt]}, filesystem=fs)"
            f".take(pa.array({rows}))"
        )
    if tool == "datasets":
        return (
            f"datasets.load_dataset({DATASETS_BUILDER[fmt]!r}, data_files={url!r}, storage_options=so, "
            f"cache_dir=cache, split='train').select({rows})"
        )
    raise SystemExit(f"unknown tool {tool!r} or task {task!r}")


def num_rows(result):
    """Rows of a polars DataFrame, a pyarrow Table or a datasets Dataset."""
    for attr in ("num_rows", "height"):
        n = getattr(result, attr, None)
        if isinstance(n, int):
            return n
    return len(result)


def first_id(result):
    """The `id` of the first row of the last result (checked by the bench for the deep
    slices), or None."""
    try:
        if hasattr(result, "column_names") and hasattr(result, "column") and not hasattr(result, "features"):
            return result.column("id")[0].as_py()
        return result["id"][0]
    except Exception:
        return None


def main():
    spec = json.loads(sys.argv[1])
    tool, task = spec["tool"], spec["task"]
    setup = setup_source(tool, spec["endpoint"], spec["threads"])
    env = {"os": os, "tempfile": tempfile}
    calls = [call_source(tool, task, spec["bucket"], f) for f in spec["files"]]
    try:
        exec(setup, env)
        started = time.perf_counter()
        rows, first = 0, None
        for call in calls:
            result = eval(call, env)
            rows += num_rows(result)
            first = first_id(result)
        seconds = time.perf_counter() - started
    except Exception as err:  # the report shows a peer's failure instead of a figure
        text = f"{type(err).__name__}: {err}".replace("\n", " ")[:400]
        print(json.dumps({"error": text, "setup": setup, "calls": calls}))
        return
    finally:
        cache = env.get("cache")
        if cache:
            import shutil

            shutil.rmtree(cache, ignore_errors=True)
    print(json.dumps({"seconds": seconds, "rows": rows, "first_id": first, "setup": setup, "calls": calls}))


if __name__ == "__main__":
    main()
