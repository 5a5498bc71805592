"""The real Grok Build, run by the kernel in real tmux, against a scripted Chat Completions server."""

from __future__ import annotations

import asyncio
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
        # Grok's StopFailure hook ("API error (status 400 ...)") or its screen ("Bad request (400)"),
        # whichever reaches the tracker first on a busy machine: both name the status and the words.
        assert "400" in report.evidence
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


async def _starting_terminal(kernel) -> str:
    """The id of the one terminal the kernel is starting (its creation has not returned yet)."""
    for _ in range(100):
        for session in await kernel.list_sessions():
            for term in await kernel.list_terminals(session.name):
                return term.id
        await asyncio.sleep(0.2)
    raise AssertionError("no terminal was started within 20 s")


async def test_the_folder_trust_question_waits_for_a_person_and_its_answer_lets_grok_start(live, workdir):
    # A working folder with Grok configuration of its own: Grok asks whether to trust it, and cao does
    # not answer by itself (trusting runs the folder's hooks and MCP servers); a person answers through cao.
    folder = Path(workdir) / ".grok"
    folder.mkdir()
    (folder / "config.toml").write_text('[mcp_servers.project-tools]\ncommand = "true"\nenabled = false\n',
                                        encoding="utf-8")
    live.script.add(reply("Trusted and ready."))
    async with live.kernel() as kernel:
        kernel.add_profile(live.profile())
        creating = asyncio.ensure_future(kernel.create_session(CreateTerminalRequest(
            agent_profile="coder", working_directory=workdir)))
        try:
            term_id = await _starting_terminal(kernel)
            report = await kernel.wait_for_status(term_id, {TerminalStatus.WAITING_USER_ANSWER}, timeout=20)
            assert report.prompt is not None and report.prompt.question.startswith("Do you trust")
            event = await kernel.answer_prompt(term_id, option=1)
            assert event.prompt.prompt.option(1).label == "Yes, proceed"
            term = await creating
        finally:
            creating.cancel()
        assert term.status == TerminalStatus.IDLE
        await kernel.send_input(term.id, "Ready?")
        await kernel.wait_for_status(term.id, {TerminalStatus.COMPLETED}, timeout=20)
        assert await kernel.get_output(term.id, "last") == "Trusted and ready."
