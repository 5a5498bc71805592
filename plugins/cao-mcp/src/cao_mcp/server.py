"""``build_server``: one ``MCPServer`` with cao's built-in tools and the plugins' tools.

The same server serves stdio (one agent, its id from ``CAO_TERMINAL_ID``) and streamable HTTP (many
agents, each request naming its terminal in ``X-CAO-Terminal-Id``), so every tool resolves its caller per
call from the MCP request context. Importing this module imports the MCP SDK.
"""

from __future__ import annotations

import inspect
import json
import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent
from pydantic import Field

from . import __version__
from .tools import (
    BUILTIN_NAMES,
    BUILTIN_TOOLS,
    CALL_HEADER,
    SERVER_INSTRUCTIONS,
    BuiltinTool,
    Caller,
    ToolEnv,
    ToolResult,
    context_header,
)

if TYPE_CHECKING:
    from cao_hookspecs import KernelAPI, McpToolSpec

log = logging.getLogger("cao_mcp")

SERVER_NAME = "cao-mcp-server"
# The tool functions get the MCP request context under this name; the SDK hides it from the schema.
CONTEXT_PARAM = "cao_ctx"

CallerOf = Callable[[Context | None], Caller]
Explain = Callable[[BaseException], str | None]


def _no_explanation(exc: BaseException) -> str | None:
    return None


def build_server(
    kernel: KernelAPI,
    caller_of: CallerOf,
    *,
    plugin_tools: Mapping[str, McpToolSpec] | None = None,
    explain: Explain = _no_explanation,
    template_caller: str | None = None,
) -> MCPServer:
    """An ``MCPServer`` whose tools run against ``kernel`` on behalf of ``caller_of(ctx)``.

    :param plugin_tools: ``cao_register_mcp_tools`` records by name. A name taken by a built-in tool is
        refused with a warning, and so is a tool whose factory raises or whose signature the SDK rejects.
    :param explain: turns a transport error (server not running...) into the sentence an agent reads.
    :param template_caller: the caller id plugin factories are first called with to learn each tool's
        signature; a call from that caller reuses that function (stdio serves a single caller).
    """
    server: MCPServer = MCPServer(
        SERVER_NAME, instructions=SERVER_INSTRUCTIONS, version=__version__, log_level="WARNING",
        warn_on_duplicate_tools=False,
    )
    for tool in BUILTIN_TOOLS:
        server.add_tool(_builtin_function(tool, kernel, caller_of, explain), name=tool.name,
                        description=tool.description)
    for name, spec in (plugin_tools or {}).items():
        _add_plugin_tool(server, name, spec, kernel, caller_of, explain, template_caller)
    return server


def tool_result(result: ToolResult) -> CallToolResult:
    """The MCP result of a built-in tool: the JSON object as text and as structured content."""
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(result.data, indent=2, ensure_ascii=False))],
        structured_content=result.data,
        is_error=not result.ok,
    )


def _tool_function(
    name: str, params: list[inspect.Parameter], returns: Any, call: Callable[..., Any]
) -> Callable[..., Any]:
    """A coroutine function with an explicit signature (the tool's schema) plus the context parameter."""
    context = inspect.Parameter(CONTEXT_PARAM, inspect.Parameter.KEYWORD_ONLY, annotation=Context)
    variadic = [p for p in params if p.kind is inspect.Parameter.VAR_KEYWORD]
    fixed = [p for p in params if p.kind is not inspect.Parameter.VAR_KEYWORD]

    async def tool(**arguments: Any) -> Any:
        ctx = arguments.pop(CONTEXT_PARAM, None)
        return await call(ctx, arguments)

    tool.__name__ = tool.__qualname__ = name
    signature = inspect.Signature([*fixed, context, *variadic], return_annotation=returns)
    tool.__signature__ = signature  # type: ignore[attr-defined]
    tool.__annotations__ = {p.name: p.annotation for p in (*fixed, context, *variadic)
                            if p.annotation is not inspect.Parameter.empty}
    if returns is not inspect.Signature.empty:
        tool.__annotations__["return"] = returns
    return tool


def _builtin_function(tool: BuiltinTool, kernel: KernelAPI, caller_of: CallerOf, explain: Explain) -> Any:
    signature = inspect.signature(tool.run, eval_str=True)
    params = []
    for param in list(signature.parameters.values())[1:]:  # the first one is the ToolEnv
        help_text = tool.params.get(param.name)
        annotation = param.annotation
        if help_text:
            annotation = Annotated[annotation, Field(description=help_text)]
        params.append(param.replace(annotation=annotation))

    async def call(ctx: Context | None, arguments: dict[str, Any]) -> CallToolResult:
        env = ToolEnv(kernel=kernel, caller=caller_of(ctx), explain=explain,
                      call_id=context_header(ctx, CALL_HEADER))
        return tool_result(await tool.run(env, **arguments))

    return _tool_function(tool.name, params, dict[str, Any], call)


def _owner(spec: Any) -> str:
    module = getattr(getattr(spec, "factory", None), "__module__", None)
    return f"plugin module {module!r}" if module else "a plugin"


def _add_plugin_tool(
    server: MCPServer,
    name: str,
    spec: McpToolSpec,
    kernel: KernelAPI,
    caller_of: CallerOf,
    explain: Explain,
    template_caller: str | None,
) -> None:
    if name in BUILTIN_NAMES:
        log.warning("MCP tool %r of %s is refused: the name belongs to the built-in tool of cao-mcp", name,
                    _owner(spec))
        return
    try:
        template = spec.factory(kernel, template_caller)
        if not callable(template):
            raise TypeError(f"the factory returned {type(template).__name__}, not a function")
        signature = inspect.signature(template, eval_str=True)
    except Exception as exc:  # noqa: BLE001 - one broken plugin tool must not take the server down
        log.warning("MCP tool %r of %s is refused: %s: %s", name, _owner(spec), type(exc).__name__, exc)
        return

    async def call(ctx: Context | None, arguments: dict[str, Any]) -> Any:
        caller = caller_of(ctx)
        function = template if caller.id == template_caller else spec.factory(kernel, caller.id)
        try:
            result = function(**arguments)
            if inspect.isawaitable(result):
                result = await result
        except ToolError:
            raise
        except Exception as exc:
            # The hookspec promises the agent the exception's message, which the SDK would withhold.
            raise ToolError(explain(exc) or str(exc) or type(exc).__name__) from exc
        return result

    function = _tool_function(name, list(signature.parameters.values()), signature.return_annotation, call)
    try:
        server.add_tool(function, name=name, description=spec.description)
    except Exception as exc:  # noqa: BLE001
        log.warning("MCP tool %r of %s is refused: its signature cannot be an MCP tool: %s", name,
                    _owner(spec), exc)


__all__ = ["CONTEXT_PARAM", "SERVER_NAME", "build_server", "tool_result"]
