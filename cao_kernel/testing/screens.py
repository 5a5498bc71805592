"""Recorded screens of an agent CLI, as provider packages keep them under ``tests/screens/``.

One folder per CLI version holds the rendered screens (``<name>.txt``, what ``tmux capture-pane``
printed) and ``manifest.json``::

    {"package": "@scope/cli", "version": "1.2.3", "version_output": "1.2.3 (Some CLI)",
     "source": "recorded",          # or "documented": transcribed from the CLI's public documentation
     "recorded_with": "providers/<dir>/scripts/record_screens.py",
     "screens": {"<name>": {"status": "completed", "size": [220, 50],
                            "last_message": "...",   # completed screens only
                            "dialog": "...",         # start-up dialog screens only
                            "prompt": {...},         # waiting screens only: the prompt it shows
                            "answers": {...},        # a screen recorded after answering a prompt
                            "note": "..."}}}

``prompt`` is the record ``read_prompt`` must give, in its wire form (``kind``, ``question``, ``title``,
``tool``, ``arguments``, ``arguments_complete``, ``options`` as ``label``/``keys``/``effect``/
``description``/``takes_text``, ``default``, ``free_text``); keys left out are not compared, and
``null`` says the screen waits on something no reader can type an answer for. ``answers`` is
``{"screen": "<prompt screen>", "option": <n>, "keys": [...]}``: this screen was captured after pressing
``keys`` on that screen's prompt, to pick option ``n`` (from 1).

:func:`load_screens` reads every version folder without judging it (a broken manifest must still let
the rest of a test module collect); :func:`manifest_problems` lists what is wrong with one, each
problem a sentence naming the version and the screen.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import attrs

from cao_hookspecs import TerminalStatus

__all__ = [
    "MANIFEST",
    "SCREEN_KEYS",
    "SOURCES",
    "RecordedScreen",
    "ScreensVersion",
    "load_screens",
    "manifest_problems",
]

MANIFEST = "manifest.json"
SOURCES = ("recorded", "documented")
TOP_KEYS = ("package", "version", "version_output", "source", "recorded_with", "screens")
SCREEN_KEYS = ("status", "size", "last_message", "dialog", "prompt", "answers", "note")
_STATUSES = tuple(status.value for status in TerminalStatus)


@attrs.frozen(kw_only=True)
class RecordedScreen:
    """One screen with what its manifest says about it. ``status`` is the raw manifest value (checked
    by :func:`manifest_problems`, so a typo shows as a problem rather than a collection error)."""

    version: str
    name: str
    source: str
    text: str
    status: str
    last_message: str | None = None
    dialog: str | None = None
    note: str = ""
    #: The manifest's ``prompt``: absent (``has_prompt`` False), None, or the expected record.
    prompt: dict[str, Any] | None = None
    has_prompt: bool = False
    answers: dict[str, Any] | None = None
    size: tuple[int, int] | None = None

    @property
    def id(self) -> str:
        """``<version>/<name>``, with a ``-documented`` marker for screens not recorded from the CLI."""
        marker = "-documented" if self.source == "documented" else ""
        return f"{self.version}/{self.name}{marker}"

    @property
    def documented(self) -> bool:
        return self.source == "documented"


@attrs.frozen(kw_only=True)
class ScreensVersion:
    """One version folder: its manifest (None when missing or unreadable, see ``error``), its screens."""

    version: str
    folder: Path
    manifest: dict[str, Any] | None
    error: str | None
    screens: tuple[RecordedScreen, ...]

    @property
    def source(self) -> str:
        manifest = self.manifest or {}
        source = manifest.get("source")
        return source if isinstance(source, str) else "recorded"

    @property
    def id(self) -> str:
        return f"{self.version}-documented" if self.source == "documented" else self.version


def _read_manifest(folder: Path) -> tuple[dict[str, Any] | None, str | None]:
    path = folder / MANIFEST
    if not path.is_file():
        return None, f"{folder.name}: no {MANIFEST} in {folder}"
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return None, f"{folder.name}: {MANIFEST} cannot be read: {exc}"
    if not isinstance(value, dict):
        return None, f"{folder.name}: {MANIFEST} holds {type(value).__name__}, not a JSON object"
    return value, None


def _screens_of(folder: Path, manifest: dict[str, Any]) -> tuple[RecordedScreen, ...]:
    entries = manifest.get("screens")
    if not isinstance(entries, dict):
        return ()
    source = manifest.get("source") if manifest.get("source") in SOURCES else "recorded"
    found = []
    for name, entry in sorted(entries.items()):
        path = folder / f"{name}.txt"
        if not isinstance(entry, dict) or not path.is_file():
            continue
        last_message = entry.get("last_message")
        dialog = entry.get("dialog")
        prompt, answers, size = entry.get("prompt"), entry.get("answers"), entry.get("size")
        found.append(RecordedScreen(
            version=folder.name, name=name, source=str(source), text=path.read_text(encoding="utf-8"),
            status=str(entry.get("status")),
            last_message=last_message if isinstance(last_message, str) else None,
            dialog=dialog if isinstance(dialog, str) else None,
            note=str(entry.get("note") or ""),
            prompt=prompt if isinstance(prompt, dict) else None, has_prompt="prompt" in entry,
            answers=answers if isinstance(answers, dict) else None,
            size=tuple(size) if isinstance(size, list) and len(size) == 2 else None,
        ))
    return tuple(found)


def load_screens(screens_dir: Path) -> list[ScreensVersion]:
    """Every version folder under ``screens_dir`` (sorted by name); never raises for bad content."""
    screens_dir = Path(screens_dir)
    if not screens_dir.is_dir():
        return []
    versions = []
    folders = sorted(p for p in screens_dir.iterdir() if p.is_dir() and not p.name.startswith((".", "_")))
    for folder in folders:
        manifest, error = _read_manifest(folder)
        screens = _screens_of(folder, manifest) if manifest is not None else ()
        versions.append(ScreensVersion(version=folder.name, folder=folder, manifest=manifest, error=error,
                                       screens=screens))
    return versions


def _size_problem(where: str, size: Any, text: str | None, recorded: bool) -> str | None:
    if (not isinstance(size, list) or len(size) != 2
            or not all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in size)):
        return f"{where}: 'size' must be [columns, rows] (two positive whole numbers), got {size!r}"
    if text is None or not recorded:
        return None
    columns, rows = size
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if len(lines) > rows:
        return f"{where}: the screen has {len(lines)} rows, more than its recorded size {columns}x{rows}"
    widest = max((len(line.rstrip()) for line in lines), default=0)
    if widest > columns:
        return f"{where}: a row has {widest} characters, more than its recorded size {columns}x{rows}"
    return None


def manifest_problems(version: ScreensVersion, dialog_names: Iterable[str]) -> list[str]:
    """Everything wrong with one version folder, each problem naming the version and the screen.

    ``dialog_names`` are the provider's ``StartupDialog`` names: a screen's ``dialog`` must be one.
    """
    if version.manifest is None:
        return [version.error or f"{version.version}: no manifest"]
    manifest = version.manifest
    known_dialogs = set(dialog_names)
    label = version.version
    problems: list[str] = []
    for key in sorted(set(manifest) - set(TOP_KEYS)):
        problems.append(f"{label}: unknown manifest key {key!r} (known: {', '.join(TOP_KEYS)})")
    source = manifest.get("source")
    if source not in SOURCES:
        problems.append(f"{label}: 'source' must be one of {', '.join(map(repr, SOURCES))}, got {source!r}")
    # A screen transcribed from documentation has no exact terminal size; anything else is held to it.
    recorded = source != "documented"
    if manifest.get("version") != version.version:
        problems.append(f"{label}: manifest 'version' is {manifest.get('version')!r}, but the folder is "
                        f"named {version.version!r}")
    if not isinstance(manifest.get("package"), str) or not manifest.get("package"):
        problems.append(f"{label}: 'package' must name the npm or PyPI package the CLI comes from")
    output = manifest.get("version_output")
    if not isinstance(output, str):
        problems.append(f"{label}: 'version_output' must be what the CLI's version command printed "
                        "(a string)")
    elif source == "recorded" and version.version not in output:
        problems.append(f"{label}: 'version_output' {output!r} does not mention version {version.version}")
    if source == "recorded" and (not isinstance(manifest.get("recorded_with"), str)
                                 or not manifest.get("recorded_with")):
        problems.append(f"{label}: 'recorded_with' must name the script that recorded the screens")
    entries = manifest.get("screens")
    if not isinstance(entries, dict) or not entries:
        problems.append(f"{label}: 'screens' must be a non-empty object of screen name -> entry")
        entries = {}
    texts = {path.stem for path in version.folder.glob("*.txt")}
    for name in sorted(texts - set(entries)):
        problems.append(f"{label}/{name}: {name}.txt has no entry in {MANIFEST}")
    for name, entry in sorted(entries.items()):
        where = f"{label}/{name}"
        if name not in texts:
            problems.append(f"{where}: listed in {MANIFEST} but {name}.txt is missing")
        if not isinstance(entry, dict):
            problems.append(f"{where}: the entry must be an object, got {type(entry).__name__}")
            continue
        for key in sorted(set(entry) - set(SCREEN_KEYS)):
            problems.append(f"{where}: unknown key {key!r} (known: {', '.join(SCREEN_KEYS)})")
        status = entry.get("status")
        if status not in _STATUSES:
            problems.append(f"{where}: status {status!r} is not one of {', '.join(_STATUSES)}")
        text_path = version.folder / f"{name}.txt"
        text = text_path.read_text(encoding="utf-8") if name in texts else None
        problem = _size_problem(where, entry.get("size"), text, recorded)
        if problem:
            problems.append(problem)
        if "last_message" in entry:
            if status != TerminalStatus.COMPLETED.value:
                problems.append(f"{where}: 'last_message' is given on a {status!r} screen; only completed "
                                "screens carry one")
            if not isinstance(entry["last_message"], str):
                problems.append(f"{where}: 'last_message' must be a string")
        if "dialog" in entry and entry["dialog"] not in known_dialogs:
            declared = ", ".join(repr(n) for n in sorted(known_dialogs)) or "none"
            problems.append(f"{where}: dialog {entry['dialog']!r} is not a start-up dialog of the provider "
                            f"(declared: {declared})")
        if "note" in entry and not isinstance(entry["note"], str):
            problems.append(f"{where}: 'note' must be a string")
        if "prompt" in entry:
            if status != TerminalStatus.WAITING_USER_ANSWER.value:
                problems.append(f"{where}: 'prompt' is given on a {status!r} screen; only waiting screens "
                                "show one")
            if entry["prompt"] is not None and not isinstance(entry["prompt"], dict):
                problems.append(f"{where}: 'prompt' must be an object (the expected record) or null")
        if "answers" in entry:
            problems.extend(_answers_problems(where, entry["answers"], entries))
    return problems


def _answers_problems(where: str, answers: Any, entries: dict[str, Any]) -> list[str]:
    if not isinstance(answers, dict) or set(answers) != {"screen", "option", "keys"}:
        return [f"{where}: 'answers' must be {{\"screen\": ..., \"option\": n, \"keys\": [...]}}"]
    problems = []
    target = entries.get(answers["screen"])
    if not isinstance(target, dict) or not isinstance(target.get("prompt"), dict):
        problems.append(f"{where}: 'answers' names screen {answers['screen']!r}, which has no 'prompt'")
    option = answers["option"]
    if isinstance(option, bool) or not isinstance(option, int) or option < 1:
        problems.append(f"{where}: 'answers' option must be a number from 1, got {option!r}")
    keys = answers["keys"]
    if not isinstance(keys, list) or not keys or not all(isinstance(k, str) and k for k in keys):
        problems.append(f"{where}: 'answers' keys must be the list of keys pressed, got {keys!r}")
    return problems
