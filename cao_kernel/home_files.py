"""Small private files in the cao home (settings, the managed ``.env``): read-modify-write under a lock,
published whole.

Two ``cao`` commands (or a command and the server) may change the same file at once; each holds an
exclusive ``fcntl`` lock on a lock file beside it from its read to its write, so neither drops the
other's change. A write goes to a temporary file in the same folder, is flushed to disk and moved into
place, so a reader sees the old file or the new one, never half of one; a symlink planted at the path is
replaced, not followed.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from .errors import InvalidInput


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (created, mode 0600) for the block, across processes."""
    import fcntl

    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def read_text(path: Path) -> str:
    """The file's text; empty when it does not exist (nor its folder). Other failures name the file."""
    try:
        return path.read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError):
        return ""
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"cannot read {path}: {exc}") from None


def write_private(path: Path, text: str, mode: int = 0o600) -> None:
    """Replace ``path`` with ``text`` atomically; the file has ``mode`` from its first byte."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        raise InvalidInput(f"cannot write {path}: {exc.strerror or exc}") from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
