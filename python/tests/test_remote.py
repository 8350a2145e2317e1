"""Lakes in an object store through Python, against a real S3-compatible server: moto
(``moto[server]``) started on a free loopback port for this module and stopped by its PID."""

import os
import pickle
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pyarrow as pa
import pytest

import bazan
from bazan import lake as blake

LAKE = Path(__file__).resolve().parents[2] / "testdata" / "lake"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def moto():
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.kill()
                raise RuntimeError("moto did not start (pip install 'moto[server]')")
            time.sleep(0.1)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.kill()
        proc.wait(timeout=10)


def _put(endpoint: str, key: str, data: bytes = b"") -> None:
    # A binary body: without a content type urllib says form data, which the server parses.
    req = urllib.request.Request(
        f"{endpoint}/{key}",
        data=data,
        method="PUT",
        headers={"Content-Type": "application/octet-stream"},
    )
    with urllib.request.urlopen(req, timeout=10) as r:
        assert r.status == 200


def _options(endpoint: str) -> dict:
    return {
        "aws_endpoint": endpoint,
        "aws_allow_http": True,
        "aws_access_key_id": "testing",
        "aws_secret_access_key": "testing-secret",
        "aws_region": "us-east-1",
    }


@pytest.fixture(scope="module")
def bucket_lake(moto, tmp_path_factory):
    _put(moto, "pylake")
    local = tmp_path_factory.mktemp("lake")
    for p in sorted(LAKE.rglob("*")):
        rel = p.relative_to(LAKE).as_posix()
        if p.is_file() and not rel.startswith(".br_map"):
            _put(moto, f"pylake/data/{urllib.request.quote(rel)}", p.read_bytes())
            (local / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(p, local / rel)
    return "s3://pylake/data", local


def test_remote_map_reads_as_the_local_one(moto, bucket_lake):
    url, local_dir = bucket_lake
    remote = blake.create_map(url, storage_options=_options(moto), progress=False)
    local = blake.create_map(local_dir, progress=False)
    assert len(remote) == len(local)
    n = len(local)
    for start in range(0, n, max(1, n // 25)):
        assert remote[start : start + 7].equals(local[start : start + 7]), start
    again = blake.load_map(url, storage_options=_options(moto))
    assert again[n - 3 : n].equals(local[n - 3 : n])
    report = blake.doctor_lake_map(url, storage_options=_options(moto))
    assert report.ok


def test_a_remote_map_pickles_to_what_reopens_it(moto, bucket_lake):
    url, local_dir = bucket_lake
    m = blake.load_map(url, storage_options=_options(moto))
    back = pickle.loads(pickle.dumps(m))
    assert len(back) == len(m)
    assert back[10:20].equals(m[10:20])


def test_remote_failures_are_bazan_errors(moto):
    with pytest.raises(bazan.BazanError) as e:
        blake.create_map("s3://no-such-bucket/x", storage_options=_options(moto), progress=False)
    assert "s3://no-such-bucket" in str(e.value)
    assert "testing-secret" not in str(e.value)
    with pytest.raises(bazan.NotFoundError):
        blake.load_map("s3://pylake/nowhere", storage_options=_options(moto))
    with pytest.raises(TypeError):
        blake.load_map("s3://pylake/data", storage_options=["not", "a", "mapping"])


def test_ctrl_c_stops_a_remote_create_and_writes_no_map(moto):
    import signal
    import threading

    _put(moto, "slowlake")
    for i in range(300):
        _put(moto, f"slowlake/p/{i:03}.csv", f"x,y\n{i},{i}\n".encode())
    sent: list = []

    def progress(files_done, files_total, bytes_done, bytes_total):
        if not sent and files_done < files_total:
            sent.append(1)
            signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)

    old_handler = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            blake.create_map(
                "s3://slowlake/p", storage_options=_options(moto), progress=progress, threads=1
            )
    finally:
        signal.signal(signal.SIGINT, old_handler)
    assert sent
    with pytest.raises(bazan.NotFoundError):
        blake.load_map("s3://slowlake/p", storage_options=_options(moto))
