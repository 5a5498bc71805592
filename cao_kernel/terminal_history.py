"""Removed terminals' screen logs, kept in the cao home for ``cao terminal restore``.

While a terminal runs, its screen and scrollback live in the terminal backend; nothing else keeps them
(its timeline holds steps, not text). When the kernel removes a terminal it saves, beside each other in
``logs/terminals``: ``<id>.log``, everything the terminal showed (at most ``MAX_LOG_BYTES``, the latest
kept), and ``<id>.json``, what restoring it needs (profile, provider, working directory, session). Both
are private (0600): a screen can show anything an agent read.

They are kept ``CAO_TERMINAL_HISTORY_DAYS`` days (``terminal.history_days``; default 7; 0 keeps none).
Old ones are removed when a kernel starts and then once an hour, in one pass over the folder: no timer
runs per terminal.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import time
from pathlib import Path
from typing import Any

import attrs

from cao_hookspecs import Terminal

from .errors import InvalidInput, NotFound

log = logging.getLogger(__name__)

DAYS_SETTING = "CAO_TERMINAL_HISTORY_DAYS"
DEFAULT_DAYS = 7.0
MAX_DAYS = 3650.0
#: Seconds between two sweeps of a running kernel.
PRUNE_INTERVAL = 3600.0
MAX_LOG_BYTES = 4 * 1024 * 1024
FOLDER = "terminals"
_RECORD_FIELDS = ("id", "name", "session_name", "provider", "agent_profile", "working_directory",
                  "caller_id", "created_at")


def keep_days(settings: Any) -> float:
    """The ``CAO_TERMINAL_HISTORY_DAYS`` setting; ``InvalidInput`` naming it when it is not a number of
    days from 0 to 3650."""
    raw = str(settings.get(DAYS_SETTING) or "").strip()
    if not raw:
        return DEFAULT_DAYS
    try:
        days = float(raw)
    except ValueError:
        days = -1.0
    if not 0 <= days <= MAX_DAYS:
        raise InvalidInput(f"{DAYS_SETTING} must be a number of days from 0 to {MAX_DAYS:g}, not {raw!r}")
    return days


@attrs.frozen
class SavedTerminal:
    """A removed terminal as saved: its record's fields, when it was removed, and where its log is."""

    record: dict[str, Any]
    removed_at: float
    log_path: Path

    def transcript(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")


@attrs.define
class TerminalHistory:
    """The saved screen logs under ``folder``, kept ``days`` days."""

    folder: Path
    days: float

    @property
    def enabled(self) -> bool:
        return self.days > 0

    def save(self, terminal: Terminal, transcript: str) -> None:
        """Keep a removed terminal's screen log (best effort: a failure is logged, never raised)."""
        if not self.enabled:
            return
        data = transcript.encode("utf-8", "replace")[-MAX_LOG_BYTES:]
        record = {name: getattr(terminal, name) for name in _RECORD_FIELDS}
        meta = {"record": record, "removed_at": time.time()}
        try:
            self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            self._write(self.folder / f"{terminal.id}.log", data)
            # The record last: a terminal is restorable only once both files are whole.
            self._write(self.folder / f"{terminal.id}.json", json.dumps(meta).encode())
        except OSError as exc:
            log.warning("could not keep the screen log of terminal %s: %s", terminal.id, exc)

    def _write(self, path: Path, data: bytes) -> None:
        partial = path.with_name(f".{path.name}.tmp")
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(partial, path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(partial)

    def load(self, terminal_id: str, *, now: float | None = None) -> SavedTerminal:
        """The saved terminal ``terminal_id`` (a checked id); ``NotFound`` saying why there is none."""
        meta_path = self.folder / f"{terminal_id}.json"
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
            saved = SavedTerminal(record=dict(meta["record"]), removed_at=float(meta["removed_at"]),
                                  log_path=self.folder / f"{terminal_id}.log")
        except FileNotFoundError:
            raise NotFound(f"no saved screen log of terminal {terminal_id}: it was never removed here, "
                           f"or its log is older than the {self.days:g} days kept ({DAYS_SETTING}, "
                           f"`cao config set terminal.history_days`)") from None
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise NotFound(f"the saved record of terminal {terminal_id} cannot be read: {exc}") from None
        age = (time.time() if now is None else now) - saved.removed_at
        if age > self.days * 86400 or not saved.log_path.is_file():
            raise NotFound(f"the screen log of terminal {terminal_id} was removed: it is older than the "
                           f"{self.days:g} days kept ({DAYS_SETTING})")
        return saved

    def prune(self, *, now: float | None = None) -> int:
        """Remove logs older than the days kept (all of them when none are kept); returns how many
        terminals' files went."""
        cutoff = (time.time() if now is None else now) - self.days * 86400
        removed = 0
        try:
            entries = list(os.scandir(self.folder))
        except (FileNotFoundError, NotADirectoryError):
            return 0
        for entry in entries:
            if not entry.name.endswith((".json", ".log", ".tmp")):
                continue
            try:
                if entry.stat(follow_symlinks=False).st_mtime < cutoff:
                    os.unlink(entry.path)
                    removed += entry.name.endswith(".json")
            except OSError:
                continue
        return removed


def history_for(home_logs: Path, settings: Any) -> TerminalHistory:
    return TerminalHistory(home_logs / FOLDER, keep_days(settings))
