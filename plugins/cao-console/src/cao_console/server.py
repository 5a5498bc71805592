"""What the console asks of cao-server, in one narrow object the screen is written against.

``ConsoleServer`` wraps the ``HttpKernel`` every ``cao`` command uses (same address, same token, same
error classes, one line naming the address when nothing answers) and adds the few reads the
``KernelAPI`` does not cover. Tests of the screen hand the app a fake with the same methods.
"""

from __future__ import annotations

import shlex
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from cao_hookspecs.errors import CaoError, NotFound, NotSupported

if TYPE_CHECKING:
    from cao_hookspecs import Message
    from cao_server.client import HttpKernel

    from .team import Member

#: Pending messages read per terminal: enough to show, and a count that says "at least" past it.
PENDING_LIMIT = 100
#: Who the console answers prompts as, in the audit trail.
ANSWERED_BY = "person:console"


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

    # -- the team ---------------------------------------------------------------------------------

    async def team(self, session: str | None = None) -> dict[str, Any]:
        """Every session's terminals with status, evidence, what each waits for and who started it
        (``GET /team``)."""
        return await self.api.team(session)

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
        """Upstream's answer: an option's number, key or label, or text, for whatever prompt is open."""
        await self.api.answer_user_prompt(terminal_id, text)

    async def answer_prompt(self, terminal_id: str, prompt_id: str, *, option: int | None = None,
                            text: str | None = None) -> None:
        """Answer prompt ``prompt_id`` by option and/or text; ``Conflict`` when it is no longer the open
        one (nothing is typed then)."""
        await self.api.answer_prompt(terminal_id, option=option, text=text, prompt_id=prompt_id,
                                     by=ANSWERED_BY)

    async def stop_terminal(self, terminal_id: str) -> None:
        await self.api.delete_terminal(terminal_id)

    async def stop_session(self, session_name: str) -> None:
        await self.api.delete_session(session_name)

    async def attach_argv(self, member: Member) -> list[str]:
        """The argv that shows ``member``'s terminal and takes its keys, to run on this machine.

        The server's own attach command when its backend has one; for a tmux terminal whose backend has
        none, this machine's tmux, on the session and window the tmux backend names after the terminal.
        Either runs only where the agents run, so only for a server on this machine.
        """
        try:
            argv = await self.api.attach_command(member.id)
        except NotSupported:
            if member.backend != "tmux":
                raise
            from cao_server.commands._tmux import attach_argv

            argv = attach_argv(f"{member.session_name}:{member.name}", self.settings)
        if not self.local:
            raise AttachUnavailable(f"the agents run on the machine of {self.url}; attach there with: "
                                    f"{shlex.join(argv)}")
        return argv

    async def login_link(self) -> str:
        """A one-time login link for the web console."""
        try:
            return await self.api.login_link()
        except NotFound:
            raise CaoError(f"cao-server at {self.url} gives no login links (it is older than the web "
                           "console)") from None


def connect(settings: Mapping[str, str]) -> ConsoleServer:
    """A ``ConsoleServer`` for the server the settings name, as every ``cao`` command finds it."""
    from cao_server.commands._api import connect as connect_api

    return ConsoleServer(connect_api(settings), settings)


__all__ = ["ANSWERED_BY", "PENDING_LIMIT", "AttachUnavailable", "ConsoleServer", "connect"]
