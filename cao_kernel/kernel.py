"""The ``Kernel``: a thin facade that builds cao's services, wires them, and implements ``KernelAPI``.

Services, each constructed with exactly what it uses (none holds the kernel):

- ``registry`` (``Registry``): the records plugins registered, by kind and name;
- ``profiles`` (``ProfileCatalog``): the profiles this kernel can load;
- on ``start``: ``io`` (``IoPool``), ``terminals`` (``Terminals``: backend, live terminals, status
  trackers, readiness gates, native signals), ``delivery`` (``DeliveryEngine``: the inbox store, seeing
  terminals as ``Receivers``), ``orchestration`` (``Orchestration``: send_message, assign, handoff over
  the two). Lifecycle events go out through the hooks (``Hooks``), which every surface observes.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import pluggy

from cao_hookspecs import (
    Activity,
    AgentProfile,
    BackendSpec,
    CommandSpec,
    CreateTerminalRequest,
    DelegationResult,
    HandoffJob,
    InboxStoreSpec,
    McpToolSpec,
    Message,
    MessageState,
    PromptEvent,
    ProviderInfo,
    ProviderSpec,
    RouteSpec,
    RuntimeContext,
    SessionInfo,
    StatusReport,
    Terminal,
    TerminalStatus,
    TimelineEvent,
)

from . import builtins
from .errors import CaoError, InvalidInput, NotFound, PluginError
from .home import CaoHome
from .hooks import Hooks
from .plugins import (
    ACTIVE,
    FAILED,
    LoadPolicy,
    PluginLoader,
    PluginRecord,
    create_plugin_manager,
    hook_names,
    register_checked,
)
from .profiles.catalog import ProfileCatalog
from .registry import Registry

if TYPE_CHECKING:
    from .delivery import DeliveryEngine
    from .handoff_results import HandoffJobs
    from .iopool import IoPool
    from .orchestration import Orchestration
    from .pools import WarmPools
    from .prompt_desk import PromptDesk
    from .terminal_history import TerminalHistory
    from .terminals import Terminals

BUILTIN_PLUGIN = "cao_kernel.builtins"
#: Seconds ``aclose`` waits for what ``cao_shutdown`` implementations returned to await.
SHUTDOWN_WAIT = 10.0
T = TypeVar("T")


class _FromRegistry(Generic[T]):
    """A ``Kernel`` attribute that is its registry's attribute of the same name."""

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name

    def __get__(self, kernel: Kernel, owner: type | None = None) -> dict[str, T]:
        return getattr(kernel.registry, self._name)


class Kernel:
    """Owns a fresh plugin manager; embedding apps may run several kernels side by side.

    :param plugins: objects (modules, classes, instances) to register explicitly, in order.
    :param load_entrypoints: load plugins from entry-point group ``cao`` (subject to ``policy``).
    :param policy: which entry points to load; default from ``CAO_LOAD_PLUGINS`` /
        ``CAO_DISABLE_PLUGINS`` / ``CAO_STRICT_PLUGINS``.
    :param home: the cao home; default from ``CAO_HOME_DIR``.
    :param settings: settings overriding the environment (``CAO_*`` names).
    """

    def __init__(
        self,
        *,
        plugins: Iterable[object] = (),
        load_entrypoints: bool = True,
        policy: LoadPolicy | None = None,
        home: CaoHome | str | os.PathLike[str] | None = None,
        settings: Mapping[str, Any] | None = None,
    ) -> None:
        self.settings: dict[str, Any] = {k: v for k, v in os.environ.items() if k.startswith("CAO_")}
        self.settings.update(settings or {})
        if home is None:
            self.home = CaoHome.from_env(self.settings)
        elif isinstance(home, CaoHome):
            self.home = home
        else:
            self.home = CaoHome(Path(home).expanduser())
        # A settings.json the kernel refuses stops its start, named; commands that never start a kernel
        # (`cao plugins`, `cao doctor`, `cao --help`) still work, without the file.
        self.settings_problem: InvalidInput | None = None
        try:
            self.settings = _with_settings_file(self.home, self.settings)
        except InvalidInput as exc:
            self.settings_problem = InvalidInput(
                f"{exc} (repair it with `cao config set` or `cao config unset`)")
        self.pm: pluggy.PluginManager = create_plugin_manager()
        self.loader = PluginLoader(self.pm, policy or LoadPolicy.from_env(self.settings))
        self.describe_plugin = self.loader.describe
        self.hooks = Hooks(self.pm, describe=self.loader.describe)
        registry = self.registry = Registry(self.hooks)
        from .dir_settings import DirSettings

        # The providers' agent folders as the folder settings move, add to or switch them off.
        self.dir_settings = DirSettings(self.home, registry.provider_dirs)
        self.profiles = ProfileCatalog(self.home, self.dir_settings.profile_dirs,
                                       lambda: set(registry.providers), self.settings)
        self._explicit: dict[str, PluginRecord] = {}
        self._started = False
        self.pm.register(builtins, name=BUILTIN_PLUGIN)
        for plugin in plugins:
            self.register_plugin(plugin)
        if load_entrypoints:
            self.loader.load_all()
        self._start_lock: asyncio.Lock | None = None
        # Built by start(): they need the running event loop and the opened backend and store.
        self.io: IoPool | None = None
        self.terminals: Terminals | None = None
        self.delivery: DeliveryEngine | None = None
        self.orchestration: Orchestration | None = None
        self.prompts: PromptDesk | None = None
        self.pools: WarmPools | None = None
        self.history: TerminalHistory | None = None
        self._history_sweep: asyncio.Future[None] | None = None
        self.handoff_jobs: HandoffJobs | None = None

    # -- running ----------------------------------------------------------------------------------

    async def start(self) -> None:
        """Bind to the running event loop, open the terminal backend, re-adopt live terminals and
        call ``cao_startup``. Idempotent; every operation calls it."""
        if self._started:
            return
        if self._start_lock is None:
            self._start_lock = asyncio.Lock()
        async with self._start_lock:
            if self._started:
                return
            # The services load here, not with this module: commands that only read the registry
            # (``cao plugins``, ``cao doctor``) never start a kernel.
            from .delivery import DeliveryEngine
            from .handoff_results import open_jobs
            from .inbox_limits import PendingCap
            from .iopool import DEFAULT_THREADS, IoPool
            from .orchestration import AssignWatch, Orchestration
            from .pools import WarmPools
            from .prompt_desk import PromptDesk, load_settings_policy
            from .prompt_log import PromptLog
            from .terminal_history import history_for
            from .terminals import Terminals

            if self.settings_problem is not None:
                raise self.settings_problem
            # A broken policy file stops the start with its problem named, before anything runs.
            settings_policy = load_settings_policy(self.settings, self.home.root)
            history = self.history = history_for(self.home.logs, self.settings)  # a bad value: named
            io = self.io = IoPool(int(self.settings.get("CAO_IO_THREADS") or DEFAULT_THREADS))
            self.home.ensure()
            backend = self._open_backend()
            # Opening a store touches the disk: keep it off the event loop thread.
            store = await io.run(self._open_inbox_store)
            jobs = self.handoff_jobs = await io.run(open_jobs(self.home.db, self.settings, io))
            terminals = self.terminals = Terminals(
                backend=backend, io=io, hooks=self.hooks, registry=self.registry,
                load_profile=self.profiles.load, settings=self.settings, home=self.home, history=history,
            )
            assigns = AssignWatch(self.hooks.after)
            delivery = self.delivery = DeliveryEngine(
                store, receivers=terminals, io=io, emit=self.hooks.after, settings=self.settings,
                on_delivered=assigns.delivered, on_dead=assigns.dead,
            )
            terminals.listen(delivery)
            prompts = self.prompts = PromptDesk(
                hooks=self.hooks, io=io, backend=backend, log=PromptLog(self.home.root), lookup=terminals.get,
                load_profile=self.profiles.load, settings_policy=settings_policy, home_root=self.home.root)
            terminals.attach_prompts(prompts)
            pools = self.pools = WarmPools(terminals=terminals, hooks=self.hooks,
                                           load_profile=self.profiles.load, settings=self.settings)
            terminals.on_new_session = pools.session_launched
            orchestration = self.orchestration = Orchestration(
                terminals=terminals, delivery=delivery, hooks=self.hooks, assigns=assigns,
                load_profile=self.profiles.load, pending_cap=PendingCap.from_settings(self.settings),
                prompts=prompts, pools=pools, jobs=jobs)
            prompts.escalate = lambda worker, caller, text: orchestration.send_message(worker, caller, text)
            terminals.on_worktree_kept = orchestration.worktree_kept
            self._started = True
            await terminals.adopt_all()
            await pools.stop_leftovers()
            await delivery.recover()
            self._history_sweep = asyncio.ensure_future(_sweep_history(history, io))
            self.hooks.startup(self)

    def _open_backend(self) -> Any:
        from cao_hookspecs.defaults import DEFAULT_TERMINAL_BACKEND, TERMINAL_BACKEND_SETTING

        name = str(self.settings.get(TERMINAL_BACKEND_SETTING) or DEFAULT_TERMINAL_BACKEND)
        spec = self.backends.get(name)
        if spec is None:
            known = ", ".join(sorted(self.backends)) or "none"
            raise CaoError(
                f"no terminal backend {name!r} is installed (installed: {known}); install cao-{name}")
        return spec.factory(self.runtime_context())

    def _open_inbox_store(self) -> Any:
        from cao_hookspecs.defaults import DEFAULT_INBOX_STORE, INBOX_STORE_SETTING

        default = DEFAULT_INBOX_STORE if DEFAULT_INBOX_STORE in self.inbox_stores else builtins.MEMORY_STORE
        name = self.settings.get(INBOX_STORE_SETTING) or default
        spec = self.inbox_stores.get(str(name))
        if spec is None:
            known = ", ".join(sorted(self.inbox_stores)) or "none"
            raise CaoError(f"no inbox store {name!r} is installed (installed: {known})")
        return spec.factory(self.runtime_context())

    def runtime_context(self) -> RuntimeContext:
        return RuntimeContext(home_dir=str(self.home.root), settings=dict(self.settings))

    async def aclose(self) -> None:
        """Stop watching terminals and release threads. Terminals keep running for the next kernel."""
        self.profiles.close()  # installing needs no start: its threads may exist on a kernel never started
        if not self._started:
            return
        assert self.io is not None and self.terminals is not None and self.delivery is not None
        assert self.orchestration is not None
        # Handoff workers still being removed: observers hear they are gone before they are told to stop.
        await self.orchestration.finish_dismissals()
        stopping = self.hooks.shutdown(self)
        if stopping:
            # Plugins' own servers and tasks end on this loop, before the kernel says it has closed.
            _, late = await asyncio.wait([asyncio.ensure_future(s) for s in stopping], timeout=SHUTDOWN_WAIT)
            for task in late:
                task.cancel()
        await self.orchestration.aclose()
        if self._history_sweep is not None:
            self._history_sweep.cancel()
            self._history_sweep = None
        if self.handoff_jobs is not None:
            await self.handoff_jobs.aclose()
            self.handoff_jobs = None
        if self.pools is not None:
            await self.pools.aclose()
        if self.prompts is not None:
            await self.prompts.aclose()
        await self.delivery.aclose()
        await self.terminals.aclose()
        await self.io.run(self.delivery.store.close)
        self.io.close()
        self.io = self.terminals = self.delivery = self.orchestration = self.prompts = self.pools = None
        self._started = False

    async def __aenter__(self) -> Kernel:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # Every KernelAPI call goes through one of these two: once started they return at once, without
    # another coroutine in between (a listing of fifty terminals makes fifty such calls).
    async def _terminals(self) -> Terminals:
        if not self._started:
            await self.start()
        assert self.terminals is not None
        return self.terminals

    async def _orchestration(self) -> Orchestration:
        if not self._started:
            await self.start()
        assert self.orchestration is not None
        return self.orchestration

    # -- sessions and terminals (KernelAPI) -------------------------------------------------------

    async def create_session(self, request: CreateTerminalRequest, *, wait_ready: bool = True) -> Terminal:
        return await (await self._terminals()).create_session(request, wait_ready=wait_ready)

    async def create_terminal(self, request: CreateTerminalRequest, *, wait_ready: bool = True) -> Terminal:
        return await (await self._terminals()).create_terminal(request, wait_ready=wait_ready)

    async def list_sessions(self) -> list[SessionInfo]:
        return await (await self._terminals()).list_sessions()

    async def get_session(self, session_name: str) -> tuple[SessionInfo, list[Terminal]]:
        return await (await self._terminals()).get_session(session_name)

    async def delete_session(self, session_name: str) -> list[str]:
        ids = await (await self._terminals()).delete_session(session_name)
        assert self.prompts is not None and self.io is not None
        await self.io.run(self.prompts.set_session_policy, session_name, None)
        return ids

    async def list_terminals(self, session_name: str) -> list[Terminal]:
        return await (await self._terminals()).list_terminals(session_name)

    async def get_terminal(self, terminal_id: str) -> Terminal:
        return await (await self._terminals()).get_terminal(terminal_id)

    async def delete_terminal(self, terminal_id: str) -> None:
        await (await self._terminals()).delete_terminal(terminal_id)

    # -- input and output (KernelAPI) -------------------------------------------------------------

    async def send_input(self, terminal_id: str, text: str) -> None:
        await (await self._terminals()).send_input(terminal_id, text)

    async def send_keys(self, terminal_id: str, key: str) -> None:
        await (await self._terminals()).send_keys(terminal_id, key)

    async def get_output(self, terminal_id: str, mode: str = "full") -> str:
        return await (await self._terminals()).get_output(terminal_id, mode)

    async def get_status(self, terminal_id: str) -> StatusReport:
        return await (await self._terminals()).get_status(terminal_id)

    async def wait_for_status(
        self, terminal_id: str, statuses: Collection[TerminalStatus], timeout: float
    ) -> StatusReport:
        return await (await self._terminals()).wait_for_status(terminal_id, statuses, timeout)

    async def exit_terminal(self, terminal_id: str) -> None:
        await (await self._terminals()).exit_terminal(terminal_id)

    async def working_directory(self, terminal_id: str) -> str | None:
        return await (await self._terminals()).working_directory(terminal_id)

    async def mcp_connected(self, terminal_id: str, stages: Mapping[str, float] | None = None) -> None:
        await (await self._terminals()).mcp_connected(terminal_id, stages)

    async def report_activity(self, kind: str, data: Mapping[str, Any] | None = None) -> Activity:
        import time

        from cao_hookspecs.activity import activity_data, activity_kind

        try:
            activity = Activity(kind=activity_kind(kind), data=activity_data(data), at=time.time())
        except ValueError as exc:
            raise InvalidInput(str(exc)) from None
        self.hooks.after("cao_after_activity", activity=activity)
        return activity

    async def get_timeline(self, terminal_id: str) -> list[TimelineEvent]:
        from . import validate

        terminals = await self._terminals()
        events = terminals.timelines.get(validate.terminal_id(terminal_id))
        if events is None:
            raise NotFound(f"terminal {terminal_id} not found (nor among those recently removed)")
        return events

    async def attach_command(self, terminal_id: str) -> list[str]:
        return await (await self._terminals()).attach_command(terminal_id)

    async def restore_terminal(self, terminal_id: str) -> Terminal:
        from . import validate
        from .restore import restore

        terminals = await self._terminals()
        assert self.history is not None and self.io is not None
        return await restore(terminals, self.history, self.io, validate.terminal_id(terminal_id))

    # -- messaging and orchestration (KernelAPI) --------------------------------------------------

    async def send_message(
        self, sender_id: str, receiver_id: str | None, message: str, *, idempotency_key: str | None = None
    ) -> Message:
        return await (await self._orchestration()).send_message(sender_id, receiver_id, message,
                                                                idempotency_key=idempotency_key)

    async def list_messages(
        self, terminal_id: str, *, state: MessageState | str | None = None, limit: int = 10
    ) -> list[Message]:
        return await (await self._orchestration()).list_messages(terminal_id, state=state, limit=limit)

    async def handoff(
        self, caller_id: str | None, agent_profile: str, message: str, *, timeout: float = 600.0,
        call_id: str | None = None, model: str | None = None, use_worktree: bool = False,
        worktree_changes: bool = False, job_id: str | None = None,
    ) -> DelegationResult:
        return await (await self._orchestration()).handoff(caller_id, agent_profile, message, timeout=timeout,
                                                           call_id=call_id, model=model,
                                                           use_worktree=use_worktree,
                                                           worktree_changes=worktree_changes, job_id=job_id)

    async def get_handoff_result(self, job_id: str) -> HandoffJob:
        await self._orchestration()
        assert self.handoff_jobs is not None
        return await self.handoff_jobs.get(job_id)

    async def verify_terminal_secret(self, terminal_id: str, secret: str | None) -> bool:
        """Whether ``secret`` proves ``terminal_id``'s identity (cao's MCP endpoint asks on every call
        that names a terminal). Not part of ``KernelAPI``: only a server holding the kernel can tell."""
        try:
            terminals = await self._terminals()
        except CaoError:
            return True  # no terminal backend: no terminal, so no identity to prove
        return terminals.secret_ok(terminal_id, secret)

    async def assign(self, caller_id: str, agent_profile: str, message: str, *, model: str | None = None,
                     use_worktree: bool = False, worktree_changes: bool = False) -> DelegationResult:
        return await (await self._orchestration()).assign(caller_id, agent_profile, message, model=model,
                                                          use_worktree=use_worktree,
                                                          worktree_changes=worktree_changes)

    async def answer_user_prompt(
        self, terminal_id: str, answer: str, *, prompt_id: str | None = None, as_terminal: str | None = None
    ) -> PromptEvent | None:
        orchestration = await self._orchestration()
        return await orchestration.answer_user_prompt(terminal_id, answer, prompt_id=prompt_id,
                                                      as_terminal=as_terminal)

    async def answer_prompt(
        self, terminal_id: str, *, option: int | None = None, text: str | None = None,
        prompt_id: str | None = None, by: str = "person", as_terminal: str | None = None,
    ) -> PromptEvent:
        desk = await self._prompt_desk()
        return await desk.answer(terminal_id, option=option, text=text, prompt_id=prompt_id, by=by,
                                 as_terminal=as_terminal)

    async def prompt_history(self, terminal_id: str, *, limit: int = 200) -> list[PromptEvent]:
        from . import validate

        desk = await self._prompt_desk()
        validate.terminal_id(terminal_id)
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 10_000:
            raise InvalidInput(f"limit must be a whole number from 1 to 10000 (got {limit!r})")
        events = await self.io.run(desk.history, terminal_id, limit)  # type: ignore[union-attr]
        if events is None:
            if self.terminals is not None and self.terminals.get(terminal_id) is not None:
                return []
            raise NotFound(f"terminal {terminal_id} not found, and no prompt of it was ever recorded")
        return events

    async def set_prompt_policy(self, session_name: str, policy: Mapping[str, Any] | None) -> None:
        desk = await self._prompt_desk()
        if policy is not None and not isinstance(policy, Mapping):
            raise InvalidInput(f"a prompt policy must be a mapping (got {type(policy).__name__})")
        await self.io.run(desk.set_session_policy, session_name, policy)  # type: ignore[union-attr]

    async def get_prompt_policy(self, session_name: str) -> Mapping[str, Any] | None:
        from . import validate

        desk = await self._prompt_desk()
        validate.session_name(session_name)
        return await self.io.run(desk.session_policy_data, session_name)  # type: ignore[union-attr]

    async def _prompt_desk(self) -> PromptDesk:
        if not self._started:
            await self.start()
        assert self.prompts is not None
        return self.prompts

    async def retry_message(self, message_id: int) -> Message:
        return await (await self._orchestration()).retry_message(message_id)

    async def cancel_message(self, message_id: int) -> Message:
        return await (await self._orchestration()).cancel_message(message_id)

    # -- profiles, providers and plugin tools (KernelAPI) -----------------------------------------

    async def list_profiles(self) -> list[AgentProfile]:
        """Every loadable profile, first in lookup order per name (in-memory ones first)."""
        return await self.profiles.list()

    async def get_profile(self, name: str) -> AgentProfile:
        return await self.profiles.get(name)

    async def list_providers(self) -> list[ProviderInfo]:
        """Installed providers: name, binary, whether the binary is found (its override variable, else
        PATH, else beside this Python), install hint."""
        from cao_hookspecs.programs import beside_interpreter, find_program

        def installed(spec: ProviderSpec) -> bool:
            try:
                find_program(os.environ, spec.binary, spec.binary_env, missing="")
            except ValueError:
                return beside_interpreter(spec.binary) is not None
            return True

        return [
            ProviderInfo(name=spec.name, binary=spec.binary, installed=installed(spec),
                         description=spec.description, install_hint=spec.install_hint)
            for spec in sorted(self.providers.values(), key=lambda s: s.name)
        ]

    async def mcp_tools(self) -> list[McpToolSpec]:
        return [self.registry.mcp_tools[name] for name in sorted(self.registry.mcp_tools)]

    # -- profiles beyond KernelAPI ----------------------------------------------------------------

    def add_profile(self, profile: AgentProfile) -> None:
        """Make a profile available to this kernel only, ahead of every store (embedding and tests)."""
        self.profiles.add(profile)

    def load_profile(self, name: str) -> AgentProfile:
        return self.profiles.load(name)

    async def install_profile(
        self, source: str, *, provider: str | None = None, env: list[str] | None = None, **options: Any
    ) -> Any:
        """Install a profile from a name, a ``.md`` path or an https URL (``cao_kernel.profiles.install``)."""
        return await self.profiles.install(source, provider=provider, env=env, **options)

    async def profile_source(self, name: str) -> str:
        """The profile ``name`` as stored, placeholders unresolved (what an editor should start from)."""
        return await asyncio.to_thread(self.profiles.source, name)

    async def save_profile(self, name: str, text: str, *, replace: bool = False) -> None:
        """Create (or, with ``replace``, overwrite) the local store's profile ``name`` from ``text``:
        ``Conflict`` when creating a name it holds, ``NotFound`` when replacing one it does not."""
        await asyncio.to_thread(self.profiles.save, name, text, replace=replace)

    async def delete_profile(self, name: str) -> None:
        """Remove the local store's profile ``name`` (``NotFound`` when it holds none)."""
        await asyncio.to_thread(self.profiles.delete, name)

    async def search_profiles(self, query: str, *, limit: int = 10) -> list[dict[str, Any]]:
        """Loadable profiles ranked against the words of ``query`` (``cao_kernel.profiles.edit``)."""
        from .profiles.edit import search_rows

        return search_rows(await asyncio.to_thread(self.profiles.rows), query, limit)

    def check_profile(self, text: str) -> list[dict[str, Any]]:
        """What is wrong with profile ``text`` (``severity``, ``message``, ``path`` each); nothing written."""
        from .profiles.edit import findings

        return findings(text)

    def profile_schema(self) -> dict[str, Any]:
        """A JSON Schema of the profile frontmatter this kernel reads."""
        from .profiles.edit import profile_schema

        return profile_schema()

    async def skill_content(self, name: str) -> str:
        """The body of skill ``name``: the home's skills folder first, then cao's own skills."""
        from .skill_text import skill_content

        extra = self.dir_settings.skill_dirs()["extra_dirs"]
        return await asyncio.to_thread(skill_content, self.home, name, extra)

    def agent_dirs(self) -> dict[str, Any]:
        """Upstream's agent folder settings: ``agent_dirs``, ``extra_dirs``, ``disabled_dirs``."""
        return self.dir_settings.agent_dirs()

    def set_agent_dirs(self, agent_dirs: Any = None, extra_dirs: Any = None, disabled_dirs: Any = None
                       ) -> dict[str, Any]:
        """Change the agent folder settings (``None`` leaves a part alone); ``InvalidInput`` names a bad
        path, an unknown provider or a folder that is not configured, and nothing is written then."""
        return self.dir_settings.set_agent_dirs(agent_dirs, extra_dirs, disabled_dirs)

    def skill_dirs(self) -> dict[str, Any]:
        """The home's skills folder and the extra skill folders."""
        return self.dir_settings.skill_dirs()

    def set_skill_dirs(self, extra_dirs: Any = None) -> dict[str, Any]:
        return self.dir_settings.set_skill_dirs(extra_dirs)

    # -- terminal labels beyond KernelAPI (upstream's description, group and metadata) --------------

    async def terminal_labels(self, terminal_id: str | None = None) -> dict[str, Any]:
        """One terminal's ``description``, ``group`` and ``metadata`` (``NotFound`` for an unknown
        terminal), or with no id every live terminal's, by id."""
        from .terminal_labels import TerminalLabels

        terminals = await self._terminals()
        labels = TerminalLabels(self.home)
        if terminal_id is None:
            live = {t.id for t in terminals.live_terminals()}
            stored = await asyncio.to_thread(labels.read)
            return {tid: entry for tid, entry in stored.items() if tid in live}
        await terminals.get_terminal(terminal_id)
        return await asyncio.to_thread(labels.get, terminal_id)

    async def set_terminal_label(self, terminal_id: str, field: str, value: Any) -> dict[str, Any]:
        """Replace one label of a live terminal (``None`` clears it); answers the terminal's labels."""
        from .terminal_labels import TerminalLabels

        terminals = await self._terminals()
        await terminals.get_terminal(terminal_id)
        live = {t.id for t in terminals.live_terminals()}
        return await asyncio.to_thread(TerminalLabels(self.home).set, terminal_id, field, value, live)

    async def live_terminals(self) -> list[Terminal]:
        """Every terminal of every session, oldest first."""
        return (await self._terminals()).live_terminals()

    def provider_dirs(self) -> dict[str, list[str]]:
        return self.registry.provider_dirs()

    # -- plugins ----------------------------------------------------------------------------------

    def register_plugin(self, plugin: object, name: str | None = None) -> str:
        """Register a plugin object (module, class or instance). Returns its name.

        Raises :class:`PluginError` (and leaves nothing registered) when it implements unknown hooks
        or pluggy refuses it.
        """
        name = name or getattr(plugin, "__name__", None) or f"{type(plugin).__name__}-{id(plugin):x}"
        register_checked(self.pm, plugin, name)
        self._explicit[name] = PluginRecord(name=name, status=ACTIVE, hooks=hook_names(self.pm, plugin))
        self.registry.invalidate()
        if self._started:
            self.hooks.startup(self, plugin)
        return name

    def unregister_plugin(self, name: str) -> None:
        self.pm.unregister(name=name)
        self._explicit.pop(name, None)
        self.registry.invalidate()

    def plugin_records(self, *, include_builtin: bool = False) -> list[PluginRecord]:
        records = list(self.loader.records.values()) + list(self._explicit.values())
        if include_builtin:
            records.insert(
                0,
                PluginRecord(
                    name=BUILTIN_PLUGIN, distribution="cao-kernel", version=_kernel_version(),
                    hooks=hook_names(self.pm, builtins), builtin=True,
                ),
            )
        return records

    @property
    def failed_plugins(self) -> list[PluginRecord]:
        return [r for r in self.plugin_records() if r.status == FAILED]

    # -- registries (the registry's, for embedders and tests) ------------------------------------

    providers = _FromRegistry[ProviderSpec]()
    backends = _FromRegistry[BackendSpec]()
    inbox_stores = _FromRegistry[InboxStoreSpec]()
    commands = _FromRegistry[CommandSpec]()
    routes = _FromRegistry[RouteSpec]()

    def provider(self, name: str) -> ProviderSpec:
        return self.registry.provider(name)

    def setting(self, name: str, default: Any = None) -> Any:
        return self.settings.get(name, default)


async def _sweep_history(history: TerminalHistory, io: IoPool) -> None:
    """Remove expired screen logs now, then once every ``PRUNE_INTERVAL``: one pass for all terminals."""
    import logging

    from .terminal_history import PRUNE_INTERVAL

    while True:
        try:
            await io.run(history.prune)
        except Exception:  # noqa: BLE001 - a failed sweep is tried again at the next one
            logging.getLogger(__name__).exception("removing old terminal screen logs failed")
        await asyncio.sleep(PRUNE_INTERVAL)


def _with_settings_file(home: CaoHome, settings: dict[str, Any]) -> dict[str, Any]:
    """``settings`` over the home's ``settings.json`` (``cao config``): the file fills what neither the
    caller nor the environment set (an empty variable counts as unset, as every reader takes it)."""
    from .settings_file import as_environment, read_settings

    from_file = as_environment(read_settings(home))
    return {**from_file, **{k: v for k, v in settings.items() if v != "" or k not in from_file}}


def _kernel_version() -> str:
    from . import __version__

    return __version__


__all__ = ["Kernel", "PluginError"]
