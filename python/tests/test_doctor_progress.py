"""The Lake Doctor from Python, and progress reporting of long calls."""

from __future__ import annotations

import os
import time

import pyarrow as pa
import pytest

import bazan.lake as bl
from conftest import files_in, generated_lake, lake_with


def _touch_later(path, seconds=5):
    later = time.time() + seconds
    os.utime(path, (later, later))


def test_doctor_finds_every_kind_of_drift(tmp_path):
    root = lake_with(tmp_path / "lake", {"a.csv": "x\n1\n", "b.csv": "x\n2\n", "c.csv": "x\n3\n", "d.bin": "?"})
    m = bl.create_map(root, progress=False)
    report = m.doctor()
    assert report.ok
    assert report.healthy == ["a.csv", "b.csv", "c.csv"]
    (root / "a.csv").write_text("x\n1\n9\n")
    _touch_later(root / "a.csv")
    (root / "b.csv").unlink()
    (root / "e.ndjson").write_text('{"x": 4}\n')
    report = bl.doctor_lake_map(root)
    assert not report.ok
    assert report.healthy == ["c.csv"]
    assert report.modified == ["a.csv"]
    assert report.missing == ["b.csv"]
    assert report.unindexed == ["e.ndjson"]
    d = report.to_dict()
    assert d == {
        "fingerprint": "metadata",
        "healthy": ["c.csv"],
        "modified": ["a.csv"],
        "unindexed": ["e.ndjson"],
        "missing": ["b.csv"],
        "errors": [],
        "ok": False,
    }
    assert "modified" in repr(report)


def test_blake3_sees_an_edit_that_keeps_size_and_mtime(tmp_path):
    root = lake_with(tmp_path / "lake", {"a.csv": "x\n1\n", "b.csv": "x\n2\n"})
    plain = bl.create_map(root, progress=False)
    m = bl.create_map(root, fingerprint="blake3", progress=False)
    st = os.stat(root / "a.csv")
    (root / "a.csv").write_text("x\n7\n")
    os.utime(root / "a.csv", ns=(st.st_atime_ns, st.st_mtime_ns))
    assert plain.doctor().ok  # size and mtime cannot see it
    report = m.doctor(fingerprint="blake3")
    assert report.modified == ["a.csv"]
    assert report.healthy == ["b.csv"]
    assert report.fingerprint == "blake3"


def test_doctor_fingerprint_must_fit_the_map(tmp_path):
    root = lake_with(tmp_path / "lake", {"a.csv": "x\n1\n"})
    m = bl.create_map(root, progress=False)
    assert m.doctor(fingerprint="metadata").ok
    with pytest.raises(ValueError, match="blake3"):
        m.doctor(fingerprint="blake3")


def test_progress_callable_receives_the_counts(tmp_path):
    root = generated_lake(tmp_path / "lake", files=12, rows=500)
    seen = []
    m = bl.create_map(root, progress=lambda *a: seen.append(a))
    assert seen, "the callback was never called"
    for files_done, files_total, bytes_done, bytes_total in seen:
        assert files_total == 12 and 0 < files_done <= 12
        assert bytes_total == m.total_bytes and 0 < bytes_done <= bytes_total
    assert seen[-1] == (12, 12, m.total_bytes, m.total_bytes)
    assert [s[0] for s in seen] == sorted(s[0] for s in seen)


def test_an_exception_in_the_progress_callback_stops_the_build(tmp_path):
    root = lake_with(tmp_path / "lake", {f"f{i:02d}.slow": "x" for i in range(30)})

    def slow_count(path):
        time.sleep(0.03)
        return 1

    bl.register_handler("slow", count_rows=slow_count, read=lambda p, s, n, c: pa.table({"x": [1]}).slice(s, n))
    try:
        def fail(*_):
            raise RuntimeError("stop here")

        with pytest.raises(RuntimeError, match="stop here"):
            bl.create_map(root, progress=fail, threads=1)
        assert files_in(root) == [f"f{i:02d}.slow" for i in range(30)]  # no map, no temporary file
    finally:
        bl.unregister_handler("slow")


def test_progress_bar_only_when_asked_or_on_a_terminal(tmp_path, capfd):
    root = generated_lake(tmp_path / "lake", files=3, rows=100)
    bl.create_map(root, progress=True)
    err = capfd.readouterr().err
    assert "3/3 files" in err and err.endswith("\n")
    bl.create_map(root, progress=False)
    assert capfd.readouterr().err == ""
    bl.create_map(root)  # stderr is not a terminal under pytest
    assert capfd.readouterr().err == ""
