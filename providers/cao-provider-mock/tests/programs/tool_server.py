"""A small MCP server (stdio) for tests of mock_cli's behaviours; not part of the package.

Each start appends this process's pid to the file named by ``TOOL_SERVER_STARTS``, so a test can tell
when the server was started and how many times.
"""

from __future__ import annotations

import asyncio
import os

from mcp.server import MCPServer

app = MCPServer("tool-server")


@app.tool()
async def add(a: int, b: int) -> dict:
    """Add two numbers; also say which process and terminal answered."""
    return {"sum": a + b, "pid": os.getpid(), "terminal": os.environ.get("CAO_TERMINAL_ID")}


@app.tool()
async def shout(text: str) -> str:
    """Return the text in capitals (a plain-text result)."""
    return text.upper()


@app.tool()
async def refuse(reason: str) -> str:
    """Always fail with ``reason``."""
    raise ValueError(reason)


@app.tool()
async def send_message(receiver_id: str, message: str) -> dict:
    """Pretend to queue a message (the shape of cao's result)."""
    return {"success": True, "message_id": 1, "receiver_id": receiver_id, "body": message}


@app.tool()
async def wait(seconds: float) -> str:
    """Sleep, then say so."""
    await asyncio.sleep(seconds)
    return f"waited {seconds}"


if __name__ == "__main__":
    starts = os.environ.get("TOOL_SERVER_STARTS")
    if starts:
        with open(starts, "a", encoding="utf-8") as handle:
            handle.write(f"{os.getpid()}\n")
    app.run("stdio")
