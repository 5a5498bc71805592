"""The terminals service: sessions and terminals, created, read, typed into, exited, deleted, re-adopted.

It owns the terminals a kernel knows (``LiveTerminal``: record, provider, status tracker), the backend
they run on, their MCP readiness gates and the native signal channel. Blocking backend calls run on the
kernel's I/O pool, never on the event loop; screen changes are pushed by the backend (``ScreenWatch``).

The delivery engine sees terminals through the narrow ``Receivers`` protocol this service implements
(``get``, ``can_receive``, ``refusal``, ``deliver``, ``history``) and hears about them through a
``ReceiverListener``: a status change, a gate that opened or failed, a terminal that was removed.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import logging
import re
import secrets
import shutil
import time
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import attrs

from cao_hookspecs import (
    AgentProfile,
    CreateTerminalRequest,
    DeliveryReceipt,
    LaunchContext,
    Message,
    ProviderSpec,
    SessionInfo,
    StatusReport,
    Terminal,
    TerminalLaunch,
    TerminalStatus,
)

from . import launching, resubmit, validate, worktrees
from .errors import AgentFailed, CaoError, Conflict, InvalidInput, NotFound, NotSupported, Timeout
from .live import LiveTerminal
from .readiness import Gates, McpGate, connect_timeout, settle_override
from .screen_watch import ScreenWatch
from .signal_channel import NativeSignal, SignalChannel, answer_of, open_channel, report_of
from .status import StatusTracker
from .terminal_cap import TerminalCap
from .timeline import Timelines

if TYPE_CHECKING:
    from cao_hookspecs import InputMark, TerminalBackend, TimelineEvent

    from .home import CaoHome
    from .hooks import Hooks
    from .iopool import IoPool
    from .prompt_desk import PromptDesk
    from .registry import Registry
    from .terminal_history import TerminalHistory

log = logging.getLogger(__name__)

DEFAULT_INIT_TIMEOUT = 60.0
HISTORY_STEPS = (200, 1000, 5000, -1)
# The longest an answer read waits for the screen to show a turn end the CLI already reported.
NATIVE_DRAW_WAIT = 1.0
# How long an answer of a completed turn may take to appear on screen before it counts as missing.
ANSWER_DRAW_WAIT = 2.0
# The MCP relay's steps, as it names them in its report, and as the timeline names them.
MCP_STAGES = {"started": "mcp_started", "asked": "mcp_asked", "initialized": "mcp_initialized",
              "listed": "tools_listed"}
STAGE_SLACK = 60.0


class ReceiverListener(Protocol):
    """What the delivery engine hears from the terminals service."""

    def status_changed(self, terminal_id: str) -> None:
        """The terminal's status changed (it may be ready for its next message)."""

    def kick(self, terminal_id: str) -> None:
        """Something else changed that may let the terminal take a message now (start-up, its gate)."""

    async def receiver_gone(self, terminal_id: str) -> None:
        """The terminal was deleted: what waits for it can never arrive."""


@attrs.define(kw_only=True, eq=False)
class Terminals:
    """Every terminal of one kernel. Lives on the kernel's event loop; built on it."""

    backend: TerminalBackend
    _io: IoPool
    _hooks: Hooks
    _registry: Registry
    _load_profile: Callable[[str], AgentProfile]
    _settings: Mapping[str, Any]
    _home: CaoHome
    # Where a removed terminal's screen log is kept for `cao terminal restore` (none: not kept).
    _history: TerminalHistory | None = None
    _live: dict[str, LiveTerminal] = attrs.field(init=False, factory=dict)
    _gates: Gates = attrs.field(init=False)
    _watch: ScreenWatch = attrs.field(init=False)
    _listener: ReceiverListener | None = attrs.field(init=False, default=None)
    _prompts: PromptDesk | None = attrs.field(init=False, default=None)
    _signals: SignalChannel | None = attrs.field(init=False, default=None)
    # Session names being created now: a second creation of the same name must fail, not join it.
    _creating: set[str] = attrs.field(init=False, factory=set)
    # Deferred start-up waits: held so they are not collected mid-wait, and so their end is always read.
    _starting: set[asyncio.Future[None]] = attrs.field(init=False, factory=set)
    # Every terminal's steps, live and recently removed; orchestration records its own steps here too.
    timelines: Timelines = attrs.field(init=False, factory=Timelines)
    # Told of every new session's first terminal once its CLI is ready (warm pools start filling then):
    # not alongside the CLI's own start, which work begun then would slow on a small machine.
    on_new_session: Callable[[Terminal, Mapping[str, str]], None] | None = attrs.field(init=False,
                                                                                      default=None)
    _settle: float | None = attrs.field(init=False, default=None)
    _first_of_session: set[str] = attrs.field(init=False, factory=set)  # whose readiness is told
    # Told when a removed terminal's git worktree was kept for the work in it (its caller hears of it).
    on_worktree_kept: Callable[[Terminal, Mapping[str, str], worktrees.Outcome], Any] | None = attrs.field(
        init=False, default=None)
    _cap: TerminalCap = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        self._settle = settle_override(self._settings)  # a bad value stops the start, named
        self._cap = TerminalCap(self._settings)
        registry = self._registry
        self._gates = Gates(self._settings, lambda: registry.mcp_servers, lambda: registry.routes)
        self._watch = ScreenWatch(self._live, self.backend, self._io, self._hooks, self.timelines)

    def listen(self, listener: ReceiverListener) -> None:
        self._listener = listener

    def attach_prompts(self, prompts: PromptDesk) -> None:
        """Let ``prompts`` read every waiting screen and hear every status change and removal."""
        self._prompts = prompts
        self._watch.prompts = prompts

    # -- running ----------------------------------------------------------------------------------

    def open_signals(self) -> None:
        """Open the native signal channel: before re-adopting terminals (their hooks name its socket), or
        when the first terminal whose provider maps native signals is created."""
        providers = self._registry.providers.values()
        self._signals = open_channel(self._settings, providers, Path(self._home.runtime), self._on_signal)

    def _on_signal(self, signal: NativeSignal) -> None:
        live = self._live.get(signal.terminal_id)
        # Every signal is a step, mapped to a status or not: it shows what the CLI can tell, and when.
        self.timelines.record(signal.terminal_id, f"signal:{signal.event}", at=signal.sent or signal.received,
                              detail={"received": f"{signal.received:.6f}"})
        report = report_of(live.provider if live is not None else None, signal)
        if live is not None and report is not None:
            live.tracker.native(report, answer_of(live.provider, signal))

    async def aclose(self) -> None:
        """Stop watching terminals (they keep running for the next kernel) and release the backend."""
        signals, self._signals = self._signals, None
        if signals is not None:
            signals.close()
        for live in self._live.values():
            live.tracker.detach()
            self._stop_submit_check(live)
        refreshing = [live.refresh_task for live in self._live.values() if live.refresh_task is not None]
        for task in refreshing:
            task.cancel()
        await asyncio.gather(*refreshing, return_exceptions=True)
        self._live.clear()
        await self._io.run(self.backend.close)

    # -- lookup (also the delivery engine's ``Receivers``) -----------------------------------------

    def get(self, terminal_id: str) -> LiveTerminal | None:
        """The terminal, or None when this kernel does not know it."""
        return self._live.get(terminal_id)

    def secret_ok(self, terminal_id: str, secret: str | None) -> bool:
        """Whether ``secret`` proves the identity of ``terminal_id`` (the one its MCP entry was given).
        An unknown terminal, or one made before terminals had secrets, proves nothing and is let
        through: what it asks for is refused or explained by the tools themselves."""
        live = self._live.get(terminal_id)
        recorded = live.extra.get(launching.SECRET_DIGEST_KEY) if live is not None else None
        if not recorded:
            return True
        return secret is not None and hmac.compare_digest(digest(secret), recorded)

    def find(self, matches: Callable[[LiveTerminal], bool]) -> LiveTerminal | None:
        """The first terminal ``matches`` accepts, or None."""
        return next((live for live in self._live.values() if matches(live)), None)

    def find_all(self, matches: Callable[[LiveTerminal], bool]) -> list[LiveTerminal]:
        """Every terminal ``matches`` accepts."""
        return [live for live in self._live.values() if matches(live)]

    def live(self, terminal_id: str) -> LiveTerminal:
        """The terminal; ``InvalidInput`` for a malformed id, ``NotFound`` for an unknown one."""
        validate.terminal_id(terminal_id)
        live = self._live.get(terminal_id)
        if live is None:
            raise NotFound(f"terminal {terminal_id} not found")
        return live

    def can_receive(self, terminal_id: str) -> bool:
        """Whether the terminal has finished starting and its MCP readiness gate (if any) is open."""
        live = self._live.get(terminal_id)
        return live is not None and not live.starting and self._gates.ready(terminal_id)

    def refusal(self, terminal_id: str) -> CaoError | None:
        """Why the terminal cannot take messages, if so: it is gone for good (:meth:`gone`), or its MCP
        server did not connect in time (which a late report may still mend)."""
        return self.gone(terminal_id) or self._gates.failure(terminal_id)

    def gone(self, terminal_id: str) -> Conflict | None:
        """Why the terminal can never take input again (its agent exited, its terminal was lost), if so."""
        live = self._live.get(terminal_id)
        if live is None or not live.tracker.failed_for_good:
            return None
        return Conflict(f"terminal {terminal_id} cannot take messages: {live.tracker.report.evidence}")

    async def deliver(self, live: LiveTerminal, message: Message) -> DeliveryReceipt | None:
        """Type a message into the terminal through ``cao_deliver_message`` (exceptions propagate)."""
        self._input_starts(live)
        try:
            receipt = await self._io.run(self._hooks.deliver_message, live.terminal(), message, live.provider,
                                         self.backend)
            if receipt is None:
                raise RuntimeError("no delivery plugin took the message")
        except Exception:
            self._input_failed(live)
            raise
        self._input_went_out(live, message.body, {"message": message.id})
        return receipt

    # Every input typed (a message delivered, a task, a user's text) goes through these three steps.

    def _input_starts(self, live: LiveTerminal) -> None:
        self._stop_submit_check(live)
        self.timelines.typing(live.id)  # first: noting the input may already report the turn begun
        live.tracker.note_input()

    def _input_failed(self, live: LiveTerminal) -> None:
        live.tracker.abort_input()
        self.timelines.typing(live.id, False)

    def _input_went_out(self, live: LiveTerminal, typed: str, detail: Mapping[str, object]) -> None:
        # The settle window counts from here: the paste and a provider's submit delay are behind us.
        live.tracker.input_sent()
        self.timelines.typed(live.id, live.tracker.screen, detail)
        self._check_submitted(live, typed)

    async def input_mark(self, terminal_id: str) -> InputMark | None:
        """The backend's record of the last marked input typed into the terminal."""
        return await self._io.run(self.backend.input_mark, terminal_id)

    async def submit_input(self, live: LiveTerminal, mark: str) -> None:
        """Press the Enters a pasted input still owes, as its provider submits, recording ``mark``
        submitted with the last one (``send_text`` with no text)."""
        caps = live.provider.capabilities if live.provider else None
        enter_count = caps.enter_count if caps else 1
        if enter_count:
            await self._io.run(self.backend.send_text, live.id, "", enter_count=enter_count, mark=mark)

    async def history(self, terminal_id: str) -> str:
        """Everything the terminal has shown: screen and whole scrollback."""
        return await self._io.run(self.backend.capture, terminal_id, history=-1)

    # -- creation ---------------------------------------------------------------------------------

    async def create_session(self, request: CreateTerminalRequest, *, wait_ready: bool = True,
                             extra: Mapping[str, str] | None = None,
                             requested: TimelineEvent | None = None) -> Terminal:
        """Create a session with one terminal running ``request.agent_profile``; ``extra`` is stored with
        it (see ``LiveTerminal.extra``), ``requested`` starts its timeline (a delegation's request)."""
        name = (validate.session_name(request.session_name) if request.session_name
                else f"{validate.SESSION_PREFIX}{secrets.token_hex(4)}")
        if name in await self._session_names() or name in self._creating:
            raise Conflict(f"session {name!r} already exists")
        self._creating.add(name)
        try:
            request = _evolve(request, session_name=name, caller_id=None)
            request = self._hooks.before("cao_before_session_create", request)
            terminal = await self._create(request, new_session=True, wait_ready=wait_ready, extra=extra,
                                          requested=requested)
        finally:
            self._creating.discard(name)
        info = SessionInfo(name=terminal.session_name, status="detached", working_directory=terminal.working_directory)
        self._hooks.after("cao_after_session_created", session=info, terminal=terminal)
        return terminal

    async def create_terminal(self, request: CreateTerminalRequest, *, wait_ready: bool = True,
                              extra: Mapping[str, str] | None = None,
                              requested: TimelineEvent | None = None) -> Terminal:
        """Add a terminal to the existing session ``request.session_name``."""
        if request.session_name is None:
            raise InvalidInput("a new terminal needs the name of the session it joins")
        name = validate.session_name(request.session_name)
        if name not in await self._session_names():
            raise NotFound(f"session {name!r} not found")
        if request.caller_id is not None:
            self.live(request.caller_id)
        request = _evolve(request, session_name=name)
        return await self._create(request, new_session=False, wait_ready=wait_ready, extra=extra,
                                  requested=requested)

    async def _session_names(self) -> set[str]:
        return {s.name for s in await self._io.run(self.backend.list_sessions)}

    def _resolve_provider(self, request: CreateTerminalRequest, profile: AgentProfile) -> ProviderSpec:
        from cao_hookspecs.defaults import DEFAULT_PROVIDER, PROVIDER_SETTING

        name = request.provider or profile.provider or self._settings.get(PROVIDER_SETTING) or DEFAULT_PROVIDER
        return self._registry.provider(name)

    def _allowed_env(self, profile: AgentProfile) -> set[str]:
        """Code-loading variables a request may set after all: named in ``CAO_ALLOWED_ENV_VARS`` or the
        profile's ``allowedEnvVars``."""
        named = str(self._settings.get("CAO_ALLOWED_ENV_VARS") or "").replace(",", " ").split()
        listed = profile.extra.get("allowedEnvVars") or ()
        return {*named, *(str(name) for name in listed if isinstance(listed, list | tuple))}

    def _advertised_env(self) -> dict[str, str]:
        return launching.advertised_env(self._settings, self._registry.mcp_servers.values())

    async def _create(self, request: CreateTerminalRequest, *, new_session: bool, wait_ready: bool,
                      extra: Mapping[str, str] | None = None,
                      requested: TimelineEvent | None = None) -> Terminal:
        terminal_id = launching.new_terminal_id()
        # Before anything else (hooks included): a full server refuses with nothing made.
        self._cap.reserve(terminal_id, self._live)
        try:
            return await self._create_reserved(terminal_id, request, new_session=new_session,
                                               wait_ready=wait_ready, extra=extra, requested=requested)
        finally:
            self._cap.release(terminal_id)

    async def _create_reserved(self, terminal_id: str, request: CreateTerminalRequest, *, new_session: bool,
                               wait_ready: bool, extra: Mapping[str, str] | None,
                               requested: TimelineEvent | None) -> Terminal:
        request = self._hooks.before("cao_before_terminal_create", request)
        assert request.session_name is not None
        profile = self._load_profile(validate.profile_name(request.agent_profile))
        provider = self._resolve_provider(request, profile)
        workdir = validate.working_directory(request.working_directory)
        model = validate.model(request.model or profile.model)
        if request.model and not provider.capabilities.takes_model:
            raise InvalidInput(f"provider {provider.name!r} cannot choose its model: it runs its CLI's own "
                               f"default; leave 'model' out or pick a provider that takes one")
        extra_env = validate.env(request.env, allowed=self._allowed_env(profile))
        # Checked before anything is made: a folder outside git is refused with nothing created.
        planned = (await self._io.run(worktrees.plan, workdir, profile.name, terminal_id)
                   if request.use_worktree else None)
        source, workdir = workdir, planned.start_dir if planned is not None else workdir
        record = Terminal(
            id=terminal_id,
            name=f"{profile.name}-{secrets.token_hex(2)}",
            session_name=request.session_name,
            provider=provider.name,
            agent_profile=profile.name,
            working_directory=workdir,
            caller_id=request.caller_id,
            allowed_tools=request.allowed_tools if request.allowed_tools is not None else profile.allowed_tools,
            created_at=time.time(),
            backend=self.backend.name,
            worktree_branch=planned.branch if planned is not None else None,
            worktree_path=planned.path if planned is not None else None,
        )
        runtime_dir = self._runtime_dir(terminal_id)
        # The native signal command and socket, for providers that write them into the CLI's hooks.
        extra_env = {**extra_env, **self._signal_env(provider, terminal_id)}
        advertised = self._advertised_env()
        identity = {launching.TERMINAL_ID_VARIABLE: terminal_id,
                    launching.HOME_VARIABLE: str(self._home.root), **advertised}
        secret = secrets.token_urlsafe(32)
        extra = {**(extra or {}), launching.SECRET_DIGEST_KEY: digest(secret)}
        mcp_servers = launching.mcp_servers(profile, identity, self._registry.mcp_servers.values(),
                                            secret)
        ctx = LaunchContext(
            terminal=record, profile=profile, working_directory=workdir, runtime_dir=str(runtime_dir),
            mcp_servers=mcp_servers, model=model, allowed_tools=record.allowed_tools, yolo=request.yolo,
            env=extra_env,
            cao_servers=launching.cao_server_names(profile, self._registry.mcp_servers.values()),
        )
        try:
            plan = provider.launch(ctx)
        except CaoError:
            raise
        except Exception as exc:
            raise InvalidInput(f"provider {provider.name!r} cannot launch profile {profile.name!r}: {exc}") from exc
        # After the launch: a CLI that is missing is the first thing to say; nothing is written before.
        # A CLI without an MCP client never reports in: nothing to wait for.
        gate_plan = self._gates.plan(profile) if provider.capabilities.mcp_client else None
        await self._io.run(launching.write_runtime_files, runtime_dir, plan.files)
        if planned is not None:
            try:
                made = await self._io.run(lambda: worktrees.create(
                    planned, self._worktree_journal, changes=request.worktree_changes, source=source))
            except BaseException:
                await self._remove_runtime_dir(terminal_id)
                raise
            extra = {**extra, **made.extra()}
        launch = TerminalLaunch(
            terminal_id=terminal_id,
            session_name=record.session_name,
            window_name=record.name,
            working_directory=workdir,
            argv=plan.argv,
            env={**advertised, launching.HOME_VARIABLE: str(self._home.root), **extra_env, **plan.env,
                 launching.TERMINAL_ID_VARIABLE: terminal_id},
            metadata={**(extra or {}), **launching.metadata_of(record)},
        )
        live = self._track(record, provider)
        live.extra = dict(extra or {})
        self.timelines.start(terminal_id, at=record.created_at, before=[requested] if requested else None)
        if gate_plan is not None:
            # Before the agent starts: its MCP client may report in before the agent is ready.
            server_name, route = gate_plan
            self._gates.add(McpGate(terminal_id, server_name, connect_timeout(self._settings),
                                    describe=f"{provider.name}, profile {profile.name}", route=route))
        try:
            await self._io.run(self.backend.create_terminal, launch)
            self.timelines.record(terminal_id, "process_started")
            if new_session and self.on_new_session is not None:
                self._first_of_session.add(terminal_id)
            await self._io.run(self.backend.watch, terminal_id, self._watch.on_event)
            self._watch.refresh(live)
            if wait_ready:
                await self._wait_started(live, profile)
            else:
                waiting = asyncio.ensure_future(self._wait_started(live, profile, background=True))
                self._starting.add(waiting)
                waiting.add_done_callback(self._started_in_background)
        except BaseException:
            await self._discard(live, kill_session=new_session)
            raise
        self._hooks.after("cao_after_terminal_created", terminal=live.terminal())
        return live.terminal()

    def _signal_env(self, provider: ProviderSpec, terminal_id: str) -> dict[str, str]:
        """Variables for a new terminal whose provider maps native signals ({} otherwise)."""
        if provider.native_signal is None:
            return {}
        if self._signals is None:
            # The provider was registered after the kernel started: open the channel now.
            self.open_signals()
        return self._signals.env(terminal_id) if self._signals is not None else {}

    def _track(self, record: Terminal, provider: ProviderSpec | None) -> LiveTerminal:
        live: LiveTerminal
        tracker = StatusTracker(record.id, on_change=lambda old, new: self._status_changed(live, old, new),
                                input_settle=float(self._settings.get("CAO_INPUT_SETTLE") or 2.0),
                                answer_of=launching.answer_reader(provider),
                                native_ends=provider is not None and provider.native_signal is not None,
                                pending_of=launching.pending_reader(provider))
        live = LiveTerminal(record=record, provider=provider, tracker=tracker,
                            started=asyncio.get_running_loop().create_future())
        self._live[record.id] = live
        if self._prompts is not None:
            self._prompts.track(record.id)
        return live

    def _status_changed(self, live: LiveTerminal, old: StatusReport, new: StatusReport) -> None:
        self.timelines.status_changed(live.id, new)
        if self._prompts is not None:
            self._prompts.status_changed(live, new)
        self._hooks.after("cao_after_status_changed", terminal=live.terminal(), old=old, new=new)
        if self._listener is not None and live.id in self._live:
            self._listener.status_changed(live.id)

    async def _wait_started(self, live: LiveTerminal, profile: AgentProfile, *, background: bool = False) -> None:
        """Wait until the agent can act on a task; resolve ``live.started`` either way.

        That is: its provider reports it ready and, when it has an MCP readiness gate, its cao MCP server
        has reported in (``cao_kernel.readiness``; the gate's own bounded wait starts when the provider is
        ready). In the background (deferred start-up) a failure is only recorded on ``live.started``, for
        whoever waits on it (assign reports it to its caller).
        """
        assert live.started is not None
        timeout = float(profile.provider_init_timeout or self._settings.get("CAO_PROVIDER_INIT_TIMEOUT")
                        or DEFAULT_INIT_TIMEOUT)
        error: CaoError | None = None
        try:
            await live.tracker.wait_for({TerminalStatus.IDLE, TerminalStatus.COMPLETED}, timeout)
        except AgentFailed:
            error = AgentFailed(
                f"{live.record.provider} failed to start in terminal {live.id}: {live.tracker.report.evidence}"
                f"\n--- last screen ---\n{live.tracker.screen.rstrip()}"
            )
        except Timeout:
            error = Timeout(
                f"{live.record.provider} did not become ready within {timeout:g} s in terminal {live.id} "
                f"(status {live.tracker.status.value})\n--- last screen ---\n{live.tracker.screen.rstrip()}"
            )
        except NotFound as exc:  # deleted while starting: whoever waits on it hears so
            error = exc
        if error is None:
            live.starting = False
            self.timelines.record(live.id, "cli_ready", detail={"evidence": live.tracker.report.evidence})
            if live.id in self._first_of_session and self.on_new_session is not None:
                self._first_of_session.discard(live.id)
                self.on_new_session(live.terminal(), live.extra)
            gate = self._gates.get(live.id)
            if gate is not None:
                gate.arm(self._gate_expired)
                try:
                    await gate.wait()
                except CaoError as exc:  # it did not connect in time, or the terminal was deleted meanwhile
                    error = exc
        if not live.started.done():
            if error is None:
                live.started.set_result(None)
            else:
                live.started.set_exception(error)
                live.started.exception()  # mark retrieved: a deferred failure is reported, not leaked
        if error is not None:
            if background:
                return
            raise error
        if self._listener is not None:
            self._listener.kick(live.id)

    def _started_in_background(self, waiting: asyncio.Future[None]) -> None:
        self._starting.discard(waiting)
        if waiting.cancelled():
            return
        exc = waiting.exception()  # read here, so nothing is left to "never retrieved" at collection
        if exc is not None:
            log.error("waiting for a terminal to start failed", exc_info=exc)

    async def _discard(self, live: LiveTerminal, *, kill_session: bool) -> None:
        """Undo a creation that failed part-way: nothing may be left behind."""
        self._live.pop(live.id, None)
        self._first_of_session.discard(live.id)
        self.timelines.end(live.id)
        self._gates.discard(live.id)
        self._stop_submit_check(live)
        try:
            await self._io.run(self.backend.unwatch, live.id)
            if kill_session:
                await self._io.run(self.backend.kill_session, live.record.session_name)
            else:
                await self._io.run(self.backend.kill_terminal, live.id)
        except Exception:  # noqa: BLE001
            log.exception("cleaning up terminal %s failed", live.id)
        await self._remove_runtime_dir(live.id)
        made = worktrees.Worktree.from_extra(live.id, live.extra)
        if made is not None:  # nothing ran in it: it goes whatever it holds (copies of the caller's work)
            await self._io.run(worktrees.drop, made, self._worktree_journal)

    @property
    def _worktree_journal(self) -> Path:
        return self._home.root / "worktrees"

    async def inspect_worktree(self, made: worktrees.Worktree) -> worktrees.Outcome:
        """Whether a worktree holds work (commits or changes), without touching it."""
        return await self._io.run(worktrees.inspect, made)

    async def _settle_worktree(self, live: LiveTerminal) -> None:
        """The removed terminal's worktree goes, unless the agent left work in it (then it is kept, and
        whoever listens is told)."""
        made = worktrees.Worktree.from_extra(live.id, live.extra)
        if made is None:
            return
        try:
            outcome = await self._io.run(worktrees.settle, made, self._worktree_journal)
        except Exception:  # noqa: BLE001 - the terminal is gone either way; the journal keeps the worktree
            log.exception("settling the git worktree of terminal %s failed", live.id)
            return
        log.info("terminal %s: %s", live.id, outcome.describe())
        if outcome.kept and self.on_worktree_kept is not None:
            self.on_worktree_kept(live.terminal(), dict(live.extra), outcome)

    def _runtime_dir(self, terminal_id: str) -> Path:
        """The folder of a terminal's private files (its provider's configuration, MCP entries)."""
        return self._home.runtime / "terminals" / terminal_id

    async def _remove_runtime_dir(self, terminal_id: str) -> None:
        await self._io.run(shutil.rmtree, self._runtime_dir(terminal_id), ignore_errors=True)

    # -- reading ----------------------------------------------------------------------------------

    async def get_terminal(self, terminal_id: str) -> Terminal:
        return self.live(terminal_id).terminal()

    async def get_status(self, terminal_id: str) -> StatusReport:
        return self.live(terminal_id).tracker.report

    async def wait_for_status(
        self, terminal_id: str, statuses: Collection[TerminalStatus], timeout: float
    ) -> StatusReport:
        live = self.live(terminal_id)
        return await live.tracker.wait_for(statuses, timeout, fail_on_error=TerminalStatus.ERROR not in statuses)

    async def get_output(self, terminal_id: str, mode: str = "full") -> str:
        """``full``: screen plus scrollback; ``last``: the agent's last answer, extracted by its provider."""
        live = self.live(terminal_id)
        if mode == "full":
            return await self.history(terminal_id)
        if mode != "last":
            raise InvalidInput(f"invalid output mode {mode!r}: use 'full' or 'last'")
        if live.provider is None:
            raise Conflict(f"terminal {terminal_id} has no known provider to extract its answer")
        answer = live.tracker.native_answer
        if answer is not None:  # the CLI's own signal carried it: nothing to wait for or read
            return answer
        # A turn's end reported natively can precede the last of its drawing by a few milliseconds.
        await live.tracker.screen_caught_up(NATIVE_DRAW_WAIT)
        deadline = time.monotonic() + ANSWER_DRAW_WAIT
        while True:
            for lines in HISTORY_STEPS:
                text = await self._io.run(self.backend.capture, terminal_id, history=lines)
                try:
                    return live.provider.extract_last_message(text)
                except ValueError:
                    continue
            # A turn just reported completed may still be drawing its answer (a loaded machine, a
            # native signal ahead of the screen): look again when it draws, for a moment, before saying
            # there is none.
            if live.tracker.report.status != TerminalStatus.COMPLETED or time.monotonic() >= deadline:
                raise NotFound(f"no answer from the agent found in terminal {terminal_id}")
            await live.tracker.next_screen(deadline - time.monotonic())

    async def working_directory(self, terminal_id: str) -> str | None:
        self.live(terminal_id)
        return await self._io.run(self.backend.working_directory, terminal_id)

    async def attach_command(self, terminal_id: str) -> list[str]:
        live = self.live(terminal_id)
        attach = getattr(self.backend, "attach_argv", None)
        if attach is None:
            raise NotSupported(f"the {live.record.backend} terminal backend cannot attach a viewer")
        return list(await self._io.run(attach, terminal_id))

    async def list_sessions(self) -> list[SessionInfo]:
        """The backend's sessions, plus those it lost (its tmux server died) whose dead terminals the kernel
        still holds: they exist for cao until they are removed, so ``cao shutdown --all`` removes them."""
        held: list[SessionInfo] = await self._io.run(self.backend.list_sessions)
        known = {info.name for info in held}
        members: dict[str, list[LiveTerminal]] = {}
        for live in self._live.values():
            if live.record.session_name not in known:
                members.setdefault(live.record.session_name, []).append(live)
        lost = [SessionInfo(name=name, working_directory=terminals[0].record.working_directory)
                for name, terminals in sorted(members.items())
                if all(live.tracker.failed_for_good for live in terminals)]
        return held + lost

    def live_terminals(self) -> list[Terminal]:
        """Every terminal this kernel runs, in every session, oldest first."""
        return sorted((live.terminal() for live in self._live.values()), key=lambda t: t.created_at)

    async def list_terminals(self, session_name: str) -> list[Terminal]:
        name = validate.session_name(session_name)
        return sorted(
            (live.terminal() for live in self._live.values() if live.record.session_name == name),
            key=lambda t: t.created_at,
        )

    async def get_session(self, session_name: str) -> tuple[SessionInfo, list[Terminal]]:
        name = validate.session_name(session_name)
        for info in await self.list_sessions():
            if info.name == name:
                return info, await self.list_terminals(name)
        raise NotFound(f"session {name!r} not found")

    # -- input ------------------------------------------------------------------------------------

    async def send_input(self, terminal_id: str, text: str, *, mark: str | None = None) -> None:
        """Type ``text`` into the terminal as one input and submit it; ``mark`` is recorded with it (see
        ``TerminalBackend.send_text``)."""
        live = self.live(terminal_id)
        validate.input_text(text)
        if live.tracker.failed_for_good:
            # The agent is gone; typing would reach a dead pane or a bare shell. An error the agent
            # itself reported (it is still running) does not block input.
            raise Conflict(f"terminal {terminal_id} is in error ({live.tracker.report.evidence}); input refused")
        await self._type(live, text, mark=mark)

    async def _type(self, live: LiveTerminal, text: str, *, mark: str | None = None,
                    what: str | None = None) -> None:
        caps = live.provider.capabilities if live.provider else None
        self._input_starts(live)
        try:
            await self._io.run(
                self.backend.send_text, live.id, text,
                enter_count=caps.enter_count if caps else 1, submit_delay=caps.submit_delay if caps else 0.0,
                **({} if mark is None else {"mark": mark}),
            )
        except BaseException:
            self._input_failed(live)
            raise
        self._input_went_out(live, text, {key: value for key, value in (("mark", mark), ("input", what))
                                          if value})

    def _check_submitted(self, live: LiveTerminal, typed: str) -> None:
        """Make sure ``typed`` left the prompt after its Enter, in the background (see
        ``cao_kernel.resubmit``)."""
        pending_of, key = launching.pending_reader(live.provider), resubmit.typed_key(typed)
        if live.provider is None or pending_of is None or not key:
            return

        async def capture() -> str:
            return await self._io.run(self.backend.capture, live.id)

        async def press(attempt: int) -> None:
            await self._io.run(self.backend.send_keys, live.id, ["Enter"])
            live.tracker.input_sent()  # the settle window counts from the last Enter
            self.timelines.record(live.id, "input_resubmitted", detail={"attempt": attempt})
            log.info("terminal %s: the input typed still sat at the prompt, unsent; Enter pressed again "
                     "(attempt %d)", live.id, attempt)

        check = asyncio.ensure_future(resubmit.resubmit_unsent(
            live.tracker, pending_of, key, live.provider.capabilities.submit_delay, capture=capture,
            press=press))
        live.submit_check = check
        check.add_done_callback(lambda done: self._submit_checked(live, done))

    @staticmethod
    def _submit_checked(live: LiveTerminal, check: asyncio.Future[None]) -> None:
        if live.submit_check is check:
            live.submit_check = None
        if not check.cancelled() and check.exception() is not None:
            # A terminal lost meanwhile, a backend that refused the key: the input stays as typed.
            log.warning("terminal %s: checking that the input was submitted failed: %s", live.id,
                        check.exception())

    @staticmethod
    def _stop_submit_check(live: LiveTerminal) -> None:
        if live.submit_check is not None:
            live.submit_check.cancel()
            live.submit_check = None

    async def send_keys(self, terminal_id: str, key: str) -> None:
        live = self.live(terminal_id)
        await self._io.run(self.backend.send_keys, live.id, [validate.key(key)])

    async def exit_terminal(self, terminal_id: str) -> None:
        """Ask the agent CLI to quit with its provider's exit command."""
        live = self.live(terminal_id)
        command = live.provider.exit_command if live.provider else "exit"
        if re.match(r"^[CM]-", command):
            await self._io.run(self.backend.send_keys, live.id, [command])
        elif live.tracker.failed_for_good:
            raise Conflict(f"terminal {terminal_id} has no running agent ({live.tracker.report.evidence}); "
                           "delete it instead")
        else:
            await self._type(live, command, what="exit command")

    # -- moving -----------------------------------------------------------------------------------

    def can_move(self) -> bool:
        """Whether the backend can move a running terminal into another session."""
        return callable(getattr(self.backend, "move_terminal", None))

    async def move(self, terminal_id: str, session_name: str, caller_id: str | None,
                   extra: Mapping[str, str]) -> Terminal:
        """Move a running terminal into the existing session ``session_name`` as a worker of
        ``caller_id``, with ``extra`` as what is stored with it from now on (see ``LiveTerminal.extra``)."""
        live = self.live(terminal_id)
        if not self.can_move():
            raise NotSupported(f"the {live.record.backend} terminal backend cannot move a terminal")
        record = attrs.evolve(live.record, session_name=validate.session_name(session_name),
                              caller_id=caller_id)
        move = self.backend.move_terminal  # type: ignore[attr-defined]
        await self._io.run(move, terminal_id, record.session_name, {**extra, **launching.metadata_of(record)})
        live.record, live.extra = record, dict(extra)
        return live.terminal()

    # -- deletion ---------------------------------------------------------------------------------

    async def delete_terminal(self, terminal_id: str) -> None:
        live = self.live(terminal_id)
        await self._keep_log(live)
        await self._io.run(self.backend.unwatch, terminal_id)
        await self._io.run(self.backend.kill_terminal, terminal_id)
        await self._removed(live)

    async def delete_session(self, session_name: str) -> list[str]:
        name = validate.session_name(session_name)
        if name not in {s.name for s in await self.list_sessions()}:
            raise NotFound(f"session {name!r} not found")
        members = [live for live in self._live.values() if live.record.session_name == name]
        for live in members:
            await self._keep_log(live)
            await self._io.run(self.backend.unwatch, live.id)
        await self._io.run(self.backend.kill_session, name)
        for live in members:
            await self._removed(live)
        ids = [live.id for live in members]
        self._hooks.after("cao_after_session_killed", session_name=name, terminal_ids=ids)
        return ids

    async def _keep_log(self, live: LiveTerminal) -> None:
        """Save what the terminal showed before it goes (best effort: a removal never fails for it)."""
        history = self._history
        if history is None or not history.enabled:
            return
        try:
            transcript = await self.history(live.id)
        except Exception as exc:  # noqa: BLE001
            log.warning("could not read the screen of terminal %s to keep it: %s", live.id, exc)
            return
        await self._io.run(history.save, live.terminal(), transcript)

    async def _removed(self, live: LiveTerminal) -> None:
        """Forget a killed terminal and its private files, fail what waits for it, tell observers. Once:
        a terminal removed meanwhile by another path (its session deleted while a finished handoff's
        worker was being dismissed) is not reported again."""
        if self._live.get(live.id) is not live:
            return
        if self._prompts is not None:
            self._prompts.forget(live.id)
        self._live.pop(live.id, None)
        self._first_of_session.discard(live.id)
        self._gates.discard(live.id)
        self.timelines.end(live.id)
        live.tracker.close()
        self._stop_submit_check(live)
        if live.refresh_task is not None:
            live.refresh_task.cancel()
        await self._remove_runtime_dir(live.id)
        await self._settle_worktree(live)
        if self._listener is not None:
            await self._listener.receiver_gone(live.id)
        self._hooks.after("cao_after_terminal_killed", terminal=live.terminal())

    # -- MCP readiness gate -----------------------------------------------------------------------

    async def mcp_connected(self, terminal_id: str, stages: Mapping[str, float] | None = None) -> None:
        """The terminal's MCP client has connected and listed cao's tools: open its readiness gate and
        deliver what waits in its inbox. A terminal without a gate (or already open) is left as it is.
        ``stages`` (see ``KernelAPI.mcp_connected``) go into its timeline."""
        live = self.live(terminal_id)
        self._record_mcp_stages(live, stages or {})
        gate = self._gates.get(terminal_id)
        if gate is None or gate.open:
            return
        settle = self._settle if self._settle is not None else (
            live.provider.capabilities.mcp_settle if live.provider else 0.0)
        if settle > 0:
            await asyncio.sleep(settle)
        if self._gates.get(terminal_id) is not gate or not gate.connect():
            return
        self.timelines.record(terminal_id, "gate_open", detail={"settle": f"{settle:g}"})
        log.info("terminal %s: its MCP server %r connected", terminal_id, gate.server_name)
        if self._listener is not None and not live.starting:
            self._listener.kick(terminal_id)

    def _record_mcp_stages(self, live: LiveTerminal, stages: Mapping[str, Any]) -> None:
        received = time.time()
        # A reporter's clock is another process's (perhaps another machine's): a time far from this
        # terminal's life is a wrong clock or a wrong value, and is left out rather than misplaced.
        earliest, latest = live.record.created_at - STAGE_SLACK, received + STAGE_SLACK
        for key, name in MCP_STAGES.items():
            at = stages.get(key)
            if isinstance(at, int | float) and not isinstance(at, bool) and earliest <= at <= latest:
                self.timelines.record(live.id, name, at=float(at), once=True,
                                      detail={"received": f"{received:.6f}"} if key == "listed" else None)
        if not self.timelines.has(live.id, "tools_listed"):
            self.timelines.record(live.id, "tools_listed", at=received)

    def _gate_expired(self, gate: McpGate) -> None:
        self.timelines.record(gate.terminal_id, "gate_failed")
        error = gate.fail()
        log.warning("%s", error)
        if self._listener is not None and self._gates.get(gate.terminal_id) is gate:
            self._listener.kick(gate.terminal_id)  # refuses what waits in its inbox, naming the reason

    # -- re-adoption ------------------------------------------------------------------------------

    async def adopt_all(self) -> None:
        """Take over terminals a previous kernel created (they carry their record in backend metadata).

        Their CLIs' hooks may signal at once, so the signal channel opens first; with nothing to re-adopt
        it waits for the first terminal that needs it (a server's first answer does not wait for every
        provider module to load).
        """
        infos = await self._io.run(self.backend.list_terminals)
        if infos and self._signals is None:
            self.open_signals()
        for info in infos:
            if info.terminal_id in self._live:
                continue
            record = launching.record_from(info, self.backend.name)
            provider = self._registry.providers.get(record.provider)
            live = self._track(record, provider)
            live.extra = launching.extra_of(info)
            made = worktrees.Worktree.from_extra(record.id, live.extra)
            if made is not None:
                live.record = attrs.evolve(record, worktree_branch=made.branch, worktree_path=made.path)
            self.timelines.start(record.id, at=record.created_at)
            live.starting = False
            assert live.started is not None
            live.started.set_result(None)
            if not info.alive:
                live.tracker.fail(f"agent exited (status {info.exit_status})")
                continue
            try:
                await self._io.run(self.backend.watch, info.terminal_id, self._watch.on_event)
            except Exception as exc:  # noqa: BLE001
                live.tracker.fail(f"cannot watch terminal: {exc}")
                continue
            self._watch.refresh(live)
        await self._recover_worktrees()

    async def _recover_worktrees(self) -> None:
        """Settle the worktrees an earlier kernel made for terminals that are no longer running (it
        stopped while making one, or before it removed one)."""
        try:
            outcomes = await self._io.run(worktrees.recover, self._worktree_journal, set(self._live))
        except Exception:  # noqa: BLE001 - a repository moved or gone: tried again at the next start
            log.exception("settling the git worktrees of an earlier run failed")
            return
        for outcome in outcomes:
            log.info("terminal %s (gone): %s", outcome.worktree.terminal_id, outcome.describe())


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def _evolve(request: CreateTerminalRequest, **changes: Any) -> CreateTerminalRequest:
    return attrs.evolve(request, **changes)


__all__ = ["ReceiverListener", "Terminals"]
