"""Maps written by Python are read by the native `bazan` command and back; the `bazan` command
installed with the wheel is the same program."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

import bazan.lake as bl
from conftest import assert_rows, run


def _show(cli, root):
    return json.loads(run(cli + ["map", "show", str(root), "--json"]).stdout)


def test_python_map_is_read_by_the_cli(cli, fresh_lake, expected):
    m = bl.create_map(fresh_lake, stride=4096, progress=False)
    shown = _show(cli, fresh_lake)
    assert shown["total_rows"] == m.total_rows == expected["total_rows"]
    assert shown["checkpoint_stride_rows"] == 4096
    assert shown == m.to_dict()
    loc = json.loads(run(cli + ["locate", str(fresh_lake), "150000", "--json"]).stdout)
    assert (loc["path"], loc["local_row"]) == m.locate_row(150_000)
    out = run(cli + ["slice", str(fresh_lake), "--start", "65530", "--len", "12", "--format", "ndjson"]).stdout
    rows = [json.loads(line) for line in out.splitlines() if line.strip()]
    assert_rows(rows, m.slice(65_530, 12).to_pylist(), "CLI slice vs Python slice")
    doc = run(cli + ["doctor", str(fresh_lake), "--json"])
    assert json.loads(doc.stdout)["healthy"] == m.total_files


def test_cli_map_is_read_by_python(cli, fresh_lake, expected):
    run(cli + ["map", "create", str(fresh_lake), "--fingerprint", "blake3", "--stats", "none"])
    m = bl.load_map(fresh_lake)
    assert m.total_rows == expected["total_rows"]
    assert m.fingerprint == "blake3"
    assert m.to_dict() == _show(cli, fresh_lake)
    for s in expected["samples"][:40]:
        assert m.locate_row(s["global_row"]) == (s["path"], s["local_row"])
    assert m.doctor().ok


def test_the_wheel_installs_the_bazan_command(fresh_lake, tmp_path):
    exe = Path(sys.executable).parent / "bazan"
    if not exe.exists():
        found = shutil.which("bazan")
        if found is None:
            pytest.fail("the bazan console script is not installed beside the interpreter")
        exe = Path(found)
    out = run([str(exe), "map", "create", str(fresh_lake), "--json"])
    assert json.loads(out.stdout)["total_rows"] == bl.load_map(fresh_lake).total_rows
    bad = run([str(exe), "locate", str(fresh_lake), "99999999999"], check=False)
    assert bad.returncode == 2 and bad.stderr.startswith("error: ")
    assert "panicked" not in bad.stderr
    usage = run([str(exe), "no-such-command"], check=False)
    assert usage.returncode == 2
    version = run([str(exe), "--version"])
    assert "bazan" in version.stdout


def test_cli_main_function_returns_the_exit_code(fresh_lake, capfd):
    from bazan import _cli

    assert _cli.main(["bazan", "map", "create", str(fresh_lake)]) == 0
    assert _cli.main(["bazan", "locate", str(fresh_lake), "-5"]) == 2
    captured = capfd.readouterr()
    assert "error" in captured.err


def test_update_report_is_the_cli_json(cli, fresh_lake):
    """UpdateReport.to_dict is the object `bazan map update --json` prints, map path and
    totals included."""
    bl.create_map(fresh_lake, progress=False)
    report = bl.update_map(fresh_lake, progress=False)
    printed = json.loads(run(cli + ["map", "update", str(fresh_lake), "--json"]).stdout)
    assert report.to_dict() == printed
    assert printed["kept"] == report.kept == report.map.total_files
    assert printed["total_rows"] == report.map.total_rows
    assert printed["map"].endswith(".br_map.bazan")
