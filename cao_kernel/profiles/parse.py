"""Agent profiles as upstream writes them: Markdown with YAML frontmatter, to and from ``AgentProfile``.

A profile file looks like::

    ---
    name: developer
    description: Writes and tests code
    mcpServers:
      cao-mcp-server: {type: stdio, command: cao-mcp-server, args: []}
    ---
    You are a developer...

The frontmatter sits between two lines of three (or more) dashes at the very top (leading blank
lines and HTML comments are skipped, as upstream does); a file without it is all body. The body,
stripped, is the system prompt. ``${VAR}`` placeholders in frontmatter strings and in the body are
replaced from the managed ``.env`` when an ``env`` mapping is given.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cao_hookspecs import AgentProfile

from ..errors import InvalidInput, NotFound
from ..validate import input_text
from .envfile import substitute
from .validate import (
    FIELDS,
    MAX_PROFILE_BYTES,
    RESERVED_KEYS,
    check_shape,
    convert_fields,
    name_problem,
)

_LEADING_RE = re.compile(r"\A(?:\s*<!--.*?-->)*\s*", re.DOTALL)
_OPEN_RE = re.compile(r"\A-{3,}[ \t]*(?:\r?\n|\Z)")
_CLOSE_RE = re.compile(r"^-{3,}[ \t]*\r?$", re.MULTILINE)


def split_frontmatter(text: str, origin: str = "<text>") -> tuple[str | None, str]:
    """Return ``(yaml_text, body)``; ``yaml_text`` is ``None`` when there is no frontmatter."""
    start = _LEADING_RE.match(text)
    rest = text[start.end() :] if start else text
    opening = _OPEN_RE.match(rest)
    if opening is None:
        return None, text
    closing = _CLOSE_RE.search(rest, opening.end())
    if closing is None:
        raise InvalidInput(f"{origin}: frontmatter opened with '---' is never closed by a '---' line")
    return rest[opening.end() : closing.start()], rest[closing.end() :]


def _load_yaml(yaml_text: str, origin: str) -> dict[Any, Any]:
    import yaml

    try:
        meta = yaml.safe_load(yaml_text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (frontmatter line {mark.line + 1})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise InvalidInput(f"{origin}: malformed YAML frontmatter{where}: {_one_line(problem)}") from None
    except RecursionError:
        raise InvalidInput(f"{origin}: frontmatter is nested too deeply") from None
    if meta is None:
        return {}
    if not isinstance(meta, dict):
        raise InvalidInput(f"{origin}: frontmatter must be a mapping of fields (got {type(meta).__name__})")
    return meta


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def parse_profile_text(
    text: str,
    *,
    origin: str = "<text>",
    default_name: str | None = None,
    env: Mapping[str, str] | None = None,
    unresolved: set[str] | None = None,
    source: str = "",
    path: str | None = None,
) -> AgentProfile:
    """Parse profile text into an ``AgentProfile``.

    :param origin: where the text came from, named in every error (a path or URL).
    :param default_name: the name to use when the frontmatter has none (the file stem when a file
        is loaded by path); without it a missing ``name`` is an error.
    :param env: values for ``${VAR}`` placeholders; ``None`` leaves placeholders untouched.
    :param unresolved: filled with placeholder names ``env`` has no value for.
    :raises InvalidInput: one line naming ``origin`` and the problem.
    """
    input_text(text, what=f"{origin}: profile", limit=MAX_PROFILE_BYTES)
    yaml_text, body = split_frontmatter(text.removeprefix("\ufeff"), origin)
    meta = _load_yaml(yaml_text, origin) if yaml_text is not None else {}
    check_shape(meta, origin)
    missing: set[str] = set() if unresolved is None else unresolved
    if env is not None:
        meta = substitute(meta, env, missing)
        body = substitute(body, env, missing)
    known, extra = convert_fields(meta, origin)
    if "name" not in known:
        if default_name is None and yaml_text is None:
            raise InvalidInput(f"{origin}: no frontmatter, so no 'name' field")
        if default_name is None:
            raise InvalidInput(f"{origin}: frontmatter has no 'name' field")
        problem = name_problem(default_name)
        if problem:
            raise InvalidInput(f"{origin}: profile name taken from the file name {problem}")
        known["name"] = default_name
    return AgentProfile(**known, system_prompt=body.strip(), extra=extra, source=source, path=path)


def read_profile_file(path: Path, origin: str | None = None) -> str:
    """Read a profile file as UTF-8 text, refusing files over the size limit without reading them."""
    origin = origin or str(path)
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_PROFILE_BYTES + 1)
    except IsADirectoryError:
        raise InvalidInput(f"{origin}: is a directory, not a profile file") from None
    except FileNotFoundError:
        raise NotFound(f"{origin}: no such file") from None
    except OSError as exc:
        raise InvalidInput(f"{origin}: cannot read: {exc.strerror or exc}") from None
    return decode_profile(data, origin)


def decode_profile(data: bytes, origin: str) -> str:
    if len(data) > MAX_PROFILE_BYTES:
        raise InvalidInput(f"{origin}: profile is larger than {MAX_PROFILE_BYTES} bytes")
    try:
        # A byte-order mark is kept in the text (installs copy files exactly); the parser skips it.
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{origin}: not UTF-8 text (bad byte at offset {exc.start})") from None


def load_profile_file(
    path: str | Path,
    *,
    source: str = "custom",
    env: Mapping[str, str] | None = None,
    unresolved: set[str] | None = None,
    default_name: str | None = None,
) -> AgentProfile:
    """Parse the profile file at ``path``; its name defaults to the file stem (``<dir>`` for
    ``<dir>/agent.md``) when the frontmatter has none."""
    path = Path(path)
    if default_name is None:
        default_name = path.parent.name if path.name == "agent.md" else path.stem
    text = read_profile_file(path)
    return parse_profile_text(
        text,
        origin=str(path),
        default_name=default_name,
        env=env,
        unresolved=unresolved,
        source=source,
        path=str(path),
    )


# -- back to Markdown -----------------------------------------------------------------------------


def _plain(value: Any) -> Any:
    # Frozen records hold mapping proxies and tuples; YAML and JSON want dicts and lists.
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def profile_frontmatter(profile: AgentProfile) -> dict[str, Any]:
    """The frontmatter mapping of ``profile``: upstream's key names, unset fields left out, unknown
    fields last and verbatim."""
    meta: dict[str, Any] = {}
    for key, (attr, _) in FIELDS.items():
        value = getattr(profile, attr)
        if key in ("name", "description"):
            meta[key] = value
        elif value is None or (attr in ("capabilities", "tags", "mcp_servers") and not value):
            continue
        else:
            meta[key] = _plain(value)
    for key, value in profile.extra.items():
        if not isinstance(key, str) or key in FIELDS or key in RESERVED_KEYS:
            raise InvalidInput(
                f"profile {profile.name!r}: extra field {key!r} cannot be written to frontmatter"
            )
        meta[key] = _plain(value)
    return meta


def profile_to_dict(profile: AgentProfile) -> dict[str, Any]:
    """JSON-ready view: frontmatter keys plus ``system_prompt``, ``source`` and ``path`` (unset ones
    dropped), the shape upstream's ``GET /agents/profiles/{name}`` returns."""
    data = profile_frontmatter(profile)
    data["system_prompt"] = profile.system_prompt
    if profile.source:
        data["source"] = profile.source
    if profile.path:
        data["path"] = profile.path
    return data


_LINE_BREAKS = ("\x85", "\u2028", "\u2029")


@functools.cache
def _dumper() -> type:
    import yaml

    class ProfileDumper(yaml.SafeDumper):
        """Safe dumper that double-quotes strings holding Unicode line breaks: PyYAML writes them raw
        in single-quoted scalars with ``allow_unicode`` and reads them back as different text."""

    def represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
        style = '"' if any(ch in value for ch in _LINE_BREAKS) else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    ProfileDumper.add_representer(str, represent_str)
    return ProfileDumper


def serialize_profile(profile: AgentProfile) -> str:
    """Write ``profile`` as Markdown with YAML frontmatter; parsing the result gives it back."""
    import yaml

    meta = profile_frontmatter(profile)
    try:
        front = yaml.dump(
            meta, Dumper=_dumper(), sort_keys=False, allow_unicode=True, default_flow_style=False, width=4096
        )
    except yaml.YAMLError as exc:
        raise InvalidInput(
            f"profile {profile.name!r}: a field cannot be written as YAML: {_one_line(exc)}"
        ) from None
    body = profile.system_prompt.strip()
    return f"---\n{front}---\n\n{body}\n" if body else f"---\n{front}---\n"
