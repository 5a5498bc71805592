"""The real Grok Build, run by the kernel in real tmux, against a scripted Chat Completions server."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cao_hookspecs import CreateTerminalRequest, TerminalStatus
from cao_kernel.errors import AgentFailed
from cao_testkit.models import fail, reply, think

pytestmark = [pytest.mark.live_cli, pytest.mark.tmux, pytest.mark.slow, pytest.mark.timeout(90)]


async def test_turns_end_with_their_exact_answers_and_the_profile_reaches_the_model(live, workdir):
    # The second answer is Markdown: Grok draws "- " as "• " and no blank line, but its Stop hook carries
    # the text as the model wrote it, and that is the answer cao returns.
    first, second = "The answer is 42.", "Both files are in place:\n\n- notes.txt\n- todo.txt"
    live.script.add(think(1.0, first), reply(second))
    async with live.kernel() as kernel:
        term = await live.start_session(kernel, workdir, system_prompt="You are a careful developer.")
        assert term.status == TerminalStatus.IDLE
        await kernel.send_input(term.id, "What is the answer?")
        report = await kernel.wait_for_status(term.id, {TerminalStatus.COMPLETED}, timeout=20)
        assert report.evidence == "native: Stop"  # Grok's hook, ahead of the screen
        assert await kernel.get_output(term.id, "last") == first

        # The profile's body is appended to Grok's own prompt; the user's text arrives as typed.
        (turn,) = live.server.turns()
        assert turn.conversation.last_user_text == "What is the answer?"
        assert "You are a careful developer." in turn.conversation.system
        assert "You are Grok" in turn.conversation.system

        # The next turn's answer is not mistaken for the previous one.
        await kernel.send_input(term.id, "Are the files there?")
        await kernel.wait_for_status(term.id, {TerminalStatus.COMPLETED}, timeout=20)
        assert await kernel.get_output(term.id, "last") == second
        assert "• notes.txt" in await kernel.get_output(term.id, "full")
        live.script.assert_done()

        # Grok ran with a private home: the user's own ~/.grok was never made.
        assert not (live.sandbox.home / ".grok").exists()
        assert any(Path(os.environ["CAO_HOME_DIR"]).rglob("grok-home/sessions"))

        await kernel.exit_terminal(term.id)
        await kernel.wait_for_status(term.id, {TerminalStatus.ERROR}, timeout=10)


async def test_a_model_error_is_reported_with_its_message(live, workdir):
    # A 400 is not retried: Grok shows the API's words at once.
    live.script.add(fail(400, "the model refused this request"))
    async with live.kernel() as kernel:
        term = await live.start_session(kernel, workdir)
        await kernel.send_input(term.id, "Please fail.")
        report = await kernel.wait_for_status(term.id, {TerminalStatus.ERROR}, timeout=20)
        assert "Bad request (400)" in report.evidence
        assert "the model refused this request" in report.evidence


async def test_a_cli_that_refuses_to_start_fails_at_once_with_its_screen(live, workdir):
    # A model value Grok's option parser takes for an option of its own: it prints a usage error, exits.
    async with live.kernel() as kernel:
        kernel.add_profile(live.profile(model="--bad"))
        with pytest.raises(AgentFailed) as failure:
            await kernel.create_session(CreateTerminalRequest(agent_profile="coder",
                                                              working_directory=workdir))
    message = str(failure.value)
    assert "last screen" in message and "unexpected argument '--bad'" in message
