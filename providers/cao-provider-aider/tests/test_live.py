"""The real Aider, run by the kernel in real tmux, against a scripted Chat Completions server."""

from __future__ import annotations

import pytest

from cao_hookspecs import AgentProfile, CreateTerminalRequest, TerminalStatus
from cao_testkit.live_terminal import failed_start, start_idle
from cao_testkit.models import fail, think

from .conftest import MODEL

pytestmark = [pytest.mark.live_cli, pytest.mark.tmux, pytest.mark.slow, pytest.mark.timeout(90)]

CAO_MCP = {"cao-mcp-server": {"type": "stdio", "command": "cao-mcp-server", "args": []}}


def _profile(kernel, name="developer", **fields):
    fields.setdefault("system_prompt", "You are a careful developer.")
    fields.setdefault("model", MODEL)
    kernel.add_profile(AgentProfile(name=name, provider="aider", **fields))
    return kernel


async def test_a_yolo_turn_ends_on_the_notification_with_the_exact_answer(make_kernel, workdir, live_sandbox,
                                                                          model_server):
    model_server.script.add(think(1.0, "The build passes."))
    async with _profile(make_kernel()) as kernel:
        term = await kernel.create_session(CreateTerminalRequest(
            agent_profile="developer", working_directory=workdir, yolo=True))
        await kernel.wait_for_status(term.id, {TerminalStatus.IDLE}, timeout=30)
        await kernel.send_input(term.id, "Run the build and report.")
        report = await kernel.wait_for_status(term.id, {TerminalStatus.COMPLETED}, timeout=20)
        assert await kernel.get_output(term.id, "last") == "The build passes."
        assert "turn_end" in report.evidence or "answer" in report.evidence
        # The request carried what the user typed, and the profile's prompt as a read-only file.
        [turn] = model_server.turns()
        assert turn.conversation.last_user_text.startswith("Run the build and report.")
        assert "You are a careful developer." in str(turn.conversation)
        # Aider wrote no files of its own into the user's project.
        assert not list(__import__("pathlib").Path(workdir).glob(".aider*"))


async def test_a_model_error_on_the_first_request_is_an_error(make_kernel, workdir, live_sandbox,
                                                             model_server):
    """A fresh Aider's first request fails: the error row is drawn while the spinner's thread is still
    wiping itself (a piece of it stays in front of the row) and must still read as an error. The handoff
    of an answer is tested with a supervisor in test_live_delegation.py."""
    model_server.script.add(fail(400, "scripted bad request"))
    async with _profile(make_kernel(), name="worker", mcp_servers=CAO_MCP) as kernel:
        term = await start_idle(kernel, workdir, "worker", within=30)
        await kernel.send_input(term.id, "Count the files.")
        report = await kernel.wait_for_status(term.id, {TerminalStatus.ERROR}, timeout=30)
        assert "BadRequestError" in report.evidence and "scripted bad request" in report.evidence


async def test_a_refused_start_is_an_error_within_two_seconds_of_its_screen(make_kernel, workdir,
                                                                              live_sandbox, tmux_socket):
    # A model that looks like a flag: Aider's argument parser refuses it at start.
    async with _profile(make_kernel(), name="broken", model="--bad") as kernel:
        failed = await failed_start(kernel, workdir, "broken", tmux_socket=tmux_socket,
                                    sign="expected one argument")
    if failed.seen_at is not None:
        assert failed.raised_at - failed.seen_at < 2.0
    assert "expected one argument" in failed.message and "--- last screen ---" in failed.message
