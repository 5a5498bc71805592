"""Entry point of cao-web: ``plugin`` adds the console's routes to cao-server. Kept thin: nothing but the
hook implementations loads with it."""

from __future__ import annotations

from collections.abc import Iterable

from cao_hookspecs import RouteSpec, hookimpl


class WebPlugin:
    """The web console's routes (one instance per kernel)."""

    @hookimpl
    def cao_register_routes(self) -> Iterable[RouteSpec]:
        from . import assets

        return [
            RouteSpec(name="console_page", path="/", endpoint=assets.page, public=True,
                      description="The web console's page"),
            RouteSpec(name="console_asset", path="/static/{name:path}", endpoint=assets.asset, public=True,
                      description="The web console's scripts and styles"),
        ]


#: What the ``web`` entry point loads.
plugin = WebPlugin()
