"""The OpenAPI 3 document, generated from the same route declarations the server mounts."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from cao_hookspecs.handoff_jobs import JOB_ID_PATTERN
from cao_hookspecs.names import PROFILE_NAME_RE, SESSION_ARG_RE, TERMINAL_ID_PATTERN, json_pattern

from .schemas import SCHEMAS, ref

if TYPE_CHECKING:
    from cao_hookspecs import RouteSpec

    from .endpoints import Endpoint

REASONS = {
    200: "OK",
    201: "Created",
    204: "Done; no content",
    400: "Invalid input (a bad name, key or value; or a Host header not allowed)",
    401: "API token missing or wrong (the api-token file of the server's cao home)",
    403: "Refused: a cross-origin request, or a plugin vetoed the action",
    404: "Not found",
    409: "Conflict with the target's state",
    413: "Message or request body too large",
    422: "Malformed parameter, terminal id or JSON body",
    429: "Too many terminals: CAO_MAX_TERMINALS reached, nothing was created",
    501: "Not supported by this server's kernel",
    502: "The agent failed",
    504: "Timed out",
}
PATH_PARAMS = {
    "terminal_id": {"type": "string", "pattern": TERMINAL_ID_PATTERN},
    # The kernel adds 'cao-' to a session name in a path as in a body: the pattern says what fits.
    "session_name": {"type": "string", "pattern": json_pattern(SESSION_ARG_RE)},
    "name": {"type": "string", "pattern": json_pattern(PROFILE_NAME_RE)},
    "message_id": {"type": "string", "pattern": "^[1-9][0-9]{0,17}$"},
    "job_id": {"type": "string", "pattern": JOB_ID_PATTERN},
    "skill": {"type": "string", "pattern": "^[a-z0-9]+(?:-[a-z0-9]+)*$", "maxLength": 64},
}


def path_params(path: str) -> list[str]:
    return re.findall(r"{([^}:]+)(?::[^}]*)?}", path)


def _error(status: int, schema: str = "Error") -> dict[str, Any]:
    return {
        "description": REASONS.get(status, "Error"),
        "content": {"application/json": {"schema": ref(schema)}},
    }


def _operation(endpoint: Endpoint) -> dict[str, Any]:
    op: dict[str, Any] = {"operationId": endpoint.name, "summary": endpoint.summary, "tags": [endpoint.tag]}
    parameters = [
        {"name": name, "in": "path", "required": True, "schema": PATH_PARAMS.get(name, {"type": "string"})}
        for name in path_params(endpoint.path)
    ]
    # A route with a body takes each parameter from the body or the query, the body winning; OpenAPI cannot
    # say "in one of the two", so the body (what cao's client sends) carries the requirement, and the query
    # form (upstream's) is described as optional.
    has_body = bool(endpoint.params) and endpoint.method != "GET"
    parameters += [
        {
            "name": p.name,
            "in": "query",
            "required": p.required and not has_body,
            "schema": p.query_schema(),
            **({"description": p.description} if p.description else {}),
        }
        for p in endpoint.params
        if not p.body_only
    ]
    if parameters:
        op["parameters"] = parameters
    if has_body:
        op["requestBody"] = {
            "required": any(p.required for p in endpoint.params),
            "description": "the parameters as a JSON object (a body field wins over a query parameter)",
            "content": {
                "application/json": {
                    "schema": {
                        "type": "object",
                        "properties": {p.name: p.body_schema() for p in endpoint.params},
                        **(
                            {"required": [p.name for p in endpoint.params if p.required]}
                            if any(p.required for p in endpoint.params)
                            else {}
                        ),
                    }
                }
            },
        }
    statuses = set(endpoint.errors) | {400, 401}
    if endpoint.method != "GET":
        statuses |= {403, 413, 422}
    if endpoint.params or path_params(endpoint.path):
        statuses.add(422)
    answer: dict[str, Any] = {"description": REASONS.get(endpoint.status, "OK")}
    if endpoint.status != 204:  # No Content has no body to describe
        answer["content"] = {endpoint.media_type: {"schema": endpoint.response}}
    op["responses"] = {
        str(endpoint.status): answer,
        **{str(s): _error(s, endpoint.error_schemas.get(s, "Error")) for s in sorted(statuses)},
    }
    return op


def build_document(
    endpoints: Iterable[Endpoint], plugin_routes: Iterable[RouteSpec] = (), *, version: str = "0.1.0"
) -> dict[str, Any]:
    """The whole document: every built-in route with its parameters and answers, plus plugin routes
    (described by their ``description``; their shapes are the plugin's own)."""
    paths: dict[str, dict[str, Any]] = {}
    for endpoint in endpoints:
        paths.setdefault(endpoint.path, {})[endpoint.method.lower()] = _operation(endpoint)
    paths.setdefault("/openapi.json", {})["get"] = {
        "operationId": "openapi",
        "summary": "This document",
        "tags": ["server"],
        "responses": {
            "200": {"description": "OK", "content": {"application/json": {"schema": {"type": "object"}}}},
            "400": _error(400),
            "401": _error(401),
        },
    }
    paths.setdefault("/events", {})["get"] = {
        "operationId": "events",
        "summary": "The kernel's events as they happen, one JSON object per line (see cao_server.events)",
        "tags": ["server"],
        "parameters": [{"name": "session", "in": "query", "required": False, "schema": {"type": "string"},
                        "description": "only this session's events"}],
        "responses": {
            "200": {"description": "a stream of events", "content": {"application/x-ndjson": {
                "schema": {"type": "object"}}}},
            "400": _error(400),
            "401": _error(401),
            "501": _error(501),
        },
    }
    paths["/events"]["get"]["responses"]["200"]["content"]["text/event-stream"] = {"schema": {"type": "string"}}
    paths.setdefault("/login", {})["get"] = {
        "operationId": "login",
        "summary": "Trade a one-time login code for a browser session (cookies), see cao_server.logins",
        "tags": ["server"],
        "security": [],
        "parameters": [{"name": "code", "in": "query", "required": False, "schema": {"type": "string"},
                        "description": "the code of a link from POST /login-links or `cao server`"}],
        "responses": {
            "200": {"description": "logged in: a page that moves to /",
                    "content": {"text/html": {"schema": {"type": "string"}}}},
            "400": _error(400),
            "401": {"description": "a used, expired or unknown code",
                    "content": {"text/html": {"schema": {"type": "string"}}}},
        },
    }
    paths.setdefault("/login-links", {})["post"] = {
        "operationId": "login_links",
        "summary": "A one-time login link for a browser (works once, for ten minutes)",
        "tags": ["server"],
        "responses": {
            "201": {"description": "Created", "content": {"application/json": {"schema": {
                "type": "object", "properties": {"url": {"type": "string"}, "expires_at": {"type": "number"}},
            }}}},
            "400": _error(400),
            "401": _error(401),
            "403": _error(403),
        },
    }
    for spec in plugin_routes:
        # A WebSocket is no HTTP operation: OpenAPI 3.0 has no way to describe it.
        for method in () if getattr(spec, "websocket", False) else spec.methods:
            params = [
                {"name": n, "in": "path", "required": True, "schema": {"type": "string"}}
                for n in path_params(spec.path)
            ]
            paths.setdefault(spec.path, {})[method.lower()] = {
                "operationId": f"plugin_{spec.name}_{method.lower()}",
                "summary": spec.description or f"plugin route {spec.name}",
                "tags": ["plugins"],
                **({"parameters": params} if params else {}),
                "responses": {"200": {"description": "the plugin's answer"}, "default": _error(400)},
            }
    return {
        "openapi": "3.0.3",
        "info": {
            "title": "cao-server",
            "version": version,
            "description": "cao's HTTP API: upstream CLI Agent Orchestrator routes plus orchestration.",
        },
        "paths": paths,
        "components": {
            "schemas": SCHEMAS,
            "securitySchemes": {
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "the api-token file of the server's cao home; every route but /health",
                }
            },
        },
    }


__all__ = ["build_document", "path_params"]
