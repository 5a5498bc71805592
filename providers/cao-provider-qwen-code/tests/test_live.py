"""The real Qwen Code, run by the kernel in real tmux, against a scripted Chat Completions server."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from cao_hookspecs import AgentProfile, TerminalStatus
from cao_testkit.live_terminal import Transitions, failed_start, start_idle, wait_for_evidence
from cao_testkit.models import fail, reply, think

pytestmark = [pytest.mark.live_cli, pytest.mark.tmux, pytest.mark.slow, pytest.mark.timeout(90)]


def _kernel(make_kernel, name="developer", **fields):
    kernel = make_kernel()
    kernel.add_profile(AgentProfile(name=name, provider="qwen_code",
                                    system_prompt="You are a careful developer.", **fields))
    transitions = Transitions()
    kernel.register_plugin(transitions, name="transitions")
    return kernel, transitions


async def test_turns_end_on_the_stop_hook_with_the_models_own_answer(make_kernel, workdir, live_sandbox,
                                                                      model_server):
    first = "All done: the build passes and 3 files changed."
    # Markdown the screen draws otherwise: the answer returned is the model's own text, from the hook.
    second = "Result:\n\n- **bold** item\n- `code` item"
    model_server.script.add(think(1.0, first), reply(second))
    kernel, transitions = _kernel(make_kernel)
    async with kernel:
        term = await start_idle(kernel, workdir)
        sent = time.time()
        await kernel.send_input(term.id, "Run the build and report.")
        confirmed = await wait_for_evidence(kernel, term.id, "native: UserPromptSubmit", timeout=5)
        assert confirmed.status == TerminalStatus.PROCESSING
        await kernel.wait_for_status(term.id, {TerminalStatus.COMPLETED}, timeout=20)
        done_at, done = transitions.first(TerminalStatus.COMPLETED, sent)
        assert done.evidence.startswith("native: Stop"), transitions.describe(sent)
        assert await kernel.get_output(term.id, "last") == first
        [turn] = model_server.turns()
        print(f"\nQwen Code: model's last byte -> completed (native): {(done_at - turn.at) * 1000:.0f} ms")
        # The request carried the profile's prompt after Qwen Code's own, and what the user typed last
        # (after the reminders Qwen Code puts into the same message).
        assert "You are a careful developer." in turn.conversation.system
        assert turn.conversation.system.startswith("You are Qwen Code")
        assert turn.conversation.last_user_text.endswith("Run the build and report.")

        # Sent the moment the Stop hook reported: Qwen Code may still redraw the previous turn's screen
        # after it (see the README), so the new turn is the one its own start signal announced.
        again = time.time()
        await kernel.send_input(term.id, "Once more, as a list.")
        await wait_for_evidence(kernel, term.id, "native: UserPromptSubmit", timeout=5)
        await kernel.wait_for_status(term.id, {TerminalStatus.COMPLETED}, timeout=20)
        status = await kernel.get_status(term.id)
        assert status.evidence.startswith("native: Stop"), transitions.describe(again)
        assert await kernel.get_output(term.id, "last") == second
        # One request per turn: no follow-up suggestion, memory or title request on the side.
        assert len(model_server.requests) == 2
        model_server.script.assert_done()

        # The CLI ran with a private QWEN_HOME that never updates itself; the user's own was never made.
        assert not (live_sandbox.home / ".qwen").exists()
        runtime = Path(os.environ["CAO_HOME_DIR"])
        [settings] = runtime.rglob("qwen-home/settings.json")
        assert json.loads(settings.read_text())["general"]["enableAutoUpdate"] is False

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


async def test_an_approval_mode_qwen_code_refuses_is_reported_at_once(make_kernel, workdir, live_sandbox,
                                                                       tmux_socket):
    kernel, _ = _kernel(make_kernel, name="planner", permission_mode="noSuchMode")
    async with kernel:
        failed = await failed_start(kernel, workdir, "planner", tmux_socket=tmux_socket, sign="Show help")
    if failed.seen_at is not None:
        assert failed.raised_at - failed.seen_at < 2.0
    assert failed.raised_at - failed.started_at < 10.0
    message = failed.message
    assert "Qwen Code stopped: bad command-line option" in message and "--- last screen ---" in message
    # Qwen Code prints the reason, then its whole usage, which may scroll the reason off the screen by
    # the time the kernel reads it; the usage's last row then stays.
    assert 'Given: "noSuchMode"' in message or "Show help" in message, message
