"""Entry point of cao-web: ``plugin`` adds the console's routes to cao-server. Kept thin: nothing but the
hook implementations loads with it."""

from __future__ import annotations

from collections.abc import Iterable

from cao_hookspecs import RouteSpec, hookimpl


class WebPlugin:
    """The web console's routes (one instance per kernel)."""

    @hookimpl
    def cao_register_routes(self) -> Iterable[RouteSpec]:
        from . import assets, terminal_socket

        return [
            RouteSpec(name="console_page", path="/", endpoint=assets.page, public=True,
                      description="The web console's page"),
            RouteSpec(name="console_asset", path="/static/{name:path}", endpoint=assets.asset, public=True,
                      description="The web console's scripts and styles"),
            RouteSpec(name="terminal_socket", path="/terminals/{terminal_id}/ws",
                      endpoint=terminal_socket.serve, websocket=True,
                      description="A terminal's screen and keys, in upstream CAO's frames"),
        ]


#: What the ``web`` entry point loads.
plugin = WebPlugin()
