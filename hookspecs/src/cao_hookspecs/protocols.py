"""The three interfaces plugins implement or call.

- ``KernelAPI``: everything cao can do. The in-process ``Kernel`` implements it, and so does the HTTP
  client of ``cao-server``; the CLI, the MCP server and embedding apps are written against it.
- ``TerminalBackend``: where terminals live (tmux). Its methods block; the kernel calls them from
  worker threads, never from the event loop.
- ``InboxStore``: where messages wait. Its methods block too and are called from worker threads.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from .activity import Activity
from .handoff_jobs import HandoffJob
from .prompts import PromptEvent
from .timeline import TimelineEvent
from .types import (
    AgentProfile,
    CreateTerminalRequest,
    DelegationResult,
    InputMark,
    McpToolSpec,
    Message,
    MessageDraft,
    MessageState,
    OutputEvent,
    ProviderInfo,
    SessionInfo,
    StatusReport,
    Terminal,
    TerminalInfo,
    TerminalLaunch,
    TerminalStatus,
)

__all__ = ["InboxStore", "KernelAPI", "TerminalBackend"]


@runtime_checkable
class TerminalBackend(Protocol):
    """A place to run agent CLIs. Terminal ids are cao's 8-hex ids, never backend-native ids.

    Output is pushed: after ``watch`` the backend calls ``on_event`` from its own thread whenever the
    terminal's screen changes, its program exits, or the terminal is lost. No method may poll a
    terminal in a loop while it is idle.

    Optional methods the kernel looks for: ``attach_argv(terminal_id) -> list[str]`` (a viewer's
    command) and ``move_terminal(terminal_id, session_name, metadata) -> None``, which moves a running
    terminal into another existing session and replaces its stored metadata (warm worker pools need
    it; ``NotFound``-style errors for an unknown terminal or session).
    """

    name: str

    def create_terminal(self, launch: TerminalLaunch) -> None:
        """Start ``launch.argv`` in a new terminal, creating the session if it does not exist."""

    def send_text(self, terminal_id: str, text: str, *, enter_count: int = 1, submit_delay: float = 0.0,
                  mark: str | None = None) -> None:
        """Deliver ``text`` as one input (multi-line text included), then press Enter ``enter_count`` times.

        With ``mark`` (letters, digits and ``.:_-``), the backend records it on the terminal in the same
        indivisible step as the paste (and again with the last Enter), so that :meth:`input_mark` says
        after any crash whether this input went in: the record of what was done, never a guess. Empty
        ``text`` presses the Enters alone, recording ``mark`` submitted with them (the Enter a pasted
        input still owes).
        """

    def input_mark(self, terminal_id: str) -> InputMark | None:
        """The last mark :meth:`send_text` recorded on the terminal (None: no marked input yet).

        A backend that cannot record marks raises ``NotImplementedError``.
        """

    def send_keys(self, terminal_id: str, keys: Sequence[str]) -> None:
        """Press keys by name (``Enter``, ``Escape``, ``C-c``, ``Down``...) without a trailing Enter."""

    def capture(self, terminal_id: str, *, history: int | None = None) -> str:
        """The rendered screen; with ``history`` also that many lines of scrollback (-1: all of it)."""

    def working_directory(self, terminal_id: str) -> str | None:
        """The live working directory of the terminal's foreground program, if known."""

    def info(self, terminal_id: str) -> TerminalInfo | None:
        """What the backend knows of one terminal, or None if it does not exist."""

    def kill_terminal(self, terminal_id: str) -> None:
        """Stop the terminal and every process started in it. Unknown ids are not an error."""

    def kill_session(self, session_name: str) -> None:
        """Stop every terminal of a session and the session itself."""

    def list_sessions(self) -> list[SessionInfo]:
        """Sessions this backend holds whose names start with ``cao-``."""

    def list_terminals(self, session_name: str | None = None) -> list[TerminalInfo]:
        """Terminals created by cao, for re-adoption after a restart."""

    def watch(self, terminal_id: str, on_event: Callable[[OutputEvent], None]) -> None:
        """Start pushing ``OutputEvent``s for a terminal to ``on_event`` (called from a backend thread)."""

    def unwatch(self, terminal_id: str) -> None:
        """Stop pushing events for a terminal."""

    def close(self) -> None:
        """Release threads and handles; terminals keep running."""


@runtime_checkable
class InboxStore(Protocol):
    """Durable message queue, one logical inbox per receiver terminal.

    State machine: ``pending -> delivering -> delivered``; ``delivering -> pending`` (retry, attempts+1,
    ``not_before`` set) or ``-> dead`` after the last try; ``failed`` is kept for upstream's wire value.
    """

    def enqueue(self, draft: MessageDraft) -> Message:
        """Store a message as pending and return it only once it is durable. A draft whose
        ``idempotency_key`` was seen before returns the stored message and stores nothing."""

    def claim_next(self, receiver_id: str, *, now: float | None = None) -> Message | None:
        """Atomically move the receiver's oldest due pending message to delivering and return it."""

    def claim(self, message_id: int) -> Message | None:
        """Atomically move one pending message to delivering; None if it is not pending."""

    def mark_delivered(self, message_id: int) -> Message:
        """delivering -> delivered."""

    def mark_failed(self, message_id: int, reason: str, *, retry_at: float | None) -> Message:
        """delivering -> pending (again at ``retry_at``) or, when ``retry_at`` is None, -> dead."""

    def release(self, message_id: int) -> Message:
        """delivering -> pending without counting an attempt (delivery never started)."""

    def mark_uncertain(self, message_id: int, reason: str) -> Message:
        """delivering -> uncertain, with ``reason`` as its last error: it may or may not have been typed,
        and it is never typed again."""

    def requeue(self, message_id: int) -> Message:
        """dead, failed or uncertain -> pending, due now, with its attempts and last error cleared: an
        operator's retry. Raises ``LookupError`` for an unknown id, ``ValueError`` for any other state."""

    def cancel(self, message_id: int, reason: str) -> Message:
        """pending -> dead, with ``reason`` as its last error: an operator's cancel. Raises
        ``LookupError`` for an unknown id, ``ValueError`` for any other state (it may be on its way)."""

    def get(self, message_id: int) -> Message | None:
        """One message by id."""

    def list(
        self, receiver_id: str | None = None, *, state: MessageState | None = None, limit: int = 100
    ) -> list[Message]:
        """Messages oldest first, optionally for one receiver and one state."""

    def receivers_with_pending(self) -> list[str]:
        """Receivers that have at least one pending message."""

    def close(self) -> None:
        """Release the connection."""


@runtime_checkable
class KernelAPI(Protocol):
    """What cao can do. Every method is a coroutine; errors raise ``CaoError`` subclasses (or, over
    HTTP, the same error rebuilt from the response).

    The in-process ``Kernel`` and cao-server's ``HttpKernel`` implement it with these exact signatures
    (a test compares them), so the CLI, the MCP server and embedding apps work against either.
    """

    # sessions and terminals
    async def create_session(self, request: CreateTerminalRequest, *, wait_ready: bool = True) -> Terminal:
        """Create a session with one terminal running ``request.agent_profile``.

        ``request.session_name`` names the session (a fresh ``cao-<hex>`` name when None); ``caller_id``
        is ignored. With ``wait_ready`` the call returns once the agent can act on a task, else at once.
        """
        ...

    async def create_terminal(self, request: CreateTerminalRequest, *, wait_ready: bool = True) -> Terminal:
        """Add a terminal to the existing session ``request.session_name`` (required)."""
        ...

    async def list_sessions(self) -> list[SessionInfo]: ...

    async def get_session(self, session_name: str) -> tuple[SessionInfo, list[Terminal]]: ...

    async def delete_session(self, session_name: str) -> list[str]: ...

    async def list_terminals(self, session_name: str) -> list[Terminal]: ...

    async def get_terminal(self, terminal_id: str) -> Terminal: ...

    async def delete_terminal(self, terminal_id: str) -> None: ...

    # input and output
    async def send_input(self, terminal_id: str, text: str) -> None: ...

    async def send_keys(self, terminal_id: str, key: str) -> None: ...

    async def get_output(self, terminal_id: str, mode: str = "full") -> str: ...

    async def get_status(self, terminal_id: str) -> StatusReport: ...

    async def wait_for_status(
        self, terminal_id: str, statuses: Collection[TerminalStatus], timeout: float
    ) -> StatusReport: ...

    async def exit_terminal(self, terminal_id: str) -> None: ...

    async def working_directory(self, terminal_id: str) -> str | None: ...

    async def attach_command(self, terminal_id: str) -> list[str]:
        """The argv of a program that, run under a terminal emulator on the server's machine, shows the
        terminal's screen and takes its keys without moving other viewers; its end leaves the agent
        running. Raises ``NotFound`` for an unknown terminal, ``NotSupported`` when the backend has no
        way to attach."""
        ...

    async def restore_terminal(self, terminal_id: str) -> Terminal:
        """Start a new agent that continues removed terminal ``terminal_id``: the same profile, provider
        and working directory, in its session (a new one of that name when it is gone), given the old
        terminal's saved screen log as its first input. Returns the new terminal once it has the log.
        Raises ``NotFound`` when no log is kept (never removed here, or older than the days kept),
        ``Conflict`` when the terminal is still running, ``InvalidInput`` for a bad id or a working
        directory that no longer exists."""
        ...

    async def mcp_connected(self, terminal_id: str, stages: Mapping[str, float] | None = None) -> None:
        """Report that the terminal's MCP client has connected to cao's MCP tools and listed them.

        Opens the terminal's readiness gate: tasks and inbox messages waiting for it go out. cao's MCP
        endpoint calls it for every caller that lists the tools; a terminal that has no gate, or whose
        gate is open, is left as it is. ``stages`` are the Unix times the reporter saw its own steps at
        (``started``, ``asked``, ``initialized``, ``listed``), recorded in the terminal's timeline;
        other keys, and values that are not times, are ignored. Raises ``NotFound`` for an unknown
        terminal.
        """
        ...

    async def get_timeline(self, terminal_id: str) -> list[TimelineEvent]:
        """The terminal's timeline, in the order its steps happened (``cao_hookspecs.timeline``). Kept for
        a while after the terminal is gone; ``NotFound`` for a terminal never known or long forgotten."""
        ...

    async def report_activity(self, kind: str, data: Mapping[str, Any] | None = None) -> Activity:
        """Tell every ``cao_after_activity`` observer (the event stream, notifiers) what a plugin's work
        did: ``kind`` is dotted and led by its area (``workflow.step``), ``data`` a JSON object of at
        most ``cao_hookspecs.activity.MAX_ACTIVITY_BYTES``. Returns the record, stamped with the time.
        Raises ``InvalidInput`` naming the problem for a bad kind or data."""
        ...

    # messaging and orchestration
    async def send_message(
        self, sender_id: str, receiver_id: str | None, message: str, *, idempotency_key: str | None = None
    ) -> Message:
        """Queue ``message`` for ``receiver_id`` (None: the sender's caller). A draft whose
        ``idempotency_key`` was seen before returns the stored message and queues nothing."""
        ...

    async def list_messages(
        self, terminal_id: str, *, state: MessageState | str | None = None, limit: int = 10
    ) -> list[Message]: ...

    async def retry_message(self, message_id: int) -> Message:
        """An operator's retry: a dead, failed or uncertain message goes back in line, due now, its
        attempts counted afresh. ``NotFound`` for an unknown id, ``Conflict`` for any other state."""
        ...

    async def cancel_message(self, message_id: int) -> Message:
        """An operator's cancel: a pending message becomes dead, and its sender is told. ``NotFound``
        for an unknown id, ``Conflict`` for any other state (it may be on its way already)."""
        ...

    async def handoff(
        self, caller_id: str | None, agent_profile: str, message: str, *, timeout: float = 600.0,
        call_id: str | None = None, model: str | None = None, use_worktree: bool = False,
        worktree_changes: bool = False, job_id: str | None = None,
    ) -> DelegationResult:
        """Start a worker on ``message``, wait for its answer, remove it. A retry with the same ``call_id``
        (same caller) joins or resumes the call, across restarts, instead of starting a second worker.
        ``model`` runs the worker on that model instead of its profile's (``InvalidInput`` where the
        worker's provider cannot choose one).

        ``use_worktree``: the worker runs in its own git worktree and branch made from the caller's
        ``HEAD`` (``worktree_changes``: with the caller's uncommitted changes copied in); the result names
        branch and folder when the worker left commits or changes there, else the worktree goes with it.
        ``InvalidInput`` when the caller's folder is not in a git repository.

        With a ``job_id`` (``cao_hookspecs.handoff_jobs``: 32 lowercase hex, chosen by the caller) the
        call runs to its end even when its caller stops waiting, and its state and answer are stored
        under the id in the cao home: :meth:`get_handoff_result` reads them, also after a restart.
        ``InvalidInput`` for a malformed job id, ``Conflict`` for one already used."""
        ...

    async def get_handoff_result(self, job_id: str) -> HandoffJob:
        """The state and answer of the handoff started with ``job_id``. ``NotFound`` for an id never used
        or past its keeping time; ``InvalidInput`` for a malformed id."""
        ...

    async def assign(self, caller_id: str, agent_profile: str, message: str, *, model: str | None = None,
                     use_worktree: bool = False, worktree_changes: bool = False) -> DelegationResult:
        """Start a worker on ``message`` and return at once. ``model``, ``use_worktree`` and
        ``worktree_changes`` as for :meth:`handoff`; a worktree kept when the worker is removed is reported
        in the caller's inbox."""
        ...

    async def answer_user_prompt(
        self, terminal_id: str, answer: str, *, prompt_id: str | None = None, as_terminal: str | None = None
    ) -> PromptEvent | None:
        """Upstream's answer: ``answer`` is an option's number, key or label of the open prompt, or text
        for a prompt that takes text. On a waiting terminal whose prompt could not be read, the text is
        typed and Enter pressed (None is returned). Otherwise as :meth:`answer_prompt`."""
        ...

    async def answer_prompt(
        self, terminal_id: str, *, option: int | None = None, text: str | None = None,
        prompt_id: str | None = None, by: str = "person", as_terminal: str | None = None,
    ) -> PromptEvent:
        """Answer the prompt open on ``terminal_id``: press option ``option``'s keys (numbered from 1),
        then type ``text`` if given (the option must take text, or the prompt must; with no option the
        first that takes text is used). Returns the ``answered`` event once the prompt has left the
        screen.

        ``prompt_id`` names the prompt meant; when another prompt (or none) is open, or it was answered
        already, ``Conflict`` is raised and nothing is typed. ``as_terminal``: a supervisor answering for
        a worker; it must have started the worker (directly or through its workers), and the policies
        must let supervisors answer (``by`` is then ``terminal:<id>``). ``by`` names a person (or a
        program) in the audit trail otherwise. ``InvalidInput`` for an option that does not exist or
        text the prompt cannot take; ``Vetoed`` when a policy denies what was asked for; ``Timeout`` when
        the keys went in but the prompt stayed on screen (it is then open again under a new id).
        """
        ...

    async def prompt_history(self, terminal_id: str, *, limit: int = 200) -> list[PromptEvent]:
        """The terminal's prompt audit trail, oldest first (at most ``limit`` latest entries). Kept after
        the terminal is gone; ``NotFound`` when nothing was ever recorded for an unknown terminal."""
        ...

    async def set_prompt_policy(self, session_name: str, policy: Mapping[str, Any] | None) -> None:
        """Set (None: remove) the prompt policy of a session; it applies to every terminal of the session
        before their profiles' policies. ``InvalidInput`` names what is wrong with ``policy``."""
        ...

    async def get_prompt_policy(self, session_name: str) -> Mapping[str, Any] | None: ...

    # profiles, providers and plugin tools
    async def list_profiles(self) -> list[AgentProfile]: ...

    async def get_profile(self, name: str) -> AgentProfile: ...

    async def list_providers(self) -> list[ProviderInfo]: ...

    async def mcp_tools(self) -> list[McpToolSpec]:
        """The plugins' MCP tools (``cao_register_mcp_tools``), by name order. Over HTTP each tool's
        function runs in the server, as the caller whose id the factory was given."""
        ...
