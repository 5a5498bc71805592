"""The real pi, run by the kernel in real tmux, against a scripted Chat Completions server."""

from __future__ import annotations

import json
import asyncio
import os
import time
from pathlib import Path

import pytest

from cao_hookspecs import AgentProfile, TerminalStatus
from cao_testkit.live_terminal import Transitions, failed_start, start_idle, wait_for_evidence
from cao_testkit.models import fail, think

pytestmark = [pytest.mark.live_cli, pytest.mark.tmux, pytest.mark.slow, pytest.mark.timeout(90)]


def _kernel(make_kernel, name="developer", **fields):
    kernel = make_kernel()
    kernel.add_profile(AgentProfile(name=name, provider="pi", system_prompt="You are a careful developer.",
                                    **fields))
    transitions = Transitions()
    kernel.register_plugin(transitions, name="transitions")
    return kernel, transitions


async def _answer(kernel, terminal_id: str) -> str | None:
    from cao_hookspecs.errors import NotFound

    try:
        return await kernel.get_output(terminal_id, "last")
    except NotFound:  # mid-turn: nothing to read yet
        return None


async def test_turns_end_on_the_bridge_signal_with_the_models_own_answer(make_kernel, workdir, live_sandbox,
                                                                         model_server):
    first = "All done: the build passes and 3 files changed."
    # Markdown the screen draws otherwise: the answer returned is the model's own text, from the signal.
    second = "Result:\n\n- **bold** item\n- `code` item"
    model_server.script.add(think(1.0, first), think(1.0, second))
    kernel, transitions = _kernel(make_kernel)
    async with kernel:
        term = await start_idle(kernel, workdir)
        sent = time.time()
        await kernel.send_input(term.id, "Run the build and report.")
        confirmed = await wait_for_evidence(kernel, term.id, "native: agent_start", timeout=5)
        assert confirmed.status == TerminalStatus.PROCESSING
        await kernel.wait_for_status(term.id, {TerminalStatus.COMPLETED}, timeout=20)
        done_at, done = transitions.first(TerminalStatus.COMPLETED, sent)
        assert done.evidence.startswith("native: agent_end"), transitions.describe(sent)
        assert await kernel.get_output(term.id, "last") == first
        [turn] = model_server.turns()
        print(f"\npi: model's last byte -> completed (native): {(done_at - turn.at) * 1000:.0f} ms")
        # The profile's prompt follows pi's own; the user's text is the request's last message.
        assert "You are a careful developer." in turn.conversation.system
        assert turn.conversation.last_user_text == "Run the build and report."

        again = time.time()
        await kernel.send_input(term.id, "Once more, as a list.")
        await kernel.wait_for_status(term.id, {TerminalStatus.COMPLETED}, timeout=20)
        # This turn has no thinking time: pi may draw it whole before the bridge's signals arrive, and
        # the screen then ends it first. The answer is still the model's own text once agent_end is in.
        deadline = time.monotonic() + 20
        answer = await _answer(kernel, term.id)
        while answer != second and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
            answer = await _answer(kernel, term.id)
        assert answer == second, transitions.describe(again)
        # One request per turn: nothing on the side.
        assert len(model_server.requests) == 2
        model_server.script.assert_done()

        # pi ran with a private agent folder: the user's own holds only what the test wrote.
        user_dir = live_sandbox.home / ".pi" / "agent"
        assert sorted(p.name for p in user_dir.iterdir()) == ["models.json", "settings.json"]
        [settings] = Path(os.environ["CAO_HOME_DIR"]).rglob("pi-agent/settings.json")
        assert json.loads(settings.read_text())["enableInstallTelemetry"] is False

        await kernel.exit_terminal(term.id)
        await kernel.wait_for_status(term.id, {TerminalStatus.ERROR}, timeout=10)


async def test_a_model_error_is_reported_as_an_error_with_its_message(make_kernel, workdir, live_sandbox,
                                                                       model_server):
    # A 400 is shown at once (a 429 or a 5xx is retried first).
    model_server.script.add(fail(400, "model scripted is not served here", kind="invalid_request_error"))
    kernel, _ = _kernel(make_kernel)
    async with kernel:
        term = await start_idle(kernel, workdir)
        await kernel.send_input(term.id, "Please fail.")
        report = await kernel.wait_for_status(term.id, {TerminalStatus.ERROR}, timeout=20)
        assert "400 model scripted is not served here" in report.evidence


async def test_a_model_pi_does_not_know_is_reported_at_once(make_kernel, workdir, live_sandbox, tmux_socket):
    kernel, _ = _kernel(make_kernel, name="lost", model="nosuch/model")
    async with kernel:
        failed = await failed_start(kernel, workdir, "lost", tmux_socket=tmux_socket,
                                    sign='Model "nosuch/model" not found')
    if failed.seen_at is not None:
        assert failed.raised_at - failed.seen_at < 2.0
    assert failed.raised_at - failed.started_at < 10.0
    message = failed.message
    assert "the CLI stopped" in message and "--- last screen ---" in message, message
    assert 'Model "nosuch/model" not found' in message
