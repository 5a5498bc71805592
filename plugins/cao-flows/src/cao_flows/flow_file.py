"""A flow file: markdown with a YAML frontmatter, upstream's format.

    ---
    name: daily-report
    schedule: "0 9 * * 1-5"
    agent_profile: report_generator
    provider: claude_code        # optional: the profile's provider, else the installation's default
    script: ./check.sh           # optional: decides whether to run and fills [[key]] in the body
    ---
    Write today's report on [[topic]].

Upstream's keys are ``name``, ``schedule`` (five-field cron), ``agent_profile``, ``provider``, ``engine``
and ``script``. cao adds ``catch_up`` (``once``: a run missed while no server ran is made up once at the
next start, upstream's behaviour; ``skip``: it is recorded as missed), ``timezone`` (an IANA name; the
machine's local time otherwise, as upstream) and ``working_directory``. Any other key is refused, so a
misspelt one is not silently ignored.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from cao_hookspecs.errors import InvalidInput

from .cron import check_cron, check_timezone

NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
PROFILE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}")
CATCH_UP = ("once", "skip")
#: A flow file larger than this is not a flow file.
MAX_FILE_BYTES = 256 * 1024
_KEYS = ("name", "schedule", "agent_profile", "provider", "engine", "script", "catch_up", "timezone",
         "working_directory")
_FENCE = re.compile(r"^---[ \t]*$", re.MULTILINE)


class FlowError(InvalidInput):
    """A flow file or a flow's run input that cannot be used; the message names the problem."""


@attrs.frozen(kw_only=True)
class Flow:
    """What a flow file says. ``file_path`` is where it was read from (the script is found next to it)."""

    name: str
    schedule: str
    agent_profile: str
    prompt_template: str
    file_path: str
    provider: str | None = None
    engine: str | None = None
    script: str = ""
    catch_up: str = "once"
    timezone: str | None = None
    working_directory: str | None = None


def _text(meta: Mapping[str, Any], key: str, where: str, *, required: bool = False) -> str | None:
    value = meta.get(key)
    if value is None or value == "":
        if required:
            raise FlowError(f"{where}: the frontmatter has no {key!r}")
        return None
    if not isinstance(value, str | int) or isinstance(value, bool):
        raise FlowError(f"{where}: {key!r} must be text, got {type(value).__name__}")
    return str(value).strip()


def parse_flow(text: str, file_path: str) -> Flow:
    """The flow ``text`` describes; ``FlowError`` naming the file and the problem otherwise."""
    where = f"flow file {file_path}"
    if "\x00" in text:
        raise FlowError(f"{where}: not a text file")
    if not _FENCE.match(text.lstrip("\ufeff").split("\n", 1)[0]):
        raise FlowError(f"{where}: it must start with a '---' line opening its frontmatter")
    body_start = text.lstrip("\ufeff").split("\n", 1)
    rest = body_start[1] if len(body_start) > 1 else ""
    closing = _FENCE.search(rest)
    if closing is None:
        raise FlowError(f"{where}: the frontmatter is not closed by a '---' line")
    import yaml

    try:
        meta = yaml.safe_load(rest[:closing.start()]) or {}
    except yaml.YAMLError as exc:
        raise FlowError(f"{where}: the frontmatter is not valid YAML: {exc}") from None
    if not isinstance(meta, Mapping):
        raise FlowError(f"{where}: the frontmatter must be a mapping of keys to values")
    unknown = sorted(str(key) for key in meta if key not in _KEYS)
    if unknown:
        raise FlowError(f"{where}: unknown key(s) {', '.join(map(repr, unknown))}; a flow has "
                        f"{', '.join(_KEYS)}")
    name = _text(meta, "name", where, required=True)
    assert name is not None
    if not NAME.fullmatch(name):
        raise FlowError(f"{where}: invalid flow name {name!r}: 1 to 64 letters, digits, '-' or '_'")
    schedule = _text(meta, "schedule", where, required=True)
    assert schedule is not None
    try:
        check_cron(schedule)
        timezone = _text(meta, "timezone", where)
        if timezone is not None:
            check_timezone(timezone)
    except ValueError as exc:
        raise FlowError(f"{where}: {exc}") from None
    profile = _text(meta, "agent_profile", where, required=True)
    assert profile is not None
    if not PROFILE.fullmatch(profile):
        raise FlowError(f"{where}: invalid agent_profile {profile!r}")
    catch_up = _text(meta, "catch_up", where) or "once"
    if catch_up not in CATCH_UP:
        raise FlowError(f"{where}: catch_up must be 'once' or 'skip', got {catch_up!r}")
    workdir = _text(meta, "working_directory", where)
    if workdir is not None:
        workdir = str((Path(file_path).parent / Path(workdir).expanduser()).resolve())
    body = rest[closing.end():].lstrip("\n")
    if not body.strip():
        raise FlowError(f"{where}: the body (the prompt after the frontmatter) is empty")
    return Flow(name=name, schedule=schedule, agent_profile=profile, prompt_template=body,
                file_path=file_path, provider=_text(meta, "provider", where),
                engine=_text(meta, "engine", where),
                script=_text(meta, "script", where) or "", catch_up=catch_up, timezone=timezone,
                working_directory=workdir)


def read_flow(path: str | Path) -> Flow:
    """The flow in the file at ``path`` (made absolute); ``FlowError`` when it cannot be read or used."""
    resolved = Path(path).expanduser().resolve()
    try:
        if not resolved.is_file():
            raise FlowError(f"flow file {resolved} does not exist or is not a file")
        if resolved.stat().st_size > MAX_FILE_BYTES:
            raise FlowError(f"flow file {resolved} is larger than {MAX_FILE_BYTES} bytes")
        text = resolved.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise FlowError(f"flow file {resolved} is not UTF-8 text") from None
    except OSError as exc:
        raise FlowError(f"flow file {resolved} cannot be read: {exc.strerror or exc}") from None
    return parse_flow(text, str(resolved))


def flow_text(*, name: str, schedule: str, agent_profile: str, prompt: str,
              provider: str | None = None) -> str:
    """A flow file's text for the fields upstream's ``POST /flows`` takes."""
    import yaml

    meta: dict[str, str] = {"name": name, "schedule": schedule, "agent_profile": agent_profile}
    if provider:
        meta["provider"] = provider
    front = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True)
    return "---\n" + front + "---\n" + prompt.rstrip() + "\n"


def script_path(flow: Flow) -> Path | None:
    """The flow's gate script, found next to its file when relative; None when it has none."""
    if not flow.script:
        return None
    path = Path(flow.script).expanduser()
    return path if path.is_absolute() else Path(flow.file_path).parent / path


__all__ = ["CATCH_UP", "NAME", "Flow", "FlowError", "flow_text", "parse_flow", "read_flow", "script_path"]
