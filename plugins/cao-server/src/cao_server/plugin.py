"""Entry point of cao-server. Thin: every module named here is imported only when its command runs."""

from __future__ import annotations

import importlib
from typing import Any

from cao_hookspecs import CommandSpec, hookimpl

# name -> (module, attribute, help)
_COMMANDS = {
    "server": ("cao_server.serve", "server_command", "Run the cao HTTP server (127.0.0.1:9889 by default)."),
    "launch": ("cao_server.commands.launch", "launch", "Start a session with an agent and optionally give it a task."),
    "session": ("cao_server.commands.session", "session", "List sessions, show a session's status, send input."),
    "shutdown": ("cao_server.commands.shutdown", "shutdown", "Delete one session or all cao sessions."),
    "info": ("cao_server.commands.info", "info", "Show the cao home, the server address and the current session."),
    "terminal": ("cao_server.commands.terminal", "terminal", "Inspect and drive single terminals."),
    "agent": ("cao_server.commands.agent", "agent", "Orchestrate agents from the shell (the MCP tools)."),
}


def _loader(module: str, attr: str) -> Any:
    return lambda: getattr(importlib.import_module(module), attr)


@hookimpl
def cao_register_commands() -> list[CommandSpec]:
    return [CommandSpec(name=name, load=_loader(mod, attr), help=text) for name, (mod, attr, text) in _COMMANDS.items()]
