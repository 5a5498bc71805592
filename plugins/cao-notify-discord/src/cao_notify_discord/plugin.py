"""Entry point of cao-notify-discord (kept thin: the sender, httpx and yaml load at start-up, and only
when a webhook is configured).

The entry point names ``plugin``, one ``DiscordPlugin`` instance. Its observers do no work beyond a
dictionary lookup and a bounded-queue append, so a slow or dead webhook never slows the kernel.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cao_hookspecs import hookimpl

if TYPE_CHECKING:
    from cao_hookspecs import (
        DelegationResult,
        DeliveryReceipt,
        KernelAPI,
        Message,
        SessionInfo,
        StatusReport,
        Terminal,
    )

    from .notifier import Notifier

WAITING_USER_ANSWER = "waiting_user_answer"


class DiscordPlugin:
    """Posts cao lifecycle events to a Discord webhook.

    Inert until ``cao_startup`` finds a configuration; ``cao_shutdown`` flushes and stops it. An
    embedding program that runs several kernels registers one instance per kernel.
    """

    def __init__(self) -> None:
        self.notifier: Notifier | None = None
        self._kernel: object | None = None

    def __repr__(self) -> str:
        return f"<DiscordPlugin {'active' if self.notifier is not None else 'inert'}>"

    def _emit(self, kind: str, **args: Any) -> None:
        notifier = self.notifier
        if notifier is not None:
            notifier.submit(kind, args)

    def stop(self) -> dict[str, int] | None:
        """Flush and stop the sender (bounded by ``flush_seconds``); returns its final counters."""
        notifier, self.notifier, self._kernel = self.notifier, None, None
        return notifier.close() if notifier is not None else None

    # -- plumbing -----------------------------------------------------------------------------------

    @hookimpl
    def cao_startup(self, kernel: KernelAPI) -> None:
        from .notifier import start

        # A second kernel taking this instance over: finish the first one's work before restarting.
        self.stop()
        self.notifier = start(kernel)
        self._kernel = kernel if self.notifier is not None else None

    @hookimpl
    def cao_shutdown(self, kernel: KernelAPI) -> None:
        if kernel is self._kernel:
            self.stop()

    # -- observers ----------------------------------------------------------------------------------

    @hookimpl
    def cao_after_session_created(self, session: SessionInfo, terminal: Terminal) -> None:
        self._emit("session_created", session=session, terminal=terminal)

    @hookimpl
    def cao_after_session_killed(self, session_name: str, terminal_ids: list[str]) -> None:
        self._emit("session_killed", session_name=session_name, terminal_ids=list(terminal_ids))

    @hookimpl
    def cao_after_terminal_created(self, terminal: Terminal) -> None:
        self._emit("terminal_created", terminal=terminal)

    @hookimpl
    def cao_after_terminal_killed(self, terminal: Terminal) -> None:
        self._emit("terminal_killed", terminal=terminal)

    @hookimpl
    def cao_after_message_delivered(self, message: Message, receipt: DeliveryReceipt) -> None:
        self._emit("message_delivered", message=message, receipt=receipt)

    @hookimpl
    def cao_after_message_dead(self, message: Message, reason: str) -> None:
        self._emit("message_dead", message=message, reason=reason)

    @hookimpl
    def cao_after_handoff_finished(self, result: DelegationResult) -> None:
        self._emit("handoff_finished", result=result)

    @hookimpl
    def cao_after_assign_finished(self, result: DelegationResult) -> None:
        self._emit("assign_finished", result=result)

    @hookimpl
    def cao_after_status_changed(self, terminal: Terminal, new: StatusReport) -> None:
        if new.status == WAITING_USER_ANSWER:
            self._emit(WAITING_USER_ANSWER, terminal=terminal, report=new)


#: What the ``notify_discord`` entry point loads.
plugin = DiscordPlugin()
