"""The CLI started by the kernel in real tmux, against a scripted model server (the fixtures are in
conftest.py: ``live``, ``model_server``, ``cao_server``).

TODO (real CLI): these run the stand-in program; once ``cli_bin`` installs the real CLI, mark them
``live_cli`` and keep what they check: start-up dialogs answered, exact answers, questions, errors,
a start-up failure reported at once with the CLI's last screen, and a terminal of a real cao server.
Then add ``tests/test_live_mcp.py``: ``cao_testkit.live_mcp.check_send_message_over_mcp`` proves the
CLI's model can call cao's tools (the stand-in starts no MCP server, so it cannot).
"""

from __future__ import annotations

import pytest

from cao_hookspecs import AgentProfile, CreateTerminalRequest, TerminalStatus
from cao_kernel.errors import AgentFailed
from cao_testkit.models import call_tool, fail, reply
from {{ cookiecutter.__module }}.provider import NAME

pytestmark = [pytest.mark.tmux]


async def test_start_answers_the_trust_dialog_and_a_turn_ends_with_the_exact_answer(live, workdir):
    live.script.add(reply("The answer is 42."))
    async with live.kernel() as kernel:
        term = await live.start_session(kernel, workdir, system_prompt="You answer briefly.")
        assert term.status == TerminalStatus.IDLE
        # Answered by the kernel with the keys of dialogs.py.
        assert "Trust this folder? [y] Yes" in await kernel.get_output(term.id, "full")

        await kernel.send_input(term.id, "What is the answer?")
        await kernel.wait_for_status(term.id, {TerminalStatus.COMPLETED}, timeout=15)
        assert await kernel.get_output(term.id, "last") == "The answer is 42."
        (turn,) = live.server.turns()
        assert turn.conversation.last_user_text == "What is the answer?"
        assert "You answer briefly." in turn.conversation.system
        live.script.assert_done()


async def test_a_tool_question_is_answered_by_option_then_the_turn_completes(live, workdir):
    live.script.add(call_tool("run_command", {"command": "touch notes.txt"}), reply("Created notes.txt."))
    async with live.kernel() as kernel:
        term = await live.start_session(kernel, workdir)
        await kernel.send_input(term.id, "Create a notes file.")
        report = await kernel.wait_for_status(term.id, {TerminalStatus.WAITING_USER_ANSWER}, timeout=15)
        assert "Allow run_command?" in report.evidence
        # The kernel reads the prompt (prompts.py) and presses option 1's keys; it returns once the
        # prompt has left the screen.
        event = await kernel.answer_prompt(term.id, option=1)
        prompt = event.prompt.prompt
        assert (prompt.tool, dict(prompt.arguments)) == ("run_command", {"command": "touch notes.txt"})
        assert prompt.option(1).label == "Yes"
        await kernel.wait_for_status(term.id, {TerminalStatus.COMPLETED}, timeout=15)
        assert await kernel.get_output(term.id, "last") == "Created notes.txt."
        live.script.assert_done()


async def test_a_model_error_is_reported_with_its_message(live, workdir):
    live.script.add(fail(529, "Overloaded", kind="overloaded_error"))
    async with live.kernel() as kernel:
        term = await live.start_session(kernel, workdir)
        await kernel.send_input(term.id, "Please fail.")
        report = await kernel.wait_for_status(term.id, {TerminalStatus.ERROR}, timeout=15)
        assert "529 overloaded_error: Overloaded" in report.evidence


async def test_a_cli_that_refuses_to_start_fails_at_once_with_its_screen(live, workdir):
    # An option the program does not know: it prints a usage error and exits.
    async with live.kernel() as kernel:
        kernel.add_profile(live.profile(model="--bad"))
        with pytest.raises(AgentFailed) as failure:
            await kernel.create_session(CreateTerminalRequest(
                agent_profile="coder", working_directory=workdir))
    message = str(failure.value)
    assert "last screen" in message and "argument --model: expected one argument" in message


@pytest.mark.slow
@pytest.mark.timeout(120)
async def test_a_terminal_of_a_real_cao_server_answers(cao_server, model_server, workdir):
    # What users run: `cao server` loads tmux, this provider, the inbox, its HTTP API and cao's MCP
    # server from their entry points, and starts the CLI from a profile of its agent store.
    from cao_kernel.profiles.parse import serialize_profile

    profile = AgentProfile(name="coder", provider=NAME, system_prompt="You answer briefly.")
    (cao_server.home / "agent-store" / "coder.md").write_text(serialize_profile(profile), encoding="utf-8")
    model_server.script.add(reply("Served through cao server."))
    async with cao_server.client() as api:
        term = await api.create_session(CreateTerminalRequest(agent_profile="coder",
                                                              working_directory=workdir))
        await api.send_input(term.id, "Who serves you?")
        await api.wait_for_status(term.id, [TerminalStatus.COMPLETED], timeout=20)
        assert await api.get_output(term.id, "last") == "Served through cao server."
    (turn,) = model_server.turns()
    assert "You answer briefly." in turn.conversation.system
    model_server.script.assert_done()
