"""A real cao-server in a thread, for tests that need one (cao-server's own, the MCP server's, plugins').

``serve_in_thread(kernel)``: a real uvicorn serving cao-server's ``create_app(kernel)`` on 127.0.0.1,
port 0, in a background thread, with the kernel's plugin routes as ``cao server`` mounts them; the
kernel is told the real address before it starts. :mod:`cao_testkit.openapi` checks its answers.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cao_hookspecs import RouteSpec
    from cao_server.settings import ServerSettings
    from starlette.applications import Starlette

__all__ = ["RunningServer", "serve_in_thread"]


@dataclasses.dataclass
class RunningServer:
    """A server started by ``serve_in_thread``."""

    url: str
    port: int
    settings: ServerSettings
    app: Starlette

    @property
    def document(self) -> dict[str, Any]:
        return self.app.state.openapi


@contextlib.contextmanager
def serve_in_thread(
    kernel: Any,
    *,
    host: str = "127.0.0.1",
    token: str | None = None,
    extra_routes: Iterable[RouteSpec] | None = None,
    settings: Mapping[str, Any] | None = None,
    startup_timeout: float = 30.0,
) -> Iterator[RunningServer]:
    """Serve ``kernel`` on ``host`` (port 0) until the block ends; the kernel starts and closes with it.

    ``settings`` are cao settings for the server (``CAO_ALLOWED_HOSTS``, ``CAO_CORS_ORIGINS``); by
    default the kernel's own. A server bound off loopback needs ``token``. ``extra_routes`` are the plugin
    routes to mount; by default the kernel's own (its ``routes`` registry), as ``cao server`` mounts them:
    a kernel with cao-mcp then serves ``/mcp``, where its agents' MCP clients report in.
    """
    from cao_server.serve import _silence_uvicorn_access_log, bind_socket, server_class, uvicorn_config
    from cao_server.settings import base_url

    if extra_routes is None:
        extra_routes = list(dict(getattr(kernel, "routes", None) or {}).values())
    sock = bind_socket(host, 0)
    try:
        app, server_settings = _app_for(kernel, sock, host, token, extra_routes, settings)
    except BaseException:
        sock.close()
        raise
    port = server_settings.port
    config = uvicorn_config(app, graceful_seconds=2)
    _silence_uvicorn_access_log()
    server = server_class()(config)
    failure: list[BaseException] = []

    def run() -> None:
        try:
            server.run(sockets=[sock])
        except BaseException as exc:  # noqa: BLE001 - reported to the waiting test below
            failure.append(exc)

    thread = threading.Thread(target=run, name=f"cao-server-{port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + startup_timeout
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            thread.join(5)
            sock.close()
            raise RuntimeError(f"the test server did not start: {failure[0] if failure else 'timed out'}")
        time.sleep(0.005)
    try:
        yield RunningServer(
            url=base_url(host if host not in ("0.0.0.0", "::") else "127.0.0.1", port),
            port=port,
            settings=server_settings,
            app=app,
        )
    finally:
        server.should_exit = True
        thread.join(30)
        sock.close()
        if thread.is_alive():
            raise RuntimeError("the test server did not stop within 30 s")


def _app_for(
    kernel: Any,
    sock: Any,
    host: str,
    token: str | None,
    extra_routes: Iterable[RouteSpec],
    settings: Mapping[str, Any] | None,
) -> tuple[Starlette, ServerSettings]:
    from cao_server.address import advertise
    from cao_server.app import create_app
    from cao_server.settings import ServerSettings

    port = sock.getsockname()[1]
    advertise(kernel, host, port)
    kernel_settings = getattr(kernel, "settings", None)
    source = settings if settings is not None else (kernel_settings or {})
    server_settings = ServerSettings.from_settings(source, host=host, port=port, token=token)
    return create_app(kernel, settings=server_settings, extra_routes=extra_routes), server_settings
