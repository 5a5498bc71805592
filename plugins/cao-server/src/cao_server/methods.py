"""What a path answers to a method it does not serve, and to ``OPTIONS`` (RFC 9110, sections 9.3.7 and
15.5.6).

Starlette's router hands a wrong method to the first route whose path matches, so its 405 names only
that route's methods: ``GET /sessions`` and ``POST /sessions`` are two routes, and ``DELETE /sessions``
was told ``Allow: POST``. Here ``Allow`` lists every method of every route at the path. ``OPTIONS`` asks
which methods a resource supports: it is answered 204 with that ``Allow`` rather than refused, since
refusing it would be a 405 that says OPTIONS is not allowed while answering the question anyway.

Both come from the 405 the router raises, so a request with a served method pays nothing for this.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response


def allowed_methods(routes: Iterable[Any], scope: dict[str, Any]) -> list[str]:
    """Every method some route serves at the path of ``scope`` (with OPTIONS, answered here)."""
    from starlette.routing import Match

    methods = {"OPTIONS"}
    matching = [route for route in routes if route.matches(scope)[0] is not Match.NONE]
    # A path spelled out by a route (`/agents/profiles/search`) is that route's alone: the templates
    # it also fits (`/agents/profiles/{name}`) do not serve it (see ``shadowed``).
    literal = [route for route in matching if not getattr(route, "param_convertors", None)]
    for route in literal or matching:
        methods |= set(route.methods or ())
    return sorted(methods)


def shadowed(request: Request, literal_paths: frozenset[str]) -> bool:
    """Whether a template route got a path another route spells out, with a method that one does not
    serve: the template must not take it (`DELETE /agents/profiles/search` deletes no profile)."""
    return request.url.path in literal_paths


def method_not_allowed(request: Request, routes: Iterable[Any]) -> Response:
    """The answer to a method the path does not serve: 204 to OPTIONS, else 405; both with ``Allow``."""
    from starlette.responses import JSONResponse, Response

    headers = {"Allow": ", ".join(allowed_methods(routes, request.scope))}
    if request.method == "OPTIONS":
        return Response(status_code=204, headers=headers)
    return JSONResponse({"detail": "Method Not Allowed", "error": "InvalidInput"}, status_code=405,
                        headers=headers)


__all__ = ["allowed_methods", "method_not_allowed", "shadowed"]
