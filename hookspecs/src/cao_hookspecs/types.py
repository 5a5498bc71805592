"""Records and enums shared by the kernel and every plugin.

Every record is a frozen attrs class: plugins return them from registration hooks and receive them in
lifecycle hooks, and nobody can mutate a value another plugin is looking at. Wire values (status names,
message states) are upstream CAO's lowercase strings so JSON stays compatible.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from typing import Any, TypedDict

import attrs

from .prompts import OpenPrompt, Prompt

__all__ = [
    "AgentProfile",
    "BackendSpec",
    "CommandSpec",
    "CreateTerminalRequest",
    "DelegationRequest",
    "DelegationResult",
    "DeliveryReceipt",
    "InputMark",
    "InboxStoreSpec",
    "LaunchContext",
    "LaunchPlan",
    "Message",
    "McpServerSpec",
    "McpToolSpec",
    "MessageDraft",
    "MessageState",
    "OrchestrationType",
    "OutputEvent",
    "ProviderCapabilities",
    "ProviderInfo",
    "ProviderSpec",
    "RouteSpec",
    "RuntimeContext",
    "SessionInfo",
    "StartupDialog",
    "StatusReport",
    "Terminal",
    "TerminalInfo",
    "TerminalLaunch",
    "TerminalStatus",
]


def _frozen_mapping(value: Mapping[str, Any] | None) -> Mapping[str, Any]:
    # A plain dict would make a frozen record mutable through the back door.
    import types

    return types.MappingProxyType(dict(value or {}))


def _tuple(value: Any) -> tuple[Any, ...]:
    return tuple(value or ())


def _optional_tuple(value: Any) -> tuple[Any, ...] | None:
    return None if value is None else tuple(value)


class TerminalStatus(enum.StrEnum):
    """What a terminal's agent is doing, as upstream names it on the wire."""

    UNKNOWN = "unknown"
    IDLE = "idle"
    PROCESSING = "processing"
    COMPLETED = "completed"
    WAITING_USER_ANSWER = "waiting_user_answer"
    ERROR = "error"

    @property
    def ready(self) -> bool:
        """True when the agent waits for input and a message may be typed into it."""
        return self in (TerminalStatus.IDLE, TerminalStatus.COMPLETED)


class MessageState(enum.StrEnum):
    """Where an inbox message is in its life: pending -> delivering -> delivered | failed -> dead.

    ``uncertain``: a delivery cut short whose receiver keeps no record of what was typed, under a provider
    that chose to report rather than type again (``ProviderCapabilities.uncertain_delivery``). It is never
    typed again; its sender is told.
    """

    PENDING = "pending"
    DELIVERING = "delivering"
    DELIVERED = "delivered"
    FAILED = "failed"
    DEAD = "dead"
    UNCERTAIN = "uncertain"


class OrchestrationType(enum.StrEnum):
    SEND_MESSAGE = "send_message"
    HANDOFF = "handoff"
    ASSIGN = "assign"


@attrs.frozen(kw_only=True)
class StatusReport:
    """A detector's reading of one screen.

    ``evidence`` names the rule that matched (for logs, ``cao session status`` and bug reports);
    ``since`` is filled by the kernel with the time the status was first seen. ``prompt``: on a
    ``waiting_user_answer`` reading, the prompt shown, when the detector read it (else the kernel asks
    ``cao_read_prompt``).
    """

    status: TerminalStatus = attrs.field(converter=TerminalStatus)
    evidence: str = ""
    since: float | None = None
    prompt: Prompt | None = None


@attrs.frozen(kw_only=True)
class ProviderCapabilities:
    """What the kernel may assume about an agent CLI.

    - ``accepts_input_while_busy``: typed input is queued by the CLI itself, so inbox messages may be
      delivered eagerly when the operator enables it.
    - ``handoff_banner``: prefix handoff tasks with the ``[CAO Handoff]`` banner (Codex needs it).
    - ``native_status``: the provider reports status through a native signal, not only the screen.
    - ``enter_count`` / ``submit_delay``: how many Enter presses submit a pasted message, and how long
      to wait between the paste and the first Enter.
    - ``mcp_settle``: seconds the CLI needs, after its MCP client has read cao's tool list, before it
      offers those tools to its model; the readiness gate opens that much later (Claude Code marks a
      server connected a moment after reading its lists).
    - ``uncertain_delivery``: what the kernel does with a delivery cut short (a crash between typing and
      recording it) when the terminal's backend keeps no input marks, so it cannot know whether the text
      went in: ``"retype"`` types it again (at least once: the agent may read it twice) or ``"report"``
      marks it ``uncertain`` and tells its sender (at most once: it may never have arrived).
    - ``takes_model``: the launch passes ``LaunchContext.model`` to the CLI, so a launch, handoff or
      assign may choose the model; where it is false such a request is refused (400) rather than
      silently run on the CLI's own default.
    """

    accepts_input_while_busy: bool = False
    handoff_banner: bool = False
    native_status: bool = False
    enter_count: int = 1
    submit_delay: float = 0.0
    mcp_settle: float = 0.0
    uncertain_delivery: str = attrs.field(default="retype",
                                          validator=attrs.validators.in_(("retype", "report")))
    takes_model: bool = False


@attrs.frozen(kw_only=True)
class StartupDialog:
    """A start-up screen the kernel answers on the agent's behalf (trust folder, update prompt...).

    ``pattern`` is a regular expression searched in the rendered screen; ``keys`` are tmux key names
    (or literal text) sent in order when it matches.
    """

    name: str
    pattern: str
    keys: tuple[str, ...] = attrs.field(converter=_tuple)


@attrs.frozen(kw_only=True)
class AgentProfile:
    """An agent profile: upstream's Markdown file with YAML frontmatter, parsed.

    Known frontmatter keys become attributes (camelCase keys are stored snake_case); anything else is
    kept verbatim in ``extra`` so a profile written for a newer upstream survives a round trip.
    ``system_prompt`` is the Markdown body. ``source`` says where the profile was found
    (``built-in``, ``local``, ``installed``, a provider name, ``custom``) and ``path`` the file.
    """

    name: str
    description: str = ""
    provider: str | None = None
    role: str | None = None
    model: str | None = None
    system_prompt: str = ""
    allowed_tools: tuple[str, ...] | None = attrs.field(default=None, converter=_optional_tuple)
    mcp_servers: Mapping[str, Any] = attrs.field(factory=dict, converter=_frozen_mapping)
    tools: tuple[str, ...] | None = attrs.field(default=None, converter=_optional_tuple)
    tool_aliases: Mapping[str, Any] | None = None
    tools_settings: Mapping[str, Any] | None = None
    resources: tuple[str, ...] | None = attrs.field(default=None, converter=_optional_tuple)
    hooks: Mapping[str, Any] | None = None
    use_legacy_mcp_json: bool | None = None
    prompt: str | None = None
    capabilities: tuple[str, ...] = attrs.field(factory=tuple, converter=_tuple)
    tags: tuple[str, ...] = attrs.field(factory=tuple, converter=_tuple)
    skills: tuple[str, ...] | None = attrs.field(default=None, converter=_optional_tuple)
    engine: str | None = None
    permission_mode: str | None = None
    native_agent: str | None = None
    codex_profile: str | None = None
    codex_config: Mapping[str, Any] | None = None
    claude_config: Mapping[str, Any] | None = None
    hermes_profile: str | None = None
    prompt_policy: Mapping[str, Any] | None = None
    # Warm workers kept started ahead for this profile: {size: N, idleTtl: seconds}.
    pool: Mapping[str, Any] | None = None
    provider_init_timeout: int | None = None
    container: Mapping[str, Any] | None = None
    extra: Mapping[str, Any] = attrs.field(factory=dict, converter=_frozen_mapping)
    source: str = ""
    path: str | None = None


@attrs.frozen(kw_only=True)
class Terminal:
    """One agent running in one terminal (a tmux window for the tmux backend).

    ``id`` is 8 lowercase hex characters, ``name`` the window name (``<profile>-<4 hex>``),
    ``caller_id`` the terminal that created it through handoff or assign. ``prompt`` is the prompt the
    agent waits on, while its status is ``waiting_user_answer`` and the prompt could be read.
    ``worktree_branch`` and ``worktree_path``: the git worktree it was started in (``use_worktree``).
    """

    id: str
    name: str
    session_name: str
    provider: str
    agent_profile: str
    working_directory: str | None = None
    caller_id: str | None = None
    allowed_tools: tuple[str, ...] | None = attrs.field(default=None, converter=_optional_tuple)
    created_at: float = 0.0
    status: TerminalStatus = attrs.field(default=TerminalStatus.UNKNOWN, converter=TerminalStatus)
    backend: str = "tmux"
    prompt: OpenPrompt | None = None
    worktree_branch: str | None = None
    worktree_path: str | None = None


@attrs.frozen(kw_only=True)
class SessionInfo:
    """A cao session as a backend lists it. ``status`` is ``active`` (a client is attached) or ``detached``."""

    name: str
    status: str = "detached"
    working_directory: str | None = None


@attrs.frozen(kw_only=True)
class TerminalInfo:
    """A live terminal as a backend lists it; ``metadata`` is what the kernel stored at creation."""

    terminal_id: str
    session_name: str
    window_name: str
    alive: bool = True
    exit_status: int | None = None
    working_directory: str | None = None
    metadata: Mapping[str, str] = attrs.field(factory=dict, converter=_frozen_mapping)


@attrs.frozen(kw_only=True)
class TerminalLaunch:
    """Everything a backend needs to start one terminal.

    ``argv`` is the program to run in it (the agent CLI); ``env`` is added to the terminal's
    environment (it always carries ``CAO_TERMINAL_ID``); ``metadata`` is stored with the terminal so a
    new kernel can re-adopt it after a restart.
    """

    terminal_id: str
    session_name: str
    window_name: str
    working_directory: str
    argv: tuple[str, ...] = attrs.field(converter=_tuple)
    env: Mapping[str, str] = attrs.field(factory=dict, converter=_frozen_mapping)
    metadata: Mapping[str, str] = attrs.field(factory=dict, converter=_frozen_mapping)
    width: int = 220
    height: int = 50


@attrs.frozen(kw_only=True)
class OutputEvent:
    """A backend's push notification: ``kind`` is ``output`` (the screen changed), ``exited`` (the
    program in the terminal ended) or ``lost`` (the terminal or its server disappeared)."""

    terminal_id: str
    kind: str
    data: bytes = b""
    detail: str = ""


@attrs.frozen(kw_only=True)
class LaunchContext:
    """What a provider gets to build the launch command of one terminal.

    ``mcp_servers`` are the profile's MCP servers already rewritten by the kernel: every entry's
    ``env`` carries ``CAO_TERMINAL_ID`` and the server address, because some CLIs start MCP servers
    with a scrubbed environment. ``cao_servers`` names the entries that are cao's own MCP server: a
    provider whose CLI asks before running MCP tools pre-approves these (an approval prompt on
    ``send_message`` would stall every delegation). ``runtime_dir`` is a private folder for generated files.
    """

    terminal: Terminal
    profile: AgentProfile | None
    working_directory: str
    runtime_dir: str
    mcp_servers: Mapping[str, Any] = attrs.field(factory=dict, converter=_frozen_mapping)
    model: str | None = None
    allowed_tools: tuple[str, ...] | None = attrs.field(default=None, converter=_optional_tuple)
    yolo: bool = False
    env: Mapping[str, str] = attrs.field(factory=dict, converter=_frozen_mapping)
    cao_servers: tuple[str, ...] = attrs.field(factory=tuple, converter=_tuple)


@attrs.frozen(kw_only=True)
class LaunchPlan:
    """A provider's answer: the argv to run, extra environment, and files the kernel writes into the
    terminal's runtime folder before starting it (relative name -> content)."""

    argv: tuple[str, ...] = attrs.field(converter=_tuple)
    env: Mapping[str, str] = attrs.field(factory=dict, converter=_frozen_mapping)
    files: Mapping[str, str] = attrs.field(factory=dict, converter=_frozen_mapping)


@attrs.frozen(kw_only=True)
class ProviderSpec:
    """One agent CLI, as a provider plugin registers it.

    - ``launch(ctx) -> LaunchPlan`` builds the command line from the profile.
    - ``detect_status(screen) -> StatusReport`` reads a rendered screen; it must never raise.
    - ``extract_last_message(text) -> str`` returns the agent's final answer from screen text plus
      history; it raises ``ValueError`` when no answer is visible.
    - ``binary`` is the program looked up on ``PATH``; ``binary_env``, when set, names the environment
      variable a user sets to run another program instead (``CAO_CLAUDE_CODE_BIN``). ``version_args``
      make the program print its version; ``tested_versions`` are the releases whose screens are
      recorded in the provider's tests; ``install_hint`` tells a user how to install the program.
    - ``agent_dirs`` are folders where the CLI keeps agent profiles of its own (searched by name).
    - ``model_endpoint(env) -> str | None``, optional: given the environment the CLI will run with,
      the base URL of the model API it will call (``https://api.anthropic.com``, a gateway named by
      ``ANTHROPIC_BASE_URL``...), or None when the provider cannot tell. It reads files and variables
      only, never the network, and never raises. ``cao doctor`` checks that the URL answers.
    - ``native_signal(event, payload) -> StatusReport | None``, optional: maps a signal the CLI sent
      itself (a hook, a notify program) to a status. When it is set, the kernel's launch context
      carries ``CAO_SIGNAL_COMMAND`` in its ``env``: a JSON list, the program and arguments to run with
      the event name appended (and, for CLIs that pass one so, the JSON payload after it); with
      ``--stdin`` before the event the payload is read from standard input. The provider writes that
      command into the CLI's hook configuration in the runtime folder (never the user's own files).
      ``event`` is the name the hook passed; ``payload`` the CLI's JSON object cut down to its
      top-level scalars (strings shortened). Return None for events that say nothing about the status;
      never raise. The kernel sets the evidence to ``native: <event>`` (with the returned evidence in
      parentheses) and prefers the status over the screen until input is sent or the screen shows
      something newer (see ``cao_kernel.status``). The kernel reads screens as usual, so a CLI whose
      hooks are off still works.
    - ``native_answer(event, payload) -> str | None``, optional: the turn's final answer when a signal
      that ends a turn carries it (Claude Code's ``Stop`` hook passes ``last_assistant_message``), else
      None; never raise. When the kernel takes the signal's status as the end of the turn, a handoff
      returns this text at once instead of waiting for the screen to show the answer and reading it
      from there. An answer too long for a signal never arrives; the screen is read then.
    - ``read_prompt(screen) -> Prompt | None``, optional: the prompt a ``waiting_user_answer`` screen
      shows (permission, question, menu, start-up dialog), with every option's keys as they pick it from
      that screen; None when the screen shows no prompt the provider can read. It must never raise, and
      never find a prompt on a screen that shows none (scrollback of an answered prompt included).
    - ``pending_input(screen) -> str``, optional: the text typed at the CLI's prompt and not submitted
      yet, '' when there is none (or only a placeholder hint shows). It must never raise. With it the
      kernel presses Enter again when an input it typed is still sitting at the prompt once the
      provider's ``submit_delay`` and a moment have passed (a CLI busy starting can take the Enter as a
      newline); without it the kernel cannot tell, and never does.
    """

    name: str
    binary: str
    launch: Callable[[LaunchContext], LaunchPlan]
    detect_status: Callable[[str], StatusReport]
    extract_last_message: Callable[[str], str]
    exit_command: str = "/exit"
    description: str = ""
    capabilities: ProviderCapabilities = ProviderCapabilities()
    startup_dialogs: tuple[StartupDialog, ...] = attrs.field(factory=tuple, converter=_tuple)
    install_hint: str = ""
    version_args: tuple[str, ...] = attrs.field(default=("--version",), converter=_tuple)
    tested_versions: tuple[str, ...] = attrs.field(factory=tuple, converter=_tuple)
    agent_dirs: tuple[str, ...] = attrs.field(factory=tuple, converter=_tuple)
    binary_env: str | None = None
    model_endpoint: Callable[[Mapping[str, str]], str | None] | None = None
    native_signal: Callable[[str, Mapping[str, Any]], StatusReport | None] | None = None
    native_answer: Callable[[str, Mapping[str, Any]], str | None] | None = None
    read_prompt: Callable[[str], Prompt | None] | None = None
    pending_input: Callable[[str], str] | None = None


@attrs.frozen(kw_only=True)
class RuntimeContext:
    """What factories of backends and stores get: the cao home folder and the kernel's settings."""

    home_dir: str
    settings: Mapping[str, Any] = attrs.field(factory=dict, converter=_frozen_mapping)


@attrs.frozen(kw_only=True)
class BackendSpec:
    """A terminal backend. ``factory(ctx)`` returns an object satisfying ``TerminalBackend``."""

    name: str
    factory: Callable[[RuntimeContext], Any]
    description: str = ""


@attrs.frozen(kw_only=True)
class InboxStoreSpec:
    """An inbox store. ``factory(ctx)`` returns an object satisfying ``InboxStore``."""

    name: str
    factory: Callable[[RuntimeContext], Any]
    description: str = ""


@attrs.frozen(kw_only=True)
class CommandSpec:
    """A ``cao`` subcommand contributed by a plugin.

    ``load()`` returns the ``click.Command``; it is called only when the command runs or its own help
    is shown, so a plugin's heavy imports never slow ``cao --help``. ``help`` is the one-line summary
    listed by ``cao --help``.
    """

    name: str
    load: Callable[[], Any]
    help: str = ""


@attrs.frozen(kw_only=True)
class RouteSpec:
    """An HTTP route added to ``cao-server`` by a plugin.

    ``endpoint(request, kernel)`` is an async callable receiving the Starlette request and the server's
    ``KernelAPI``; it returns a Starlette response (or a JSON-ready value, sent as JSON). ``path`` follows
    Starlette's syntax (``/things/{name}``); ``methods`` defaults to GET.
    """

    name: str
    path: str
    endpoint: Callable[..., Any]
    methods: tuple[str, ...] = attrs.field(default=("GET",), converter=_tuple)
    description: str = ""
    #: When true, ``endpoint(kernel)`` returns an ASGI application mounted at ``path`` (e.g. an MCP
    #: transport) instead of being a request handler. The server calls it on the path's first request.
    asgi: bool = False
    #: When true, the route is a WebSocket: ``endpoint(websocket, kernel)`` serves a Starlette
    #: ``WebSocket`` (accepting it first); ``methods`` is ignored. The server's Host, Origin and token
    #: checks apply before the handler runs.
    websocket: bool = False
    #: When true, GET and HEAD of this route are served without the API token or a browser session:
    #: only for pages and assets that hold no data (a console's HTML, scripts and styles). The Host
    #: check still applies.
    public: bool = False


@attrs.frozen(kw_only=True)
class McpToolSpec:
    """A tool added to cao's MCP server by a plugin.

    ``factory(kernel, caller_id)`` returns the tool function: an async callable whose parameters
    (with type hints) become the tool's input schema and whose return value (JSON-ready) is the result.
    ``kernel`` is the ``KernelAPI`` the MCP server talks to; ``caller_id`` the calling agent's terminal
    id, or None when unknown.
    """

    name: str
    description: str
    factory: Callable[[Any, str | None], Callable[..., Any]]


@attrs.frozen(kw_only=True)
class McpServerSpec:
    """cao's own MCP server, as the plugin that serves cao's tools describes it to the kernel.

    - ``matches(entry) -> bool``: whether an ``mcpServers`` entry of a profile asks for this server, in any
      of the forms profiles use. The kernel gives such an entry this installation's ``command()``.
    - ``command() -> (program, args)``: how this installation starts the server, independent of ``PATH``.
    - ``env_settings``: kernel settings that, when set, go into the environment of every MCP server entry
      a terminal gets (agent CLIs may start MCP servers with a scrubbed environment); the kernel adds
      ``CAO_TERMINAL_ID`` and ``CAO_HOME_DIR`` itself.
    - ``report_route``: the name of the ``RouteSpec`` through which the server's clients report that they
      have listed cao's tools (``KernelAPI.mcp_connected``). A terminal whose profile asks for this server
      gets tasks only after that report (the MCP readiness gate), in a kernel where a route of that name
      is registered; where none is, nothing could report, and the kernel does not wait.
    """

    name: str
    matches: Callable[[Mapping[str, Any]], bool]
    command: Callable[[], tuple[str, tuple[str, ...]]]
    env_settings: tuple[str, ...] = attrs.field(factory=tuple, converter=_tuple)
    report_route: str | None = None
    description: str = ""


class ProviderInfo(TypedDict):
    """An installed provider as ``KernelAPI.list_providers`` lists it (a plain mapping on the wire)."""

    name: str
    binary: str
    installed: bool
    description: str
    install_hint: str


@attrs.frozen(kw_only=True)
class MessageDraft:
    """A message before it is stored. ``idempotency_key`` makes a retried enqueue a no-op."""

    sender_id: str
    receiver_id: str
    body: str
    orchestration_type: OrchestrationType = attrs.field(
        default=OrchestrationType.SEND_MESSAGE, converter=OrchestrationType
    )
    idempotency_key: str | None = None


@attrs.frozen(kw_only=True)
class Message:
    """A stored inbox message. ``attempts`` counts delivery tries; ``last_error`` says why the last one
    failed; ``not_before`` holds a retry back until that time."""

    id: int
    sender_id: str
    receiver_id: str
    body: str
    state: MessageState = attrs.field(converter=MessageState)
    created_at: float
    updated_at: float = 0.0
    orchestration_type: OrchestrationType = attrs.field(
        default=OrchestrationType.SEND_MESSAGE, converter=OrchestrationType
    )
    attempts: int = 0
    last_error: str | None = None
    idempotency_key: str | None = None
    not_before: float | None = None


@attrs.frozen(kw_only=True)
class DeliveryReceipt:
    """Proof that a message was typed into its receiver; ``method`` names how (``paste``, ...)."""

    message_id: int
    terminal_id: str
    delivered_at: float
    method: str = "paste"


@attrs.frozen(kw_only=True)
class InputMark:
    """The last input a terminal backend recorded as typed, with the ``mark`` it was given.

    ``submitted`` is False while the text is in but the Enter that submits it is still owed (a provider
    with a submit delay); the backend records both in the same indivisible step as the input itself.
    """

    mark: str
    submitted: bool


@attrs.frozen(kw_only=True)
class CreateTerminalRequest:
    """A request to start a terminal, as before-hooks see it (and may return rewritten).

    ``use_worktree``: start it in a new git worktree of the repository holding ``working_directory``, on
    its own branch from that checkout's ``HEAD``; ``worktree_changes``: copy that checkout's uncommitted
    changes into it (see ``cao_kernel.worktrees``).
    """

    agent_profile: str
    provider: str | None = None
    session_name: str | None = None
    working_directory: str | None = None
    caller_id: str | None = None
    allowed_tools: tuple[str, ...] | None = attrs.field(default=None, converter=_optional_tuple)
    model: str | None = None
    yolo: bool = False
    env: Mapping[str, str] = attrs.field(factory=dict, converter=_frozen_mapping)
    use_worktree: bool = False
    worktree_changes: bool = False


@attrs.frozen(kw_only=True)
class DelegationRequest:
    """A handoff or assign, as before-hooks see it. ``timeout`` applies to handoff only; ``model``
    overrides the worker profile's model (None: the profile's); ``use_worktree`` and
    ``worktree_changes`` as in ``CreateTerminalRequest``."""

    kind: OrchestrationType = attrs.field(converter=OrchestrationType)
    caller_id: str | None
    agent_profile: str
    message: str
    timeout: float = 600.0
    working_directory: str | None = None
    model: str | None = None
    use_worktree: bool = False
    worktree_changes: bool = False


@attrs.frozen(kw_only=True)
class DelegationResult:
    """How a handoff or assign ended. ``output`` is the worker's answer (handoff); ``terminal_id``
    the worker; ``message`` the human-readable summary given to the caller. ``worktree_branch`` and
    ``worktree_path``: the worker's git worktree (``use_worktree``), for a handoff only when it was kept
    because the worker left commits or changes in it."""

    kind: OrchestrationType = attrs.field(converter=OrchestrationType)
    success: bool
    message: str
    agent_profile: str
    caller_id: str | None = None
    terminal_id: str | None = None
    output: str | None = None
    duration: float = 0.0
    worktree_branch: str | None = None
    worktree_path: str | None = None
