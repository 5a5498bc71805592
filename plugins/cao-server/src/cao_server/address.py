"""Telling a kernel where its server listens, before it starts: every terminal it creates (and, through
cao-mcp's record of its MCP server, every MCP server entry) learns the address to call back."""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

import attrs

from cao_hookspecs import CreateTerminalRequest, hookimpl

from .settings import advertised_host

HOST_SETTING = "CAO_API_HOST"
PORT_SETTING = "CAO_API_PORT"
PLUGIN_NAME = "cao_server.address"


class ServerAddress:
    """A plugin the server registers on its own kernel: new terminals get the server's address in their
    environment (a request's own values win)."""

    def __init__(self, host: str, port: int) -> None:
        self.env = {HOST_SETTING: advertised_host(host), PORT_SETTING: str(port)}

    @hookimpl
    def cao_before_terminal_create(self, request: CreateTerminalRequest) -> CreateTerminalRequest:
        return attrs.evolve(request, env={**self.env, **request.env})


def advertise(kernel: Any, host: str, port: int) -> None:
    """Give ``kernel`` (not started yet) this server's address: in its settings, for plugins that read it
    there, and as a plugin that hands it to every terminal. (Upstream changes only the listener, so agents
    keep calling 9889.)"""
    address = ServerAddress(host, port)
    settings = getattr(kernel, "settings", None)
    if isinstance(settings, MutableMapping):
        settings.update(address.env)
    pm = getattr(kernel, "pm", None)
    registered = pm.get_plugin(PLUGIN_NAME) if pm is not None else None
    if isinstance(registered, ServerAddress):
        registered.env = address.env  # served again: the new address replaces the old
    elif hasattr(kernel, "register_plugin"):
        kernel.register_plugin(address, name=PLUGIN_NAME)


__all__ = ["HOST_SETTING", "PORT_SETTING", "ServerAddress", "advertise"]
