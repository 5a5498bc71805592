"""The live orchestration kit's own parts that need no agent CLI: the role script and the readers of what
an agent sent (``cao_testkit.live``)."""

from __future__ import annotations

import json
import urllib.request

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cao_kernel.orchestration import assign_suffix
from cao_testkit.live import RoleScript, answers_by, callback_target, offered_tools, tool_payload
from cao_testkit.models import (
    Conversation,
    Message,
    ScriptError,
    ToolResult,
    call_tool,
    reply,
    respond,
)


def _asking(system: str, text: str = "go") -> Conversation:
    return Conversation(system=system, messages=[Message(role="user", text=text)], tools=["t"])


def test_each_role_gets_its_own_turns_whatever_order_the_agents_ask_in():
    roles = RoleScript(boss="# Boss", worker="# Worker")
    roles.add("boss", reply("boss 1"), reply("boss 2"))
    roles.add("worker", respond(lambda conv: reply("worker saw " + conv.last_user_text)))
    assert roles.next_turn(_asking("You are\n# Boss\n")).text == "boss 1"
    assert roles.next_turn(_asking("# Worker", "the task")).text == "worker saw the task"
    assert roles.next_turn(_asking("# Boss")).text == "boss 2"
    roles.assert_done()
    assert roles.served == 3


def test_a_request_of_no_role_or_of_several_is_a_problem():
    roles = RoleScript(boss="# Boss", worker="# Worker")
    roles.add("boss", reply("unused"))
    assert "no role" in roles.next_turn(_asking("someone else")).text
    assert "no role" in roles.next_turn(_asking("# Boss and # Worker")).text
    assert len(roles.problems) == 2
    with pytest.raises(ScriptError, match="matched no single role"):
        roles.assert_done()


def test_turns_left_and_turns_run_out_fail_assert_done():
    roles = RoleScript(boss="# Boss")
    roles.add("boss", reply("one"), reply("two"))
    roles.next_turn(_asking("# Boss"))
    with pytest.raises(ScriptError, match="boss: 1"):
        roles.assert_done()
    roles.next_turn(_asking("# Boss"))
    roles.next_turn(_asking("# Boss"))
    with pytest.raises(ScriptError, match="boss: request 3 came after the script ran out"):
        roles.assert_done()


def test_a_behaviour_answers_every_request_of_its_role():
    roles = answers_by({"echo": "# Echo"}, {"echo": lambda conv: conv.last_user_text.upper()})
    for word in ("a", "b", "c"):
        assert roles.next_turn(_asking("# Echo", word)).text == word.upper()
    roles.assert_done()
    with pytest.raises(ScriptError, match="answers with a behaviour"):
        roles.add("echo", reply("x"))


def test_roles_are_checked_where_they_are_written():
    with pytest.raises(ScriptError, match="at least one role"):
        RoleScript()
    with pytest.raises(ScriptError, match="needs a marker"):
        RoleScript(boss="  ")
    with pytest.raises(ScriptError, match="no role 'bos'"):
        RoleScript(boss="# Boss").add("bos", reply("x"))


@given(st.text(max_size=200), st.sampled_from(["", "# Boss", "# Worker", "# Boss # Worker"]))
def test_role_of_names_a_role_exactly_when_one_marker_is_in_the_system_prompt(noise, inserted):
    roles = RoleScript(boss="# Boss", worker="# Worker")
    system = noise + inserted
    held = [name for name, marker in (("boss", "# Boss"), ("worker", "# Worker")) if marker in system]
    assert roles.role_of(Conversation(system=system)) == (held[0] if len(held) == 1 else None)


def test_the_role_script_serves_a_real_scripted_server():
    from cao_testkit.models.anthropic import FAKE_API_KEY, AnthropicServer

    roles = RoleScript(boss="# Boss", worker="# Worker")
    roles.add("worker", reply("from the worker"))
    roles.add("boss", call_tool("mcp__cao__assign", {"agent_profile": "worker", "message": "hi"}))
    with AnthropicServer(roles) as server:
        answers = []
        for system in ("# Boss", "# Worker"):
            body = {"model": "m", "system": system, "max_tokens": 10, "tools": [{"name": "t"}],
                    "messages": [{"role": "user", "content": "go"}]}
            request = urllib.request.Request(server.url + "/v1/messages", data=json.dumps(body).encode(),
                                             headers={"content-type": "application/json",
                                                      "x-api-key": FAKE_API_KEY})
            with urllib.request.urlopen(request, timeout=10) as response:
                answers.append(json.loads(response.read()))
        assert answers[0]["content"][0]["name"] == "mcp__cao__assign"
        assert answers[1]["content"][0]["text"] == "from the worker"
        assert [r.conversation.system for r in roles.turns(server, "worker")] == ["# Worker"]
        server.assert_healthy()
    roles.assert_done()


def test_tool_payload_reads_a_cao_answer_wrapped_by_the_cli():
    wrapped = 'Wall time: 0.2 seconds\nOutput:\n{"success": true, "terminal_id": "abcd1234"}'
    conversation = Conversation(messages=[Message(role="user", tool_results=[ToolResult(call_id="c",
                                                                                          output=wrapped)])])
    assert tool_payload(conversation) == {"success": True, "terminal_id": "abcd1234"}
    refused = ToolResult(call_id="c", output="No such tool available")
    broken = Conversation(messages=[Message(role="user", tool_results=[refused])])
    with pytest.raises(AssertionError, match="not a cao tool's JSON answer"):
        tool_payload(broken)
    with pytest.raises(AssertionError, match="carries no tool result"):
        tool_payload(_asking("x"))


def test_tools_announced_by_name_count_as_offered():
    announced = Message(role="system", text="Deferred tools:\nmcp__cao__send_message\nWebFetch\n")
    conversation = Conversation(tools=["Bash"], messages=[Message(role="user", text="go"), announced])
    assert {"Bash", "mcp__cao__send_message", "WebFetch"} <= offered_tools(conversation)


def test_callback_target_is_the_supervisor_of_the_callback_line():
    task = f"Do it.\n\n{assign_suffix('0a1b2c3d')}"
    assert callback_target(_asking("x", task)) == "0a1b2c3d"
    with pytest.raises(AssertionError, match="no callback line"):
        callback_target(_asking("x", "Do it."))
