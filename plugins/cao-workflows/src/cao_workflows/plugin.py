"""Entry point of cao-workflows: ``cao workflow``, the ``/workflows`` routes, the ``workflow_*`` MCP
tools, and the engine's start and stop. Kept thin: DBOS, click and Starlette load only when used."""

from __future__ import annotations

import importlib
import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from cao_hookspecs import CommandSpec, McpToolSpec, RouteSpec, hookimpl

if TYPE_CHECKING:
    import asyncio

log = logging.getLogger(__name__)


def _load_command() -> Any:
    return importlib.import_module("cao_workflows.commands").workflow


class WorkflowsPlugin:
    """Registers cao-workflows' surfaces and owns the engine's lifecycle."""

    def __init__(self) -> None:
        self._recovering: set[asyncio.Task[None]] = set()

    @hookimpl
    def cao_register_commands(self) -> Iterable[CommandSpec]:
        return [CommandSpec(name="workflow", load=_load_command,
                            help="Durable multi-step runs of agents: validate, run, watch, approve.")]

    @hookimpl
    def cao_register_routes(self) -> Iterable[RouteSpec]:
        from .routes import route_specs

        return route_specs()

    @hookimpl
    def cao_register_mcp_tools(self) -> Iterable[McpToolSpec]:
        from .mcp_tools import tool_specs

        return tool_specs()

    @hookimpl
    def cao_startup(self, kernel: Any) -> None:
        # Pending runs resume now, in the background; a home with no journal costs nothing.
        import asyncio

        from .engine import database_path, recover

        try:
            if not database_path(kernel).exists():
                return
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop: an embedding app starting no server
            return
        task = loop.create_task(recover(kernel))
        self._recovering.add(task)
        task.add_done_callback(self._recovered)

    def _recovered(self, task: asyncio.Task[None]) -> None:
        self._recovering.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("workflow runs could not be recovered: %s", task.exception())

    @hookimpl
    def cao_shutdown(self, kernel: Any) -> None:
        from . import engine

        engine.stop(kernel)


#: What the ``workflows`` entry point loads.
plugin = WorkflowsPlugin()
