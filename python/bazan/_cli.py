"""The ``bazan`` command installed with the package: the same command line as the Rust
binary (``bazan map create``, ``slice``, ``doctor``, ``tsfile ...``), run by the extension
module in this process."""

from __future__ import annotations

import signal
import sys
import threading
from typing import List, Optional

from . import _bazan


def main(argv: Optional[List[str]] = None) -> int:
    """Runs the ``bazan`` command line with ``argv`` (default: ``sys.argv``, whose first item
    is the program name) and returns its exit code: 0 success, 1 a problem the command found
    and reported, 2 a usage or input error. The console script exits with it."""
    args = [str(a) for a in (sys.argv if argv is None else argv)] or ["bazan"]
    # Output written by Python so far must come before the command's own (written by Rust
    # straight to the process's stdout and stderr).
    sys.stdout.flush()
    sys.stderr.flush()
    # Ctrl-C ends the command as it ends the native binary (Python's handler would only
    # set a flag that nobody reads while Rust runs).
    restore = None
    if threading.current_thread() is threading.main_thread():
        restore = signal.signal(signal.SIGINT, signal.SIG_DFL)
    try:
        return int(_bazan.run_cli(args))
    finally:
        if restore is not None:
            signal.signal(signal.SIGINT, restore)


if __name__ == "__main__":
    sys.exit(main())
