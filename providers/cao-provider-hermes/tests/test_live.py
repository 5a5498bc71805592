"""The real Hermes Agent, run by the kernel in real tmux, against a scripted Chat Completions server."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cao_hookspecs import AgentProfile, CreateTerminalRequest, TerminalStatus
from cao_testkit.live_terminal import failed_start, run_turn, start_idle
from cao_testkit.models import call_tool, fail, reply, think

pytestmark = [pytest.mark.live_cli, pytest.mark.tmux, pytest.mark.slow, pytest.mark.timeout(90)]


def _profile(kernel, name="developer", **fields):
    fields.setdefault("system_prompt", "You are a careful developer.")
    kernel.add_profile(AgentProfile(name=name, provider="hermes", **fields))
    return kernel


async def test_turns_end_with_their_exact_answers_from_the_hooks(make_kernel, workdir, live_sandbox,
                                                                   model_server):
    # Markdown Hermes renders on screen (emphasis, code marks, blank rows): the hook carries it as written.
    answer = "All done: the build **passes**.\n\n- 3 files changed\n- `make test` is green"
    second = "I listed the folder."
    model_server.script.add(think(1.0, answer), call_tool("terminal", {"command": "ls"}), reply(second))
    async with _profile(make_kernel()) as kernel:
        term = await start_idle(kernel, workdir, within=30)
        report = await run_turn(kernel, term.id, "Run the build and report.")
        assert report.evidence.startswith("native: post_llm_call")
        assert await kernel.get_output(term.id, "last") == answer

        # The request carried what the user typed, and the profile's prompt as Hermes's persona.
        [turn] = model_server.turns()
        assert turn.conversation.last_user_text == "Run the build and report."
        assert turn.conversation.system.startswith("You are a careful developer.")
        assert "Hermes Agent" in turn.conversation.system

        # The next turn (a tool call, then an answer) is not mistaken for the previous one's answer.
        await kernel.send_input(term.id, "Look around.")
        await kernel.wait_for_status(term.id, {TerminalStatus.COMPLETED}, timeout=20)
        assert await kernel.get_output(term.id, "last") == second
        model_server.script.assert_done()
        ran = model_server.turns()[2].conversation.last_tool_result
        assert ran is not None and not ran.is_error

        # The user's own Hermes home was never written: the CLI ran with a private one.
        home = live_sandbox.home / ".hermes"
        assert sorted(p.name for p in home.iterdir()) == ["config.yaml"]
        assert any(Path(os.environ["CAO_HOME_DIR"]).rglob("hermes-home/sessions"))

        await kernel.exit_terminal(term.id)
        await kernel.wait_for_status(term.id, {TerminalStatus.ERROR}, timeout=15)


async def test_a_restricted_profile_offers_only_its_toolsets_and_a_refused_key_is_an_error(
        make_kernel, workdir, live_sandbox, model_server):
    model_server.script.add(fail(401, "Invalid API key", kind="invalid_api_key"))
    async with _profile(make_kernel(), name="reader", allowed_tools=("fs_*",)) as kernel:
        term = await kernel.create_session(CreateTerminalRequest(
            agent_profile="reader", working_directory=workdir))
        await kernel.send_input(term.id, "Hello?")
        report = await kernel.wait_for_status(term.id, {TerminalStatus.ERROR}, timeout=20)
        assert "HTTP 401" in report.evidence
        with pytest.raises(Exception, match="no answer"):
            await kernel.get_output(term.id, "last")
    # Hermes itself enforced the allowed tools: the model was offered its file toolset alone.
    [turn] = model_server.turns()
    assert set(turn.conversation.tools) == {"read_file", "write_file", "patch", "search_files"}


async def test_a_refused_start_is_an_error_within_two_seconds_of_its_screen(make_kernel, workdir,
                                                                              live_sandbox, tmux_socket):
    # A model option with no value (the profile's model looks like a flag): Hermes refuses at start.
    async with _profile(make_kernel(), name="broken", model="--bad") as kernel:
        failed = await failed_start(kernel, workdir, "broken", tmux_socket=tmux_socket,
                                    sign="expected one argument")
    message = failed.message
    if failed.seen_at is not None:
        assert failed.raised_at - failed.seen_at < 2.0
    assert "expected one argument" in message and "--- last screen ---" in message


def test_the_cli_is_installed_with_its_mcp_extra(hermes_cli):
    """Hermes ignores ``mcp_servers`` without a word when the ``mcp`` package is missing."""
    assert list(hermes_cli.prefix.glob("lib/python3*/site-packages/mcp/__init__.py"))
    assert hermes_cli.prefix.name.endswith("-mcp")
