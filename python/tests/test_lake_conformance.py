"""Every read API of bazan.lake on a copy of the conformance lake, against its answer key
(expected.json, written from the official libraries) and against pyarrow, polars and DuckDB
reading the same files directly."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import bazan
import bazan.lake as bl
from conftest import assert_rows, lake_with, same_value

# expected.json names formats by extension; the map stores the handler's name.
HANDLER = {
    "arrow": "arrow_ipc",
    "feather": "arrow_ipc",
    "arrows": "arrow_stream",
    "jsonl": None,  # ndjson or json_array, by content
    "json": None,
}


def test_totals_and_entries_follow_the_answer_key(shared_lake, expected):
    m = shared_lake
    assert (m.total_rows, m.total_files, m.total_bytes) == (
        expected["total_rows"],
        expected["total_files"],
        expected["total_bytes"],
    )
    assert len(m) == expected["total_rows"]
    entries = m.entries()
    assert isinstance(entries, pa.Table)
    got = entries.select(["path", "format", "row_count", "first_global_row", "size_bytes"]).to_pylist()
    assert [g["path"] for g in got] == [f["path"] for f in expected["files"]]
    for g, f in zip(got, expected["files"]):
        assert g["row_count"] == f["row_count"], f["path"]
        assert g["first_global_row"] == f["first_global_row"], f["path"]
        assert g["size_bytes"] == f["size_bytes"], f["path"]
        want = HANDLER.get(f["format"], f["format"])
        if want is None:
            assert g["format"] == ("json_array" if f.get("layout") == "array" else "ndjson"), f["path"]
        else:
            assert g["format"] == want, f["path"]
    assert m.failures == []
    assert m.stride == expected["checkpoint_stride"]
    assert m.fingerprint == "metadata"


def test_locate_row_of_every_sample(shared_lake, expected):
    for s in expected["samples"]:
        assert shared_lake.locate_row(s["global_row"]) == (s["path"], s["local_row"]), s["why"]


def test_every_sample_by_index_and_by_take(shared_lake, expected):
    m = shared_lake
    samples = expected["samples"]
    for s in samples:
        row = m[s["global_row"]]
        assert isinstance(row, dict)
        for k, v in s["values"].items():
            assert same_value(v, row[k]), f"{s['why']}: {k}: {row[k]!r} != {v!r}"
    # One take of every sample, in reverse order, with the virtual columns.
    order = [s["global_row"] for s in reversed(samples)]
    t = m.take(order, with_gid=True, with_path=True)
    assert t.column("_gid").to_pylist() == order
    assert t.column("_path").to_pylist() == [s["path"] for s in reversed(samples)]
    assert_rows([s["values"] for s in reversed(samples)], t.to_pylist(), "take of the samples")


def test_every_slice_of_the_answer_key(shared_lake, expected):
    for s in expected["slices"]:
        t = shared_lake.slice(s["start"], s["len"], columns=s["columns"], with_path=True)
        assert t.num_rows == s["len"], s["why"]
        if s["columns"] is not None:
            assert t.column_names == s["columns"] + ["_path"], s["why"]
        paths = t.column("_path").to_pylist()
        segs = [(p, paths.count(p)) for p in dict.fromkeys(paths)]
        assert segs == [(g["path"], g["len"]) for g in s["segments"] if g["len"] > 0], s["why"]
        assert_rows(s["rows"], t.to_pylist(), s["why"])


def test_schema_names_are_the_union_in_first_seen_order(shared_lake, expected):
    seen = []
    for f in expected["files"]:
        for c in f["columns"]:
            if c["name"] not in seen:
                seen.append(c["name"])
    assert shared_lake.schema.names == seen


def test_schema_types_follow_the_unified_rule(shared_lake, expected):
    schema = shared_lake.schema
    assert isinstance(schema, pa.Schema)
    seen = []
    for f in expected["files"]:
        for c in f["columns"]:
            if c["name"] not in seen:
                seen.append(c["name"])
    assert schema.names == seen
    # One type per name, by the unified rule; a file lacking a column reads nulls.
    types = {}
    for f in expected["files"]:
        for c in f["columns"]:
            types.setdefault(c["name"], set()).add(c["type"])
    for name in schema.names:
        t = schema.field(name).type
        kinds = types[name]
        if len(kinds) == 1 and kinds <= {"int32", "int64", "float64"}:
            # Equal types stay (a 0-row file's columns do not vote).
            assert t == pa.type_for_alias(next(iter(kinds)).replace("float64", "double")), name
        elif kinds == {"float64"}:
            assert t == pa.float64(), name
        elif kinds <= {"int32", "int64"}:
            assert t == pa.int64(), name
        elif kinds <= {"int32", "int64", "float64"}:
            assert t == pa.float64(), name


def test_slice_projection_virtual_columns_and_clamping(shared_lake):
    m = shared_lake
    total = m.total_rows
    t = m.slice(total - 3, 10, columns=["name"], with_gid=True)
    assert t.num_rows == 3
    assert t.column_names == ["name", "_gid"]
    assert t.column("_gid").to_pylist() == [total - 3, total - 2, total - 1]
    assert t.schema.field("_gid").type == pa.int64()
    p = m.slice(0, 2, with_path=True).schema.field("_path").type
    assert pa.types.is_dictionary(p) and p.value_type == pa.string()
    assert m.slice(total, 5).num_rows == 0
    assert m.slice(10, 0).num_rows == 0
    assert m[total - 2 :].num_rows == 2
    assert m[5:3].num_rows == 0
    stepped = m[0:20:7]
    assert stepped.num_rows == 3
    assert stepped.to_pylist() == m.take([0, 7, 14]).to_pylist()


def test_out_of_range_rows_raise_index_error(shared_lake):
    m = shared_lake
    total = m.total_rows
    for bad in (lambda: m[total], lambda: m[-total - 1], lambda: m.locate_row(total),
                lambda: m.locate_row(-1), lambda: m.take([0, total]), lambda: m.slice(total + 1, 1),
                lambda: m.iter_batches(start=total + 1)):
        with pytest.raises(IndexError) as info:
            bad()
        assert isinstance(info.value, bazan.OutOfRangeError)
        assert isinstance(info.value, bazan.BazanError)
        assert str(total) in str(info.value)


def test_take_keeps_order_and_repeats_and_accepts_arrays(shared_lake):
    m = shared_lake
    total = m.total_rows
    rows = [total - 1, 0, 150_000, 0, 65_536, 65_535, -1]
    want = [r % total for r in rows]
    t = m.take(rows, with_gid=True)
    assert t.column("_gid").to_pylist() == want
    for arr in (np.array(rows, dtype=np.int64), pa.array(rows, pa.int32()), pa.chunked_array([rows[:3], rows[3:]])):
        assert m.take(arr, with_gid=True).column("_gid").to_pylist() == want
    assert m.take(range(10, 13), with_gid=True).column("_gid").to_pylist() == [10, 11, 12]
    empty = m.take([], columns=["gid"])
    assert empty.num_rows == 0 and empty.column_names == ["gid"]
    assert m.take(rows).to_pylist() == [m[r] for r in rows]


def test_take_equals_slices_of_the_same_rows(shared_lake):
    m = shared_lake
    rng = np.random.default_rng(3)
    rows = rng.integers(0, m.total_rows, 300)
    t = m.take(rows)
    for i in (0, 17, 299):
        assert t.slice(i, 1).to_pylist() == m.slice(int(rows[i]), 1).to_pylist()


def test_take_through_the_decoded_block_cache_gives_the_same_rows(shared_lake):
    m = shared_lake
    rng = np.random.default_rng(5)
    rows = rng.integers(0, m.total_rows, 2_000)
    assert m.cache_bytes == 256 << 20
    try:
        m.cache_bytes = 0
        want = m.take(rows)
        assert m.cached_bytes == 0
        m.cache_bytes = 64 << 20
        # First touch reads the rows, the second keeps the blocks, the third reads them kept.
        for _ in range(3):
            assert m.take(rows).equals(want)
        assert 0 < m.cached_bytes <= 64 << 20
        assert m.take(rows, columns=["gid"]).column("gid").equals(want.column("gid"))
        m.cache_bytes = 0
        assert m.cached_bytes == 0
        with pytest.raises(TypeError, match="cache_bytes"):
            m.cache_bytes = "1 GB"
        with pytest.raises(ValueError, match="cache_bytes"):
            m.cache_bytes = -1
    finally:
        m.cache_bytes = 256 << 20


def test_iter_batches_streams_the_lake_in_bounded_batches(shared_lake):
    m = shared_lake
    reader = m.iter_batches(batch_size=40_000)
    assert isinstance(reader, pa.RecordBatchReader)
    assert reader.schema == m.schema
    n = 0
    for batch in reader:
        assert 0 < batch.num_rows <= 40_000
        n += batch.num_rows
    assert n == m.total_rows
    part = m.iter_batches(batch_size=1000, columns=["gid", "name"], start=65_000, stop=67_100).read_all()
    assert part.column_names == ["gid", "name"]
    assert part.to_pylist() == m.slice(65_000, 2_100, columns=["gid", "name"]).to_pylist()
    assert m.iter_batches(start=10, stop=5).read_all().num_rows == 0
    gid = m.iter_batches(start=m.total_rows - 5, with_gid=True).read_all().column("_gid").to_pylist()
    assert gid == list(range(m.total_rows - 5, m.total_rows))


def test_whole_lake_through_the_stream_interface(shared_lake):
    t = pa.table(shared_lake)
    assert t.num_rows == shared_lake.total_rows
    assert t.schema == shared_lake.schema
    assert t.slice(4200, 3).to_pylist() == shared_lake.slice(4200, 3).to_pylist()


def _ours(m, f, names):
    return m.slice(f["first_global_row"], f["row_count"], columns=names)


def _compare(ours: pa.Table, ref: pa.Table, where: str) -> None:
    assert ours.num_rows == ref.num_rows, where
    ref_rows = ref.to_pylist()
    our_rows = ours.to_pylist()
    for i, (e, g) in enumerate(zip(ref_rows, our_rows)):
        for k, v in e.items():
            assert same_value(v, g[k]), f"{where}: row {i} column {k!r}: {g[k]!r} != {v!r}"


def _files(expected, *formats):
    return [f for f in expected["files"] if f["format"] in formats and f["row_count"] > 0]


def test_columnar_files_equal_pyarrow(shared_lake, expected):
    import pyarrow.feather as feather
    import pyarrow.ipc as ipc
    import pyarrow.orc as orc
    import pyarrow.parquet as pq

    root = shared_lake.root
    checked = 0
    for f in _files(expected, "parquet", "arrow", "feather", "arrows", "orc"):
        path = f"{root}/{f['path']}"
        if f["format"] == "parquet":
            ref = pq.read_table(path)
        elif f["format"] == "orc":
            ref = orc.read_table(path)
        elif f["format"] == "arrows":
            ref = ipc.open_stream(path).read_all()
        elif f["format"] == "feather":
            ref = feather.read_table(path)
        else:
            ref = ipc.open_file(path).read_all()
        ref = pa.table({n: ref.column(n).cast(pa.string()) if pa.types.is_date(ref.column(n).type) else ref.column(n) for n in ref.column_names})
        _compare(_ours(shared_lake, f, ref.column_names), ref, f["path"])
        checked += 1
    assert checked >= 8


def test_row_files_equal_duckdb_and_polars(shared_lake, expected):
    import duckdb
    import polars as pl

    root = shared_lake.root
    checked = 0
    for f in _files(expected, "csv", "tsv", "psv"):
        path = f"{root}/{f['path']}"
        names = [c["name"] for c in f["columns"]]
        types = {c["name"]: {"int64": "BIGINT", "float64": "DOUBLE", "utf8": "VARCHAR", "int32": "INTEGER",
                             "bool": "BOOLEAN", "date32": "DATE"}[c["type"]] for c in f["columns"]}
        delim = f.get("delimiter", ",")
        ref = duckdb.read_csv(path, header=True, delimiter=delim, quotechar='"', escapechar='"',
                              columns=types).arrow()
        if isinstance(ref, pa.RecordBatchReader):
            ref = ref.read_all()
        ref = pa.table({n: ref.column(n).cast(pa.string()) if pa.types.is_date(ref.column(n).type) else ref.column(n) for n in names})
        _compare(_ours(shared_lake, f, names), ref, f"{f['path']} (DuckDB)")
        checked += 1
    for f in _files(expected, "ndjson"):
        path = f"{root}/{f['path']}"
        names = [c["name"] for c in f["columns"]]
        ref = pl.read_ndjson(path).to_arrow()
        ref = pa.table({n: ref.column(n).cast(pa.string()) if pa.types.is_date(ref.column(n).type) else ref.column(n) for n in names if n in ref.column_names})
        _compare(_ours(shared_lake, f, ref.column_names), ref, f"{f['path']} (polars)")
        checked += 1
    for f in _files(expected, "avro"):
        path = f"{root}/{f['path']}"
        ref = pl.read_avro(path).to_arrow()
        ref = pa.table({n: ref.column(n).cast(pa.string()) if pa.types.is_date(ref.column(n).type) else ref.column(n) for n in ref.column_names})
        _compare(_ours(shared_lake, f, ref.column_names), ref, f"{f['path']} (polars)")
        checked += 1
    assert checked >= 15


def test_results_keep_their_own_schema_across_lakes(tmp_path):
    # Results reach pyarrow against a pyarrow.Schema kept from earlier calls (compared by
    # value): two lakes whose columns share names but not types, read in turn, must each get
    # their own types and values, and so must projections and the virtual columns.
    ints = bl.create_map(lake_with(tmp_path / "ints", {"a.csv": "x,y\n1,2\n3,4\n"}), progress=False)
    texts = bl.create_map(lake_with(tmp_path / "texts", {"a.csv": "x,y\nu,v\nw,z\n"}), progress=False)
    for _ in range(3):
        i = ints.slice(0, 2)
        t = texts.slice(0, 2)
        assert i.schema.field("x").type == pa.int64() and i.to_pydict() == {"x": [1, 3], "y": [2, 4]}
        assert t.schema.field("x").type != pa.int64() and t.to_pydict() == {"x": ["u", "w"], "y": ["v", "z"]}
        g = ints.slice(1, 1, columns=["y"], with_gid=True, with_path=True)
        assert g.column_names == ["y", "_gid", "_path"]
        assert g.to_pylist() == [{"y": 4, "_gid": 1, "_path": "a.csv"}]
        assert ints.take([1, 0], columns=["y", "x"]).to_pydict() == {"y": [4, 2], "x": [3, 1]}
        batches = list(texts.iter_batches(batch_size=1))
        assert [b.to_pydict() for b in batches] == [{"x": ["u"], "y": ["v"]}, {"x": ["w"], "y": ["z"]}]
