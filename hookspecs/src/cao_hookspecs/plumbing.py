"""Plumbing: backends, commands, start-up and shut-down."""

from __future__ import annotations

from collections.abc import Awaitable, Iterable
from typing import TYPE_CHECKING, Any

from .markers import _hookspec

if TYPE_CHECKING:
    from .protocols import KernelAPI
    from .types import BackendSpec, CommandSpec, McpServerSpec, McpToolSpec, RouteSpec


@_hookspec
def cao_register_backends() -> Iterable[BackendSpec]:
    """Register terminal backends (where agent CLIs run).

    Kind: registration (broadcast).

    :return: an iterable of :class:`~cao_hookspecs.types.BackendSpec`.

    The kernel uses the backend named by ``CAO_TERMINAL_BACKEND``, else ``tmux``. Duplicate names are
    reported naming both plugins.

    Errors: an implementation that raises is reported with its plugin's name and contributes nothing.

    Stability: stable since 0.1.

    Example::

        @hookimpl
        def cao_register_backends():
            return [BackendSpec(name="screen", factory=ScreenBackend)]
    """


@_hookspec
def cao_register_commands() -> Iterable[CommandSpec]:
    """Add subcommands to ``cao``.

    Kind: registration (broadcast).

    :return: an iterable of :class:`~cao_hookspecs.types.CommandSpec`. The command object itself is
        loaded only when it runs, so keep heavy imports inside ``load``.

    A name that collides with a built-in command or another plugin's command is refused with a
    warning naming both owners; the built-in always wins.

    Errors: an implementation that raises is reported with its plugin's name and contributes nothing;
    cao and its built-in commands keep working.

    Stability: stable since 0.1.

    Example::

        @hookimpl
        def cao_register_commands():
            def load():
                from .cli import server_command
                return server_command
            return [CommandSpec(name="server", load=load, help="Run the HTTP server.")]
    """


@_hookspec
def cao_register_routes() -> Iterable[RouteSpec]:
    """Add HTTP routes to ``cao-server``.

    Kind: registration (broadcast).

    :return: an iterable of :class:`~cao_hookspecs.types.RouteSpec`. Routes are mounted after the
        built-in ones, so a built-in path always wins; a plugin path that collides with a built-in or
        another plugin's route is refused with a warning naming both owners.

    The server's security checks (Host allow-list, Origin check on state-changing methods, token when
    required by ``cao server``) apply to plugin routes exactly as to built-in ones. A route with
    ``websocket=True`` serves WebSockets (``endpoint(websocket, kernel)``); a WebSocket is checked like
    a state-changing request (Host, Origin, token) and refused with HTTP 403 before it is accepted.

    Errors: an implementation that raises is reported with its plugin's name and contributes nothing;
    an endpoint that raises a ``CaoError`` answers with that error's status, anything else with 500.

    Stability: [experimental] since 0.1.

    Example::

        @hookimpl
        def cao_register_routes():
            async def count(request, kernel):
                return {"sessions": len(await kernel.list_sessions())}
            return [RouteSpec(name="count", path="/stats/sessions", endpoint=count)]
    """


@_hookspec
def cao_register_mcp_tools() -> Iterable[McpToolSpec]:
    """Add tools to cao's MCP server (stdio and streamable HTTP alike).

    Kind: registration (broadcast).

    :return: an iterable of :class:`~cao_hookspecs.types.McpToolSpec`. A name that collides with a
        built-in tool (``handoff``, ``assign``, ``send_message``, ``delete_terminal``,
        ``answer_user_prompt``) or another plugin's tool is refused with a warning naming both owners.

    Errors: an implementation that raises is reported with its plugin's name and contributes nothing;
    a tool function that raises is returned to the agent as a tool error carrying the message.

    Stability: [experimental] since 0.1.

    Example::

        @hookimpl
        def cao_register_mcp_tools():
            def factory(kernel, caller_id):
                async def whoami() -> dict:
                    return {"terminal_id": caller_id}
                return whoami
            return [McpToolSpec(name="whoami", description="Your own terminal id.", factory=factory)]
    """


@_hookspec
def cao_register_mcp_servers() -> Iterable[McpServerSpec]:
    """Describe cao's own MCP server to the kernel: how profiles ask for it, how it starts, and where its
    clients report in.

    Kind: registration (broadcast).

    :return: an iterable of :class:`~cao_hookspecs.types.McpServerSpec`. The kernel gives every profile
        ``mcpServers`` entry that a record ``matches`` that record's ``command()``, puts the settings the
        records name into every entry's environment, and holds tasks back from a terminal whose profile
        asks for a record's server until that server reports in through the record's ``report_route``
        (when such a route is registered).

    Without any record the kernel starts every profile entry as written and never waits for an MCP
    server. Duplicate names are reported naming both plugins.

    Errors: an implementation that raises is reported with its plugin's name and contributes nothing;
    a ``matches`` or ``command`` that raises fails the creation of the terminal that needed it, with the
    plugin's message.

    Stability: [experimental] since 0.2.

    Example::

        @hookimpl
        def cao_register_mcp_servers():
            return [McpServerSpec(
                name="cao", matches=lambda entry: entry.get("command") == "cao-mcp-server",
                command=lambda: ("/opt/cao/bin/cao-mcp-server", ()), env_settings=("CAO_API_PORT",),
                report_route="mcp",
            )]
    """


@_hookspec(historic=True)
def cao_startup(kernel: KernelAPI) -> None:
    """The kernel is ready; plugins may keep a reference to it and start their own work.

    Kind: observer, ``historic=True``: a plugin registered later is called at registration.

    :param kernel: the running kernel, as a :class:`~cao_hookspecs.protocols.KernelAPI`.

    Errors: an exception is logged with the plugin's name; the kernel starts anyway.

    Stability: stable since 0.1.

    Example::

        @hookimpl
        def cao_startup(kernel):
            global KERNEL
            KERNEL = kernel
    """


@_hookspec
def cao_shutdown(kernel: KernelAPI) -> Awaitable[Any] | None:
    """The kernel is stopping; flush queues and close connections. Terminals keep running.

    Kind: observer.

    :param kernel: the stopping kernel.
    :return: None, or an awaitable (a plugin's server or tasks ending on the kernel's event loop): the
        kernel awaits every one, for at most ten seconds together, before its ``aclose`` returns, so what
        a plugin started with the kernel has stopped with it.

    Errors: an exception, raised or from the awaitable, is logged; shutdown continues.

    Stability: stable since 0.1.

    Example::

        @hookimpl
        def cao_shutdown():
            NOTIFIER.flush(timeout=2)
    """
