"""Reading OpenCode's own config files, and merging them the way OpenCode does.

OpenCode reads JSON with comments and trailing commas (JSONC) from several places and deep-merges
them, later sources winning: the global file (``$XDG_CONFIG_HOME/opencode/opencode.json``), the
file named by ``OPENCODE_CONFIG``, the project's ``opencode.json``, ``.opencode`` folders, then the
text of ``OPENCODE_CONFIG_CONTENT``. cao gives each terminal its own file through ``OPENCODE_CONFIG``
(see ``launch.py``); this module reads what the user already has, so that nothing of theirs is lost
and :func:`model_endpoint` can tell which model API the CLI will call. Nothing here writes a file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cao_launch_core.user_config import read_config_text

__all__ = [
    "CONFIG_ENV",
    "CONTENT_ENV",
    "absolute_file_references",
    "deep_merge",
    "global_config_dir",
    "model_endpoint",
    "read_config_file",
    "read_jsonc",
    "user_config",
]

CONFIG_ENV = "OPENCODE_CONFIG"
CONTENT_ENV = "OPENCODE_CONFIG_CONTENT"
GLOBAL_FILES = ("config.json", "opencode.json", "opencode.jsonc")
#: Where OpenCode's bundled model SDKs send requests when nothing else is configured.
DEFAULT_ENDPOINTS = {"anthropic": "https://api.anthropic.com/v1", "openai": "https://api.openai.com/v1"}
#: The variables those SDKs read for another address.
ENDPOINT_VARIABLES = {"anthropic": "ANTHROPIC_BASE_URL", "openai": "OPENAI_BASE_URL"}
# ``{file:./notes.md}`` in a config value is read relative to the file that holds it.
_FILE_REFERENCE = re.compile(r"\{file:(?![/~])([^}]+)\}")


def read_jsonc(text: str) -> Any:
    """Parse JSON that may hold ``//`` and ``/* */`` comments and trailing commas.

    Raises ``ValueError`` naming the line of the first problem.
    """
    try:
        return json.loads(_plain_json(text))
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno} column {exc.colno}"
        raise ValueError(f"not valid JSON with comments: {exc.msg} at {where}") from exc


def _plain_json(text: str) -> str:
    """``text`` with comments blanked out and trailing commas dropped (strings are left alone).

    Comments become spaces (newlines kept), so error positions still point into the original text.
    """
    out: list[str] = []
    index, length = 0, len(text)
    pending_comma: int | None = None  # where a comma that may be trailing was copied
    while index < length:
        char = text[index]
        if char == '"':
            end = index + 1
            while end < length and text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            out.append(text[index:end + 1])
            index = end + 1
            pending_comma = None
            continue
        if text.startswith("//", index):
            end = text.find("\n", index)
            end = length if end == -1 else end
            out.append(" " * (end - index))
            index = end
            continue
        if text.startswith("/*", index):
            end = text.find("*/", index + 2)
            end = length if end == -1 else end + 2
            out.append("".join(c if c == "\n" else " " for c in text[index:end]))
            index = end
            continue
        if char in "}]" and pending_comma is not None:
            out[pending_comma] = " "
        if char == ",":
            pending_comma = len(out)
        elif not char.isspace():
            pending_comma = None
        out.append(char)
        index += 1
    return "".join(out)


def read_config_file(path: Path) -> dict[str, Any]:
    """One OpenCode config file as a dict ({} when it does not exist).

    Raises ``ValueError`` naming the file when it exists but cannot be read or is not a JSON object.
    """
    text = read_config_text(path, "the OpenCode config")
    if text is None or not text.strip():
        return {}
    try:
        value = read_jsonc(text)
    except ValueError as exc:
        raise ValueError(f"the OpenCode config {path} is {exc}") from exc
    if not isinstance(value, dict):
        # A bad file is bad input like any other: callers catch ValueError for all of them.
        raise ValueError(  # noqa: TRY004
            f"the OpenCode config {path} must hold a JSON object, not {type(value).__name__}")
    return value


def absolute_file_references(value: Any, folder: Path) -> Any:
    """``value`` with relative ``{file:...}`` references made absolute against ``folder`` (a config
    moved to another folder must still find the files it names)."""
    if isinstance(value, str):
        return _FILE_REFERENCE.sub(lambda m: "{file:" + str(folder / m.group(1)) + "}", value)
    if isinstance(value, Mapping):
        return {key: absolute_file_references(item, folder) for key, item in value.items()}
    if isinstance(value, list):
        return [absolute_file_references(item, folder) for item in value]
    return value


def deep_merge(base: Mapping[str, Any], top: Mapping[str, Any]) -> dict[str, Any]:
    """``top`` merged over ``base``: objects merge key by key, ``instructions`` lists are joined (as
    OpenCode joins them), any other value in ``top`` replaces the one in ``base``."""
    merged: dict[str, Any] = dict(base)
    for key, value in top.items():
        old = merged.get(key)
        if isinstance(old, Mapping) and isinstance(value, Mapping):
            merged[key] = deep_merge(old, value)
        elif key == "instructions" and isinstance(old, list) and isinstance(value, list):
            merged[key] = old + [item for item in value if item not in old]
        else:
            merged[key] = value
    return merged


def global_config_dir(env: Mapping[str, str]) -> Path:
    """OpenCode's global config folder: ``$XDG_CONFIG_HOME/opencode`` or ``~/.config/opencode``."""
    xdg = env.get("XDG_CONFIG_HOME")
    if xdg:
        return Path(xdg).expanduser() / "opencode"
    return Path(env.get("HOME") or Path.home()).expanduser() / ".config" / "opencode"


def custom_config(env: Mapping[str, str]) -> dict[str, Any]:
    """The file the user's own ``OPENCODE_CONFIG`` names, its ``{file:}`` references made absolute."""
    named = env.get(CONFIG_ENV)
    if not named:
        return {}
    path = Path(named).expanduser()
    return absolute_file_references(read_config_file(path), path.parent)


def user_config(env: Mapping[str, str]) -> dict[str, Any]:
    """What OpenCode would read for any project: the global files, the ``OPENCODE_CONFIG`` file, then
    ``OPENCODE_CONFIG_CONTENT``, merged. Raises ``ValueError`` naming a file that cannot be parsed."""
    folder = global_config_dir(env)
    merged: dict[str, Any] = {}
    for name in GLOBAL_FILES:
        merged = deep_merge(merged, read_config_file(folder / name))
    merged = deep_merge(merged, custom_config(env))
    content = env.get(CONTENT_ENV)
    if content and content.strip():
        try:
            inline = read_jsonc(content)
        except ValueError as exc:
            raise ValueError(f"{CONTENT_ENV} is {exc}") from exc
        if isinstance(inline, dict):
            merged = deep_merge(merged, inline)
    return merged


def model_endpoint(env: Mapping[str, str]) -> str | None:
    """The base URL of the model API OpenCode will call with ``env``, or None when it cannot be told.

    The provider is the one the configured ``model`` (``provider/model``) names; its ``baseURL``
    option wins, then the SDK's own variable (``ANTHROPIC_BASE_URL``, ``OPENAI_BASE_URL``), then the
    SDK's default address. Without a configured model OpenCode picks one from the providers it finds
    logged in, which only it knows: None. Never raises.
    """
    try:
        config = user_config(env)
    except (ValueError, OSError):
        return None
    model = config.get("model")
    if not isinstance(model, str) or "/" not in model:
        return None
    provider = model.split("/", 1)[0]
    providers = config.get("provider")
    entry = providers.get(provider) if isinstance(providers, Mapping) else None
    options = entry.get("options") if isinstance(entry, Mapping) else None
    base = options.get("baseURL") if isinstance(options, Mapping) else None
    if isinstance(base, str) and re.match(r"https?://\S+$", base.strip()):
        return base.strip()
    variable = ENDPOINT_VARIABLES.get(provider)
    if variable and re.match(r"https?://\S+$", env.get(variable, "").strip()):
        return env[variable].strip()
    return DEFAULT_ENDPOINTS.get(provider)
