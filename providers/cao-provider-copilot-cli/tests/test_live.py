"""The real Copilot CLI, run by the kernel in real tmux, against a scripted Anthropic server."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from cao_hookspecs import AgentProfile, CreateTerminalRequest, TerminalStatus
from cao_testkit.live_terminal import failed_start, run_turn, start_idle
from cao_testkit.models import call_tool, reply, respond, think
from cao_testkit.tmux import PaneWatch

pytestmark = [pytest.mark.live_cli, pytest.mark.tmux, pytest.mark.slow, pytest.mark.timeout(90)]


def _profile(kernel, name="developer", **fields):
    kernel.add_profile(AgentProfile(
        name=name, provider="copilot_cli", description='Reviews: "all" — carefully',
        system_prompt="You are a careful developer. Answer in one line.", **fields))
    return kernel


async def test_launch_reaches_idle_and_a_turn_completes_with_its_answer(make_kernel, workdir, live_sandbox,
                                                                         model_server):
    answer = "All done: the build passes and 3 files changed."
    model_server.script.add(think(1.0, answer), reply("Second answer, on its own."))
    async with _profile(make_kernel()) as kernel:
        term = await start_idle(kernel, workdir)
        report = await run_turn(kernel, term.id, "Run the build and report.")
        assert report.evidence
        assert await kernel.get_output(term.id, "last") == answer

        # The request carried what the user typed and the profile's body, as the custom agent's
        # instructions Copilot appends to its own system prompt.
        [turn] = model_server.turns()
        assert turn.conversation.last_user_text.endswith("Run the build and report.")
        assert "You are a careful developer. Answer in one line." in turn.conversation.system
        assert "You are the GitHub Copilot CLI" in turn.conversation.system

        await kernel.send_input(term.id, "And again.")
        await kernel.wait_for_status(term.id, {TerminalStatus.PROCESSING}, timeout=5)
        await kernel.wait_for_status(term.id, {TerminalStatus.COMPLETED}, timeout=20)
        assert await kernel.get_output(term.id, "last") == "Second answer, on its own."
        model_server.script.assert_done()

        # The user's Copilot folder got no agent, MCP or trust entry from cao.
        copilot_home = live_sandbox.home / ".copilot"
        assert not (copilot_home / "agents").exists()
        assert not (copilot_home / "mcp-config.json").exists()
        assert "trustedFolders" not in (copilot_home / "config.json").read_text()

        await kernel.exit_terminal(term.id)
        await kernel.wait_for_status(term.id, {TerminalStatus.ERROR}, timeout=15)


async def test_a_tool_call_then_the_answer(make_kernel, workdir, live_sandbox, model_server):
    model_server.script.add(
        call_tool("bash", {"command": "echo made > made.txt && cat made.txt", "description": "Make a file"}),
        respond(lambda conv: reply("The file says: " + conv.last_tool_result.output.split()[0])),
    )
    async with _profile(make_kernel()) as kernel:
        term = await kernel.create_session(CreateTerminalRequest(
            agent_profile="developer", working_directory=workdir))
        await kernel.send_input(term.id, "Make a file.")
        await kernel.wait_for_status(term.id, {TerminalStatus.PROCESSING}, timeout=5)
        await kernel.wait_for_status(term.id, {TerminalStatus.COMPLETED}, timeout=20)
        assert await kernel.get_output(term.id, "last") == "The file says: made"
        assert (Path(workdir) / "made.txt").read_text() == "made\n"


async def test_a_start_that_cannot_sign_in_is_an_error_within_two_seconds(make_kernel, workdir, signed_out,
                                                                           tmux_socket):
    """No model provider and no GitHub account: Copilot starts, then asks to /login. The kernel reports
    that as an error, with the screen, within 2 s of it being drawn (not after the start-up timeout)."""
    async with _profile(make_kernel()) as kernel:
        failed = await failed_start(kernel, workdir, tmux_socket=tmux_socket, sign="Please use /login")
    message = failed.message
    assert "not signed in" in message, message
    assert "--- last screen ---" in message and "Please use /login to sign in to use Copilot" in message
    # None: the kernel reported and removed the window before the watcher's next look (a loaded machine
    # makes its rounds slow); the report then came within one round, and its last screen shows why.
    if failed.seen_at is not None:
        late = failed.raised_at - failed.seen_at
        assert late < 2.0, f"reported {late:.2f} s after the screen showed it"


async def test_a_cli_that_exits_at_start_up_is_reported_with_its_screen(make_kernel, workdir, live_sandbox,
                                                                         monkeypatch, tmux_socket):
    # Offline mode without a model provider: Copilot prints why and exits.
    monkeypatch.delenv("COPILOT_PROVIDER_BASE_URL")
    async with _profile(make_kernel()) as kernel:
        failed = await failed_start(kernel, workdir, tmux_socket=tmux_socket, sign="Offline mode requires")
    message = failed.message
    assert "Offline mode requires a local model provider" in message
    assert "--- last screen ---" in message
    # Never seen: the kernel reported and removed the window before the watcher's next look (its rounds
    # are slow on a loaded machine), so the report came within one round of the refusal, which the
    # error's last screen shows (asserted above).
    assert failed.seen_at is None or failed.raised_at - failed.seen_at < 2.0


async def test_a_question_answered_with_text_through_its_other_row(make_kernel, workdir, live_sandbox,
                                                                      model_server):
    """The kernel answers an ask_user question with text of its own: the "Other" row's keys open its
    field, the text goes there, and the model gets it as the answer."""
    schema = {"properties": {"db": {"type": "string", "title": "Database", "enum": ["SQLite", "Postgres"]}},
              "required": ["db"]}
    model_server.script.add(
        call_tool("ask_user", {"message": "Which database should I use?", "requestedSchema": schema}),
        respond(lambda conv: reply("Answered: " + ("MySQL" if "MySQL" in conv.last_tool_result.output
                                                    else conv.last_tool_result.output))),
    )
    async with _profile(make_kernel()) as kernel:
        term = await start_idle(kernel, workdir)
        await kernel.send_input(term.id, "Set up storage.")
        report = await kernel.wait_for_status(term.id, {TerminalStatus.WAITING_USER_ANSWER}, timeout=20)
        assert report.prompt is not None
        assert [o.keys for o in report.prompt.options][-1] == ("Down", "Down")
        event = await kernel.answer_prompt(term.id, text="MySQL", by="test")
        assert event.option == 3
        await kernel.wait_for_status(term.id, {TerminalStatus.COMPLETED}, timeout=20)
        assert await kernel.get_output(term.id, "last") == "Answered: MySQL"
        model_server.script.assert_done()


async def test_restricted_agent_trusts_the_folder_and_keeps_its_rules(make_kernel, workdir, live_sandbox,
                                                                       model_server, tmux_socket):
    """A profile allowing file tools and git: the trust dialog is answered by the kernel; git runs without a
    prompt, any other shell command waits for a person."""
    model_server.script.add(
        call_tool("bash", {"command": "git --version", "description": "Git version"}),
        call_tool("bash", {"command": "touch unasked.txt", "description": "Touch a file"}),
    )
    kernel = _profile(make_kernel(), name="careful", allowed_tools=("fs_*", "shell(git:*)"))
    async with kernel:
        await kernel.start()
        with PaneWatch(tmux_socket, "Do you trust the files") as watch:
            term = await kernel.create_session(CreateTerminalRequest(
                agent_profile="careful", working_directory=workdir))
        assert watch.seen_at is not None, "the trust dialog never showed"
        assert term.status == TerminalStatus.IDLE
        assert "Do you trust the files" not in await kernel.get_output(term.id, "full")

        await kernel.send_input(term.id, "Check git, then make a file.")
        report = await kernel.wait_for_status(term.id, {TerminalStatus.WAITING_USER_ANSWER}, timeout=20)
        assert report.evidence == "permission request: Do you want to run this command?"
        [first] = model_server.turns()[1:2]
        assert first.conversation.last_tool_result.output.startswith("git version")
        assert not (Path(workdir) / "unasked.txt").exists()
        # No one answers: the kernel leaves the prompt alone and the turn stays waiting.
        await asyncio.sleep(1.0)
        assert (await kernel.get_status(term.id)).status == TerminalStatus.WAITING_USER_ANSWER
