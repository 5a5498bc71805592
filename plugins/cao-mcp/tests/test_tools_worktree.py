"""handoff and assign take upstream's ``use_worktree`` (and cao's ``worktree_changes``) as MCP tool
parameters, and answer with the worker's worktree: the SDK's in-memory client on a real kernel running
mock agents on a private tmux server, over a git repository made here."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from cao_hookspecs import CreateTerminalRequest
from cao_mcp.tools import Caller


def _repo(folder: Path) -> Path:
    folder.mkdir()
    for args in (["init", "-q", "-b", "main"], ["-c", "user.name=Dev", "-c", "user.email=dev@example.com",
                                                "commit", "-q", "--allow-empty", "-m", "one"]):
        subprocess.run(["git", *args], cwd=folder, check=True, capture_output=True)
    return folder


async def test_the_delegation_tools_take_use_worktree(make_kernel: Any, tmp_path: Path, workdir: str) -> None:
    from mcp import Client

    from cao_mcp.server import build_server

    repo = _repo(tmp_path / "repo")
    async with make_kernel(agents=("developer",)) as kernel:
        supervisor = await kernel.create_session(CreateTerminalRequest(
            agent_profile="developer", session_name="wt", working_directory=str(repo)))
        outsider = await kernel.create_session(CreateTerminalRequest(
            agent_profile="developer", session_name="plain", working_directory=workdir))
        callers = {"repo": Caller.parse(supervisor.id), "plain": Caller.parse(outsider.id)}
        where = {"caller": "repo"}
        server = build_server(kernel, lambda ctx: callers[where["caller"]])
        async with Client(server) as client:
            listed = {tool.name: tool.input_schema for tool in (await client.list_tools()).tools}
            for name in ("handoff", "assign"):
                params = listed[name]["properties"]
                assert params["use_worktree"]["type"] == "boolean"
                assert params["use_worktree"]["default"] is False
                assert "worktree_changes" in params and "use_worktree" not in listed[name]["required"]
            assigned = await client.call_tool("assign", {"agent_profile": "developer", "message": "hi",
                                                         "use_worktree": True})
            data = json.loads(assigned.content[0].text)
            assert not assigned.is_error and data["worktree_branch"] == f"cao/developer-{data['terminal_id']}"
            assert data["worktree_path"] == str(repo / ".cao" / "worktrees" / data["terminal_id"])
            handed = await client.call_tool("handoff", {"agent_profile": "developer", "message": "hi",
                                                        "use_worktree": True, "worktree_changes": True})
            answer = json.loads(handed.content[0].text)
            assert answer["success"] and "worktree_branch" not in answer, answer  # clean: removed
            where["caller"] = "plain"
            refused = await client.call_tool("handoff", {"agent_profile": "developer", "message": "hi",
                                                         "use_worktree": True})
            assert refused.is_error and "is not inside a git repository" in refused.content[0].text
        await kernel.delete_session(supervisor.session_name)
        await kernel.delete_session(outsider.session_name)
    assert not Path(data["worktree_path"]).exists()
