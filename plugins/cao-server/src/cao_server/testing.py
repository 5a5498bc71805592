"""Test helpers for code that needs a real cao-server (this package's tests, the MCP server's, plugins').

- ``serve_in_thread(kernel)``: a real uvicorn serving ``create_app(kernel)`` on 127.0.0.1, port 0, in
  a background thread, with the kernel's plugin routes as ``cao server`` mounts them; the kernel is told
  the real address before it starts.
- ``ApiClient``: a synchronous client that checks every answer against the server's own OpenAPI
  document (status declared for the operation, body matching its schema), so tests that exercise the
  routes also prove the document accurate.
- ``check_schema``: the validator behind it, for the OpenAPI 3.0 subset the document uses.
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from .settings import ServerSettings, base_url

if TYPE_CHECKING:
    import httpx
    from cao_hookspecs import RouteSpec
    from starlette.applications import Starlette


@dataclasses.dataclass
class RunningServer:
    """A server started by ``serve_in_thread``."""

    url: str
    port: int
    settings: ServerSettings
    app: Starlette

    @property
    def document(self) -> dict[str, Any]:
        return self.app.state.openapi


@contextlib.contextmanager
def serve_in_thread(
    kernel: Any,
    *,
    host: str = "127.0.0.1",
    token: str | None = None,
    extra_routes: Iterable[RouteSpec] | None = None,
    settings: Mapping[str, Any] | None = None,
    startup_timeout: float = 30.0,
) -> Iterator[RunningServer]:
    """Serve ``kernel`` on ``host`` (port 0) until the block ends; the kernel starts and closes with it.

    ``settings`` are cao settings for the server (``CAO_ALLOWED_HOSTS``, ``CAO_CORS_ORIGINS``); by
    default the kernel's own. A server bound off loopback needs ``token``. ``extra_routes`` are the plugin
    routes to mount; by default the kernel's own (its ``routes`` registry), as ``cao server`` mounts them:
    a kernel with cao-mcp then serves ``/mcp``, where its agents' MCP clients report in.
    """
    from .serve import _silence_uvicorn_access_log, bind_socket, server_class, uvicorn_config

    if extra_routes is None:
        extra_routes = list(dict(getattr(kernel, "routes", None) or {}).values())
    sock = bind_socket(host, 0)
    try:
        app, server_settings = _app_for(kernel, sock, host, token, extra_routes, settings)
    except BaseException:
        sock.close()
        raise
    port = server_settings.port
    config = uvicorn_config(app, graceful_seconds=2)
    _silence_uvicorn_access_log()
    server = server_class()(config)
    failure: list[BaseException] = []

    def run() -> None:
        try:
            server.run(sockets=[sock])
        except BaseException as exc:  # noqa: BLE001 - reported to the waiting test below
            failure.append(exc)

    thread = threading.Thread(target=run, name=f"cao-server-{port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + startup_timeout
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            thread.join(5)
            sock.close()
            raise RuntimeError(f"the test server did not start: {failure[0] if failure else 'timed out'}")
        time.sleep(0.005)
    try:
        yield RunningServer(
            url=base_url(host if host not in ("0.0.0.0", "::") else "127.0.0.1", port),
            port=port,
            settings=server_settings,
            app=app,
        )
    finally:
        server.should_exit = True
        thread.join(30)
        sock.close()
        if thread.is_alive():
            raise RuntimeError("the test server did not stop within 30 s")


def _app_for(
    kernel: Any,
    sock: Any,
    host: str,
    token: str | None,
    extra_routes: Iterable[RouteSpec],
    settings: Mapping[str, Any] | None,
) -> tuple[Starlette, ServerSettings]:
    from .address import advertise
    from .app import create_app

    port = sock.getsockname()[1]
    advertise(kernel, host, port)
    kernel_settings = getattr(kernel, "settings", None)
    source = settings if settings is not None else (kernel_settings or {})
    server_settings = ServerSettings.from_settings(source, host=host, port=port, token=token)
    return create_app(kernel, settings=server_settings, extra_routes=extra_routes), server_settings


# -- checking answers against the OpenAPI document -------------------------------------------------


class SchemaError(AssertionError):
    """A value does not match the schema the OpenAPI document declares for it."""


_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "boolean": (bool,),
    "integer": (int,),
    "number": (int, float),
}


def check_schema(
    document: Mapping[str, Any], schema: Mapping[str, Any], value: Any, where: str = "$"
) -> None:
    """Raise ``SchemaError`` naming the first place where ``value`` breaks ``schema``."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        check_schema(document, document["components"]["schemas"][name], value, where)
        return
    for part in schema.get("allOf", ()):
        check_schema(document, part, value, where)
    if value is None:
        if schema.get("nullable") or not schema.get("type"):
            return
        raise SchemaError(f"{where}: null where {schema.get('type')} is required")
    kind = schema.get("type")
    if kind is not None:
        ok = isinstance(value, _TYPES[kind]) and not (
            kind in ("integer", "number") and isinstance(value, bool)
        )
        if not ok:
            raise SchemaError(f"{where}: {type(value).__name__} where {kind} is required")
    if "enum" in schema and value not in schema["enum"]:
        raise SchemaError(f"{where}: {value!r} is not one of {schema['enum']}")
    if "pattern" in schema and isinstance(value, str) and not re.search(schema["pattern"], value):
        raise SchemaError(f"{where}: {value!r} does not match {schema['pattern']}")
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        for name in schema.get("required", ()):
            if name not in value:
                raise SchemaError(f"{where}: missing required field {name!r}")
        extra = schema.get("additionalProperties")
        for name, item in value.items():
            if name in properties:
                check_schema(document, properties[name], item, f"{where}.{name}")
            elif isinstance(extra, dict):
                check_schema(document, extra, item, f"{where}.{name}")
            elif extra is False:
                raise SchemaError(f"{where}: unexpected field {name!r}")
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            check_schema(document, schema["items"], item, f"{where}[{i}]")


def find_operation(document: Mapping[str, Any], method: str, path: str) -> tuple[str, dict[str, Any]] | None:
    """The (template, operation) of the document serving ``method path``, or None."""
    for template, item in document["paths"].items():
        parts = re.split(r"{[^}]+}", template)
        pattern = "^" + "[^/]+".join(re.escape(part) for part in parts) + "$"
        if re.match(pattern, path) and method.lower() in item:
            return template, item[method.lower()]
    return None


class ApiClient:
    """A synchronous HTTP client for tests that checks each answer against the OpenAPI document.

    Every response must use a status the operation declares, and a JSON body matching the schema
    declared for that status. Answers of plugin routes and undocumented paths are only returned.
    """

    def __init__(self, server: RunningServer, *, token: str | None = None, timeout: float = 60.0) -> None:
        import httpx

        self.server = server
        self.document = server.document
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.http = httpx.Client(base_url=server.url, headers=headers, timeout=timeout, trust_env=False)
        self.checked = 0

    def close(self) -> None:
        self.http.close()

    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        response = self.http.request(method, path, **kwargs)
        self.check(method, response)
        return response

    def check(self, method: str, response: httpx.Response) -> None:
        path = response.request.url.path
        found = find_operation(self.document, method, path)
        if found is None:
            return
        template, operation = found
        if "plugins" in operation.get("tags", ()):
            return
        declared = operation["responses"]
        status = str(response.status_code)
        if status not in declared:
            raise SchemaError(
                f"{method} {template} answered {status}, which the document does not declare "
                f"(declared: {', '.join(declared)}); body: {response.text[:300]}"
            )
        content = declared[status].get("content", {}).get("application/json")
        if content is not None:
            check_schema(self.document, content["schema"], response.json(), f"{method} {template} {status}")
        self.checked += 1

    def get(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.request("POST", path, **kwargs)

    def delete(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.request("DELETE", path, **kwargs)


__all__ = ["ApiClient", "RunningServer", "SchemaError", "check_schema", "find_operation", "serve_in_thread"]
