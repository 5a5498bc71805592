"""The real Codex CLI, started by the kernel in real tmux, against a scripted Responses API server."""

from __future__ import annotations

import asyncio
import subprocess
import time
import tomllib

import pytest

from cao_hookspecs import CreateTerminalRequest, TerminalStatus
from cao_kernel.errors import AgentFailed
from cao_testkit.models.script import fail, reply, think

# Generous: the first live test of a machine installs Codex from npm (about 400 MB) during its set-up.
pytestmark = [pytest.mark.live_cli, pytest.mark.tmux, pytest.mark.timeout(600)]

READY = {TerminalStatus.IDLE, TerminalStatus.COMPLETED}


async def test_launch_reaches_idle_and_a_turn_ends_with_the_exact_answer(live_codex, workdir):
    live_codex.script.add(reply("The answer is 42, said the scripted model."))
    async with live_codex.kernel() as kernel:
        kernel.add_profile(live_codex.profile(system_prompt="You are the scripted coder. Answer briefly."))
        started = time.monotonic()
        term = await kernel.create_session(CreateTerminalRequest(
            agent_profile="coder", working_directory=workdir))
        assert term.status == TerminalStatus.IDLE, term
        assert time.monotonic() - started < 20
        report = await kernel.get_status(term.id)
        assert "empty prompt" in report.evidence

        # Several lines, quotes and shell metacharacters: one paste, submitted once, sent verbatim.
        question = "What is the answer?\nSecond line: $HOME `id` 'single' \"double\" \\ caf\u00e9"
        await kernel.send_input(term.id, question)
        report = await kernel.wait_for_status(term.id, {TerminalStatus.COMPLETED}, timeout=20)
        # Codex's notify program (native) or its turn summary on screen.
        assert report.evidence == "native: notify (agent-turn-complete)" or "Worked for" in report.evidence
        assert await kernel.get_output(term.id, "last") == "The answer is 42, said the scripted model."

        (turn,) = live_codex.server.turns()
        assert turn.conversation.last_user_text == question
        assert "You are the scripted coder. Answer briefly." in turn.conversation.system
        assert turn.conversation.model == "scripted"
        live_codex.script.assert_done()

        await kernel.exit_terminal(term.id)
        deadline = time.monotonic() + 10
        while (await kernel.get_status(term.id)).status != TerminalStatus.ERROR:
            assert time.monotonic() < deadline, "codex did not exit on /exit"
            await kernel.wait_for_status(term.id, {TerminalStatus.ERROR}, timeout=10)
        assert "exited" in (await kernel.get_status(term.id)).evidence


async def test_thinking_is_processing_then_completed_and_a_second_turn_is_not_confused(live_codex, workdir):
    live_codex.script.add(reply("First answer."), think(3, "Second answer, after thinking."))
    async with live_codex.kernel() as kernel:
        term = await live_codex.start_session(kernel, workdir)
        await kernel.send_input(term.id, "one")
        await kernel.wait_for_status(term.id, {TerminalStatus.COMPLETED}, timeout=20)
        assert await kernel.get_output(term.id, "last") == "First answer."

        await kernel.send_input(term.id, "two")
        report = await kernel.wait_for_status(term.id, {TerminalStatus.PROCESSING}, timeout=5)
        # The screen itself says so while the model thinks (not only the kernel's "input sent").
        deadline = time.monotonic() + 3
        while "esc to interrupt" not in report.evidence:
            assert time.monotonic() < deadline and report.status == TerminalStatus.PROCESSING, report
            await asyncio.sleep(0.05)
            report = await kernel.get_status(term.id)
        await kernel.wait_for_status(term.id, {TerminalStatus.COMPLETED}, timeout=20)
        assert await kernel.get_output(term.id, "last") == "Second answer, after thinking."
        live_codex.script.assert_done()


async def test_model_error_is_reported_as_error_with_the_message(live_codex, workdir):
    live_codex.script.add(fail(400, "scripted refusal: context too long"))
    async with live_codex.kernel() as kernel:
        term = await live_codex.start_session(kernel, workdir)
        await kernel.send_input(term.id, "please fail")
        report = await kernel.wait_for_status(term.id, {TerminalStatus.ERROR}, timeout=20)
        assert "scripted refusal: context too long" in report.evidence
        with pytest.raises(ValueError):
            kernel.provider("codex").extract_last_message(await kernel.get_output(term.id, "full"))


async def test_codex_refusing_its_config_fails_start_up_at_once_with_its_screen(live_codex, workdir):
    # Codex 0.169 refuses the chat wire API at start-up and exits.
    async with live_codex.kernel() as kernel:
        profile = live_codex.profile(codex_config={"model_providers": {"scripted": {"wire_api": "chat"}}})
        kernel.add_profile(profile)
        started = time.monotonic()
        with pytest.raises(AgentFailed) as failure:
            await kernel.create_session(CreateTerminalRequest(
                agent_profile="coder", working_directory=workdir))
        elapsed = time.monotonic() - started
    message = str(failure.value)
    assert "last screen" in message and "wire_api" in message, message
    # Codex takes about a second to read its config and exit; the kernel adds no timeout on top.
    assert elapsed < 4, elapsed


async def test_missing_sign_in_is_an_error_not_a_timeout(live_codex, workdir):
    # No model provider of our own: Codex wants an OpenAI sign-in, which the sandbox does not have.
    async with live_codex.kernel() as kernel:
        from cao_hookspecs import AgentProfile

        kernel.add_profile(AgentProfile(name="nologin", provider="codex"))
        started = time.monotonic()
        with pytest.raises(AgentFailed) as failure:
            await kernel.create_session(CreateTerminalRequest(
                agent_profile="nologin", working_directory=workdir))
        assert time.monotonic() - started < 15
    assert "login screen" in str(failure.value) and "Sign in with ChatGPT" in str(failure.value)


async def test_a_folder_inside_a_git_repository_starts_without_the_trust_dialog(live_codex, tmp_path):
    repo = tmp_path / "repo"
    (repo / "src" / "pkg").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    async with live_codex.kernel() as kernel:
        term = await live_codex.start_session(kernel, str(repo / "src" / "pkg"))
        assert term.status == TerminalStatus.IDLE
        assert "Trust this folder" not in await kernel.get_output(term.id, "full")
        # Answering the dialog would have made Codex save a trust decision for the repository root.
        config = live_codex.cao_home / "runtime" / "terminals" / term.id / "codex-home" / "config.toml"
        assert set(tomllib.loads(config.read_text())["projects"]) == {str(repo / "src" / "pkg")}
