"""A mock_cli supervisor (a scripted behaviour calling cao's MCP tools) delegating to real Aider workers
through a real cao server: Aider cannot be the supervisor (it has no MCP client, so it can call no tool),
but it is a worker both ways. A handoff's answer comes back in the tool's output; an assigned worker's
answer is relayed by cao into the supervisor's inbox as the worker's message."""

from __future__ import annotations

from pathlib import Path

import pytest

from cao_hookspecs import AgentProfile, CreateTerminalRequest
from cao_testkit.waiting import eventually

from .conftest import MODEL

pytestmark = [pytest.mark.live_cli, pytest.mark.tmux, pytest.mark.slow, pytest.mark.timeout(150)]

CAO_MCP = {"cao-mcp-server": {"type": "stdio", "command": "cao-mcp-server", "args": []}}
# The supervisor's behaviour: mock_cli finds ``module:function`` in the agent's working directory.
SUPERVISOR = '''
async def supervise(turn):
    if "handed" not in turn.memory:
        handed = await turn.call("handoff", agent_profile="coder", message="Count the files.")
        assigned = await turn.call("assign", agent_profile="coder", message="Count the tests.")
        if not (handed.get("success") and assigned.get("success")):
            raise RuntimeError(f"delegation failed: {handed.get('message')} / {assigned.get('message')}")
        turn.memory["handed"] = handed["output"]
        return f"Handed off: {handed['output']} Assigned to {assigned['terminal_id']}."
    [message] = turn.messages
    return f"From {message.sender}: {message.text} (handed off: {turn.memory['handed']})"
'''


def _write_profiles(store: Path) -> None:
    from cao_kernel.profiles.parse import serialize_profile

    boss = AgentProfile(name="boss", provider="mock_cli", mcp_servers=CAO_MCP, system_prompt="You delegate.",
                        extra={"mockBehaviour": "aider_supervisor:supervise"})
    coder = AgentProfile(name="coder", provider="aider", model=MODEL, mcp_servers=CAO_MCP,
                         system_prompt="You are a careful developer.")
    for profile in (boss, coder):
        (store / f"{profile.name}.md").write_text(serialize_profile(profile), encoding="utf-8")


async def test_a_mock_supervisor_hands_off_and_assigns_to_aider(cao_server, model_server, workdir):
    Path(workdir, "aider_supervisor.py").write_text(SUPERVISOR, encoding="utf-8")
    _write_profiles(cao_server.home / "agent-store")
    model_server.script.add("Three files.", "Seven tests.")
    async with cao_server.client() as api:
        boss = await api.create_session(CreateTerminalRequest(agent_profile="boss",
                                                              working_directory=workdir))
        await api.send_input(boss.id, "Delegate.")

        async def relayed():
            return [m for m in await api.list_messages(boss.id) if m.sender_id != boss.id and
                    m.body.startswith("Seven tests.")]

        [message] = await eventually(relayed, 90, "the assigned Aider's answer in the supervisor's inbox")
        worker = message.sender_id
        assert message.body == (f"Seven tests.\n\n[Message from terminal {worker}. Use send_message MCP tool "
                                f"for any follow-up work.]")

        async def answered():
            text = await api.get_output(boss.id, "full")
            return text if f"From {worker}: Seven tests." in text else None

        screen = await eventually(answered, 30, "the supervisor's answer after the relayed message")
        assert "Handed off: Three files." in screen and "(handed off: Three files.)" in screen
        # Aider got the tasks as typed: no callback line it could not follow.
        asked = [turn.conversation.last_user_text for turn in model_server.turns()]
        assert [text.split("\n\n")[0] for text in asked] == ["Count the files.", "Count the tests."]
        assert not any("send_message" in text for text in asked)
