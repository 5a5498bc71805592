"""Upstream's terminal label routes (``description``, ``group``, ``metadata``), sibling discovery by group,
and a byte range of a terminal's output.

Labels are kept by the kernel in the cao home (methods beyond ``KernelAPI``; a kernel without them
answers 501) and shown in every terminal's JSON, as upstream shows them. A label upstream refuses (too
long, too big, wrong type) is refused with upstream's 422.
"""

from __future__ import annotations

from typing import Any

from cao_hookspecs import NotFound, StatusReport
from cao_hookspecs.errors import InvalidInput

from . import wire
from .endpoints import Call, Context, Endpoint
from .errors import BadParameter, NotSupported
from .params import Param
from .schemas import ref

LABELS = ("description", "group", "metadata")
# Upstream's cap on one range read.
MAX_RANGE = 1024 * 1024
T = "/terminals/{terminal_id}"
ID_ERRORS = (404, 422)

SIBLING = {"type": "object", "required": ["id", "status"], "properties": {
    "id": {"type": "string"}, "name": {"type": "string"}, "session_name": {"type": "string"},
    "agent_profile": {"type": "string"}, "status": {"type": "string"},
    "group": {"type": "array", "items": {"type": "string"}, "nullable": True},
    "description": {"type": "string", "nullable": True}, "metadata": {"type": "object", "nullable": True}}}
RANGE = {"type": "object", "required": ["terminal_id", "offset", "length", "data"], "properties": {
    "terminal_id": {"type": "string"}, "offset": {"type": "integer"}, "length": {"type": "integer"},
    "data": {"type": "string"}}}


def _method(ctx: Context, name: str) -> Any:
    method = getattr(ctx.kernel, name, None)
    if method is None:
        raise NotSupported("this server's kernel does not keep terminal labels")
    return method


async def with_labels(kernel: Any, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Terminal JSON rows with their labels (all ``None`` when unset); unchanged for a kernel that
    keeps none."""
    read = getattr(kernel, "terminal_labels", None)
    if read is None:
        return rows
    stored = await read()
    for row in rows:
        labels = stored.get(row.get("id"), {})
        row.update({field: labels.get(field) for field in LABELS})
    return rows


def _label_route(field: str) -> Any:
    async def handler(ctx: Context, call: Call) -> Any:
        terminal_id = call.path["terminal_id"]
        try:
            await _method(ctx, "set_terminal_label")(terminal_id, field, call.args[field])
        except NotFound:
            raise
        except InvalidInput as exc:  # upstream's body validation answers 422
            raise BadParameter(str(exc)) from None
        terminal = await ctx.kernel.get_terminal(terminal_id)
        data = wire.terminal_json(terminal, await ctx.kernel.get_status(terminal_id))
        return (await with_labels(ctx.kernel, [data]))[0]

    handler.__name__ = f"set_{field}"
    return handler


async def siblings(ctx: Context, call: Call) -> Any:
    terminal_id = call.path["terminal_id"]
    own = await _method(ctx, "terminal_labels")(terminal_id)
    me = await ctx.kernel.get_terminal(terminal_id)
    group = own.get("group") or []
    if not group:  # a terminal with no group takes part in no discovery
        return []
    depth = min(call.args["depth"] or len(group), len(group))
    prefix = group[:depth]
    stored = await ctx.kernel.terminal_labels()
    found = []
    for terminal in await ctx.kernel.live_terminals():
        labels = stored.get(terminal.id, {})
        theirs = labels.get("group") or []
        if terminal.id == terminal_id or theirs[:depth] != prefix:
            continue
        if not call.args["cross_session"] and terminal.session_name != me.session_name:
            continue
        try:
            report: StatusReport | None = await ctx.kernel.get_status(terminal.id)
        except NotFound:  # gone since the listing
            continue
        found.append({"id": terminal.id, "name": terminal.name, "session_name": terminal.session_name,
                      "agent_profile": terminal.agent_profile, "status": report.status.value,
                      **{field: labels.get(field) for field in LABELS}})
    return found


async def output_range(ctx: Context, call: Call) -> Any:
    terminal_id = call.path["terminal_id"]
    offset, length = call.args["offset"], call.args["length"]
    # cao keeps no append-only log file: the range is taken from the terminal's whole scrollback as
    # UTF-8 bytes, which grows at its end while the terminal runs.
    text = await ctx.kernel.get_output(terminal_id, "full")
    data = text.encode("utf-8")[offset:offset + length]
    return {"terminal_id": terminal_id, "offset": offset, "length": length,
            "data": data.decode("utf-8", errors="replace")}


async def memory_context(ctx: Context, call: Call) -> Any:
    from starlette.responses import PlainTextResponse

    # cao keeps no memory between sessions: the context is empty, as upstream's is with none stored.
    await ctx.kernel.get_terminal(call.path["terminal_id"])
    return PlainTextResponse("")


TERMINAL_ENDPOINTS: tuple[Endpoint, ...] = (
    Endpoint("GET", T + "/memory-context", "memory_context", "The terminal's memory context as text: always "
             "empty, cao keeps no memory", memory_context, "terminals", response={"type": "string"},
             errors=ID_ERRORS, media_type="text/plain"),
    Endpoint("PATCH", T + "/description", "set_description",
             "Replace a terminal's description (one line, at most 64 characters; null clears it)",
             _label_route("description"), "terminals",
             response=ref("Terminal"), errors=(*ID_ERRORS, 501),
             params=(Param("description", required=True, nullable=True, body_only=True,
                           rule={"maxLength": 64}, description="the new description, or null"),)),
    Endpoint("PATCH", T + "/group", "set_group", "Replace a terminal's group (general to specific; at most "
             "16 items of 128 characters; null or [] clears it)", _label_route("group"), "terminals",
             response=ref("Terminal"), errors=(*ID_ERRORS, 501),
             params=(Param("group", type="list", required=True, nullable=True, body_only=True, strict=True,
                           rule={"maxItems": 16, "items": {"type": "string", "maxLength": 128}},
                           description="the new group, or null"),)),
    Endpoint("PATCH", T + "/metadata", "set_metadata", "Replace a terminal's metadata (a JSON object of at "
             "most 16 KiB; null clears it)", _label_route("metadata"), "terminals",
             response=ref("Terminal"), errors=(*ID_ERRORS, 501),
             params=(Param("metadata", type="object", required=True, nullable=True, body_only=True,
                           description="the new metadata, or null"),)),
    Endpoint("GET", T + "/siblings", "list_siblings", "Other terminals sharing a leading part of this one's "
             "group (this session only unless cross_session)", siblings, "terminals",
             response={"type": "array", "items": SIBLING}, errors=(*ID_ERRORS, 501),
             params=(Param("depth", type="integer", minimum=1,
                           description="how many leading group items to match (default: all of them)"),
                     Param("cross_session", type="boolean", default=False,
                           description="look in every session, not only this terminal's"))),
    Endpoint("GET", T + "/output/range", "output_range", "Bytes of a terminal's output (its scrollback as "
             "UTF-8) from an offset", output_range, "terminals", response=RANGE, errors=ID_ERRORS,
             params=(Param("offset", type="integer", required=True, minimum=0, description="first byte"),
                     Param("length", type="integer", required=True, minimum=1, maximum=MAX_RANGE,
                           description=f"bytes to read, at most {MAX_RANGE}"))),
)

__all__ = ["TERMINAL_ENDPOINTS", "with_labels"]
