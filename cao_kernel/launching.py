"""What a new terminal starts with, and how a re-adopted one is read back: pure functions of records.

- ``mcp_servers``: a profile's MCP server entries as the provider writes them into the CLI's config,
  cao's own server spelled for this installation (``McpServerSpec``) and the identity in every entry;
- ``write_runtime_files``: the provider's private files, inside the terminal's runtime folder only;
- ``metadata_of`` / ``record_from``: the terminal record a backend keeps for the next kernel.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from cao_hookspecs import AgentProfile, McpServerSpec, ProviderSpec, Terminal, TerminalInfo

from .errors import InvalidInput

#: The variable every terminal and every MCP server entry of it carries: upstream's contract.
TERMINAL_ID_VARIABLE = "CAO_TERMINAL_ID"
HOME_VARIABLE = "CAO_HOME_DIR"
# The secret that proves a terminal's identity on cao's MCP endpoint: in cao's own MCP entry only.
SECRET_VARIABLE = "CAO_TERMINAL_SECRET"
# The key under which a terminal's metadata keeps the secret's SHA-256 (never the secret itself).
SECRET_DIGEST_KEY = "mcp_secret_sha256"


def new_terminal_id() -> str:
    return secrets.token_hex(4)


def advertised_env(settings: Mapping[str, Any], specs: Iterable[McpServerSpec]) -> dict[str, str]:
    """The settings the MCP server records name (a serving plugin's address), those that are set."""
    env: dict[str, str] = {}
    for spec in specs:
        for name in spec.env_settings:
            value = settings.get(name)
            if value is not None and str(value) != "":
                env[name] = str(value)
    return env


def matching_spec(entry: Mapping[str, Any], specs: Iterable[McpServerSpec]) -> McpServerSpec | None:
    """The record of cao's MCP server that a profile's ``mcpServers`` entry asks for, if any."""
    return next((spec for spec in specs if spec.matches(entry)), None)


def mcp_servers(
    profile: AgentProfile, identity: Mapping[str, str], specs: Iterable[McpServerSpec],
    secret: str | None = None,
) -> dict[str, Any]:
    """The profile's MCP server entries for one terminal: an entry that asks for cao's own server gets
    this installation's command and the terminal's ``secret``, and every entry gets ``identity`` in its
    own ``env``."""
    specs = tuple(specs)
    servers: dict[str, Any] = {}
    for name, entry in profile.mcp_servers.items():
        entry = dict(entry or {})
        spec = matching_spec(entry, specs)
        proof = {}
        if spec is not None:
            command, args = spec.command()
            entry["command"], entry["args"] = command, list(args)
            if secret is not None:
                proof = {SECRET_VARIABLE: secret}  # never handed to another MCP server
        # Some CLIs start MCP servers with a scrubbed environment: what cao's server needs goes into
        # each entry's own env.
        entry["env"] = {**dict(entry.get("env") or {}), **identity, **proof}
        servers[name] = entry
    return servers


def cao_server_names(profile: AgentProfile, specs: Iterable[McpServerSpec]) -> tuple[str, ...]:
    """The names of the profile's ``mcpServers`` entries that ask for cao's own server."""
    specs = tuple(specs)
    return tuple(name for name, entry in profile.mcp_servers.items()
                 if matching_spec(dict(entry or {}), specs))


def write_runtime_files(folder: Path, files: Mapping[str, str]) -> None:
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    for name, content in files.items():
        target = (folder / name).resolve()
        if folder.resolve() not in target.parents:
            raise InvalidInput(f"provider file name {name!r} escapes the terminal's runtime folder")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
        os.chmod(target, 0o600)


def answer_reader(provider: ProviderSpec | None) -> Callable[[str], str | None] | None:
    """The provider's last-message extraction as the status tracker uses it: None for no answer."""
    if provider is None:
        return None

    def answer_of(screen: str) -> str | None:
        try:
            answer = provider.extract_last_message(screen)
        except Exception:  # noqa: BLE001 - no readable answer; a broken extractor must not stop tracking
            return None
        return answer if isinstance(answer, str) else None

    return answer_of


def pending_reader(provider: ProviderSpec | None) -> Callable[[str], str] | None:
    """The provider's reader of unsent prompt text as the status tracker uses it: '' where it breaks."""
    read = provider.pending_input if provider is not None else None
    if read is None:
        return None

    def pending_of(screen: str) -> str:
        try:
            pending = read(screen)
        except Exception:  # noqa: BLE001 - nothing readable; a broken reader must not stop tracking
            return ""
        return pending if isinstance(pending, str) else ""

    return pending_of


def metadata_of(record: Terminal) -> dict[str, str]:
    return {
        "provider": record.provider,
        "agent_profile": record.agent_profile,
        "session_name": record.session_name,
        "working_directory": record.working_directory or "",
        "caller_id": record.caller_id or "",
        "created_at": repr(record.created_at),
        "allowed_tools": json.dumps(list(record.allowed_tools)) if record.allowed_tools is not None else "",
    }


RECORD_KEYS = frozenset({"provider", "agent_profile", "session_name", "working_directory", "caller_id",
                         "created_at", "allowed_tools"})


def extra_of(info: TerminalInfo) -> dict[str, str]:
    """What a kernel stored with the terminal besides its record (``metadata_of``'s keys)."""
    return {key: value for key, value in info.metadata.items() if key not in RECORD_KEYS}


def record_from(info: TerminalInfo, backend_name: str) -> Terminal:
    meta = dict(info.metadata)
    tools = meta.get("allowed_tools") or ""
    return Terminal(
        id=info.terminal_id,
        name=info.window_name,
        session_name=info.session_name,
        provider=meta.get("provider", "unknown"),
        agent_profile=meta.get("agent_profile", "unknown"),
        working_directory=meta.get("working_directory") or info.working_directory,
        caller_id=meta.get("caller_id") or None,
        allowed_tools=json.loads(tools) if tools else None,
        created_at=float(meta.get("created_at") or 0.0),
        backend=backend_name,
    )


__all__ = [
    "HOME_VARIABLE",
    "SECRET_DIGEST_KEY",
    "SECRET_VARIABLE",
    "TERMINAL_ID_VARIABLE",
    "advertised_env",
    "answer_reader",
    "extra_of",
    "matching_spec",
    "mcp_servers",
    "metadata_of",
    "new_terminal_id",
    "record_from",
    "write_runtime_files",
]
