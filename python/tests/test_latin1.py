"""``create_map(..., encoding="latin-1")``: CSV files whose bytes are Latin-1 read as Python's
csv module reads them with ``encoding="latin-1"``, through slice, take and a reload and an
update of the map; the UTF-8 default refuses them with the row and byte offset, and an
unknown encoding is a ValueError."""

from __future__ import annotations

import csv
import io

import pytest

import bazan
import bazan.lake as bl

# The header and three records; the second has a quoted field with a comma and doubled
# quotes (bytes: 0xE9 é, 0xFC ü, 0xEB ë, 0xE3 ã, 0xFF ÿ).
A = b'caf\xe9,city\nJos\xe9,M\xfcnchen\n"Zo\xeb, ""q""",S\xe3o Paulo\nplain,Z\xfcrich\xff\n'


def python_rows(data: bytes):
    rows = list(csv.reader(io.StringIO(data.decode("latin-1"), newline="")))
    return [dict(zip(rows[0], r)) for r in rows[1:]]


def test_latin1_map_reads_as_python_csv(tmp_path):
    (tmp_path / "a.csv").write_bytes(A)
    expected = [
        {"café": "José", "city": "München"},
        {"café": 'Zoë, "q"', "city": "São Paulo"},
        {"café": "plain", "city": "Zürichÿ"},
    ]
    assert python_rows(A) == expected
    lake = bl.create_map(tmp_path, stride=2, encoding="latin-1", progress=False)
    assert lake.text_encoding == "latin-1"
    assert lake.slice(0, 3).to_pylist() == expected
    assert lake.slice(2, 1, columns=["city"]).to_pylist() == [{"city": "Zürichÿ"}]
    assert lake.take([2, 0]).to_pylist() == [expected[2], expected[0]]

    again = bl.load_map(tmp_path)
    assert again.text_encoding == "latin-1"
    assert again.slice(1, 1).to_pylist() == [expected[1]]

    b = b"caf\xe9,city\n\xe6\xf8\xe5,\xd8sl\xf8\n"
    (tmp_path / "b.csv").write_bytes(b)
    report = bl.update_map(tmp_path, progress=False)
    assert report.added == ["b.csv"]
    assert report.map.text_encoding == "latin-1"
    assert report.map.slice(3, 1).to_pylist() == python_rows(b) == [{"café": "æøå", "city": "Øslø"}]


def test_utf8_default_refuses_with_row_and_offset(tmp_path):
    (tmp_path / "a.csv").write_bytes(b"name,city\nJos\xe9,x\n")
    with pytest.raises(bazan.CorruptFileError) as info:
        bl.create_map(tmp_path, progress=False)
    assert "a.csv" in str(info.value)
    assert "at row 0 at byte 13: invalid UTF-8" in str(info.value)
    assert info.value.offset == 13


def test_unknown_encoding_is_a_value_error(tmp_path):
    (tmp_path / "a.csv").write_bytes(b"x\n1\n")
    with pytest.raises(ValueError, match="unknown text encoding 'cp1252'|unknown text encoding \"cp1252\""):
        bl.create_map(tmp_path, encoding="cp1252", progress=False)
    with pytest.raises(TypeError, match="encoding"):
        bl.create_map(tmp_path, encoding=1, progress=False)
    assert not (tmp_path / ".br_map.bazan").exists()
    assert bl.create_map(tmp_path, encoding="UTF-8", progress=False).text_encoding == "utf-8"
