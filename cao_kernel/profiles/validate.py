"""The rules a profile's frontmatter must follow, and the camelCase -> snake_case field map.

Every check raises ``InvalidInput`` with one line that names where the profile came from (a file,
a URL, ``<text>``) and the field that broke the rule.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from ..errors import InvalidInput

NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}\Z")
TAG_RE = NAME_RE
ENV_KEY_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}\Z")

MAX_DESCRIPTION = 1024
MAX_DISCOVERY_ITEMS = 32
MAX_CAPABILITY_CHARS = 128
MAX_PROFILE_BYTES = 256 * 1024
# Frontmatter is small by nature; these bounds stop YAML alias bombs and self-referencing nodes
# before anything walks the parsed value.
MAX_DEPTH = 32
MAX_NODES = 20_000

ENGINES = ("v2", "kas")
PERMISSION_MODES = ("default", "acceptEdits", "plan", "auto", "bypassPermissions")

# Keys the parser owns: the body is the system prompt, and where a profile lives is not its content.
RESERVED_KEYS = frozenset({"system_prompt", "source", "path", "extra"})


def name_problem(value: object) -> str | None:
    """Why ``value`` is not a valid profile name, or ``None`` when it is."""
    if not isinstance(value, str):
        return f"must be a string (got {type(value).__name__})"
    if "/" in value or "\\" in value or ".." in value:
        return f"{value!r} must not contain '/', '\\' or '..'"
    if not NAME_RE.match(value):
        return f"{value!r} is invalid: use 1 to 64 letters, digits, '_' or '-'"
    return None


def check_name(value: object, *, what: str = "agent profile name") -> str:
    """Return ``value`` when it is a valid profile name, else raise ``InvalidInput``."""
    problem = name_problem(value)
    if problem:
        raise InvalidInput(f"{what} {problem}")
    assert isinstance(value, str)
    return value


def check_env_key(key: str) -> str:
    if not ENV_KEY_RE.match(key):
        raise InvalidInput(
            f"invalid env var name {key!r}: use letters, digits and '_' (not first), at most 128"
        )
    return key


def check_env_value(key: str, value: str) -> str:
    if any(ch in value for ch in "\n\r\0"):
        raise InvalidInput(f"env var {key}: the value must be one line without NUL characters")
    return value


# -- field checks ---------------------------------------------------------------------------------
# Each check gets the YAML value and returns the value to store, or a problem string.

Check = Callable[[Any], "tuple[Any, str | None]"]


def _type(value: Any) -> str:
    return type(value).__name__


def _string(
    *, optional: bool = True, max_len: int | None = None, choices: tuple[str, ...] = (), min_len: int = 0
) -> Check:
    def check(value: Any) -> tuple[Any, str | None]:
        if value is None and optional:
            return None, None
        if not isinstance(value, str):
            return None, f"must be a string (got {_type(value)})"
        if max_len is not None and len(value) > max_len:
            return None, f"is {len(value)} characters; the limit is {max_len}"
        if len(value) < min_len:
            return None, "must not be empty"
        if choices and value not in choices:
            return None, f"{value!r} is not one of {', '.join(choices)}"
        return value, None

    return check


def _string_list(
    *, optional: bool = True, max_items: int | None = None, item: Callable[[str], str | None] | None = None
) -> Check:
    def check(value: Any) -> tuple[Any, str | None]:
        if value is None:
            return (None if optional else ()), None
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            return None, f"must be a list of strings (got {_describe_list(value)})"
        if max_items is not None and len(value) > max_items:
            return None, f"has {len(value)} items; the limit is {max_items}"
        if item is not None:
            for i, v in enumerate(value):
                problem = item(v)
                if problem:
                    return None, f"item {i} {problem}"
        return tuple(value), None

    return check


def _describe_list(value: Any) -> str:
    if not isinstance(value, list):
        return _type(value)
    bad = next(v for v in value if not isinstance(v, str))
    return f"an item of type {_type(bad)}"


def _mapping(*, optional: bool = True, entry: Callable[[str, Any], str | None] | None = None) -> Check:
    def check(value: Any) -> tuple[Any, str | None]:
        if value is None:
            return (None if optional else {}), None
        if not isinstance(value, dict):
            return None, f"must be a mapping (got {_type(value)})"
        for key, sub in value.items():
            if not isinstance(key, str):
                return None, f"has a non-string key {key!r}"
            if entry is not None:
                problem = entry(key, sub)
                if problem:
                    return None, problem
        return value, None

    return check


def _boolean(value: Any) -> tuple[Any, str | None]:
    if value is None or isinstance(value, bool):
        return value, None
    return None, f"must be true or false (got {_type(value)})"


def _positive_int(value: Any) -> tuple[Any, str | None]:
    if value is None:
        return None, None
    if isinstance(value, bool) or not isinstance(value, int):
        return None, f"must be an integer (got {_type(value)})"
    if value < 1:
        return None, f"must be at least 1 (got {value})"
    return value, None


def _capability(value: str) -> str | None:
    if len(value) > MAX_CAPABILITY_CHARS:
        return f"is {len(value)} characters; the limit is {MAX_CAPABILITY_CHARS}"
    return None


def _tag(value: str) -> str | None:
    return None if TAG_RE.match(value) else f"{value!r} must be 1 to 64 letters, digits, '_' or '-'"


def _mcp_server(name: str, server: Any) -> str | None:
    if not isinstance(server, dict):
        return f"entry {name!r} must be a mapping (got {_type(server)})"
    for key in ("type", "command", "url"):
        if key in server and not isinstance(server[key], str):
            return f"entry {name!r}: {key!r} must be a string (got {_type(server[key])})"
    args = server.get("args")
    if args is not None and (not isinstance(args, list) or not all(isinstance(a, str) for a in args)):
        return f"entry {name!r}: 'args' must be a list of strings"
    for key in ("env", "headers"):
        if server.get(key) is not None and not isinstance(server[key], dict):
            return f"entry {name!r}: {key!r} must be a mapping (got {_type(server[key])})"
    timeout = server.get("timeout")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int)):
        return f"entry {name!r}: 'timeout' must be an integer (got {_type(timeout)})"
    return None


def _container(key: str, value: Any) -> str | None:
    if key != "path_maps" or value is None:
        return None
    if not isinstance(value, list):
        return f"'path_maps' must be a list (got {_type(value)})"
    for i, item in enumerate(value):
        if not (
            isinstance(item, dict)
            and isinstance(item.get("host"), str)
            and isinstance(item.get("guest"), str)
        ):
            return f"'path_maps' item {i} must be a mapping with string 'host' and 'guest'"
    return None


def _prompt_policy(value: Any) -> tuple[Any, str | None]:
    from cao_hookspecs.prompt_policy import parse_policy

    try:
        parse_policy(value, "promptPolicy")
    except InvalidInput as exc:
        return None, str(exc).removeprefix("promptPolicy: ")
    return value, None


def _pool(value: Any) -> tuple[Any, str | None]:
    from ..pool_config import parse_pool

    try:
        parse_pool(value)
    except InvalidInput as exc:
        return None, str(exc).removeprefix("pool: ").removeprefix("pool ")
    return value, None


# frontmatter key -> (AgentProfile attribute, check). Order is the serializer's key order.
FIELDS: dict[str, tuple[str, Check]] = {
    "name": ("name", _string(optional=False)),
    # An empty ``description:`` line reads as null; it means no description, not a type error.
    "description": ("description", _string(max_len=MAX_DESCRIPTION)),
    "provider": ("provider", _string()),
    "role": ("role", _string()),
    "model": ("model", _string()),
    "allowedTools": ("allowed_tools", _string_list()),
    "capabilities": (
        "capabilities",
        _string_list(optional=False, max_items=MAX_DISCOVERY_ITEMS, item=_capability),
    ),
    "tags": ("tags", _string_list(optional=False, max_items=MAX_DISCOVERY_ITEMS, item=_tag)),
    "skills": ("skills", _string_list()),
    "mcpServers": ("mcp_servers", _mapping(optional=False, entry=_mcp_server)),
    "tools": ("tools", _string_list()),
    "toolAliases": ("tool_aliases", _mapping()),
    "toolsSettings": ("tools_settings", _mapping()),
    "resources": ("resources", _string_list()),
    "hooks": ("hooks", _mapping()),
    "useLegacyMcpJson": ("use_legacy_mcp_json", _boolean),
    "prompt": ("prompt", _string()),
    "engine": ("engine", _string(choices=ENGINES)),
    "permissionMode": ("permission_mode", _string(choices=PERMISSION_MODES)),
    "native_agent": ("native_agent", _string()),
    "codexProfile": ("codex_profile", _string(min_len=1)),
    "codexConfig": ("codex_config", _mapping()),
    "claudeConfig": ("claude_config", _mapping()),
    "hermesProfile": ("hermes_profile", _string()),
    "promptPolicy": ("prompt_policy", _prompt_policy),
    "pool": ("pool", _pool),
    "provider_init_timeout": ("provider_init_timeout", _positive_int),
    "container": ("container", _mapping(entry=_container)),
}


def check_shape(value: Any, origin: str) -> None:
    """Refuse frontmatter nested too deep (or referencing itself) or with too many nodes."""
    budget = [MAX_NODES]

    def walk(node: Any, depth: int) -> None:
        budget[0] -= 1
        if budget[0] < 0:
            raise InvalidInput(f"{origin}: frontmatter has more than {MAX_NODES} values")
        if depth > MAX_DEPTH:
            raise InvalidInput(f"{origin}: frontmatter is nested deeper than {MAX_DEPTH} levels")
        if isinstance(node, dict):
            for key, sub in node.items():
                walk(key, depth + 1)
                walk(sub, depth + 1)
        elif isinstance(node, list):
            for sub in node:
                walk(sub, depth + 1)

    walk(value, 0)


def convert_fields(meta: Mapping[Any, Any], origin: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split frontmatter into checked ``AgentProfile`` keyword arguments and unknown keys (``extra``)."""
    known: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for key, value in meta.items():
        if not isinstance(key, str):
            raise InvalidInput(f"{origin}: frontmatter key {key!r} is not a string")
        if key in RESERVED_KEYS:
            raise InvalidInput(f"{origin}: field {key!r} is not allowed in frontmatter")
        spec = FIELDS.get(key)
        if spec is None:
            extra[key] = value
            continue
        attr, check = spec
        converted, problem = check(value)
        if problem:
            raise InvalidInput(f"{origin}: field {key!r} {problem}")
        if converted is not None:
            known[attr] = converted
    if "name" in known:
        problem = name_problem(known["name"])
        if problem:
            raise InvalidInput(f"{origin}: field 'name' {problem}")
    return known, extra
