"""The ``bazan`` command installed with the package: the same command line as the Rust
binary (``bazan map create``, ``slice``, ``doctor``, ``tsfile ...``), run by the extension
module in this process."""

from __future__ import annotations

import sys
from typing import List, Optional

from . import _bazan


def main(argv: Optional[List[str]] = None) -> int:
    """Runs the ``bazan`` command line with ``argv`` (default: ``sys.argv``) and returns its
    exit code (``sys.exit`` is called with it when run as the console script)."""
    args = list(sys.argv if argv is None else argv)
    if not args:
        args = ["bazan"]
    # Output written by Python so far must come before the command's own.
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        code = _bazan.run_cli(args)
    except KeyboardInterrupt:
        return 130
    return int(code)


if __name__ == "__main__":
    sys.exit(main())
