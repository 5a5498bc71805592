"""``cao server`` (and the ``cao-server`` script): bind, tell the kernel its real address, serve.

The listening socket is bound before anything else so ``--port 0`` resolves to a real port, and that
address is given to the kernel before it starts (``address.advertise``): terminals and their MCP servers
are told where to call back. Heavy imports happen inside the command, never at import time.
"""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Mapping
from typing import Any

import click

from .settings import DEFAULT_HOST, DEFAULT_PORT, base_url, home_dir, is_loopback

LOG_LEVELS = ("critical", "error", "warning", "info", "debug")
# Upstream-style query strings carry the message text: let a request line hold a full 1 MiB message
# once percent-encoded (h11 keeps 16 KiB by default).
MAX_REQUEST_LINE = 4 * 1024 * 1024


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host``:``port`` (``port`` 0: any free port)."""
    try:
        infos = socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise click.ClickException(f"cannot listen on {host!r}: {exc.strerror}") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.bind(address)
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        raise click.ClickException(
            f"cannot listen on {base_url(host, port)}: {exc.strerror or exc}"
        ) from None
    sock.set_inheritable(False)
    return sock


def _port_setting(value: Any) -> int:
    if value is None or value == "":
        return DEFAULT_PORT
    text = str(value).strip()
    if not (text.isascii() and text.isdigit()) or int(text) > 65535:
        raise click.ClickException(f"CAO_API_PORT must be a port number (0-65535), got {value!r}")
    return int(text)


def log_config(level: str) -> dict[str, Any]:
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
        "handlers": {
            "stderr": {"class": "logging.StreamHandler", "formatter": "plain", "stream": "ext://sys.stderr"}
        },
        "root": {"handlers": ["stderr"], "level": level.upper()},
        "loggers": {"uvicorn.error": {"level": level.upper()}},
    }


def uvicorn_config(app: Any, *, log_level: str | None = None, log_config: dict[str, Any] | None = None,
                   graceful_seconds: float = 3) -> Any:
    """How uvicorn serves cao (also in tests, so they exercise the same server): h11, WebSockets through
    the websockets library only when a plugin serves a WebSocket route (loading it costs a server's
    start about 25 ms), no proxy headers, our own access log, and request lines long enough for
    upstream's query-parameter messages."""
    import uvicorn
    from starlette.routing import WebSocketRoute

    sockets = any(isinstance(route, WebSocketRoute) for route in getattr(app, "routes", ()))

    return uvicorn.Config(
        app,
        lifespan="on",
        http="h11",
        loop="asyncio",
        ws="websockets-sansio" if sockets else "none",
        interface="asgi3",
        log_level=log_level,
        log_config=log_config,
        access_log=False,
        proxy_headers=False,
        server_header=False,
        h11_max_incomplete_event_size=MAX_REQUEST_LINE,
        timeout_graceful_shutdown=graceful_seconds,
    )


def server_class() -> Any:
    """uvicorn's ``Server`` that ends the app's event streams as it begins to shut down: uvicorn waits for
    open responses before it stops, and an event stream never ends by itself."""
    import uvicorn

    class Server(uvicorn.Server):
        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            hub = getattr(getattr(self.config.app, "state", None), "events", None)
            if hub is not None:
                hub.close()
            await super().shutdown(sockets=sockets)

    return Server


def run(app: Any, sock: socket.socket, *, log_level: str, ready_line: str) -> None:
    """Serve ``app`` on ``sock`` with uvicorn until a signal stops it; print ``ready_line`` once the app
    has started (the kernel is up) and requests are being accepted."""
    class Server(server_class()):  # type: ignore[misc]
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets=sockets)
            if self.started:
                click.echo(ready_line)
                sys.stdout.flush()

    config = uvicorn_config(app, log_level=log_level, log_config=log_config(log_level), graceful_seconds=3)
    _silence_uvicorn_access_log()
    try:
        Server(config).run(sockets=[sock])
    except KeyboardInterrupt:
        # uvicorn has shut down gracefully and re-raised Ctrl-C: a normal way to stop a server.
        click.echo("cao-server stopped", err=True)


def _ready_line(app: Any, url: str) -> str:
    """What `cao server` prints once it accepts requests: its address, and, when a plugin serves a page
    at "/", a one-time login link for a browser (the token never goes in a URL)."""
    line = f"cao-server listening on {url}"
    if getattr(app.state, "console", False):
        from .login_routes import login_link

        link, _ = login_link(url, app.state.logins)
        line += f"\nConsole: {link} (works once, for ten minutes; `cao console --web` prints another)"
    return line


def _silence_uvicorn_access_log() -> None:
    # uvicorn's access line holds the query string, where upstream-style clients put message text;
    # cao_server.app.AccessLog writes the line without it.
    import logging

    logging.getLogger("uvicorn.access").disabled = True


@click.command("server")
@click.option(
    "--host",
    default=None,
    help="Address to listen on (default: CAO_API_HOST or 127.0.0.1). Off loopback, every caller "
    "needs the API token.",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=None,
    help="Port (default: CAO_API_PORT or 9889; 0 picks a free port).",
)
@click.option(
    "--log-level",
    type=click.Choice(LOG_LEVELS, case_sensitive=False),
    default="info",
    show_default=True,
    help="Server log level (logs go to stderr).",
)
@click.pass_context
def server_command(ctx: click.Context, host: str | None, port: int | None, log_level: str) -> None:
    """Run the cao HTTP server (127.0.0.1:9889 by default)."""
    from cao_hookspecs.cli import kernel_from_context

    from .address import advertise
    from .api_token import ensure_token, token_path
    from .app import create_app
    from .settings import ServerSettings

    kernel = kernel_from_context(ctx)
    if getattr(kernel, "settings_problem", None) is not None:  # a settings.json the kernel refuses
        raise click.ClickException(str(kernel.settings_problem))
    settings = getattr(kernel, "settings", None)
    env: Mapping[str, Any] = settings if isinstance(settings, Mapping) else os.environ
    host = (host or str(env.get("CAO_API_HOST") or "") or DEFAULT_HOST).strip()
    port = _port_setting(env.get("CAO_API_PORT")) if port is None else port

    sock = bind_socket(host, port)
    try:
        bound_port = sock.getsockname()[1]
        # Before the kernel starts: every terminal it creates is told this address.
        advertise(kernel, host, bound_port)
        home = home_dir(env, kernel)
        try:
            token = ensure_token(home)
        except Exception as exc:  # noqa: BLE001 - any failure here is a start-up error for the user
            raise click.ClickException(f"cannot prepare the API token in {home}: {exc}") from None
        server_settings = ServerSettings.from_settings(env, host=host, port=bound_port, token=token)
        if not is_loopback(host):
            click.echo(
                f"warning: cao-server listens on {host}, reachable from other machines. Every request must "
                f"carry 'Authorization: Bearer <token>' with the token in {token_path(home)}; add the names "
                f"clients use for this machine to CAO_ALLOWED_HOSTS.",
                err=True,
            )
        routes = list(dict(getattr(kernel, "routes", None) or {}).values())
        app = create_app(kernel, settings=server_settings, extra_routes=routes)
        run(
            app,
            sock,
            log_level=log_level.lower(),
            ready_line=_ready_line(app, base_url(host, bound_port)),
        )
    finally:
        sock.close()


__all__ = ["bind_socket", "run", "server_command"]
