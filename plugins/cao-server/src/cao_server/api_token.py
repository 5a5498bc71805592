"""The per-user API token: ``<cao home>/api-token``, mode 0600, made on the first server start.

Callers send it as ``Authorization: Bearer <token>``; ``cao server`` requires it on loopback too.
Anyone who can read the file can drive the user's agents, so it is created private and its mode is
tightened again if someone loosened it.
"""

from __future__ import annotations

import logging
import os
import re
import secrets
import tempfile
from pathlib import Path

from cao_hookspecs.errors import CaoError

log = logging.getLogger(__name__)

TOKEN_FILE = "api-token"
TOKEN_RE = re.compile(r"^[A-Za-z0-9_-]{32,256}\Z")


def token_path(home: str | os.PathLike[str]) -> Path:
    return Path(home).expanduser() / TOKEN_FILE


def ensure_token(home: str | os.PathLike[str]) -> str:
    """The token in ``home``, created (atomically, mode 0600) when there is none yet."""
    path = token_path(home)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    _private_folder(path.parent)
    if not path.exists():
        # Written to a private temporary file, then linked into place: a reader never sees a partial
        # token, and of two servers starting at once the second one reads the first one's token.
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".api-token.")
        try:
            with os.fdopen(fd, "w", encoding="ascii") as fh:
                fh.write(secrets.token_urlsafe(32) + "\n")
                fh.flush()
                os.fsync(fh.fileno())
            try:
                os.link(tmp, path)
            except FileExistsError:
                pass
        finally:
            os.unlink(tmp)
    return _read(path)


def _private_folder(folder: Path) -> None:
    """A cao home others can enter or list is made private: it holds the token, the managed ``.env``
    and every terminal's files."""
    info = folder.stat()
    if info.st_mode & 0o077 and (not hasattr(os, "getuid") or info.st_uid == os.getuid()):
        log.warning("%s was open to other users; its mode is set to 700", folder)
        os.chmod(folder, 0o700)


def read_token(home: str | os.PathLike[str]) -> str | None:
    """The token if the file exists and is readable (for clients); None otherwise."""
    path = token_path(home)
    try:
        text = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return text if TOKEN_RE.match(text) else None


def _read(path: Path) -> str:
    info = path.stat()
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        raise CaoError(f"{path} belongs to another user; remove it so a private token can be made")
    if info.st_mode & 0o077:
        log.warning("%s was readable by others; its mode is set back to 0600", path)
        os.chmod(path, 0o600)
    try:
        text = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise CaoError(f"cannot read the API token {path}: {exc}") from None
    if not TOKEN_RE.match(text):
        raise CaoError(f"{path} does not hold a valid API token; remove it so a new one is made")
    return text


__all__ = ["TOKEN_FILE", "ensure_token", "read_token", "token_path"]
