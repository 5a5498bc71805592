"""The MCP readiness gate: a worker gets its task only once it can call cao's tools.

Agent CLIs show their prompt before their MCP servers have connected (Claude Code connects them in the
background), so a task typed at the first prompt can meet a model that has no ``send_message`` yet and
answers "No such tool available". A terminal whose profile gives it cao's MCP server therefore has a gate:
it opens when cao's MCP endpoint reports that the terminal's MCP client has listed cao's tools
(``Kernel.mcp_connected``), and it fails ``CAO_MCP_CONNECT_TIMEOUT`` seconds (default 30; 0 turns the
gate off) after the agent itself became ready.

Waiting for the agent to start (``wait_ready``, and so handoff) includes the gate: a creation whose gate
fails raises ``McpNotConnected`` and leaves nothing behind. A deferred start (assign) leaves the task in
the inbox, which delivers nothing to a gated terminal until the gate opens; once it has failed, what waits
is refused with the reason. Typing by a user (``send_input``) never waits.

Which profile entries ask for cao's MCP server, and through which route its clients report in, come from
the MCP server records plugins register (``McpServerSpec``). The gate applies only where reports can
arrive: a kernel where that record's ``report_route`` is registered (cao-mcp's route, mounted by
cao-server). A kernel nothing reports to (no server, or a server without cao-mcp) never waits.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import attrs

from cao_hookspecs.mcp_entry import is_cao_mcp_entry
from cao_hookspecs.setting_values import non_negative

from .errors import CaoError, InvalidInput, NotFound, NotSupported, Timeout
from .launching import matching_spec

if TYPE_CHECKING:
    from cao_hookspecs import AgentProfile, McpServerSpec, RouteSpec

TIMEOUT_SETTING = "CAO_MCP_CONNECT_TIMEOUT"
DEFAULT_TIMEOUT = 30.0
SETTLE_SETTING = "CAO_MCP_SETTLE"
MAX_SETTLE = 10.0


class McpNotConnected(Timeout):
    """A terminal's MCP client did not connect to cao within the bounded wait."""


def connect_timeout(settings: Mapping[str, Any]) -> float:
    """Seconds to wait for a terminal's MCP client (``CAO_MCP_CONNECT_TIMEOUT``); 0 means no gate."""
    what = "a number of seconds from 0 to 3600"
    seconds = non_negative(settings, TIMEOUT_SETTING, DEFAULT_TIMEOUT, what=what,
                           zero="the MCP readiness gate is off")
    if seconds > 3600:
        raise InvalidInput(f"{TIMEOUT_SETTING} must be {what}, not {settings.get(TIMEOUT_SETTING)!r}")
    return seconds


def settle_override(settings: Mapping[str, Any]) -> float | None:
    """Seconds every gate waits after its report (``CAO_MCP_SETTLE``), in place of each provider's own
    ``mcp_settle``; None when unset."""
    what = f"a number of seconds from 0 to {MAX_SETTLE:g}"
    if str(settings.get(SETTLE_SETTING) or "").strip() == "":
        return None
    seconds = non_negative(settings, SETTLE_SETTING, 0.0, what=what, zero="no wait after the report")
    if seconds > MAX_SETTLE:
        raise InvalidInput(f"{SETTLE_SETTING} must be {what}, not {settings.get(SETTLE_SETTING)!r}")
    return seconds


@attrs.define(eq=False)
class McpGate:
    """One terminal's gate. Lives on the kernel's event loop.

    ``opened`` resolves when the terminal's MCP client reports in, or fails with ``McpNotConnected`` when
    the wait started by ``arm`` runs out. A report arriving after that opens the gate again.
    """

    terminal_id: str
    server_name: str
    timeout: float
    describe: str
    route: str
    connected_at: float | None = attrs.field(init=False, default=None)
    opened: asyncio.Future[None] = attrs.field(init=False,
                                               factory=lambda: asyncio.get_running_loop().create_future())
    _timer: asyncio.TimerHandle | None = attrs.field(init=False, default=None)

    @property
    def open(self) -> bool:
        return self.opened.done() and not self.opened.cancelled() and self.opened.exception() is None

    @property
    def failure(self) -> CaoError | None:
        """The error the gate failed with, while it stays closed."""
        if not self.opened.done() or self.opened.cancelled():
            return None
        error = self.opened.exception()
        return error if isinstance(error, CaoError) else None

    def connect(self) -> bool:
        """The terminal's MCP client reported in; True when that opened the gate."""
        if self.open:
            return False
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self.opened.done():
            self.opened = asyncio.get_running_loop().create_future()
        self.connected_at = time.time()
        self.opened.set_result(None)
        return True

    def arm(self, on_expiry: Callable[[McpGate], None]) -> None:
        """Start the bounded wait (once the agent is ready); ``on_expiry`` is called if it runs out."""
        if self.opened.done() or self._timer is not None:
            return
        self._timer = asyncio.get_running_loop().call_later(self.timeout, on_expiry, self)

    def fail(self) -> McpNotConnected:
        """Close the gate for good (until a late report): the bounded wait ran out."""
        self._timer = None
        error = McpNotConnected(
            f"terminal {self.terminal_id} ({self.describe}): cao's MCP server (its profile's "
            f"{self.server_name!r} entry) did not connect to cao within {self.timeout:g} s of the agent "
            f"becoming ready. "
            f"cao waited for it to list cao's tools at {self.route} for terminal {self.terminal_id}, and "
            f"typed nothing into the terminal. Look at the agent's MCP log, check that the server address "
            f"in its MCP configuration is reachable, or raise {TIMEOUT_SETTING}."
        )
        if not self.opened.done():
            self.opened.set_exception(error)
            self.opened.exception()  # retrieved: whoever waits reads it; nobody waiting is not an error
        return error

    def close(self) -> None:
        """The terminal is gone: stop the wait and release whoever waits."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self.opened.done():
            self.opened.set_exception(NotFound(f"terminal {self.terminal_id} was deleted"))
            self.opened.exception()

    async def wait(self) -> None:
        """Until the gate opens. Raises ``McpNotConnected`` when its bounded wait runs out first, and
        ``NotFound`` when the terminal is deleted meanwhile."""
        opened = self.opened
        if not opened.done():
            await asyncio.wait({opened})
        if not self.open:
            opened.result()


class Gates:
    """The gates of one kernel's terminals, by terminal id, and the rule for which terminal gets one."""

    def __init__(self, settings: Mapping[str, Any], servers: Callable[[], Mapping[str, McpServerSpec]],
                 routes: Callable[[], Mapping[str, RouteSpec]]) -> None:
        self._settings = settings
        self._servers = servers
        self._routes = routes
        self._gates: dict[str, McpGate] = {}

    def plan(self, profile: AgentProfile) -> tuple[str, str] | None:
        """For a terminal of ``profile`` that must wait for cao's MCP server to report in: the name of the
        profile's entry for that server and the path reports arrive at. None when it need not wait."""
        servers = tuple(self._servers().values())
        for name, entry in profile.mcp_servers.items():
            spec = matching_spec(dict(entry or {}), servers)
            if spec is None:
                if not servers and is_cao_mcp_entry(dict(entry or {})):
                    raise NotSupported(
                        f"profile {profile.name!r} asks for cao's MCP tools (its mcpServers entry {name!r}), "
                        f"but this kernel has no MCP surface to serve them: install cao-mcp (pip install "
                        f"cao-mcp) or, in an embedding program, register its plugin (Kernel(plugins=[..., "
                        f"cao_mcp.plugin])); or remove the entry from the profile")
                continue
            if connect_timeout(self._settings) == 0 or spec.report_route is None:
                return None
            # Reports arrive through the record's route; a kernel without it would wait for nothing.
            route = self._routes().get(spec.report_route)
            return (name, str(route.path)) if route is not None else None
        return None

    def add(self, gate: McpGate) -> None:
        self._gates[gate.terminal_id] = gate

    def get(self, terminal_id: str) -> McpGate | None:
        return self._gates.get(terminal_id)

    def discard(self, terminal_id: str) -> None:
        """The terminal is gone: release whoever waits on its gate."""
        gate = self._gates.pop(terminal_id, None)
        if gate is not None:
            gate.close()

    def ready(self, terminal_id: str) -> bool:
        """Whether tasks may reach the terminal as far as its MCP connection goes."""
        gate = self._gates.get(terminal_id)
        return gate is None or gate.open

    def failure(self, terminal_id: str) -> CaoError | None:
        """Why the terminal's gate stays closed, once its bounded wait ran out."""
        gate = self._gates.get(terminal_id)
        return gate.failure if gate is not None else None


__all__ = ["DEFAULT_TIMEOUT", "TIMEOUT_SETTING", "Gates", "McpGate", "McpNotConnected", "connect_timeout"]
