"""The names cao's MCP surfaces share on the wire: the caller's terminal id (its variable, its header and
its shape), the relay's marks, and the terminal's secret.

Standard library only: cao-mcp-server's relay imports this before it can answer the agent's first
message, and every module it loads delays every agent's start. ``cao_mcp.tools`` re-exports all of it.
"""

from __future__ import annotations

import re

ID_VARIABLE = "CAO_TERMINAL_ID"
ID_HEADER = "X-CAO-Terminal-Id"
# Sent by cao-mcp-server's relay: it reports its agent connected itself, once the agent has its tool list.
RELAY_HEADER = "X-CAO-Relay"
# Sent by the relay with a handoff: the id its retry after a lost connection repeats (see Kernel.handoff).
CALL_HEADER = "X-CAO-Call-Id"
# The secret cao gave the terminal's MCP entry, and the header that carries it: it proves the terminal
# named in ID_HEADER is the caller.
SECRET_VARIABLE = "CAO_TERMINAL_SECRET"
SECRET_HEADER = "X-CAO-Terminal-Secret"
# cao_hookspecs.names.TERMINAL_ID_RE, restated: importing it loads the whole contract package (attrs,
# pluggy and every record) into the relay. A test holds the two equal.
TERMINAL_ID_RE = re.compile(r"^[a-f0-9]{8}\Z")

__all__ = ["CALL_HEADER", "ID_HEADER", "ID_VARIABLE", "RELAY_HEADER", "SECRET_HEADER", "SECRET_VARIABLE",
           "TERMINAL_ID_RE"]
