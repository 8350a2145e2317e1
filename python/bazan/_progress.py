"""Progress reporting for long calls: the ``progress=`` argument resolved to a callable.

``None`` shows a bar on stderr only when stderr is a terminal, ``True`` always shows it,
``False`` never does, and a callable receives ``(files_done, files_total, bytes_done,
bytes_total)``. The callable is called from the calling thread (never from Bazan's worker
threads) whenever the numbers change, at most every 50 ms, and once at the end.
"""

from __future__ import annotations

import sys
import time
from typing import Callable, Optional, Union

ProgressCallback = Callable[[int, int, int, int], object]
ProgressArg = Union[None, bool, ProgressCallback]


def _size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"


class TerminalBar:
    """A one-line progress bar on ``sys.stderr``, redrawn in place."""

    def __init__(self, label: str, width: int = 30) -> None:
        self.label = label
        self.width = width
        self.started = time.monotonic()
        self.drawn = False

    def __call__(self, files_done: int, files_total: int, bytes_done: int, bytes_total: int) -> None:
        frac = bytes_done / bytes_total if bytes_total else (files_done / files_total if files_total else 1.0)
        filled = int(self.width * min(max(frac, 0.0), 1.0))
        bar = "#" * filled + "-" * (self.width - filled)
        secs = time.monotonic() - self.started
        line = (
            f"\r{self.label} [{bar}] {files_done}/{files_total} files, "
            f"{_size(bytes_done)}/{_size(bytes_total)}, {secs:.1f} s"
        )
        sys.stderr.write(line)
        sys.stderr.flush()
        self.drawn = True

    def close(self) -> None:
        """Ends the bar's line (when anything was drawn)."""
        if self.drawn:
            sys.stderr.write("\n")
            sys.stderr.flush()
            self.drawn = False


def resolve(progress: ProgressArg, label: str) -> Optional[ProgressCallback]:
    """The callable for a ``progress=`` argument (``None`` for no reporting)."""
    if progress is None:
        stream = sys.stderr
        try:
            show = stream is not None and stream.isatty()
        except (AttributeError, ValueError):
            show = False
        return TerminalBar(label) if show else None
    if progress is True:
        return TerminalBar(label)
    if progress is False:
        return None
    if callable(progress):
        return progress
    raise TypeError(
        f"progress must be None, True, False or a callable (files_done, files_total, "
        f"bytes_done, bytes_total), not {type(progress).__name__}"
    )


def close(callback: Optional[ProgressCallback]) -> None:
    """Finishes a bar made by :func:`resolve` (nothing for a user's callable)."""
    if isinstance(callback, TerminalBar):
        callback.close()
