"""Errors are exception classes of bazan, each also the built-in class a Python programmer
catches for it, naming the path (and byte offset); bad arguments name the argument; never a
Rust panic text."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

import bazan
import bazan.lake as bl
import bazan.tsfile as ts
from conftest import lake_with


def test_missing_paths_are_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError) as info:
        bl.create_map(tmp_path / "nope", progress=False)
    assert isinstance(info.value, bazan.NotFoundError) and isinstance(info.value, bazan.BazanError)
    assert "nope" in str(info.value)
    assert info.value.kind == "not_found"
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError):
        bl.load_map(tmp_path / "empty")
    with pytest.raises(FileNotFoundError):
        bl.doctor_lake_map(tmp_path / "empty")
    with pytest.raises(FileNotFoundError):
        ts.info(tmp_path / "none.tsfile")


def test_a_corrupt_file_names_its_path_and_offset(tmp_path):
    root = lake_with(tmp_path / "lake", {"ok.csv": "a\n1\n"})
    (root / "bad.parquet").write_bytes(b"PAR1" + b"\x00" * 40 + b"garbage!PAR1")
    with pytest.raises(bazan.CorruptFileError) as info:
        bl.create_map(root, progress=False)
    assert "bad.parquet" in str(info.value)
    assert info.value.path is not None and info.value.path.endswith("bad.parquet")
    assert not (root / ".br_map.bazan").exists()
    (root / "bad.parquet").unlink()
    (root / "bad.ndjson").write_text('{"a": 1}\n{"a": 2\n{"a": 3}\n')
    with pytest.raises(bazan.CorruptFileError) as info:
        bl.create_map(root, progress=False)
    assert "bad.ndjson" in str(info.value)
    assert info.value.offset is not None
    assert str(info.value.offset) in str(info.value)


def test_a_changed_file_is_stale(tmp_path):
    root = lake_with(tmp_path / "lake", {"a.csv": "x\n1\n2\n3\n", "b.csv": "x\n4\n"})
    m = bl.create_map(root, progress=False)
    with open(root / "a.csv", "a") as f:
        f.write("5\n")
    later = time.time() + 5
    os.utime(root / "a.csv", (later, later))
    with pytest.raises(bazan.StaleFileError) as info:
        m.slice(0, 2)
    assert "a.csv" in str(info.value)
    assert info.value.kind == "stale"
    assert m.slice(3, 1).column("x").to_pylist() == [4]  # b.csv is unchanged


def test_unsupported_formats(tmp_path):
    p = tmp_path / "plain.tsfile"
    p.write_text("not a tsfile at all\n")
    with pytest.raises(bazan.BazanError) as info:
        ts.info(p)
    assert isinstance(info.value, (bazan.UnsupportedFormatError, bazan.CorruptFileError))
    assert "plain.tsfile" in str(info.value)


def test_bad_arguments_name_the_argument(shared_lake, tmp_path):
    m = shared_lake
    cases = [
        (ValueError, "stride", lambda: bl.create_map(tmp_path, stride=0)),
        (TypeError, "stride", lambda: bl.create_map(tmp_path, stride="big")),
        (ValueError, "fingerprint", lambda: bl.create_map(tmp_path, fingerprint="md5")),
        (TypeError, "stats_columns", lambda: bl.create_map(tmp_path, stats_columns="gid")),
        (ValueError, "threads", lambda: bl.create_map(tmp_path, threads=0)),
        (TypeError, "progress", lambda: bl.create_map(tmp_path, progress="yes")),
        (TypeError, "root", lambda: bl.create_map(42)),
        (TypeError, "skip_errors", lambda: bl.create_map(tmp_path, skip_errors="no")),
        (TypeError, "columns", lambda: m.slice(0, 1, columns="gid")),
        (ValueError, "nope", lambda: m.slice(0, 1, columns=["nope"])),
        (ValueError, "length", lambda: m.slice(0, -1)),
        (TypeError, "start", lambda: m.slice("0", 1)),
        (ValueError, "batch_size", lambda: m.iter_batches(batch_size=0)),
        (TypeError, "indices", lambda: m.take(5)),
        (TypeError, "indices", lambda: m.take(["a"])),
        (TypeError, "LakeMap indices", lambda: m["a"]),
        (ValueError, "fingerprint", lambda: m.doctor(fingerprint="sha1")),
        (TypeError, "table", lambda: ts.read("x.tsfile", table=3)),
        (TypeError, "data", lambda: ts.write(tmp_path / "o.tsfile", [1, 2], table="t", time="time")),
        (TypeError, "start_time", lambda: ts.read("x.tsfile", table="t", start_time="0")),
    ]
    for kind, word, call in cases:
        with pytest.raises(kind) as info:
            call()
        assert word in str(info.value), (word, str(info.value))
        assert "panicked" not in str(info.value)
    with pytest.raises(bazan.InvalidArgumentError):
        m.slice(0, 1, columns=["nope"])


def test_error_classes_derive_from_the_builtin_ones():
    assert issubclass(bazan.NotFoundError, FileNotFoundError)
    assert issubclass(bazan.OutOfRangeError, IndexError)
    assert issubclass(bazan.InvalidArgumentError, ValueError)
    assert issubclass(bazan.PermissionDeniedError, PermissionError)
    assert issubclass(bazan.BazanIOError, OSError)
    for cls in (bazan.CorruptFileError, bazan.StaleFileError, bazan.UnsupportedFormatError,
                bazan.NotFoundError, bazan.OutOfRangeError, bazan.InvalidArgumentError):
        assert issubclass(cls, bazan.BazanError)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every file; permissions cannot be tested")
def test_permission_denied(tmp_path):
    root = lake_with(tmp_path / "lake", {"a.csv": "x\n1\n"})
    (root / "a.csv").chmod(0)
    with pytest.raises(PermissionError):
        bl.create_map(root, progress=False)


def test_errors_are_picklable_and_keep_their_attributes(tmp_path):
    import pickle

    with pytest.raises(bazan.NotFoundError) as info:
        bl.load_map(tmp_path / "missing")
    again = pickle.loads(pickle.dumps(info.value))
    assert type(again) is bazan.NotFoundError
    assert str(again) == str(info.value)


def test_path_like_roots(tmp_path):
    root = lake_with(tmp_path / "lake", {"a.csv": "x\n1\n"})
    assert bl.create_map(Path(root), progress=False).total_rows == 1
    assert bl.load_map(str(root)).root == str(root)


def test_stats_columns_no_file_has_warn(tmp_path):
    root = lake_with(tmp_path / "lake", {"a.csv": "id,name\n1,a\n2,b\n"})
    with pytest.warns(UserWarning, match="statistics columns that no file of the lake has: `off`"):
        bl.create_map(root, stats_columns=["off"], progress=False)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = bl.create_map(root, stats_columns=["id"], progress=False)
    assert len(m) == 2
