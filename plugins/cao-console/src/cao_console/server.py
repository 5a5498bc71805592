"""What the console asks of cao-server, in one narrow object the screen is written against.

``ConsoleServer`` wraps the ``HttpKernel`` every ``cao`` command uses (same address, same token, same
error classes, one line naming the address when nothing answers) and adds the few reads the
``KernelAPI`` does not cover. Tests of the screen hand the app a fake with the same methods.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from cao_hookspecs.errors import CaoError, NotFound

if TYPE_CHECKING:
    from cao_hookspecs import Message, Terminal
    from cao_server.client import HttpKernel

    from .team import Member

#: Pending messages read per terminal: enough to show, and a count that says "at least" past it.
PENDING_LIMIT = 100


class AttachUnavailable(CaoError):
    """The selected terminal cannot be attached to from here."""


class ConsoleServer:
    """The server calls the console makes. ``settings`` are the invocation's ``CAO_*`` settings."""

    def __init__(self, api: HttpKernel, settings: Mapping[str, str]) -> None:
        self.api = api
        self.settings = dict(settings)

    @property
    def url(self) -> str:
        return self.api.base_url

    @property
    def local(self) -> bool:
        """Whether the server runs on this machine (its tmux is then this machine's)."""
        from cao_server.settings import is_loopback

        return is_loopback(urlsplit(self.url).hostname or "")

    async def aclose(self) -> None:
        await self.api.aclose()

    async def _route(self, method: str, path: str, **kwargs: Any) -> Any:
        # The HttpKernel's own request path, so these routes get the same token, timeouts and errors.
        return await self.api._call(method, path, **kwargs)

    # -- the team ---------------------------------------------------------------------------------

    async def team(self, session: str | None = None) -> dict[str, Any]:
        """The team in ``GET /team``'s shape (see the interfaces it is read from below)."""
        return await team_from_routes(self.api, session)

    def events(self, session: str | None = None) -> AsyncIterator[dict[str, Any]]:
        return self.api.events(session)

    async def pending(self, terminal_id: str) -> list[Message]:
        return await self.api.list_messages(terminal_id, state="pending", limit=PENDING_LIMIT)

    async def screen(self, terminal_id: str) -> str:
        return await self.api.get_output(terminal_id, "full")

    # -- steering ---------------------------------------------------------------------------------

    async def send(self, terminal_id: str, text: str) -> None:
        await self.api.send_input(terminal_id, text)

    async def answer(self, terminal_id: str, text: str) -> None:
        await self.api.answer_user_prompt(terminal_id, text)

    async def stop_terminal(self, terminal_id: str) -> None:
        await self.api.delete_terminal(terminal_id)

    async def stop_session(self, session_name: str) -> None:
        await self.api.delete_session(session_name)

    async def attach_argv(self, member: Member) -> list[str]:
        """The argv that shows ``member``'s terminal and takes its keys, run on this machine.

        Read from this machine's tmux (the session and window the tmux backend names after the
        terminal), so only for a server on this machine.
        """
        if not self.local:
            raise AttachUnavailable(
                f"the agents run on the machine of {self.url}; attach there "
                "(ssh to it and run `cao console`)")
        from cao_server.commands._tmux import attach_argv

        return attach_argv(f"{member.session_name}:{member.name}", self.settings)

    async def login_link(self) -> dict[str, Any]:
        """A one-time login link for the web console: ``{"url": ..., "expires_at": ...}``."""
        try:
            data = await self._route("POST", "/login-links")
        except NotFound:
            raise CaoError(f"cao-server at {self.url} gives no login links (it is older than the web "
                           "console)") from None
        if not isinstance(data, Mapping) or not isinstance(data.get("url"), str):
            raise CaoError(f"cao-server at {self.url} answered an unexpected login link: {data!r}"[:300])
        return dict(data)


def connect(settings: Mapping[str, str]) -> ConsoleServer:
    """A ``ConsoleServer`` for the server the settings name, as every ``cao`` command finds it."""
    from cao_server.commands._api import connect as connect_api

    return ConsoleServer(connect_api(settings), settings)


async def team_from_routes(api: HttpKernel, session: str | None = None) -> dict[str, Any]:
    """``GET /team``'s answer, put together from the per-session and per-terminal routes.

    What those routes cannot tell is left out: which delegation started a worker, and the handoffs a
    terminal waits for (the console learns both from the events as they happen).
    """
    from cao_server.wire import terminal_json

    infos = [info for info in await api.list_sessions() if session is None or info.name == session]

    async def member(terminal: Terminal) -> dict[str, Any] | None:
        try:
            report, pending = await asyncio.gather(
                api.get_status(terminal.id),
                api.list_messages(terminal.id, state="pending", limit=PENDING_LIMIT))
        except NotFound:  # removed while we read
            return None
        return {**terminal_json(terminal, report), "evidence": report.evidence, "since": report.since,
                "pending_messages": len(pending), "delegation": None}

    async def one(name: str) -> dict[str, Any] | None:
        try:
            info, terminals = await api.get_session(name)
        except NotFound:
            return None
        rows = await asyncio.gather(*(member(t) for t in terminals))
        return {"name": info.name, "status": info.status, "working_directory": info.working_directory,
                "terminals": [row for row in rows if row is not None]}

    sessions = await asyncio.gather(*(one(info.name) for info in infos))
    return {"at": time.time(), "sessions": [s for s in sessions if s is not None]}


__all__ = ["PENDING_LIMIT", "AttachUnavailable", "ConsoleServer", "connect", "team_from_routes"]
