"""Every terminal's prompt audit trail, one JSON line per event in ``<home>/prompts/<terminal id>.jsonl``.

The file outlives the terminal, so ``cao terminal prompts`` still answers after the agent has gone.
Lines are appended by one writer thread, in the order events happen; a file past ``MAX_BYTES`` keeps its
newer half.
"""

from __future__ import annotations

import json
import logging
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import attrs

from cao_hookspecs import OpenPrompt, Prompt, PromptEvent

log = logging.getLogger(__name__)

MAX_BYTES = 2 * 1024 * 1024
FOLDER = "prompts"


def as_plain(record: Any) -> dict[str, Any]:
    """A prompt record (``Prompt``, ``OpenPrompt``, ``PromptEvent``) as JSON-ready values, fields in
    their order."""
    return attrs.asdict(record, value_serializer=lambda _inst, _field, value: _plain(value))


def event_as_dict(event: PromptEvent) -> dict[str, Any]:
    return as_plain(event)


def _plain(value: Any) -> Any:
    if hasattr(value, "value") and isinstance(getattr(value, "value"), str):  # an enum
        return value.value
    if isinstance(value, tuple):
        return list(value)
    if hasattr(value, "items") and not isinstance(value, dict):  # a frozen mapping
        return dict(value)
    return value


def event_from_dict(data: dict[str, Any]) -> PromptEvent:
    opened = data["prompt"]
    prompt = OpenPrompt(id=opened["id"], terminal_id=opened["terminal_id"], opened_at=opened["opened_at"],
                        prompt=Prompt(**opened["prompt"]))
    return PromptEvent(**{**data, "prompt": prompt})


class PromptLog:
    """Appends and reads the audit trails under ``root``."""

    def __init__(self, home_root: Path) -> None:
        self.folder = home_root / FOLDER
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="cao-prompt-log")

    def _path(self, terminal_id: str) -> Path:
        return self.folder / f"{terminal_id}.jsonl"

    def append(self, event: PromptEvent) -> None:
        """Queue ``event`` for writing (returns at once; the writer keeps the order)."""
        line = json.dumps(event_as_dict(event), ensure_ascii=False) + "\n"
        try:
            self._writer.submit(self._write, event.prompt.terminal_id, line)
        except RuntimeError:  # closed: the kernel is stopping, and the event still went to observers
            log.warning("prompt event for %s not recorded: the kernel is stopping", event.prompt.terminal_id)

    def _write(self, terminal_id: str, line: str) -> None:
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        path = self._path(terminal_id)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8") as file:
            file.write(line)
            size = file.tell()
        if size > MAX_BYTES:
            self._trim(path)

    def _trim(self, path: Path) -> None:
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        keep = "".join(lines[len(lines) // 2:])
        temporary = path.with_suffix(".tmp")
        temporary.write_text(keep, encoding="utf-8")
        temporary.chmod(0o600)
        temporary.replace(path)

    def read(self, terminal_id: str, limit: int) -> list[PromptEvent] | None:
        """The latest ``limit`` events, oldest first; None when the terminal has no trail."""
        self.flush()
        path = self._path(terminal_id)
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return None
        events = []
        for line in lines[-limit:] if limit > 0 else []:
            try:
                events.append(event_from_dict(json.loads(line)))
            except (ValueError, TypeError, KeyError) as exc:  # a line cut by a crash: skip it
                log.warning("skipping an unreadable line of %s: %s", path, exc)
        return events

    def last_number(self, terminal_id: str) -> int:
        """The highest prompt number recorded for the terminal (0 for none), so ids stay unique across
        kernel restarts."""
        events = self.read(terminal_id, 50) or []
        suffixes = [event.prompt.id.rsplit("-", 1)[-1] for event in events]
        numbers = [int(suffix) for suffix in suffixes if suffix.isdigit()]
        return max(numbers, default=0)

    def flush(self) -> None:
        """Wait until every queued event is written."""
        try:
            self._writer.submit(lambda: None).result()
        except RuntimeError:
            pass

    def close(self) -> None:
        """Take no more events. Those queued are still written, by the writer thread, which ends after them
        (and the interpreter waits for it at exit): closing never waits on the disk."""
        self._writer.shutdown(wait=False)
