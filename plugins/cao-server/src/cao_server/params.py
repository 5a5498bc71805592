"""Request parameters: declared once per route, read from the query string or a JSON body.

Upstream's core routes take their inputs as query parameters (message text included); cao also
accepts every parameter as a field of a JSON object body, which is what cao's own client sends (no
URL length limit, nothing in access logs). A body field wins over a query parameter of the same name.
The same declarations generate the OpenAPI document, so the two cannot drift apart.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from cao_hookspecs.names import BLANK_CHARS

from .errors import BadParameter, TooLarge
from .validation import MAX_BODY_BYTES, text_size

if TYPE_CHECKING:
    from starlette.requests import Request

# Query-string spellings of booleans, as FastAPI accepts them.
_TRUE = frozenset({"1", "true", "yes", "on", "y", "t"})
_FALSE = frozenset({"0", "false", "no", "off", "n", "f"})
_MISSING = object()


@dataclasses.dataclass(frozen=True)
class Param:
    """One named input of a route.

    ``type`` is ``string``, ``integer``, ``number``, ``boolean``, ``list`` (strings: a JSON array, or
    comma-separated in a query), ``map`` (string to string; JSON body only) or ``object`` (any JSON
    object; JSON body only). ``pattern`` violations
    are 422s like a wrong type; ``max_bytes`` violations are 413s.

    ``rule`` holds schema keywords (``pattern``, ``enum``) for a rule checked after this reader, by the
    handler or the kernel with their own status (400): the document states it, the reader does not.
    """

    name: str
    type: str = "string"
    required: bool = False
    default: Any = None
    description: str = ""
    enum: tuple[str, ...] | None = None
    minimum: float | None = None
    maximum: float | None = None
    pattern: str | None = None
    max_bytes: int | None = None
    body_only: bool = False
    nullable: bool = False
    rule: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    #: A ``list`` given in a JSON body must be a JSON array (no comma-separated string).
    strict: bool = False

    def schema(self) -> dict[str, Any]:
        """This parameter's JSON schema (as a body field)."""
        base: dict[str, Any]
        if self.type == "list":
            base = {"type": "array", "items": {"type": "string"}}
        elif self.type == "map":
            base = {"type": "object", "additionalProperties": {"type": "string"}}
        elif self.type == "object":
            base = {"type": "object"}
        else:
            base = {"type": self.type}
        if self.enum is not None:
            base["enum"] = list(self.enum)
        if self.minimum is not None:
            base["minimum"] = self.minimum
        if self.maximum is not None:
            base["maximum"] = self.maximum
        if self.pattern is not None:
            base["pattern"] = self.pattern
        base.update(self.rule)
        if self.default is not None:
            base["default"] = self.default
        if self.description:
            base["description"] = self.description
        if self.nullable:
            base["nullable"] = True
        return base

    def body_schema(self) -> dict[str, Any]:
        """As a field of the JSON body: ``null`` there means "not given" for any optional parameter."""
        schema = self.schema()
        if not self.required:
            schema["nullable"] = True
        return schema

    def query_schema(self) -> dict[str, Any]:
        """As a query parameter: lists travel comma-separated, blank items dropped."""
        schema = self.schema()
        if self.type == "list":
            schema = {"type": "string", "description": (self.description + " (comma-separated)").strip()}
            if self.enum is not None:
                # At least one item: blank ones are dropped, and an empty list is refused.
                named = f"[{BLANK_CHARS}]*(?:{'|'.join(map(re.escape, self.enum))})[{BLANK_CHARS}]*"
                blank = f"[{BLANK_CHARS}]*"
                schema["pattern"] = f"^(?:{blank},)*{named}(?:,(?:{named}|{blank}))*$"
        schema.pop("nullable", None)
        return schema


async def read_body(request: Request) -> dict[str, Any]:
    """The JSON object body of a request ({} when there is none); 413 past the size limit."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isascii() and declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        raise TooLarge(f"request body is {declared} bytes; the limit is {MAX_BODY_BYTES}")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise TooLarge(f"request body is over {MAX_BODY_BYTES} bytes")
        chunks.append(chunk)
    raw = b"".join(chunks)
    # Kept for a handler that reads the raw body again (run-step names unknown fields and hands workflow
    # steps on to a plugin's route); the request's own stream is spent.
    request.scope["cao.raw_body"] = raw
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise BadParameter(f"request body is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise BadParameter("request body must be a JSON object")
    return data


def read_params(
    params: tuple[Param, ...], query: Mapping[str, str], body: Mapping[str, Any]
) -> dict[str, Any]:
    """Every declared parameter, converted and checked; raises ``BadParameter``/``TooLarge``."""
    out: dict[str, Any] = {}
    for param in params:
        value: Any = _MISSING
        if param.name in body:
            value = _from_json(param, body[param.name])
        elif param.name in query and not param.body_only:
            value = _from_query(param, query[param.name])
        if value is _MISSING or value is None:
            if param.required and (value is _MISSING or not param.nullable):
                raise BadParameter(f"missing required parameter {param.name!r}")
            out[param.name] = param.default if value is _MISSING else None
            continue
        out[param.name] = _check(param, value)
    return out


def _from_query(param: Param, raw: str) -> Any:
    kind = param.type
    if kind == "string":
        return raw
    if kind == "boolean":
        lowered = raw.strip().lower()
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
        raise BadParameter(f"parameter {param.name!r} must be a boolean, got {raw!r}")
    if kind == "integer":
        try:
            return int(raw.strip())
        except ValueError:
            raise BadParameter(f"parameter {param.name!r} must be an integer, got {raw!r}") from None
    if kind == "number":
        try:
            return float(raw.strip())
        except ValueError:
            raise BadParameter(f"parameter {param.name!r} must be a number, got {raw!r}") from None
    if kind == "list":
        return [item.strip() for item in raw.split(",") if item.strip()]
    raise BadParameter(f"parameter {param.name!r} can only be given in the JSON body")


def _from_json(param: Param, value: Any) -> Any:
    if value is None:
        return None
    kind = param.type
    if kind == "string" and isinstance(value, str):
        return value
    if kind == "boolean" and isinstance(value, bool):
        return value
    if kind == "integer" and isinstance(value, int) and not isinstance(value, bool):
        return value
    if kind == "number" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if kind == "list":
        if isinstance(value, str) and not param.strict:
            return _from_query(param, value)
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return list(value)
    if kind == "map" and isinstance(value, dict) and all(isinstance(v, str) for v in value.values()):
        return dict(value)
    if kind == "object" and isinstance(value, dict):
        return dict(value)
    expected = {"list": "a list of strings", "map": "an object of strings", "object": "a JSON object"}.get(
        kind, f"a {kind}")
    raise BadParameter(f"parameter {param.name!r} must be {expected}, got {type(value).__name__}")


def _check(param: Param, value: Any) -> Any:
    texts = [value] if isinstance(value, str) else list(value) if isinstance(value, list) else []
    if isinstance(value, dict):
        texts = [text for text in (*value.keys(), *value.values()) if isinstance(text, str)]
    for text in texts:
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise BadParameter(f"parameter {param.name!r} is not valid Unicode text") from None
    if param.max_bytes is not None and isinstance(value, str):
        text_size(value, what=param.name, limit=param.max_bytes)
    if param.enum is not None:
        values = value if isinstance(value, list) else [value]
        for item in values:
            if item not in param.enum:
                raise BadParameter(
                    f"parameter {param.name!r}: {item!r} is not one of {', '.join(param.enum)}"
                )
    if isinstance(value, float) and not math.isfinite(value):
        raise BadParameter(f"parameter {param.name!r} must be a finite number")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if param.minimum is not None and value < param.minimum:
            raise BadParameter(f"parameter {param.name!r} must be >= {param.minimum:g}, got {value}")
        if param.maximum is not None and value > param.maximum:
            raise BadParameter(f"parameter {param.name!r} must be <= {param.maximum:g}, got {value}")
    if param.pattern is not None and isinstance(value, str) and not re.fullmatch(param.pattern, value):
        raise BadParameter(f"invalid {param.name} {value!r}: must match {param.pattern}")
    return value


__all__ = ["Param", "read_body", "read_params"]
