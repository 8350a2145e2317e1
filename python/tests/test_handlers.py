"""Python handlers: functions registered for a file extension index and read files during
create_map / slice / take / iter_batches; their exceptions surface as themselves, with the
path, and leave no map written."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest

import bazan
import bazan.lake as bl
from conftest import files_in, lake_with


def _kv_rows(path: str):
    """A toy format: one `key=value` pair per line."""
    rows = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line.strip():
            k, _, v = line.partition("=")
            rows.append({"key": k, "value": int(v)})
    return rows


def _kv_table(path: str, start: int, length, columns):
    rows = _kv_rows(path)
    end = len(rows) if length is None else start + length
    t = pa.Table.from_pylist(rows[start:end], schema=pa.schema([("key", pa.string()), ("value", pa.int64())]))
    return t.select(columns) if columns is not None else t


@pytest.fixture()
def kv_lake(tmp_path: Path) -> Path:
    return lake_with(
        tmp_path / "lake",
        {
            "a.csv": "key,value\nx,1\ny,2\n",
            "b.kv": "p=10\nq=11\nr=12\n",
            "c/d.kv": "s=13\n",
            "e.ndjson": '{"key": "z", "value": 99}\n',
        },
    )


@pytest.fixture(autouse=True)
def _clean_registry():
    yield
    for ext in list(bl.registered_handlers()):
        bl.unregister_handler(ext)


def test_a_registered_extension_is_mapped_and_read(kv_lake):
    calls = []

    def count(path):
        calls.append(("count", Path(path).name))
        return len(_kv_rows(path))

    def read(path, start, length, columns):
        calls.append(("read", Path(path).name, start, length))
        return _kv_table(path, start, length, columns)

    bl.register_handler(".kv", count_rows=count, read=read, name="keyvalue")
    assert bl.registered_handlers() == {"kv": "keyvalue"}
    m = bl.create_map(kv_lake, progress=False)
    assert m.total_rows == 2 + 3 + 1 + 1
    entries = {e["path"]: e for e in m.to_dict()["files"]}
    assert entries["b.kv"]["format"] == "keyvalue"
    assert entries["b.kv"]["blocks"] == []
    assert m.slice(0, 7, with_path=True).to_pydict() == {
        "key": ["x", "y", "p", "q", "r", "s", "z"],
        "value": [1, 2, 10, 11, 12, 13, 99],
        "_path": ["a.csv", "a.csv", "b.kv", "b.kv", "b.kv", "c/d.kv", "e.ndjson"],
    }
    assert m.take([5, 3, 0], columns=["value"]).column("value").to_pylist() == [13, 11, 1]
    assert m[4] == {"key": "r", "value": 12}
    assert pa.table(m).num_rows == 7
    assert ("count", "b.kv") in calls and ("count", "d.kv") in calls
    # A reload in the same process reads through the handler too.
    assert bl.load_map(kv_lake).slice(3, 2).column("key").to_pylist() == ["q", "r"]


def test_a_handler_overrides_a_builtin_extension(kv_lake):
    def read(path, start, length, columns):
        t = pa.table({"key": ["csv!"], "value": [7]})
        return t.slice(start, length if length is not None else 1)

    bl.register_handler("csv", count_rows=lambda p: 1, read=read)
    m = bl.create_map(kv_lake, progress=False)
    entry = [e for e in m.to_dict()["files"] if e["path"] == "a.csv"][0]
    assert entry["format"] == "csv" and entry["blocks"] == [] and entry["row_count"] == 1
    assert m[0] == {"key": "csv!", "value": 7}
    assert bl.unregister_handler("csv") is True
    assert bl.unregister_handler("csv") is False
    # The built-in csv locator is back.
    assert bl.create_map(kv_lake, progress=False)[0] == {"key": "x", "value": 1}


def test_handlers_may_return_any_arrow_stream_object(kv_lake):
    import polars as pl

    def read(path, start, length, columns):
        df = pl.from_arrow(_kv_table(path, start, length, columns))
        return df  # a polars DataFrame: __arrow_c_stream__

    bl.register_handler("kv", count_rows=lambda p: len(_kv_rows(p)), read=read)
    m = bl.create_map(kv_lake, progress=False)
    assert m.slice(2, 3).column("value").to_pylist() == [10, 11, 12]


class Boom(Exception):
    pass


def test_an_exception_in_count_rows_propagates_and_no_map_is_written(kv_lake):
    def count(path):
        if path.endswith("d.kv"):
            raise Boom("bad kv file")
        return 1

    bl.register_handler("kv", count_rows=count, read=_kv_table)
    before = files_in(kv_lake)
    with pytest.raises(Boom) as info:
        bl.create_map(kv_lake, progress=False)
    assert str(info.value) == "bad kv file"
    notes = getattr(info.value, "__notes__", [])
    assert any("d.kv" in n and "handler 'kv'" in n for n in notes), notes
    assert files_in(kv_lake) == before  # no map, no temporary file
    # With skip_errors the file is left out and reported instead.
    m = bl.create_map(kv_lake, skip_errors=True, progress=False)
    assert [p for p, _ in m.failures] == ["c/d.kv"]
    assert "bad kv file" in m.failures[0][1]


def test_an_exception_in_read_propagates_from_slice_and_iter_batches(kv_lake):
    state = {"fail": False}

    def read(path, start, length, columns):
        if state["fail"] and length != 0:
            raise KeyError(f"no such key in {path}")
        return _kv_table(path, start, length, columns)

    bl.register_handler("kv", count_rows=lambda p: len(_kv_rows(p)), read=read)
    m = bl.create_map(kv_lake, progress=False)
    state["fail"] = True
    with pytest.raises(KeyError) as info:
        m.slice(0, 7)
    assert "b.kv" in str(info.value)
    assert m.slice(0, 2).num_rows == 2  # the csv rows need no handler
    with pytest.raises(KeyError):
        m.take([6, 3])
    with pytest.raises(KeyError):
        m.iter_batches().read_all()


def test_an_exception_while_streaming_batches_propagates(kv_lake):
    def read(path, start, length, columns):
        t = _kv_table(path, start, length, columns)
        if length == 0:
            return t

        def gen():
            yield from t.to_batches()
            raise RuntimeError("stream broke")

        return pa.RecordBatchReader.from_batches(t.schema, gen())

    bl.register_handler("kv", count_rows=lambda p: len(_kv_rows(p)), read=read)
    m = bl.create_map(kv_lake, progress=False)
    with pytest.raises(Exception, match="stream broke"):
        m.slice(2, 3)


def test_bad_handler_results_and_arguments(kv_lake):
    bl.register_handler("kv", count_rows=lambda p: "three", read=_kv_table)
    with pytest.raises(TypeError, match="count_rows"):
        bl.create_map(kv_lake, progress=False)
    bl.register_handler("kv", count_rows=lambda p: 1, read=lambda *a: [1, 2, 3])
    with pytest.raises(TypeError, match="read function"):
        bl.create_map(kv_lake, progress=False)
    with pytest.raises(TypeError, match="count_rows"):
        bl.register_handler("kv", count_rows=3, read=_kv_table)
    with pytest.raises(TypeError, match="read"):
        bl.register_handler("kv", count_rows=len, read=None)
    with pytest.raises(ValueError, match="extension"):
        bl.register_handler("a/b", count_rows=len, read=_kv_table)
    with pytest.raises(bazan.InvalidArgumentError):
        bl.register_handler("", count_rows=len, read=_kv_table)


def test_unregistered_extensions_are_not_mapped(kv_lake):
    m = bl.create_map(kv_lake, progress=False)
    assert [e["path"] for e in m.to_dict()["files"]] == ["a.csv", "e.ndjson"]
    assert json.dumps(m.to_dict())  # plain JSON
