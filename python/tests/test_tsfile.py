"""bazan.tsfile on the TsFile conformance corpus (files written by the official Apache TsFile
library, with the official reader's answers), and files written from Python read back by
Bazan and by the official reader."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pyarrow as pa
import pytest

import bazan
import bazan.tsfile as ts
from conftest import TSFILE_CORPUS, _require


def _cases():
    if not TSFILE_CORPUS.exists():
        return []
    return sorted(p.name[: -len(".expected.json")] for p in TSFILE_CORPUS.glob("*.expected.json"))


def _plain(table: pa.Table) -> list:
    """Rows with the corpus's value encoding: times as int64, dates as text, blobs as hex."""
    cols = []
    for col in table.columns:
        if pa.types.is_timestamp(col.type):
            col = col.cast(pa.int64())
        values = col.to_pylist()
        if pa.types.is_date(col.type):
            values = [None if v is None else v.isoformat() for v in values]
        elif pa.types.is_binary(col.type) or pa.types.is_large_binary(col.type):
            values = [None if v is None else v.hex() for v in values]
        cols.append(values)
    return [list(r) for r in zip(*cols)]


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b and math.copysign(1, a) == math.copysign(1, b) or (math.isnan(a) and math.isnan(b))
    return a == b


def _assert_rows(got, want, where):
    assert len(got) == len(want), f"{where}: {len(got)} rows, expected {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        assert len(g) == len(w) and all(_same(x, y) for x, y in zip(g, w)), f"{where} row {i}: {g} != {w}"


@pytest.mark.parametrize("case", _cases())
def test_info_and_read_match_the_official_reader(case):
    root = _require(TSFILE_CORPUS)
    path = root / f"{case}.tsfile"
    exp = json.loads((root / f"{case}.expected.json").read_text(encoding="utf-8"))
    info = ts.info(path)
    assert info["format_version"] == exp["format_version"]
    assert info["file_size"] == exp["file_size"]
    assert info["model"] == exp["model"]
    tables = sorted(info["tables"], key=lambda t: t["name"])  # the answers are sorted by name
    assert [t["name"] for t in tables] == [t["name"] for t in exp["tables"]]
    for got, want in zip(tables, exp["tables"]):
        assert [(c["name"], c["data_type"], c["category"]) for c in got["columns"]] == [
            (c["name"], c["data_type"], c["category"]) for c in want["columns"]
        ]
    data = exp["data"]
    for t in data.get("tables", []):
        table = ts.read(path, table=t["table"])
        assert table.column_names == t["columns"]
        assert table.num_rows == t["row_count"]
        rows = _plain(table)
        if data["rows_included"]:
            _assert_rows(rows, t["rows"], f"{case}/{t['table']}")
        else:
            for i, row in t["row_samples"]:
                _assert_rows([rows[i]], [row], f"{case}/{t['table']} row {i}")
    for d in data.get("devices", []):
        table = ts.read(path, device=d["device"])
        assert table.column_names == d["columns"]
        assert table.num_rows == d["row_count"]
        rows = _plain(table)
        if data["rows_included"]:
            _assert_rows(rows, d["rows"], f"{case}/{d['device']}")
        else:
            for i, row in d["row_samples"]:
                _assert_rows([rows[i]], [row], f"{case}/{d['device']} row {i}")


def test_read_projects_and_filters_by_time_and_tag():
    path = _require(TSFILE_CORPUS) / "table_all_types.tsfile"
    full = ts.read(path, table="weather")
    times = full.column("time").cast(pa.int64()).to_pylist()
    lo, hi = sorted(times)[10], sorted(times)[50]
    part = ts.read(path, table="weather", columns=["time", "region", "f_int32"], start_time=lo, end_time=hi)
    assert part.column_names == ["time", "region", "f_int32"]
    got = part.column("time").cast(pa.int64()).to_pylist()
    assert got and all(lo <= t <= hi for t in got)
    assert len(got) == sum(1 for t in times if lo <= t <= hi)
    region = full.column("region").to_pylist()[0]
    tagged = ts.read(path, table="weather", tags={"region": region})
    assert set(tagged.column("region").to_pylist()) == {region}
    assert tagged.num_rows == full.column("region").to_pylist().count(region)
    # One table: table= may be left out.
    assert ts.read(path).num_rows == full.num_rows


def test_read_errors():
    path = _require(TSFILE_CORPUS) / "table_all_types.tsfile"
    with pytest.raises(ValueError):
        ts.read(path, table="weather", device="root.x")
    with pytest.raises(bazan.BazanError) as info:
        ts.read(path, table="no_such_table")
    assert "no_such_table" in str(info.value)
    with pytest.raises(ValueError) as info:
        ts.read(path, table="weather", columns=["nope"])
    assert "nope" in str(info.value)
    with pytest.raises(ValueError, match="table"):
        ts.read(_require(TSFILE_CORPUS) / "table_multi_tables.tsfile")


def _sample():
    return pa.table(
        {
            "ts": pa.array([5, 1, 3, 2, 4, 1], pa.int64()),
            "city": ["b", "a", "a", "b", "a", "b"],
            "temp": [1.5, -2.25, 3.0, None, 4.75, 0.5],
            "n": pa.array([1, 2, None, 4, 5, 6], pa.int32()),
            "ok": [True, False, None, True, True, False],
            "note": ["x", None, "z", "é", "", "long " * 10],
        }
    )


def test_write_then_read_back(tmp_path):
    t = _sample()
    out = tmp_path / "out.tsfile"
    assert ts.write(out, t, table="weather", time="ts", tags=["city"], encodings={"temp": "GORILLA"}, compression="ZSTD") == 6
    back = ts.read(out, table="weather")
    assert back.column_names == ["time", "city", "temp", "n", "ok", "note"]
    rows = sorted(_plain(back), key=lambda r: (r[1], r[0]))
    want = sorted(([r["ts"], r["city"], r["temp"], r["n"], r["ok"], r["note"]] for r in t.to_pylist()), key=lambda r: (r[1], r[0]))
    _assert_rows(rows, want, "round trip")
    info = ts.info(out)
    cols = {c["name"]: c for c in info["tables"][0]["columns"]}
    assert cols["temp"]["encoding"] == "GORILLA" and cols["temp"]["compression"] == "ZSTD"
    assert cols["city"]["category"] == "TAG"


def test_write_takes_any_arrow_stream(tmp_path):
    import duckdb
    import polars as pl

    df = pl.from_arrow(_sample())
    assert ts.write(tmp_path / "pl.tsfile", df, table="t", time="ts", tags=["city"]) == 6
    rel = duckdb.sql("select * from range(5) r(ts), (select 'k' as tag)")
    assert ts.write(tmp_path / "duck.tsfile", rel, table="t", time="ts", tags=["tag"]) == 5
    reader = _sample().to_reader(max_chunksize=2)
    assert ts.write(tmp_path / "reader.tsfile", reader, table="t", time="ts", tags=["city"]) == 6
    assert ts.read(tmp_path / "pl.tsfile", table="t").num_rows == 6


def test_write_errors_leave_no_file(tmp_path):
    dup = pa.table({"ts": [1, 1], "v": [1.0, 2.0]})
    out = tmp_path / "dup.tsfile"
    with pytest.raises(bazan.BazanError) as info:
        ts.write(out, dup, table="t", time="ts")
    assert "1" in str(info.value)
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(ValueError, match="nope"):
        ts.write(out, _sample(), table="t", time="nope")
    with pytest.raises(ValueError):
        ts.write(out, _sample(), table="t", time="ts", encodings={"temp": "NO_SUCH"})
    assert list(tmp_path.iterdir()) == []


def test_written_files_are_read_by_the_official_reader(tmp_path):
    tsfile = pytest.importorskip("tsfile", reason="the official reader (pip tsfile==2.5.0) is not installed")
    out = tmp_path / "out.tsfile"
    t = _sample().drop_columns(["ok"])
    ts.write(out, t, table="weather", time="ts", tags=["city"])
    r = tsfile.TsFileReader(str(out))
    try:
        schemas = r.get_all_table_schemas()
        assert list(schemas) == ["weather"]
        cols = [c.get_column_name() for c in schemas["weather"].get_columns()]
        rs = r.query_table("weather", cols, batch_size=1024)
        rows = []
        while True:
            b = rs.read_arrow_batch()
            if b is None or b.num_rows == 0:
                break
            rows.extend(b.to_pylist())
        rs.close()
    finally:
        r.close()
    assert len(rows) == 6
    got = sorted(((r["city"], r["n"], r["temp"], r["note"]) for r in rows), key=lambda x: repr(x))
    want = sorted(((r["city"], r["n"], r["temp"], r["note"]) for r in t.to_pylist()), key=lambda x: repr(x))
    assert got == want


def test_tsfiles_in_a_lake_are_mapped(tmp_path):
    import bazan.lake as bl

    root = tmp_path / "lake"
    root.mkdir()
    ts.write(root / "a.tsfile", _sample(), table="weather", time="ts", tags=["city"])
    (root / "b.csv").write_text("time,city\n9,c\n")
    m = bl.create_map(root, progress=False)
    assert m.total_rows == 7
    assert m.to_dict()["files"][0]["format"] == "tsfile"
    assert m.slice(0, 6).num_rows == 6
    assert Path(m.root) == root
