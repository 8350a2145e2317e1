"""Shared fixtures of the Python test suite.

The conformance corpora live in ``../shared/conformance`` beside the checkout (or under
``$BAZAN_SHARED/conformance``) and are read-only: every test that builds a map works on a copy
in a temporary directory. When the corpora are absent the tests that need them are skipped
with the reason printed.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ["BAZAN_SHARED"]) if os.environ.get("BAZAN_SHARED") else REPO.parent / "shared"
CONFORMANCE = SHARED / "conformance"
LAKE_CORPUS = CONFORMANCE / "lake"
TSFILE_CORPUS = CONFORMANCE / "tsfile"


def _require(path: Path) -> Path:
    if not path.exists():
        reason = f"conformance corpus {path} is absent"
        print(f"skipped: {reason}", file=sys.stderr)
        pytest.skip(reason)
    return path


@pytest.fixture(scope="session")
def expected() -> Dict[str, Any]:
    """The lake corpus's answer key."""
    return json.loads((_require(LAKE_CORPUS) / "expected.json").read_text(encoding="utf-8"))


def copy_lake(dest: Path) -> Path:
    """A writable copy of the conformance lake at ``dest`` (without the junk map files the
    corpus plants below the root, which a map of our own would not meet anyway)."""
    src = _require(LAKE_CORPUS) / "lake"
    shutil.copytree(src, dest, symlinks=True)
    for p in dest.rglob("*"):
        if p.is_file():
            p.chmod(0o644)
        elif p.is_dir():
            p.chmod(0o755)
    dest.chmod(0o755)
    return dest


@pytest.fixture(scope="session")
def shared_lake(tmp_path_factory: pytest.TempPathFactory):
    """A copy of the conformance lake with a map made by Python, shared by read-only tests."""
    import bazan.lake as bl

    root = copy_lake(tmp_path_factory.mktemp("shared") / "lake")
    m = bl.create_map(root, progress=False)
    return m


@pytest.fixture()
def fresh_lake(tmp_path: Path) -> Path:
    """A fresh copy of the conformance lake (no map), for tests that change it."""
    return copy_lake(tmp_path / "lake")


@pytest.fixture(scope="session")
def cli() -> List[str]:
    """The native ``bazan`` binary (``$BAZAN_CLI``, else ``target/debug/bazan``)."""
    env = os.environ.get("BAZAN_CLI")
    path = Path(env) if env else REPO / "target" / "debug" / "bazan"
    if not path.exists():
        if env:
            pytest.fail(f"BAZAN_CLI={env} does not exist")
        reason = f"the bazan binary {path} is not built (cargo build -p bazan-cli)"
        print(f"skipped: {reason}", file=sys.stderr)
        pytest.skip(reason)
    return [str(path)]


def run(cmd: List[str], check: bool = True, **kw: Any) -> subprocess.CompletedProcess:
    """Runs a command, capturing text output; fails the test with its stderr when asked."""
    out = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if check and out.returncode != 0:
        pytest.fail(f"{cmd} exited {out.returncode}: {out.stderr}")
    return out


def same_value(exp: Any, got: Any) -> bool:
    """True when a value read by Bazan equals the expected JSON value, allowing for the
    unified schema's widening (an int read as float64 or as text, a date as a date or text)."""
    import datetime

    if exp is None or got is None:
        return exp is None and got is None
    if isinstance(exp, bool):
        if isinstance(got, str):
            return got.lower() == str(exp).lower()
        return isinstance(got, bool) and got == exp
    if isinstance(exp, int):
        if isinstance(got, bool):
            return False
        if isinstance(got, str):
            try:
                return int(got) == exp
            except ValueError:
                return float(got) == exp
        return got == exp
    if isinstance(exp, float):
        if isinstance(got, str):
            got = float(got)
        if isinstance(got, bool) or not isinstance(got, (int, float)):
            return False
        return got == exp or math.isclose(got, exp, rel_tol=2.3e-16, abs_tol=0.0)
    if isinstance(exp, str):
        if isinstance(got, datetime.date):
            return got.isoformat() == exp
        return got == exp
    return got == exp


def assert_rows(expected_rows: List[Dict[str, Any]], got_rows: List[Dict[str, Any]], where: str) -> None:
    """Every expected row equals the row read, column by column (see :func:`same_value`)."""
    assert len(got_rows) == len(expected_rows), f"{where}: {len(got_rows)} rows, expected {len(expected_rows)}"
    for i, (e, g) in enumerate(zip(expected_rows, got_rows)):
        for k, v in e.items():
            assert k in g, f"{where}: row {i} lacks column {k!r}"
            assert same_value(v, g[k]), f"{where}: row {i} column {k!r}: got {g[k]!r}, expected {v!r}"


def files_in(root: Path) -> List[str]:
    """Every file below ``root`` (relative paths, sorted), hidden ones included."""
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def lake_with(root: Path, files: Dict[str, str]) -> Path:
    """A small lake of text files."""
    root.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return root


def generated_lake(root: Path, files: int, rows: int, seed: int = 7) -> Path:
    """A lake of ``files`` CSV files of ``rows`` rows each, with quoted text (commas, quotes,
    newlines), for tests that need a map build long enough to observe."""
    import random

    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    words = ["alpha", "beta, gamma", 'say "hi"', "multi\nline", "delta"]
    for f in range(files):
        lines = ["id,name,qty,price"]
        for r in range(rows):
            w = rng.choice(words)
            w = '"' + w.replace('"', '""') + '"' if any(c in w for c in ',"\n') else w
            lines.append(f"{f * rows + r},{w},{rng.randint(-1000, 1000)},{rng.random() * 100:.2f}")
        (root / f"part-{f:04d}.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root

