"""The cao-mcp plugin's hooks, on a real kernel in a fresh interpreter (the test process has long since
loaded the MCP SDK)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

STARTUP = """
import asyncio, json, sys

from cao_testkit.kernels import build_kernel

import cao_mcp.plugin


async def main():
    kernel = build_kernel(sys.argv[1], sys.argv[2], "tmux", "mock_cli", "inbox_sqlite", "mcp")
    before = {"warming": cao_mcp.plugin._warming is not None, "loaded": "mcp.server.mcpserver" in sys.modules}
    await kernel.start()
    try:
        warming = cao_mcp.plugin._warming is not None
        if warming:
            cao_mcp.plugin._warming.join(60)
        terminals = [t for s in await kernel.list_sessions() for t in await kernel.list_terminals(s.name)]
    finally:
        await kernel.aclose()
    print(json.dumps({"before": before, "warming": warming, "loaded": "mcp.server.mcpserver" in sys.modules,
                      "terminals": len(terminals)}))


asyncio.run(main())
"""


@pytest.mark.tmux
def test_hook_startup_warms_up_the_mcp_sdk(tmux_socket: str, tmp_path: Path) -> None:
    """A kernel with cao-mcp starts loading the MCP SDK for ``/mcp`` when it starts, before any terminal
    exists, so a fresh server's first agent does not wait for the import."""
    done = subprocess.run([sys.executable, "-c", STARTUP, str(tmp_path / "home"), tmux_socket],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result == {"before": {"warming": False, "loaded": False}, "warming": True, "loaded": True,
                      "terminals": 0}, result
