"""A client for tests that checks every answer of a real cao-server against the server's own OpenAPI
document (status declared for the operation, body matching its schema), so tests that exercise the
routes also prove the document accurate.

- ``ApiClient(server)``: a synchronous client over a :class:`cao_testkit.serve.RunningServer`.
- ``check_schema``: the validator behind it, for the OpenAPI 3.0 subset the document uses;
  ``find_operation``: the operation of the document that serves a method and path.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx

    from .serve import RunningServer

__all__ = ["ApiClient", "SchemaError", "check_schema", "find_operation"]


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
