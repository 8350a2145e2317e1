"""The lake as a data source for the usual Python consumers: polars, DuckDB and pandas read a
LakeMap through the Arrow PyCapsule stream interface (or its tables) and agree with pyarrow."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc


def test_polars_reads_the_lake(shared_lake):
    import polars as pl

    df = pl.DataFrame(shared_lake)
    assert df.height == shared_lake.total_rows
    assert df.columns == shared_lake.schema.names
    assert df.slice(150_000, 4).to_arrow().to_pylist() == shared_lake.slice(150_000, 4).to_pylist()
    lazy = pl.from_arrow(shared_lake.iter_batches(columns=["v", "x"], batch_size=50_000).read_all())
    assert lazy.select(pl.col("v").count()).item() == pc.count(pa.table(shared_lake).column("v")).as_py()


def test_duckdb_queries_the_lake(shared_lake):
    import duckdb

    m = shared_lake  # noqa: F841  (found by DuckDB's replacement scan)
    con = duckdb.connect()
    # DuckDB finds `m` among the locals of the frame that runs the query: query here.
    count = duckdb.sql("select count(*) from m").fetchall()[0][0]
    assert count == shared_lake.total_rows
    t = pa.table(shared_lake)
    want = pc.sum(t.column("v")).as_py()
    assert con.sql("select sum(v) from m").fetchall()[0][0] == want
    lo, hi = con.sql("select min(small), max(small) from m").fetchall()[0]
    assert (lo, hi) == (pc.min(t.column("small")).as_py(), pc.max(t.column("small")).as_py())


def test_duckdb_reads_a_slice_table(shared_lake):
    import duckdb

    part = shared_lake.slice(200_000, 1_000, columns=["code", "v", "x"], with_gid=True)  # noqa: F841
    got = duckdb.sql("select _gid, code, v, x from part order by _gid").arrow()
    if isinstance(got, pa.RecordBatchReader):
        got = got.read_all()
    assert got.to_pylist() == shared_lake.slice(200_000, 1_000, columns=["code", "v", "x"], with_gid=True).select(
        ["_gid", "code", "v", "x"]).to_pylist()


def test_pandas_reads_slices_and_batches(shared_lake):
    import pandas as pd

    df = shared_lake.slice(100, 500, columns=["gid", "name", "small"], with_path=True).to_pandas()
    assert isinstance(df, pd.DataFrame)
    assert len(df) == 500
    assert list(df.columns) == ["gid", "name", "small", "_path"]
    assert df["_path"].iloc[0] == shared_lake.locate_row(100)[0]
    n = sum(len(b.to_pandas()) for b in shared_lake.iter_batches(batch_size=100_000, columns=["name"]))
    assert n == shared_lake.total_rows


def test_results_do_not_import_pandas(tmp_path):
    """Tables and batches come from pyarrow's C stream import: a first slice, take or batch
    does not pay for importing pandas (pyarrow.table() would ask whether its argument is a
    DataFrame, importing pandas on a process's first call)."""
    import subprocess
    import sys

    from conftest import lake_with

    root = lake_with(tmp_path / "lake", {"a.csv": "id,name\n1,x\n2,y\n", "b.ndjson": '{"id":3}\n'})
    code = (
        "import sys, bazan.lake as bl\n"
        f"m = bl.create_map({str(root)!r}, progress=False)\n"
        "assert m.slice(0, 3).num_rows == 3\n"
        "assert m.take([2, 0]).column('id').to_pylist() == [3, 1]\n"
        "assert sum(b.num_rows for b in m.iter_batches(batch_size=2)) == 3\n"
        "assert m[1]['name'] == 'y'\n"
        "print('pandas' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False", out.stdout + out.stderr
