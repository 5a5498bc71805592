"""A supervisor agent runs a workflow through cao's MCP tools (a real MCP client in the mock agent, the
server's /mcp) and waits for it; the run's changes reach the event stream as workflow activity."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from cao_hookspecs import CreateTerminalRequest, TerminalStatus

pytestmark = [pytest.mark.tmux, pytest.mark.slow]

CONDUCTOR = """---
name: conductor
description: starts a workflow and waits for it
mockBehaviour: wfconduct:conduct
mcpServers:
  cao-mcp-server:
    type: stdio
    command: cao-mcp-server
---
You run workflows.
"""

BEHAVIOUR = '''
async def conduct(turn):
    started = await turn.call("workflow_start", path="two.py", inputs={"topic": "tides"})
    status = await turn.call("workflow_status", run_id=started["run_id"])
    done = await turn.call("workflow_wait", run_id=started["run_id"], timeout=60)
    result = await turn.call("workflow_result", run_id=started["run_id"])
    return f"{status['ok']} {done['state']}: {result['result']}"
'''

TWO_STEPS = '''
from cao_workflows import run_step

def workflow(inputs):
    first = run_step("analyst", f"look at {inputs['topic']}")
    return run_step("writer", "write about " + first)
'''


def test_a_supervisor_starts_a_workflow_and_waits_for_it_through_its_tools(cluster):
    (cluster.home / "agent-store" / "conductor.md").write_text(CONDUCTOR, encoding="utf-8")
    (cluster.behaviours / "wfconduct.py").write_text(BEHAVIOUR, encoding="utf-8")
    cluster.write("two.py", TWO_STEPS)
    server = cluster.start()

    async def conduct() -> str:
        api = server.client()
        try:
            sup = await api.create_session(CreateTerminalRequest(
                agent_profile="conductor", session_name="conduct", working_directory=str(cluster.workdir)))
            await api.send_input(sup.id, "run the tides workflow")
            await api.wait_for_status(sup.id, [TerminalStatus.COMPLETED], 90)
            return await api.get_output(sup.id, "last")
        finally:
            await api.aclose()

    answer = asyncio.run(conduct())
    assert answer == "True completed: answer to write about answer to look at tides", answer
    assert sorted(cluster.tasks()) == ["look at tides", "write about answer to look at tides"]
    history = httpx.get(server.url + "/events/history", headers=server.headers, timeout=10).json()
    kinds = {(e["kind"], e["data"].get("state")) for e in history if e["event"] == "activity"}
    assert ("workflow.run", "completed") in kinds, kinds
    assert any(kind == "workflow.step" for kind, _ in kinds), kinds
