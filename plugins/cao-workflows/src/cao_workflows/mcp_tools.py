"""MCP tools, so a supervisor agent can run a workflow and wait for it (upstream's names). Each returns
``{"ok": true, ...}``; a problem is a tool error carrying its message. A relative path is read from the
calling agent's working directory."""

from __future__ import annotations

from typing import Any

from cao_hookspecs import McpToolSpec

from . import service
from .source import read_file


def _start(kernel: Any, caller_id: str | None) -> Any:
    async def workflow_start(path: str, inputs: dict[str, Any] | None = None) -> dict[str, Any]:
        base = await kernel.working_directory(caller_id) if caller_id else None
        record = await service.submit(kernel, read_file(path, base=base), inputs, working_directory=base)
        return {"ok": True, **record}

    return workflow_start


def _status(kernel: Any, caller_id: str | None) -> Any:
    async def workflow_status(run_id: str) -> dict[str, Any]:
        return {"ok": True, **await service.status(kernel, run_id)}

    return workflow_status


def _wait(kernel: Any, caller_id: str | None) -> Any:
    async def workflow_wait(run_id: str, timeout: float = 600.0) -> dict[str, Any]:
        return {"ok": True, **await service.wait(kernel, run_id, max(0.0, min(float(timeout), 3600.0)))}

    return workflow_wait


def _result(kernel: Any, caller_id: str | None) -> Any:
    async def workflow_result(run_id: str) -> dict[str, Any]:
        return {"ok": True, **await service.result(kernel, run_id)}

    return workflow_result


def _runs(kernel: Any, caller_id: str | None) -> Any:
    async def workflow_list(state: str | None = None, limit: int = 20) -> dict[str, Any]:
        return {"ok": True, "runs": await service.list_runs(kernel, state=state, limit=limit)}

    return workflow_list


def _cancel(kernel: Any, caller_id: str | None) -> Any:
    async def workflow_cancel(run_id: str) -> dict[str, Any]:
        return {"ok": True, **await service.cancel(kernel, run_id)}

    return workflow_cancel


def tool_specs() -> list[McpToolSpec]:
    return [
        McpToolSpec(name="workflow_start", factory=_start,
                    description="Start a workflow file (path relative to your working directory) with "
                                "inputs; returns its run_id at once."),
        McpToolSpec(name="workflow_status", factory=_status,
                    description="A workflow run's state (running, waiting, completed, failed, cancelled), "
                                "outputs and open approval question."),
        McpToolSpec(name="workflow_wait", factory=_wait,
                    description="Wait until a workflow run ends (or timeout seconds) and return its status."),
        McpToolSpec(name="workflow_result", factory=_result,
                    description="A finished workflow run's result and outputs."),
        McpToolSpec(name="workflow_list", factory=_runs, description="Workflow runs, newest first."),
        McpToolSpec(name="workflow_cancel", factory=_cancel,
                    description="Cancel a workflow run; its agents are closed."),
    ]
