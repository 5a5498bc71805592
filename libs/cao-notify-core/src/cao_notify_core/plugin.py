"""``NotifierPlugin``: the observer plugin a notifier's entry point subclasses.

It turns cao's ``cao_after_*`` hook calls into queued events: an observer does a set lookup and a
bounded-queue append, and returns, so a slow or dead webhook never slows the kernel. This module is
imported with the entry point, so it stays thin: the service, the sender, httpx and yaml load in
``cao_startup``, and only when a webhook is configured.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from cao_hookspecs import hookimpl

if TYPE_CHECKING:
    from cao_hookspecs import (
        DelegationResult,
        DeliveryReceipt,
        KernelAPI,
        Message,
        PromptEvent,
        SessionInfo,
        StatusReport,
        Terminal,
    )

    from .notifier import Notifier
    from .service import Service

WAITING_USER_ANSWER = "waiting_user_answer"
#: The prompt events posted (under the ``waiting_user_answer`` kind): answers and closings are not news.
PROMPT_POSTS = frozenset({"opened", "escalated"})


class NotifierPlugin:
    """Posts cao lifecycle events to the webhook of one service.

    Inert until ``cao_startup`` finds a configuration; ``cao_shutdown`` flushes and stops it. An
    embedding program that runs several kernels registers one instance per kernel. A subclass names
    its ``Service`` in ``service_path``.
    """

    #: ``"module:attribute"`` of the subclass's ``Service``, imported by ``cao_startup`` only.
    service_path: ClassVar[str] = ""

    def __init__(self) -> None:
        self.notifier: Notifier | None = None
        self._kernel: object | None = None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {'active' if self.notifier is not None else 'inert'}>"

    @classmethod
    def load_service(cls) -> Service:
        """The ``Service`` that ``service_path`` names."""
        import importlib

        module, _, attribute = cls.service_path.partition(":")
        if not module or not attribute:
            raise TypeError(f"{cls.__name__}.service_path must be 'module:attribute', "
                            f"got {cls.service_path!r}")
        return getattr(importlib.import_module(module), attribute)

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
        self.notifier = start(self.load_service(), kernel)
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
        # A status that carries a typed prompt was posted already, with its options, by the prompt's
        # 'opened' event (the kernel records it first): one post per prompt.
        if new.status == WAITING_USER_ANSWER and terminal.prompt is None and new.prompt is None:
            self._emit(WAITING_USER_ANSWER, terminal=terminal, report=new)

    @hookimpl
    def cao_after_prompt(self, event: PromptEvent) -> None:
        # A person is needed when a prompt opens, and again when nobody answered it in time.
        if event.kind in PROMPT_POSTS:
            self._emit(WAITING_USER_ANSWER, event=event)
