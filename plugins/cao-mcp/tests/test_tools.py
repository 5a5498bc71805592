"""The parts of cao-mcp that need no running server: reading the caller's identity, the plugin entry
point's weight, and how plugin tools join the built-in ones (the SDK's in-memory client on a real,
unstarted kernel)."""

from __future__ import annotations

import json
import logging
import re
import subprocess
import sys
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from cao_hookspecs import McpToolSpec
from cao_mcp.http import header_value
from cao_mcp.tools import ID_HEADER, ID_VARIABLE, Caller

HEX_ID = re.compile(r"[0-9a-f]{8}")


@given(st.one_of(st.none(), st.text(), st.from_regex(HEX_ID, fullmatch=True)),
       st.sampled_from([ID_VARIABLE, ID_HEADER]))
@example("deadbeef\n", ID_VARIABLE)  # a regex anchored with $ would let the newline through
@example("   ", ID_HEADER)
def test_caller_parse_accepts_exactly_terminal_ids(value: str | None, source: str) -> None:
    caller = Caller.parse(value, source=source)
    if value is not None and HEX_ID.fullmatch(value):
        assert caller == Caller(value, None, source)
    else:
        assert caller.id is None
        assert caller.problem is not None and source in caller.problem
        assert caller.malformed == bool(value and value.strip())


@given(st.from_regex(HEX_ID, fullmatch=True),
       st.lists(st.booleans(), min_size=len(ID_HEADER), max_size=len(ID_HEADER)))
def test_header_lookup_ignores_case(value: str, upper: list[bool]) -> None:
    name = "".join(c.upper() if up else c.lower() for c, up in zip(ID_HEADER, upper, strict=True))
    assert header_value({name: value, "other": "x"}, ID_HEADER) == value
    assert header_value({"other": "x"}, ID_HEADER) is None
    assert header_value(None, ID_HEADER) is None


def test_entry_point_and_stdio_start_up_stay_light() -> None:
    """Importing the entry point loads no SDK; building the stdio server loads no HTTP library."""
    code = (
        "import sys\n"
        "import cao_mcp.plugin\n"
        "heavy = ('mcp', 'mcp_types', 'httpx', 'starlette', 'anyio', 'pydantic')\n"
        "loaded = [m for m, mod in sys.modules.items() if mod is not None]\n"
        "print(sorted(m for m in loaded if m.split('.')[0] in heavy))\n"
        "from cao_mcp.stdio import build_stdio_server\n"
        "build_stdio_server({'CAO_TERMINAL_ID': '0badc0de'})\n"
        "loaded = [m for m, mod in sys.modules.items() if mod is not None]\n"
        "print(sorted(m for m in loaded if m.split('.')[0] in ('httpx', 'httpcore')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          check=True)
    assert done.stdout.splitlines() == ["[]", "[]"], done.stdout + done.stderr


def _plugin_tools() -> dict[str, McpToolSpec]:
    def echo_factory(kernel: Any, caller_id: str | None) -> Any:
        def echo(text: str, times: int = 1) -> dict:  # a plain function is accepted too
            return {"caller": caller_id, "text": text * times}
        return echo

    def broken_factory(kernel: Any, caller_id: str | None) -> Any:
        raise RuntimeError("cannot build")

    def raising_factory(kernel: Any, caller_id: str | None) -> Any:
        async def explode() -> str:
            raise KeyError("the widget is gone")
        return explode

    return {
        "echo": McpToolSpec(name="echo", description="Echo.", factory=echo_factory),
        "assign": McpToolSpec(name="assign", description="Impostor.", factory=echo_factory),
        "broken": McpToolSpec(name="broken", description="Broken.", factory=broken_factory),
        "explode": McpToolSpec(name="explode", description="Raises.", factory=raising_factory),
    }


async def test_plugin_tools_join_the_built_in_ones(kernel: Any, caplog: Any) -> None:
    from mcp import Client

    from cao_mcp.server import build_server

    caller = Caller.parse("0badc0de")
    with caplog.at_level(logging.WARNING, logger="cao_mcp"):
        server = build_server(kernel, lambda ctx: caller, plugin_tools=_plugin_tools(),
                              template_caller=caller.id)
    warnings = [r.getMessage() for r in caplog.records if r.name == "cao_mcp"]
    assert any("'assign'" in w and "belongs to the built-in tool" in w for w in warnings), warnings
    assert any("'broken'" in w and "cannot build" in w for w in warnings), warnings

    async with Client(server) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(listed) == {"handoff", "assign", "send_message", "delete_terminal", "answer_user_prompt",
                               "get_handoff_result", "echo", "explode"}
        assert listed["assign"].description.startswith("Start a worker agent")
        assert listed["echo"].input_schema["required"] == ["text"]
        assert "cao_ctx" not in json.dumps(listed["echo"].input_schema)

        echoed = await client.call_tool("echo", {"text": "ab", "times": 2})
        assert not echoed.is_error
        assert json.loads(echoed.content[0].text) == {"caller": "0badc0de", "text": "abab"}
        exploded = await client.call_tool("explode", {})
        assert exploded.is_error and "the widget is gone" in exploded.content[0].text


async def test_kernel_errors_become_tool_errors(kernel: Any) -> None:
    """A real kernel with no terminal backend installed: the agent reads the kernel's own explanation."""
    from mcp import Client

    from cao_mcp.server import build_server

    server = build_server(kernel, lambda ctx: Caller.parse("0badc0de"))
    async with Client(server) as client:
        result = await client.call_tool("handoff", {"agent_profile": "developer", "message": "x"})
        assert result.is_error
        data = json.loads(result.content[0].text)
        assert data["success"] is False and "no terminal backend 'tmux' is installed" in data["message"]
        assert result.structured_content == data
        result = await client.call_tool("handoff",
                                        {"agent_profile": "developer", "message": "x", "timeout": 3601})
        assert "timeout must be between 1 and 3600 seconds, got 3601" in result.content[0].text
        result = await client.call_tool("send_message", {"receiver_id": "", "message": "x"})
        assert result.is_error  # an empty receiver means "my caller"; this kernel cannot start at all
        result = await client.call_tool("handoff", {"agent_profile": "developer"})
        assert result.is_error and "message" in result.content[0].text
    await kernel.aclose()
