"""``create_app``: the Starlette application over any ``KernelAPI``."""

from __future__ import annotations

import contextlib
import inspect
import logging
import re
import time
from collections.abc import AsyncIterator, Iterable
from typing import TYPE_CHECKING, Any

from cao_hookspecs.errors import CaoError

from .asgi import StatusWatch
from .printable import printable
from .endpoints import ENDPOINTS, Call, Context, Endpoint, Reply, check_path
from .params import read_body, read_params
from .settings import ServerSettings

if TYPE_CHECKING:
    from cao_hookspecs import RouteSpec
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.types import ASGIApp, Receive, Scope, Send

log = logging.getLogger("cao_server")
access_log = logging.getLogger("cao_server.access")

HTTP_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def error_response(exc: CaoError) -> Response:
    from starlette.responses import JSONResponse

    detail = str(exc) or type(exc).__name__
    return JSONResponse({"detail": detail, "error": type(exc).__name__}, status_code=exc.http_status)


def _internal_error(what: str, exc: BaseException) -> Response:
    from starlette.responses import JSONResponse

    log.error("%s failed", what, exc_info=exc)
    return JSONResponse(
        {
            "detail": f"internal server error ({type(exc).__name__}); see the server log",
            "error": "ServerError",
        },
        status_code=500,
    )


def _mount(ctx: Context, endpoint: Endpoint, routes: list[Any] | None = None,
           literal_paths: frozenset[str] = frozenset()) -> Any:
    from starlette.responses import JSONResponse, Response

    from .methods import method_not_allowed, shadowed

    reads_body = endpoint.method in BODY_METHODS and bool(endpoint.params)
    template = "{" in endpoint.path

    async def run(request: Request) -> Response:
        if template and routes is not None and shadowed(request, literal_paths):
            return method_not_allowed(request, routes)
        try:
            path = check_path(dict(request.path_params))
            body = await read_body(request) if reads_body else {}
            args = read_params(endpoint.params, request.query_params, body)
            result = await endpoint.handler(ctx, Call(path=path, args=args, request=request))
        except CaoError as exc:
            return error_response(exc)
        except Exception as exc:  # noqa: BLE001 - a bug answers 500 with a pointer to the log, never a trace
            return _internal_error(f"{endpoint.method} {endpoint.path}", exc)
        if isinstance(result, Reply):
            return JSONResponse(result.data, status_code=result.status)
        if isinstance(result, Response):  # already encoded (the event history is stored as JSON)
            return result
        return JSONResponse(result, status_code=endpoint.status)

    run.__name__ = endpoint.name
    return run


def _websocket_plugin(kernel: Any, spec: Any) -> Any:
    """A plugin's WebSocket handler, given the kernel; an exception closes the socket (1011) and is
    logged with the plugin's route name."""

    async def endpoint(websocket: Any) -> None:
        try:
            await spec.endpoint(websocket, kernel)
        except Exception:  # noqa: BLE001 - one plugin's socket must not take the server down
            log.exception("WebSocket route %r failed", spec.name)
            with contextlib.suppress(Exception):
                await websocket.close(code=1011)

    return endpoint


def _mount_plugin(kernel: Any, spec: RouteSpec) -> Any:
    from starlette.responses import JSONResponse, Response

    from .converter import to_json

    async def run(request: Request) -> Response:
        try:
            result = spec.endpoint(request, kernel)
            if inspect.isawaitable(result):
                result = await result
        except CaoError as exc:
            return error_response(exc)
        except Exception as exc:  # noqa: BLE001
            return _internal_error(f"plugin route {spec.name!r}", exc)
        if isinstance(result, Response):
            return result
        return JSONResponse(to_json(result))

    run.__name__ = f"plugin_{spec.name}"
    return run


class _LazyAsgi:
    """A plugin's ASGI app, built on its first request (in a thread) so it never slows start-up: the MCP
    SDK behind ``/mcp`` alone takes most of a second to import."""

    def __init__(self, spec: RouteSpec, kernel: Any) -> None:
        self.spec = spec
        self.kernel = kernel
        self.app: Any = None
        self._lock: Any = None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if self.app is None:
            import asyncio

            if self._lock is None:
                self._lock = asyncio.Lock()
            async with self._lock:
                if self.app is None:
                    self.app = await asyncio.to_thread(self.spec.endpoint, self.kernel)
        await self.app(scope, receive, send)


def _shape(path: str) -> str:
    """A path template with parameter names erased: ``/t/{id}`` and ``/t/{x}`` are the same route."""
    return re.sub(r"{[^}]*}", "{}", path)


def plugin_routes(specs: Iterable[RouteSpec], taken: set[tuple[str, str]]) -> list[RouteSpec]:
    """The plugin routes that may be mounted: well-formed, and colliding with no earlier route.

    A refused route is logged with a warning naming it and what it collides with; the rest still mount.
    """
    accepted: list[RouteSpec] = []
    owners = {key: "the built-in API" for key in taken}
    for spec in specs:
        methods = tuple(m.upper() for m in spec.methods)
        if not isinstance(spec.path, str) or not spec.path.startswith("/") or not methods:
            log.warning(
                "plugin route %r refused: its path must start with '/' and it needs a method", spec.name
            )
            continue
        unknown = [m for m in methods if m not in HTTP_METHODS]
        if unknown:
            log.warning("plugin route %r refused: unknown method %s", spec.name, ", ".join(unknown))
            continue
        clash = next(
            ((m, owners[(m, _shape(spec.path))]) for m in methods if (m, _shape(spec.path)) in owners), None
        )
        if clash is not None:
            log.warning(
                "plugin route %r refused: %s %s is already served by %s",
                spec.name,
                clash[0],
                spec.path,
                clash[1],
            )
            continue
        for method in methods:
            owners[(method, _shape(spec.path))] = f"plugin route {spec.name!r}"
        accepted.append(spec)
    return accepted


class AccessLog:
    """One INFO line per request: method, path (never the query string: it may carry message text),
    status and duration."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        watch = StatusWatch(send)
        try:
            await self.app(scope, receive, watch)
        finally:
            access_log.info(
                "%s %s %d %.1fms",
                printable(scope["method"]),
                printable(scope["path"]),
                watch.status,
                (time.perf_counter() - started) * 1000,
            )


def create_app(
    kernel: Any, *, settings: ServerSettings | None = None, extra_routes: Iterable[RouteSpec] = (),
    owns_kernel: bool = True,
) -> Starlette:
    """The HTTP API over ``kernel`` (any ``KernelAPI``).

    :param settings: bound address, allowed hosts and origins, API token (default: loopback, no token).
    :raises ValueError: when the settings require a token (bound off loopback) but give none.
    :param extra_routes: plugin routes (``cao_register_routes`` records), mounted after the built-in
        ones and behind the same guards; a colliding or malformed one is refused with a warning.

    The app's lifespan starts the kernel (``await kernel.start()``) and closes it (``aclose()``) when the
    kernel has those methods, unless ``owns_kernel`` is false (a kernel that runs the app, not the other
    way round: ``cao_server.embedded``).
    """
    from starlette.applications import Starlette
    from starlette.exceptions import HTTPException
    from starlette.middleware import Middleware
    from starlette.responses import JSONResponse
    from starlette.routing import Route, WebSocketRoute, compile_path

    from . import __version__
    from .methods import method_not_allowed
    from .openapi import build_document
    from .security import middleware

    settings = settings or ServerSettings()
    if settings.token_required and not settings.token:
        raise ValueError(f"a server bound to {settings.host} needs an API token (callers must send it)")
    # The event stream needs the kernel to take an observer plugin (an in-process Kernel does).
    from .events import EventHub, events_endpoint

    hub = EventHub() if callable(getattr(kernel, "register_plugin", None)) else None
    from .run_step import split_journal

    journal, extra_routes = split_journal(extra_routes)
    ctx = Context(kernel=kernel, settings=settings, events=hub, step_journal=journal)
    routes: list[Any] = []
    literal_paths = frozenset(e.path for e in ENDPOINTS if "{" not in e.path)
    routes += [Route(e.path, _mount(ctx, e, routes, literal_paths), methods=[e.method], name=e.name)
               for e in ENDPOINTS]
    taken = {(e.method, _shape(e.path)) for e in ENDPOINTS} | {
        ("GET", "/openapi.json"), ("GET", "/events"), ("GET", "/login"), ("POST", "/login-links")}
    plugins = plugin_routes(extra_routes, taken)
    for spec in plugins:
        if spec.websocket:
            routes.append(WebSocketRoute(spec.path, _websocket_plugin(kernel, spec),
                                         name=f"plugin_{spec.name}"))
        elif spec.asgi:
            # A whole ASGI application (e.g. an MCP transport) answering every method at this path; a
            # Route rather than a Mount so `POST /mcp` is not redirected to `/mcp/`. The security
            # middleware wraps it like every other route.
            routes.append(Route(spec.path, _LazyAsgi(spec, kernel), name=f"plugin_{spec.name}"))
        else:
            routes.append(Route(spec.path, _mount_plugin(kernel, spec), methods=[m.upper() for m in spec.methods],
                                name=f"plugin_{spec.name}"))
    document = build_document(ENDPOINTS, plugins, version=__version__)
    from .login_routes import login_routes
    from .logins import Logins

    logins = Logins()
    routes += login_routes(logins)
    public = [compile_path(spec.path)[0] for spec in plugins if spec.public and not spec.websocket]
    public.append(compile_path("/login")[0])

    async def openapi(request: Request) -> Response:
        return JSONResponse(document)

    routes.append(Route("/openapi.json", openapi, methods=["GET"], name="openapi"))
    routes.append(Route("/events", events_endpoint(hub), methods=["GET"], name="events"))

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        if exc.status_code == 405:
            return method_not_allowed(request, routes)
        name = (
            "NotFound"
            if exc.status_code == 404
            else "InvalidInput"
            if exc.status_code < 500
            else "ServerError"
        )
        return JSONResponse(
            {"detail": exc.detail, "error": name}, status_code=exc.status_code, headers=exc.headers
        )

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        start = getattr(kernel, "start", None) if owns_kernel else None
        if start is not None:
            await start()
        hub_name = kernel.register_plugin(hub, name=f"cao-server-events-{id(hub):x}") if hub else None
        try:
            yield
        finally:
            if hub is not None:
                hub.close()
                kernel.unregister_plugin(hub_name)
            close = getattr(kernel, "aclose", None) if owns_kernel else None
            if close is not None:
                await close()

    app = Starlette(
        routes=routes,
        middleware=[Middleware(AccessLog), *middleware(settings, logins, public)],
        exception_handlers={HTTPException: http_error},
        lifespan=lifespan,
    )
    # A trailing slash is a 404 like any unknown path, not an empty redirect.
    app.router.redirect_slashes = False
    app.state.kernel = kernel
    app.state.settings = settings
    app.state.openapi = document
    app.state.events = hub
    app.state.logins = logins
    # What `cao server` points a browser at: a plugin's page at "/", if one serves it.
    app.state.console = any(spec.public and spec.path == "/" for spec in plugins)
    return app


__all__ = ["AccessLog", "create_app", "error_response", "plugin_routes"]
