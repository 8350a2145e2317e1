"""bazan.sql: SQL over a LakeMap, a lake path, a TsFile and Arrow data, compared with the
lake's own reads and with DuckDB over the same Arrow data."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import bazan

REPO = Path(__file__).resolve().parents[2]


def test_count_and_gid_ranges_match_the_lake(shared_lake):
    m = shared_lake
    n = bazan.sql("select count(*) as n from lake", lake=m)
    assert n.column("n").to_pylist() == [m.total_rows]
    got = bazan.sql(
        "select _gid, _path from lake where _gid between 10 and 14 order by _gid", lake=m
    )
    assert got.column("_gid").to_pylist() == list(range(10, 15))
    want = m.slice(10, 5, with_path=True)
    assert got.column("_path").to_pylist() == [str(p) for p in want.column("_path").to_pylist()]


def test_stream_returns_the_rows_of_the_table(shared_lake):
    m = shared_lake
    query = "select _gid, _path from lake where _gid < 5000 order by _gid"
    table = bazan.sql(query, lake=m)
    reader = bazan.sql(query, lake=m, stream=True)
    assert isinstance(reader, pa.RecordBatchReader)
    assert reader.schema == table.schema
    assert table.schema.field("_path").type == pa.string_view()
    streamed = pa.Table.from_batches(list(reader), schema=table.schema)
    assert streamed.equals(table)
    with pytest.raises(ValueError):
        bazan.sql("selec 1", stream=True)
    with pytest.raises(TypeError):
        bazan.sql("select 1", stream=1)  # type: ignore[arg-type]


def test_paths_tsfiles_and_arrow_streams(shared_lake):
    root = shared_lake.root
    by_path = bazan.sql("select count(*) as n from l", l=root)
    assert by_path.column("n").to_pylist() == [shared_lake.total_rows]
    ts = REPO / "testdata" / "tsfile" / "table.tsfile"
    want = bazan.tsfile.read(ts, table=bazan.tsfile.info(ts)["index_tables"][0])
    got = bazan.sql("select count(*) as n from t", t=ts)
    assert got.column("n").to_pylist() == [want.num_rows]
    data = pa.table({"k": [1, 2, 2, 3], "v": [1.0, 2.0, 3.0, 4.0]})
    agg = bazan.sql("select k, sum(v) as s from d group by k order by k", d=data)
    assert agg.column("k").to_pylist() == [1, 2, 3]
    assert agg.column("s").to_pylist() == [1.0, 5.0, 4.0]
    duckdb = pytest.importorskip("duckdb")
    peer = duckdb.sql("select k, sum(v) as s from data group by k order by k").arrow()
    if isinstance(peer, pa.RecordBatchReader):
        peer = peer.read_all()
    assert pc.all(pc.equal(peer.column("s"), agg.column("s"))).as_py()


def test_bad_queries_and_arguments():
    with pytest.raises(bazan.InvalidArgumentError) as e:
        bazan.sql("select nope from d", d=pa.table({"k": [1]}))
    assert "nope" in str(e.value)
    with pytest.raises(ValueError):
        bazan.sql("selec 1")
    with pytest.raises(TypeError):
        bazan.sql("select 1", d=object())
    with pytest.raises(TypeError):
        bazan.sql(42)  # type: ignore[arg-type]


def test_update_map_matches_create(fresh_lake):
    import bazan.lake as bl

    first = bl.update_map(fresh_lake, progress=False)
    assert first.created and first.map.total_files > 0
    same = bl.update_map(fresh_lake, progress=False)
    assert not same.created and same.kept == first.map.total_files
    assert same.added == same.modified == same.removed == []
    new = fresh_lake / "zz_added.ndjson"
    new.write_text('{"a": 1}\n{"a": 2}\n')
    changed = bl.update_map(fresh_lake, progress=False)
    assert changed.added == ["zz_added.ndjson"]
    assert changed.map.total_rows == same.map.total_rows + 2
    created = bl.create_map(fresh_lake, progress=False)
    assert changed.map.entries().equals(created.entries())
    assert changed.to_dict()["kept"] == same.kept
