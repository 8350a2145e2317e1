"""Long calls release the GIL (other Python threads keep running) and stop on Ctrl-C within a
second, raising KeyboardInterrupt and leaving no map or temporary file behind."""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pyarrow as pa
import pytest

import bazan.lake as bl
from conftest import files_in, generated_lake


#: How long a single-threaded map build of ``big_lake`` should take at least, so that a
#: ticking thread and a Ctrl-C have something to observe in debug and release builds alike.
LONG_BUILD_S = 1.5


@pytest.fixture(scope="session")
def big_lake(tmp_path_factory) -> Path:
    """60 CSV files of 20,000 rows (about 45 MB), plus hard links to them until a
    single-threaded map build takes about ``LONG_BUILD_S`` on this build of the extension
    (a debug build needs no links; a release build about ten times the files). Links cost no
    disk space."""
    root = generated_lake(tmp_path_factory.mktemp("big") / "lake", files=60, rows=20_000)
    originals = sorted(root.iterdir())
    took = []
    for _ in range(2):  # the first build also pays for a cold page cache
        started = time.monotonic()
        bl.create_map(root, progress=False, threads=1, stats_columns=[])
        took.append(time.monotonic() - started)
        (root / ".br_map.bazan").unlink()
    # Twice the links the fastest build asks for: the tests' own builds must outlast 0.3 s
    # timers however fast the machine is on the day.
    copies = min(40, 2 * math.ceil(LONG_BUILD_S / max(min(took), 0.01)))
    for c in range(copies):
        for f in originals:
            os.link(f, root / f"copy{c:02d}-{f.name}")
    return root


class Ticker:
    """A thread that wakes every 5 ms and records when it ran."""

    def __init__(self) -> None:
        self.ticks: list = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self.stop.is_set():
            self.ticks.append(time.monotonic())
            time.sleep(0.005)

    def __enter__(self) -> "Ticker":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join()

    def check(self, started: float, ended: float) -> None:
        inside = [t for t in self.ticks if started <= t <= ended]
        took = ended - started
        # Without the GIL released the ticker would not run at all while Rust works.
        assert len(inside) >= int(took / 0.005 * 0.2), (len(inside), took)
        gaps = [b - a for a, b in zip(inside, inside[1:])]
        assert max(gaps, default=0) < 0.5, max(gaps)


def _timed(call):
    started = time.monotonic()
    out = call()
    return out, started, time.monotonic()


def test_create_map_slice_take_and_doctor_release_the_gil(big_lake):
    try:
        with Ticker() as t:
            m, a, b = _timed(lambda: bl.create_map(big_lake, fingerprint="blake3", progress=False, threads=1))
        assert b - a > 0.2  # long enough for the ticker to prove anything
        t.check(a, b)
        with Ticker() as t:
            table, a, b = _timed(lambda: m.slice(10_000, 300_000))
        assert table.num_rows == 300_000
        t.check(a, b)
        with Ticker() as t:
            _, a, b = _timed(lambda: m.take(list(range(0, m.total_rows, 997))))
        t.check(a, b)
        with Ticker() as t:
            report, a, b = _timed(lambda: m.doctor())
        assert report.ok
        t.check(a, b)
    finally:
        (big_lake / ".br_map.bazan").unlink(missing_ok=True)


CHILD = textwrap.dedent(
    """
    import sys, time
    import bazan.lake as bl

    root, what = sys.argv[1], sys.argv[2]
    said = []

    def progress(files_done, files_total, bytes_done, bytes_total):
        if not said:
            said.append(1)
            print("started", flush=True)

    try:
        if what == "create":
            bl.create_map(root, progress=progress, threads=1)
        else:
            m = bl.load_map(root)
            print("started", flush=True)
            while True:
                m.slice(0, min(m.total_rows, 1_200_000))
        print("finished", flush=True)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
    """
)


def _interrupt(root: Path, what: str) -> float:
    """Runs `what` in a child, sends SIGINT once it works, returns the seconds until the
    child reported KeyboardInterrupt."""
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(root), what],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = child.stdout.readline().strip()
        assert line == "started", (line, child.stderr.read() if child.poll() is not None else "")
        time.sleep(0.2)
        assert child.poll() is None, "the work ended before it could be interrupted"
        sent = time.monotonic()
        child.send_signal(signal.SIGINT)
        line = child.stdout.readline().strip()
        took = time.monotonic() - sent
        assert line == "interrupted", (line, child.stderr.read())
        assert child.wait(timeout=10) == 0
        return took
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


def test_ctrl_c_stops_create_map_and_leaves_nothing(big_lake):
    (big_lake / ".br_map.bazan").unlink(missing_ok=True)
    before = files_in(big_lake)
    took = _interrupt(big_lake, "create")
    assert took < 1.0, took
    assert files_in(big_lake) == before  # no map, no temporary file


def test_ctrl_c_stops_a_long_slice(big_lake):
    bl.create_map(big_lake, progress=False)
    try:
        took = _interrupt(big_lake, "slice")
        assert took < 1.0, took
    finally:
        (big_lake / ".br_map.bazan").unlink(missing_ok=True)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs POSIX signals")
def test_keyboard_interrupt_in_this_process_cancels_the_build(tmp_path):
    """A KeyboardInterrupt raised in the calling thread (as Ctrl-C does) while create_map
    runs: the build is cancelled and nothing is written. The lake ends with files of a
    handler that takes its time (a third of a second each), so the build is still under way
    when the first progress report sends the signal, however fast the machine."""
    lake = generated_lake(tmp_path / "lake", files=4, rows=2_000)
    for i in range(3):
        (lake / f"slow{i}.slowrows").write_text("x")

    def count_rows(path):
        time.sleep(0.3)
        return 1

    def read(path, start, length, columns):
        return pa.table({"x": [1]})

    bl.register_handler("slowrows", count_rows=count_rows, read=read)
    before = files_in(lake)
    sent: list = []

    def progress(files_done, files_total, bytes_done, bytes_total):
        # Ctrl-C while the build is under way (not at its last report, when the map is written).
        if not sent and files_done < files_total:
            sent.append(1)
            signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)

    # Python's own Ctrl-C handler, even when the suite runs where SIGINT is ignored (a
    # background job of a non-interactive shell starts with SIG_IGN, and Python keeps it).
    old_handler = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            bl.create_map(lake, progress=progress, threads=1)
    finally:
        signal.signal(signal.SIGINT, old_handler)
        bl.unregister_handler("slowrows")
    assert sent
    assert files_in(lake) == before
