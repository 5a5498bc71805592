"""The endpoint of a kernel no cao-server serves: cao-server's own app on a private loopback port.

A program that embeds the kernel runs agents whose MCP servers must reach cao (``/mcp``, the connection
report, their own terminal): with no ``cao server`` there is nothing to call. cao-mcp starts this
endpoint when such a kernel starts (:func:`serve_embedded`): the same app, routes and guards as
``cao server``, bound to 127.0.0.1 on a port of the system's choosing, requiring the owner's API token
(the relay reads it from the cao home) and each terminal's own secret. It runs on the kernel's event
loop, is advertised to the kernel before any terminal exists, and stops when the kernel closes.

A kernel ``cao server`` (or a test server) serves already carries its address plugin and gets none;
``CAO_EMBEDDED_ENDPOINT=0`` turns it off.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any

from .address import PLUGIN_NAME

log = logging.getLogger(__name__)

HOST = "127.0.0.1"
SETTING = "CAO_EMBEDDED_ENDPOINT"
#: Seconds the endpoint's requests get to finish when the kernel closes.
GRACE = 1.0


def served(kernel: Any) -> bool:
    """Whether a server (``cao server``, a test server, an endpoint already started) serves ``kernel``."""
    pm = getattr(kernel, "pm", None)
    return pm is not None and pm.get_plugin(PLUGIN_NAME) is not None


class EmbeddedEndpoint:
    """cao-server's app for one kernel on 127.0.0.1:<port>, on the kernel's loop."""

    def __init__(self, kernel: Any) -> None:
        self.kernel = kernel
        self.port = 0
        self._server: Any = None
        self._task: asyncio.Task[None] | None = None

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def start(self) -> None:
        """Bind, advertise the address to the kernel and serve in the background (call on its loop)."""
        from .address import advertise
        from .api_token import ensure_token
        from .app import create_app
        from .serve import _silence_uvicorn_access_log, bind_socket, server_class, uvicorn_config
        from .settings import ServerSettings, home_dir

        settings: Mapping[str, Any] = getattr(self.kernel, "settings", None) or {}
        sock = bind_socket(HOST, 0)
        try:
            self.port = sock.getsockname()[1]
            token = ensure_token(home_dir(settings, self.kernel))
            server_settings = ServerSettings.from_settings(settings, host=HOST, port=self.port, token=token)
            routes = list(dict(getattr(self.kernel, "routes", None) or {}).values())
            app = create_app(self.kernel, settings=server_settings, extra_routes=routes, owns_kernel=False)
            _silence_uvicorn_access_log()
            config = uvicorn_config(app, log_level="warning", graceful_seconds=GRACE)
            self._server = server_class()(config)
        except BaseException:
            sock.close()
            raise
        advertise(self.kernel, HOST, self.port)  # before any terminal: every one is told this address
        self._task = asyncio.get_running_loop().create_task(self._serve(sock), name="cao-embedded-endpoint")

    async def _serve(self, sock: Any) -> None:
        try:
            await self._server.serve(sockets=[sock])
        finally:
            sock.close()

    async def stop(self) -> None:
        """Stop serving; the port is closed when this returns."""
        task, self._task = self._task, None
        if task is None:
            return
        self._server.should_exit = True
        try:
            await task
        except Exception:  # noqa: BLE001 - a failed server is stopped all the same
            log.exception("cao's embedded endpoint failed")


def serve_embedded(kernel: Any) -> EmbeddedEndpoint | None:
    """Start an endpoint for ``kernel`` when it is started on a running loop, no server serves it, and
    ``CAO_EMBEDDED_ENDPOINT`` is not ``0``; None otherwise."""
    settings: Mapping[str, Any] = getattr(kernel, "settings", None) or {}
    if str(settings.get(SETTING, "1")).strip() == "0" or served(kernel):
        return None
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return None
    endpoint = EmbeddedEndpoint(kernel)
    endpoint.start()
    return endpoint


__all__ = ["EmbeddedEndpoint", "SETTING", "serve_embedded", "served"]
