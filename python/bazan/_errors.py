"""The exception classes of Bazan.

Every error Bazan raises is a :class:`BazanError`; the more specific classes below also derive
from the built-in exception a Python programmer would catch for the same failure (a missing
path is a :class:`FileNotFoundError`, a row past the end an :class:`IndexError`, a bad
argument a :class:`ValueError`). Each instance carries:

- ``kind``: the stable name of the failure (``"not_found"``, ``"corrupt"``, ``"stale"``, ...);
- ``path``: the file the error is about, or ``None``;
- ``offset``: the byte offset in that file, or ``None``.
"""

from __future__ import annotations

from typing import Optional


class BazanError(Exception):
    """Base class of every error raised by Bazan."""

    kind: str = "other"
    path: Optional[str] = None
    offset: Optional[int] = None


class CorruptFileError(BazanError):
    """A file whose bytes break its format; the message names the path and byte offset."""


class StaleFileError(BazanError):
    """A file changed (size or modification time) since the map was made."""


class UnsupportedFormatError(BazanError):
    """A format, or a feature of one, that Bazan does not read."""


class NotFoundError(BazanError, FileNotFoundError):
    """A file, directory or map that does not exist (also a :class:`FileNotFoundError`)."""


class PermissionDeniedError(BazanError, PermissionError):
    """The operating system refused access (also a :class:`PermissionError`)."""


class OutOfRangeError(BazanError, IndexError):
    """A row outside the lake or the file (also an :class:`IndexError`)."""


class InvalidArgumentError(BazanError, ValueError):
    """A bad argument value, named in the message (also a :class:`ValueError`)."""


class BazanIOError(BazanError, OSError):
    """Any other input/output failure (also an :class:`OSError`)."""


__all__ = [
    "BazanError",
    "BazanIOError",
    "CorruptFileError",
    "InvalidArgumentError",
    "NotFoundError",
    "OutOfRangeError",
    "PermissionDeniedError",
    "StaleFileError",
    "UnsupportedFormatError",
]

# Shown (and pickled) as the names users import: bazan.CorruptFileError, ...
for _cls in (
    BazanError,
    BazanIOError,
    CorruptFileError,
    InvalidArgumentError,
    NotFoundError,
    OutOfRangeError,
    PermissionDeniedError,
    StaleFileError,
    UnsupportedFormatError,
):
    _cls.__module__ = "bazan"
del _cls
