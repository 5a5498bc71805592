"""Sessions and terminals: create, read, type into, exit, delete, re-adopt.

Blocking backend calls run on the kernel's I/O thread pool, never on the event loop. Screen changes are
pushed by the backend; each one schedules a single capture-and-detect pass per terminal.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import secrets
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from cao_hookspecs import (
    AgentProfile,
    CreateTerminalRequest,
    LaunchContext,
    OutputEvent,
    ProviderSpec,
    SessionInfo,
    StatusReport,
    Terminal,
    TerminalLaunch,
    TerminalStatus,
)

from . import validate
from .errors import AgentFailed, CaoError, Conflict, InvalidInput, NotFound, Timeout
from .live import LiveTerminal
from .readiness import MCP_ROUTE, McpGate, connect_timeout
from .status import StatusTracker

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

    from cao_hookspecs import TerminalBackend

    from .hooks import Hooks

log = logging.getLogger(__name__)

T = TypeVar("T")

# A burst of output is read once: the first event waits this long for the rest of the burst.
REFRESH_DEBOUNCE = 0.008
DEFAULT_INIT_TIMEOUT = 60.0
HISTORY_STEPS = (200, 1000, 5000, -1)
DIALOG_SETTLE = 0.5
DIALOG_RETRY = 2.0
DIALOG_ATTEMPTS = 2
# The longest an answer read waits for the screen to show a turn end the CLI already reported.
NATIVE_DRAW_WAIT = 1.0
# How long an answer of a completed turn may take to appear on screen before it counts as missing.
ANSWER_DRAW_WAIT = 2.0
META_PREFIX = "cao_"


def new_terminal_id() -> str:
    return secrets.token_hex(4)


class TerminalOps:
    """Mixed into ``Kernel``: everything about sessions and terminals."""

    hooks: Hooks
    settings: dict[str, Any]
    _live: dict[str, LiveTerminal]
    _loop: asyncio.AbstractEventLoop | None
    _executor: ThreadPoolExecutor | None
    _backend: TerminalBackend | None

    if TYPE_CHECKING:  # provided by Kernel
        home: Any
        providers: dict[str, ProviderSpec]
        routes: dict[str, Any]

        def provider(self, name: str) -> ProviderSpec: ...
        def load_profile(self, name: str) -> AgentProfile: ...
        async def start(self) -> None: ...
        def _status_changed(self, live: LiveTerminal, old: StatusReport, new: StatusReport) -> None: ...

    # -- plumbing ---------------------------------------------------------------------------------

    async def _io(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run a blocking call on the I/O pool."""
        await self.start()
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, lambda: fn(*args, **kwargs))

    @property
    def backend(self) -> TerminalBackend:
        if self._backend is None:
            raise CaoError("the kernel has not been started (await kernel.start())")
        return self._backend

    def _get_live(self, terminal_id: str) -> LiveTerminal:
        validate.terminal_id(terminal_id)
        live = self._live.get(terminal_id)
        if live is None:
            raise NotFound(f"terminal {terminal_id} not found")
        return live

    def _on_backend_event(self, event: OutputEvent) -> None:
        # Called from the backend's reader thread.
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._handle_event, event)

    def _handle_event(self, event: OutputEvent) -> None:
        live = self._live.get(event.terminal_id)
        if live is None:
            return
        if event.kind == "output":
            self._schedule_refresh(live)
        elif event.kind == "exited":
            asyncio.ensure_future(self._final_refresh(live, f"agent exited ({event.detail or 'no status'})"))
        elif event.kind == "lost":
            live.tracker.fail(f"terminal lost: {event.detail or 'gone'}")

    def _schedule_refresh(self, live: LiveTerminal) -> None:
        live.dirty = True
        if live.refresh_task is None:
            live.refresh_task = asyncio.ensure_future(self._refresh_loop(live))

    async def _refresh_loop(self, live: LiveTerminal) -> None:
        try:
            await asyncio.sleep(REFRESH_DEBOUNCE)
            while live.dirty and self._live.get(live.id) is live:
                live.dirty = False
                try:
                    screen = await self._io(self.backend.capture, live.id)
                except Exception as exc:  # noqa: BLE001 - the terminal may vanish mid-read
                    log.debug("capture of %s failed: %s", live.id, exc)
                    return
                self._read_screen(live, screen)
        finally:
            live.refresh_task = None

    async def _final_refresh(self, live: LiveTerminal, evidence: str) -> None:
        try:
            screen = await self._io(self.backend.capture, live.id)
            live.tracker.screen = screen
        except Exception:  # noqa: BLE001
            pass
        live.tracker.fail(evidence)

    def _read_screen(self, live: LiveTerminal, screen: str) -> None:
        report: StatusReport | None = None
        if live.provider is not None:
            report = self.hooks.detect_status(live.terminal(), screen, live.provider)
            if live.starting:
                self._answer_dialogs(live, screen)
        live.tracker.observe(screen, report)

    def _answer_dialogs(self, live: LiveTerminal, screen: str) -> None:
        assert live.provider is not None
        for dialog in live.provider.startup_dialogs:
            if dialog.name in live.answered_dialogs or not re.search(dialog.pattern, screen, re.MULTILINE):
                continue
            live.answered_dialogs.add(dialog.name)
            asyncio.ensure_future(self._answer_dialog(live, dialog))

    async def _answer_dialog(self, live: LiveTerminal, dialog: Any) -> None:
        """Answer a start-up dialog once it has been drawn for a moment, and again if it stays.

        Some CLIs drop keys that arrive within a fraction of a second of drawing a dialog, so the first
        answer waits DIALOG_SETTLE; a dialog still shown DIALOG_RETRY later is answered once more.
        """
        delay = DIALOG_SETTLE
        for attempt in range(DIALOG_ATTEMPTS):
            await asyncio.sleep(delay)
            if self._live.get(live.id) is not live:
                return
            try:
                screen = await self._io(self.backend.capture, live.id)
            except Exception:  # noqa: BLE001 - the terminal may be gone
                return
            if not re.search(dialog.pattern, screen, re.MULTILINE):
                return
            log.info("terminal %s: answering start-up dialog %r (attempt %d)", live.id, dialog.name, attempt + 1)
            await self._io(self.backend.send_keys, live.id, list(dialog.keys))
            delay = DIALOG_RETRY

    def _track(self, record: Terminal, provider: ProviderSpec | None) -> LiveTerminal:
        live: LiveTerminal
        tracker = StatusTracker(record.id, on_change=lambda old, new: self._status_changed(live, old, new),
                                input_settle=float(self.settings.get("CAO_INPUT_SETTLE") or 2.0),
                                answer_of=_answer_reader(provider))
        live = LiveTerminal(record=record, provider=provider, tracker=tracker,
                            started=asyncio.get_running_loop().create_future())
        self._live[record.id] = live
        return live

    # -- creation ---------------------------------------------------------------------------------

    async def create_session(
        self,
        agent_profile: str,
        *,
        provider: str | None = None,
        session_name: str | None = None,
        working_directory: str | None = None,
        allowed_tools: Sequence[str] | None = None,
        model: str | None = None,
        yolo: bool = False,
        env: Mapping[str, str] | None = None,
        wait_ready: bool = True,
    ) -> Terminal:
        """Create a session with one terminal running ``agent_profile``."""
        await self.start()
        name = validate.session_name(session_name) if session_name else f"{validate.SESSION_PREFIX}{secrets.token_hex(4)}"
        existing = {s.name for s in await self._io(self.backend.list_sessions)}
        if name in existing:
            raise Conflict(f"session {name!r} already exists")
        request = CreateTerminalRequest(
            agent_profile=agent_profile, provider=provider, session_name=name,
            working_directory=working_directory, allowed_tools=allowed_tools, model=model, yolo=yolo,
            env=dict(env or {}),
        )
        request = self.hooks.before("cao_before_session_create", request)
        terminal = await self._create(request, new_session=True, wait_ready=wait_ready)
        info = SessionInfo(name=terminal.session_name, status="detached", working_directory=terminal.working_directory)
        self.hooks.after("cao_after_session_created", session=info, terminal=terminal)
        return terminal

    async def create_terminal(
        self,
        session_name: str,
        agent_profile: str,
        *,
        provider: str | None = None,
        working_directory: str | None = None,
        caller_id: str | None = None,
        allowed_tools: Sequence[str] | None = None,
        model: str | None = None,
        yolo: bool = False,
        env: Mapping[str, str] | None = None,
        wait_ready: bool = True,
    ) -> Terminal:
        """Add a terminal to an existing session."""
        await self.start()
        name = validate.session_name(session_name)
        if name not in {s.name for s in await self._io(self.backend.list_sessions)}:
            raise NotFound(f"session {name!r} not found")
        if caller_id is not None:
            self._get_live(caller_id)
        request = CreateTerminalRequest(
            agent_profile=agent_profile, provider=provider, session_name=name,
            working_directory=working_directory, caller_id=caller_id, allowed_tools=allowed_tools,
            model=model, yolo=yolo, env=dict(env or {}),
        )
        return await self._create(request, new_session=False, wait_ready=wait_ready)

    def _resolve_provider(self, request: CreateTerminalRequest, profile: AgentProfile) -> ProviderSpec:
        name = request.provider or profile.provider or self.settings.get("CAO_DEFAULT_PROVIDER") or "kiro_cli"
        return self.provider(name)

    def _server_env(self) -> dict[str, str]:
        host = str(self.settings.get("CAO_API_HOST") or "127.0.0.1")
        port = str(self.settings.get("CAO_API_PORT") or "9889")
        return {"CAO_API_HOST": host, "CAO_API_PORT": port}

    def _mcp_servers(self, profile: AgentProfile, terminal_id: str) -> dict[str, Any]:
        # Some CLIs start MCP servers with a scrubbed environment: everything cao-mcp-server needs goes
        # into each entry's own env.
        injected = {"CAO_TERMINAL_ID": terminal_id, "CAO_HOME_DIR": str(self.home.root), **self._server_env()}
        servers: dict[str, Any] = {}
        for name, entry in profile.mcp_servers.items():
            entry = dict(entry or {})
            if is_cao_mcp_entry(entry):
                command, args = cao_mcp_command()
                entry["command"], entry["args"] = command, args
            entry["env"] = {**dict(entry.get("env") or {}), **injected}
            servers[name] = entry
        return servers

    async def _create(self, request: CreateTerminalRequest, *, new_session: bool, wait_ready: bool) -> Terminal:
        request = self.hooks.before("cao_before_terminal_create", request)
        assert request.session_name is not None
        profile = self.load_profile(validate.profile_name(request.agent_profile))
        provider = self._resolve_provider(request, profile)
        gated_server = self._mcp_gated_server(profile)
        workdir = validate.working_directory(request.working_directory)
        model = validate.model(request.model or profile.model)
        extra_env = validate.env(request.env)
        terminal_id = new_terminal_id()
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
        )
        runtime_dir = self.home.runtime / "terminals" / terminal_id
        from .signal_channel import launch_env

        # The native signal command and socket, for providers that write them into the CLI's hooks.
        extra_env = {**extra_env, **launch_env(self, provider, terminal_id)}
        ctx = LaunchContext(
            terminal=record, profile=profile, working_directory=workdir, runtime_dir=str(runtime_dir),
            mcp_servers=self._mcp_servers(profile, terminal_id), model=model,
            allowed_tools=record.allowed_tools, yolo=request.yolo, env=extra_env,
        )
        try:
            plan = provider.launch(ctx)
        except CaoError:
            raise
        except Exception as exc:
            raise InvalidInput(f"provider {provider.name!r} cannot launch profile {profile.name!r}: {exc}") from exc
        await self._io(_write_runtime_files, runtime_dir, plan.files)
        launch = TerminalLaunch(
            terminal_id=terminal_id,
            session_name=record.session_name,
            window_name=record.name,
            working_directory=workdir,
            argv=plan.argv,
            env={**self._server_env(), "CAO_HOME_DIR": str(self.home.root), **extra_env, **plan.env,
                 "CAO_TERMINAL_ID": terminal_id},
            metadata=_metadata_of(record),
        )
        live = self._track(record, provider)
        if gated_server is not None:
            # Before the agent starts: its MCP client may report in before the agent is ready.
            self._mcp_gates[terminal_id] = McpGate(
                terminal_id, gated_server, connect_timeout(self.settings),
                describe=f"{provider.name}, profile {profile.name}",
            )
        try:
            await self._io(self.backend.create_terminal, launch)
            await self._io(self.backend.watch, terminal_id, self._on_backend_event)
            self._schedule_refresh(live)
            if wait_ready:
                await self._wait_started(live, profile)
            else:
                asyncio.ensure_future(self._wait_started(live, profile, background=True))
        except BaseException:
            await self._discard(live, kill_session=new_session)
            raise
        self.hooks.after("cao_after_terminal_created", terminal=live.terminal())
        return live.terminal()

    async def _wait_started(self, live: LiveTerminal, profile: AgentProfile, *, background: bool = False) -> None:
        """Wait until the agent can act on a task; resolve ``live.started`` either way.

        That is: its provider reports it ready and, when it has an MCP readiness gate, its cao MCP server
        has reported in (``cao_kernel.readiness``; the gate's own bounded wait starts when the provider is
        ready). In the background (deferred start-up) a failure is only recorded on ``live.started``, for
        whoever waits on it (assign reports it to its caller).
        """
        assert live.started is not None
        timeout = float(profile.provider_init_timeout or self.settings.get("CAO_PROVIDER_INIT_TIMEOUT")
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
        if error is None:
            live.starting = False
            gate = self._mcp_gates.get(live.id)
            if gate is not None:
                gate.arm(self._mcp_gate_expired)
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
        delivery = getattr(self, "_delivery", None)
        if delivery is not None:
            delivery.kick(live.id)

    async def _discard(self, live: LiveTerminal, *, kill_session: bool) -> None:
        """Undo a creation that failed part-way: nothing may be left behind."""
        self._live.pop(live.id, None)
        gate = self._mcp_gates.pop(live.id, None)
        if gate is not None:
            gate.close()
        try:
            await self._io(self.backend.unwatch, live.id)
            if kill_session:
                await self._io(self.backend.kill_session, live.record.session_name)
            else:
                await self._io(self.backend.kill_terminal, live.id)
        except Exception:  # noqa: BLE001
            log.exception("cleaning up terminal %s failed", live.id)

    # -- reading ----------------------------------------------------------------------------------

    async def get_terminal(self, terminal_id: str) -> Terminal:
        await self.start()
        return self._get_live(terminal_id).terminal()

    async def get_status(self, terminal_id: str) -> StatusReport:
        await self.start()
        return self._get_live(terminal_id).tracker.report

    async def wait_for_status(
        self, terminal_id: str, statuses: Collection[TerminalStatus], timeout: float
    ) -> StatusReport:
        await self.start()
        live = self._get_live(terminal_id)
        return await live.tracker.wait_for(statuses, timeout, fail_on_error=TerminalStatus.ERROR not in statuses)

    async def get_output(self, terminal_id: str, mode: str = "full") -> str:
        """``full``: screen plus scrollback; ``last``: the agent's last answer, extracted by its provider."""
        await self.start()
        live = self._get_live(terminal_id)
        if mode == "full":
            return await self._io(self.backend.capture, terminal_id, history=-1)
        if mode != "last":
            raise InvalidInput(f"invalid output mode {mode!r}: use 'full' or 'last'")
        if live.provider is None:
            raise Conflict(f"terminal {terminal_id} has no known provider to extract its answer")
        # A turn's end reported natively can precede the last of its drawing by a few milliseconds.
        await live.tracker.screen_caught_up(NATIVE_DRAW_WAIT)
        deadline = time.monotonic() + ANSWER_DRAW_WAIT
        while True:
            for lines in HISTORY_STEPS:
                text = await self._io(self.backend.capture, terminal_id, history=lines)
                try:
                    return live.provider.extract_last_message(text)
                except ValueError:
                    continue
            # A turn just reported completed may still be drawing its answer (a loaded machine, a
            # native signal ahead of the screen): look again for a moment before saying there is none.
            if live.tracker.report.status != TerminalStatus.COMPLETED or time.monotonic() >= deadline:
                raise NotFound(f"no answer from the agent found in terminal {terminal_id}")
            await asyncio.sleep(0.1)

    async def working_directory(self, terminal_id: str) -> str | None:
        await self.start()
        self._get_live(terminal_id)
        return await self._io(self.backend.working_directory, terminal_id)

    async def list_sessions(self) -> list[SessionInfo]:
        await self.start()
        return await self._io(self.backend.list_sessions)

    async def list_terminals(self, session_name: str) -> list[Terminal]:
        await self.start()
        name = validate.session_name(session_name)
        return sorted(
            (live.terminal() for live in self._live.values() if live.record.session_name == name),
            key=lambda t: t.created_at,
        )

    async def get_session(self, session_name: str) -> tuple[SessionInfo, list[Terminal]]:
        await self.start()
        name = validate.session_name(session_name)
        for info in await self.list_sessions():
            if info.name == name:
                return info, await self.list_terminals(name)
        raise NotFound(f"session {name!r} not found")

    # -- input ------------------------------------------------------------------------------------

    async def send_input(self, terminal_id: str, text: str) -> None:
        """Type ``text`` into the terminal as one input and submit it."""
        await self.start()
        live = self._get_live(terminal_id)
        validate.input_text(text)
        if live.tracker.failed_for_good:
            # The agent is gone; typing would reach a dead pane or a bare shell. An error the agent
            # itself reported (it is still running) does not block input.
            raise Conflict(f"terminal {terminal_id} is in error ({live.tracker.report.evidence}); input refused")
        await self._type(live, text)

    async def _type(self, live: LiveTerminal, text: str) -> None:
        caps = live.provider.capabilities if live.provider else None
        live.tracker.note_input()
        try:
            await self._io(
                self.backend.send_text, live.id, text,
                enter_count=caps.enter_count if caps else 1, submit_delay=caps.submit_delay if caps else 0.0,
            )
        except BaseException:
            live.tracker.abort_input()
            raise
        # The settle window counts from here: the paste and a provider's submit delay are behind us.
        live.tracker.input_sent()

    async def send_keys(self, terminal_id: str, key: str) -> None:
        await self.start()
        live = self._get_live(terminal_id)
        await self._io(self.backend.send_keys, live.id, [validate.key(key)])

    async def exit_terminal(self, terminal_id: str) -> None:
        """Ask the agent CLI to quit with its provider's exit command."""
        await self.start()
        live = self._get_live(terminal_id)
        command = live.provider.exit_command if live.provider else "exit"
        if re.match(r"^[CM]-", command):
            await self._io(self.backend.send_keys, live.id, [command])
        elif live.tracker.failed_for_good:
            raise Conflict(f"terminal {terminal_id} has no running agent ({live.tracker.report.evidence}); "
                           "delete it instead")
        else:
            await self._type(live, command)

    # -- deletion ---------------------------------------------------------------------------------

    async def delete_terminal(self, terminal_id: str) -> None:
        await self.start()
        live = self._get_live(terminal_id)
        await self._io(self.backend.unwatch, terminal_id)
        await self._io(self.backend.kill_terminal, terminal_id)
        self._forget(live)
        await self._receiver_gone(terminal_id)
        self.hooks.after("cao_after_terminal_killed", terminal=live.terminal())

    async def delete_session(self, session_name: str) -> list[str]:
        await self.start()
        name = validate.session_name(session_name)
        if name not in {s.name for s in await self.list_sessions()}:
            raise NotFound(f"session {name!r} not found")
        members = [live for live in self._live.values() if live.record.session_name == name]
        for live in members:
            await self._io(self.backend.unwatch, live.id)
        await self._io(self.backend.kill_session, name)
        for live in members:
            self._forget(live)
            await self._receiver_gone(live.id)
            self.hooks.after("cao_after_terminal_killed", terminal=live.terminal())
        ids = [live.id for live in members]
        self.hooks.after("cao_after_session_killed", session_name=name, terminal_ids=ids)
        return ids

    async def _receiver_gone(self, terminal_id: str) -> None:
        delivery = getattr(self, "_delivery", None)
        if delivery is not None:
            await delivery.receiver_gone(terminal_id)

    def _forget(self, live: LiveTerminal) -> None:
        self._live.pop(live.id, None)
        gate = self._mcp_gates.pop(live.id, None)
        if gate is not None:
            gate.close()
        live.tracker.close()
        if live.refresh_task is not None:
            live.refresh_task.cancel()

    # -- MCP readiness gate -----------------------------------------------------------------------

    @property
    def _mcp_gates(self) -> dict[str, McpGate]:
        # Created on first use: the Kernel's constructor knows nothing of gates.
        return self.__dict__.setdefault("_mcp_gate_table", {})

    def _mcp_gated_server(self, profile: AgentProfile) -> str | None:
        """The name of the profile's cao MCP server entry when a terminal of it must wait for that server
        to connect (see ``cao_kernel.readiness``); None when it need not."""
        servers = profile.mcp_servers.items()
        name = next((name for name, entry in servers if is_cao_mcp_entry(dict(entry or {}))), None)
        if name is None or connect_timeout(self.settings) == 0:
            return None
        # Reports arrive through the MCP endpoint; a kernel without one would wait for nothing.
        if not any(str(spec.path).rstrip("/") == MCP_ROUTE for spec in self.routes.values()):
            return None
        return name

    async def mcp_connected(self, terminal_id: str) -> None:
        """The terminal's MCP client has connected and listed cao's tools: open its readiness gate and
        deliver what waits in its inbox. A terminal without a gate (or already open) is left as it is."""
        await self.start()
        live = self._get_live(terminal_id)
        gate = self._mcp_gates.get(terminal_id)
        if gate is None or gate.open:
            return
        settle = live.provider.capabilities.mcp_settle if live.provider else 0.0
        if settle > 0:
            await asyncio.sleep(settle)
        if self._mcp_gates.get(terminal_id) is not gate or not gate.connect():
            return
        log.info("terminal %s: its MCP server %r connected", terminal_id, gate.server_name)
        delivery = getattr(self, "_delivery", None)
        if delivery is not None and not live.starting:
            delivery.kick(terminal_id)

    def _mcp_ready(self, terminal_id: str) -> bool:
        """Whether tasks may reach the terminal as far as its MCP connection goes."""
        gate = self._mcp_gates.get(terminal_id)
        return gate is None or gate.open

    def _mcp_failure(self, terminal_id: str) -> CaoError | None:
        """Why the terminal's gate stays closed, once its bounded wait ran out."""
        gate = self._mcp_gates.get(terminal_id)
        return gate.failure if gate is not None else None

    def _mcp_gate_expired(self, gate: McpGate) -> None:
        error = gate.fail()
        log.warning("%s", error)
        delivery = getattr(self, "_delivery", None)
        if delivery is not None and self._mcp_gates.get(gate.terminal_id) is gate:
            delivery.kick(gate.terminal_id)  # refuses what waits in its inbox, naming the reason

    # -- re-adoption ------------------------------------------------------------------------------

    async def _adopt_all(self) -> None:
        """Take over terminals a previous kernel created (they carry their record in backend metadata)."""
        infos = await self._io(self.backend.list_terminals)
        for info in infos:
            if info.terminal_id in self._live:
                continue
            record = _record_from(info, self.backend.name)
            provider = self.providers.get(record.provider)
            live = self._track(record, provider)
            live.starting = False
            assert live.started is not None
            live.started.set_result(None)
            if not info.alive:
                live.tracker.fail(f"agent exited (status {info.exit_status})")
                continue
            try:
                await self._io(self.backend.watch, info.terminal_id, self._on_backend_event)
            except Exception as exc:  # noqa: BLE001
                live.tracker.fail(f"cannot watch terminal: {exc}")
                continue
            self._schedule_refresh(live)


def is_cao_mcp_entry(entry: Mapping[str, Any]) -> bool:
    """Whether an ``mcpServers`` entry starts cao's own MCP server, in any of the forms profiles use:
    ``cao-mcp-server`` by name or path, or upstream's ``uvx --from <source> cao-mcp-server``."""
    command = str(entry.get("command") or "")
    args = [str(a) for a in entry.get("args") or []]
    if Path(command).name == "cao-mcp-server":
        return True
    return Path(command).name in ("uvx", "uv") and "cao-mcp-server" in args


def cao_mcp_command() -> tuple[str, list[str]]:
    """The command that runs this installation's MCP server, independent of PATH."""
    import sys

    script = Path(sys.executable).parent / "cao-mcp-server"
    if script.exists():
        return str(script), []
    return sys.executable, ["-m", "cao_kernel", "mcp-server"]


def _write_runtime_files(folder: Path, files: Mapping[str, str]) -> None:
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    for name, content in files.items():
        target = (folder / name).resolve()
        if folder.resolve() not in target.parents:
            raise InvalidInput(f"provider file name {name!r} escapes the terminal's runtime folder")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
        os.chmod(target, 0o600)


def _answer_reader(provider: ProviderSpec | None) -> Callable[[str], str | None] | None:
    """The provider's last-message extraction as the status tracker uses it: None for no answer."""
    if provider is None:
        return None

    def answer_of(screen: str) -> str | None:
        try:
            answer = provider.extract_last_message(screen)
        except Exception:  # noqa: BLE001 - no readable answer; a broken extractor must not stop tracking
            return None
        return answer if isinstance(answer, str) else None

    return answer_of


def _metadata_of(record: Terminal) -> dict[str, str]:
    return {
        "provider": record.provider,
        "agent_profile": record.agent_profile,
        "session_name": record.session_name,
        "working_directory": record.working_directory or "",
        "caller_id": record.caller_id or "",
        "created_at": repr(record.created_at),
        "allowed_tools": json.dumps(list(record.allowed_tools)) if record.allowed_tools is not None else "",
    }


def _record_from(info: Any, backend_name: str) -> Terminal:
    meta = dict(info.metadata)
    tools = meta.get("allowed_tools") or ""
    return Terminal(
        id=info.terminal_id,
        name=info.window_name,
        session_name=info.session_name,
        provider=meta.get("provider", "unknown"),
        agent_profile=meta.get("agent_profile", "unknown"),
        working_directory=meta.get("working_directory") or info.working_directory,
        caller_id=meta.get("caller_id") or None,
        allowed_tools=json.loads(tools) if tools else None,
        created_at=float(meta.get("created_at") or 0.0),
        backend=backend_name,
    )


__all__ = ["TerminalOps", "new_terminal_id"]
