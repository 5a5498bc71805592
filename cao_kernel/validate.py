"""Validation of everything a user or an agent can hand the kernel: ids, names, paths, keys, sizes.

Each check raises ``InvalidInput`` with one line naming the value and the rule it broke.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Mapping
from pathlib import Path

# One copy of upstream's rules for the kernel and the server.
from cao_hookspecs import names
from cao_hookspecs.names import (
    KEY_RE,
    MAX_INPUT_BYTES,
    MODEL_RE,
    PROFILE_NAME_RE,
    SESSION_NAME_RE,
    SESSION_PREFIX,
    TERMINAL_ID_RE,
)

from .errors import InvalidInput

ENV_KEY_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}\Z")

MAX_ENV_VALUE_BYTES = 2048
MAX_ENV_TOTAL_BYTES = 64 * 1024
# Variables that change which code a program (or the shell, git, a runtime) loads or runs: from a
# request they would let a caller run code as the server's user. Allowed only by name, through
# CAO_ALLOWED_ENV_VARS or the profile's allowedEnvVars.
LOADER_ENV_PREFIXES = ("LD_", "DYLD_", "PYTHON", "PERL5", "RUBY", "NODE_")
LOADER_ENV_NAMES = frozenset({
    "PATH", "HOME", "XDG_CONFIG_HOME", "BASH_ENV", "ENV", "IFS", "SHELLOPTS", "PROMPT_COMMAND", "ZDOTDIR",
    "GCONV_PATH", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_EXEC_PATH",
    "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_ASKPASS", "EDITOR", "VISUAL", "PAGER", "LESSOPEN",
})

# Exact paths refused as working directories (their subfolders are fine), as upstream.
SYSTEM_ROOTS = frozenset(
    {
        "/", "/bin", "/sbin", "/usr/bin", "/usr/sbin", "/etc", "/var", "/tmp", "/dev", "/proc", "/sys",
        "/root", "/boot", "/lib", "/lib64", "/private/etc", "/private/var", "/private/tmp",
    }
)


terminal_id = names.terminal_id
call_id = names.call_id
profile_name = names.profile_name
key = names.key


def session_name(value: str) -> str:
    """Validate a session name and add the ``cao-`` prefix when it is missing."""
    names.session_name(value)
    name = names.with_prefix(value)
    if not SESSION_NAME_RE.match(name):
        raise InvalidInput(f"invalid session name {name!r}: too long once prefixed with {SESSION_PREFIX!r}")
    return name


def model(value: str | None) -> str | None:
    if value is not None and not MODEL_RE.match(value):
        raise InvalidInput(f"invalid model {value!r}: letters, digits and . _ : / - only, at most 128")
    return value


def input_text(value: str, *, what: str = "message", limit: int = MAX_INPUT_BYTES) -> str:
    """``value`` when it is text of at most ``limit`` bytes without NUL, else ``InvalidInput`` naming it
    as ``what``."""
    if not isinstance(value, str):
        raise InvalidInput(f"{what} must be text")
    size = len(value.encode("utf-8", "surrogatepass"))
    if size > limit:
        raise InvalidInput(f"{what} is {size} bytes; the limit is {limit}")
    if "\x00" in value:
        raise InvalidInput(f"{what} contains a NUL character")
    return value


def working_directory(value: str | os.PathLike[str] | None) -> str:
    """Expand, resolve and check a working directory: it must exist, be a folder, not be a system root."""
    raw = os.getcwd() if value is None or value == "" else os.fspath(value)
    if "\x00" in raw:
        raise InvalidInput("working directory contains a NUL character")
    path = Path(raw).expanduser()
    try:
        resolved = path.resolve(strict=True)
    except (FileNotFoundError, RuntimeError):
        raise InvalidInput(f"working directory {raw!r} does not exist") from None
    except OSError as exc:
        raise InvalidInput(f"working directory {raw!r} cannot be used: {exc.strerror}") from None
    if not resolved.is_dir():
        raise InvalidInput(f"working directory {raw!r} is not a directory")
    if str(resolved) in SYSTEM_ROOTS:
        raise InvalidInput(f"working directory {str(resolved)!r} is a system folder; use a project folder")
    return str(resolved)


def env(values: Mapping[str, str] | None, *, allowed: Collection[str] = ()) -> dict[str, str]:
    """Extra environment for a terminal, checked: names, sizes, and no variable that changes what code
    runs unless ``allowed`` names it."""
    out: dict[str, str] = {}
    total = 0
    for k, v in (values or {}).items():
        if not isinstance(k, str) or not ENV_KEY_RE.match(k):
            raise InvalidInput(f"invalid environment variable name {k!r}")
        if not isinstance(v, str) or len(v.encode()) >= MAX_ENV_VALUE_BYTES or "\x00" in v:
            raise InvalidInput(f"environment variable {k} must be text under {MAX_ENV_VALUE_BYTES} bytes")
        if (k in LOADER_ENV_NAMES or k.startswith(LOADER_ENV_PREFIXES)) and k not in allowed:
            raise InvalidInput(
                f"environment variable {k} is refused: it changes which code the agent's programs load or "
                f"run; allow it by name in CAO_ALLOWED_ENV_VARS or in the profile's allowedEnvVars")
        total += len(k) + len(v.encode()) + 2
        if total > MAX_ENV_TOTAL_BYTES:
            raise InvalidInput(f"the extra environment is over {MAX_ENV_TOTAL_BYTES // 1024} KiB")
        out[k] = v
    return out
