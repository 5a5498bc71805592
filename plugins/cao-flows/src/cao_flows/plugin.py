"""Entry point of cao-flows: ``plugin`` adds ``cao flow`` (and ``cao schedule``), the ``/flows`` routes,
and a scheduler in every started kernel whose home has flows. Kept thin: the rest loads when used."""

from __future__ import annotations

import asyncio
import importlib
import logging
import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cao_hookspecs import CommandSpec, RouteSpec, hookimpl

if TYPE_CHECKING:
    from .service import FlowService

log = logging.getLogger(__name__)


def _load_group() -> Any:
    return importlib.import_module("cao_flows.commands").flow


class FlowsPlugin:
    """One per process (the entry point's object): each kernel it serves gets a service of its own."""

    def __init__(self) -> None:
        self._services: dict[int, FlowService] = {}

    def service(self, kernel: Any) -> FlowService:
        found = self._services.get(id(kernel))
        if found is None or found.kernel is not kernel:
            from cao_server.settings import home_dir

            from .service import FlowService

            settings = getattr(kernel, "settings", None) or os.environ
            found = FlowService(kernel, Path(home_dir(settings, kernel)), settings)
            self._services[id(kernel)] = found
        return found

    @hookimpl
    def cao_startup(self, kernel: Any) -> None:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return  # a kernel started without a loop runs no scheduler
        self.service(kernel).start_if_used()

    @hookimpl
    def cao_shutdown(self, kernel: Any) -> Any:
        service = self._services.pop(id(kernel), None)
        # The scheduler's tasks end on the kernel's loop; the kernel awaits them before it has closed.
        return service.aclose() if service is not None else None

    @hookimpl
    def cao_register_routes(self) -> Iterable[RouteSpec]:
        from .routes import routes

        return routes(self.service)

    @hookimpl
    def cao_register_commands(self) -> Iterable[CommandSpec]:
        return [CommandSpec(name="flow", load=_load_group,
                            help="Agents started on a cron schedule from a markdown file (flows)."),
                CommandSpec(name="schedule", load=_load_group,
                            help="The same as `cao flow` (upstream's name).")]


#: What the ``flows`` entry point loads.
plugin = FlowsPlugin()
