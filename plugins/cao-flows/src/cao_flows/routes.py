"""``/flows``: upstream's routes (same paths, bodies and answers), plus ``GET /flows/{name}/runs``.

``POST /flows`` takes upstream's body (``name``, ``schedule``, ``agent_profile``, ``provider``,
``prompt_template``: the flow file is written into the cao home) or ``{"file_path": ...}`` (a flow file
on the server's machine, used where it is, as ``cao flow add`` does).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from cao_hookspecs import RouteSpec
from cao_hookspecs.errors import InvalidInput

from .flow_file import NAME, FlowError
from .service import FlowService, run_json

#: The largest body ``POST /flows`` reads.
MAX_BODY = 256 * 1024
RUNS_LIMIT = 50
MAX_RUNS_LIMIT = 1000


def _name(request: Any) -> str:
    name = request.path_params["name"]
    if not NAME.fullmatch(name):
        raise InvalidInput(f"invalid flow name {name!r}: 1 to 64 letters, digits, '-' or '_'")
    return str(name)


async def _body(request: Any) -> Mapping[str, Any]:
    raw = await request.body()
    if len(raw) > MAX_BODY:
        raise InvalidInput(f"the request body is larger than {MAX_BODY} bytes")
    try:
        body = json.loads(raw or b"{}")
    except ValueError:
        raise InvalidInput("the request body must be a JSON object") from None
    if not isinstance(body, dict):
        raise InvalidInput("the request body must be a JSON object")
    return body


def _text(body: Mapping[str, Any], key: str, *, required: bool = True) -> str | None:
    value = body.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        raise FlowError(f"{key!r} must be non-empty text")
    if any(ord(c) < 32 and c not in "\n\t" for c in value):
        raise FlowError(f"{key!r} holds control characters")
    return value


def routes(service_of: Callable[[Any], FlowService]) -> list[RouteSpec]:
    """The routes, each finding its kernel's flows through ``service_of(kernel)``."""

    async def list_flows(request: Any, kernel: Any) -> Any:
        return await service_of(kernel).list()

    async def add_flow(request: Any, kernel: Any) -> Any:
        body = await _body(request)
        service = service_of(kernel)
        if "file_path" in body:
            path = _text(body, "file_path")
            assert path is not None
            created = await service.add_file(path)
        else:
            name = _text(body, "name")
            assert name is not None
            if not NAME.fullmatch(name):
                raise FlowError(f"invalid flow name {name!r}: 1 to 64 letters, digits, '-' or '_'")
            created = await service.add_fields(
                name=name, schedule=_text(body, "schedule") or "",
                agent_profile=_text(body, "agent_profile") or "",
                prompt=_text(body, "prompt_template") or "", provider=_text(body, "provider", required=False))
        from starlette.responses import JSONResponse

        return JSONResponse(created, status_code=201)

    async def get_flow(request: Any, kernel: Any) -> Any:
        return await service_of(kernel).get(_name(request))

    async def remove_flow(request: Any, kernel: Any) -> Any:
        await service_of(kernel).remove(_name(request))
        return {"success": True}

    async def enable(request: Any, kernel: Any) -> Any:
        await service_of(kernel).set_enabled(_name(request), True)
        return {"success": True}

    async def disable(request: Any, kernel: Any) -> Any:
        await service_of(kernel).set_enabled(_name(request), False)
        return {"success": True}

    async def run_flow(request: Any, kernel: Any) -> Any:
        run = await service_of(kernel).run_now(_name(request))
        return {"executed": run.state in ("started", "completed"), "run": run_json(run)}

    async def list_runs(request: Any, kernel: Any) -> Any:
        raw = request.query_params.get("limit", str(RUNS_LIMIT))
        if not raw.isdigit() or not 1 <= int(raw) <= MAX_RUNS_LIMIT:
            raise InvalidInput(f"invalid limit {raw!r}: a whole number from 1 to {MAX_RUNS_LIMIT}")
        return await service_of(kernel).runs(_name(request), int(raw))

    return [
        RouteSpec(name="flows_list", path="/flows", endpoint=list_flows, description="Every flow"),
        RouteSpec(name="flows_add", path="/flows", endpoint=add_flow, methods=("POST",),
                  description="Add a flow: upstream's fields, or file_path of a flow file"),
        RouteSpec(name="flows_get", path="/flows/{name}", endpoint=get_flow, description="One flow"),
        RouteSpec(name="flows_remove", path="/flows/{name}", endpoint=remove_flow, methods=("DELETE",),
                  description="Remove a flow and its runs"),
        RouteSpec(name="flows_enable", path="/flows/{name}/enable", endpoint=enable, methods=("POST",),
                  description="Run the flow on its schedule again"),
        RouteSpec(name="flows_disable", path="/flows/{name}/disable", endpoint=disable, methods=("POST",),
                  description="Stop running the flow on its schedule"),
        RouteSpec(name="flows_run", path="/flows/{name}/run", endpoint=run_flow, methods=("POST",),
                  description="Run the flow now; executed says whether its agent got the prompt"),
        RouteSpec(name="flows_runs", path="/flows/{name}/runs", endpoint=list_runs,
                  description="The flow's runs, newest first (limit, default 50)"),
    ]


__all__ = ["routes"]
