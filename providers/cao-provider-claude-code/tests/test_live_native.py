"""The real Claude Code reports its turns through cao's hooks, and the kernel goes by them.

The hooks (``--settings <runtime>/cao-hooks.json``) run the kernel's signal command; the kernel maps
each event through ``claude_code``'s ``native_signal`` and prefers it over the screen. Each test measures
the time from the model's last byte (``RecordedRequest.at``, taken just before the server writes it) to
the moment the kernel reports ``completed``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from cao_hookspecs import AgentProfile, CreateTerminalRequest, TerminalStatus
from cao_testkit.live_terminal import Transitions, wait_for_evidence
from cao_testkit.models import reply, think

pytestmark = [pytest.mark.live_cli, pytest.mark.tmux, pytest.mark.slow, pytest.mark.timeout(90)]


def _kernel(make_kernel, **settings):
    kernel = make_kernel(**settings)
    kernel.add_profile(AgentProfile(name="developer", provider="claude_code",
                                    system_prompt="You are careful."))
    transitions = Transitions()
    kernel.register_plugin(transitions, name="transitions")
    return kernel, transitions


async def test_hooks_report_each_turn_and_the_next_input_can_follow_at_once(
        make_kernel, workdir, live_sandbox, model_server):
    first, second = "First answer: three files changed.", "Second answer, on its own."
    # Markdown the screen draws otherwise: the answer returned is the model's own text, from the hook.
    third = "Result:\n\n- **bold** item\n- `code` item"
    model_server.script.add(think(1.0, first), reply(second), reply(third))
    kernel, transitions = _kernel(make_kernel)
    async with kernel:
        term = await kernel.create_session(CreateTerminalRequest(
            agent_profile="developer", working_directory=workdir))
        settings = Path(kernel.home.runtime) / "terminals" / term.id / "cao-hooks.json"
        assert set(json.loads(settings.read_text())["hooks"]) == {"UserPromptSubmit", "Stop", "StopFailure",
                                                                  "Notification"}

        sent = time.time()
        await kernel.send_input(term.id, "Run the build and report.")
        # The kernel says processing as it types; the hook then confirms the turn began (same status,
        # new evidence: no change event, so read the status while the model thinks).
        confirmed = await wait_for_evidence(kernel, term.id, "native: UserPromptSubmit", timeout=5)
        assert confirmed.status == TerminalStatus.PROCESSING
        report = await kernel.wait_for_status(term.id, {TerminalStatus.COMPLETED}, timeout=20)
        done_at, done = transitions.first(TerminalStatus.COMPLETED, sent)
        assert done.evidence.startswith("native: Stop"), transitions.describe(sent)
        assert report.status == TerminalStatus.COMPLETED
        assert await kernel.get_output(term.id, "last") == first
        [turn] = model_server.turns()
        latency = done_at - turn.at
        print(f"\nClaude Code: model's last byte -> completed (native): {latency * 1000:.0f} ms")
        assert 0 <= latency < 2.0

        # The next input right away: its completion is again the hook's, with its own answer.
        again = time.time()
        await kernel.send_input(term.id, "And again.")
        await kernel.wait_for_status(term.id, {TerminalStatus.COMPLETED}, timeout=20)
        assert transitions.first(TerminalStatus.COMPLETED, again)[1].evidence.startswith("native: Stop"), \
            transitions.describe(again)
        assert await kernel.get_output(term.id, "last") == second
        await kernel.send_input(term.id, "Once more, as a list.")
        await kernel.wait_for_status(term.id, {TerminalStatus.COMPLETED}, timeout=20)
        assert await kernel.get_output(term.id, "last") == third
        model_server.script.assert_done()

        # The hooks live in the runtime folder; the sandboxed user's own settings were never written.
        assert not (live_sandbox.home / ".claude" / "settings.json").exists()


async def test_screen_only_latency_for_comparison(make_kernel, workdir, live_sandbox, model_server):
    """The same turn with the channel off: completed comes from the screen, and no hooks are written."""
    answer = "First answer: three files changed."
    model_server.script.add(think(1.0, answer))
    kernel, transitions = _kernel(make_kernel, CAO_NATIVE_SIGNALS="0")
    async with kernel:
        term = await kernel.create_session(CreateTerminalRequest(
            agent_profile="developer", working_directory=workdir))
        assert not (Path(kernel.home.runtime) / "terminals" / term.id / "cao-hooks.json").exists()
        sent = time.time()
        await kernel.send_input(term.id, "Run the build and report.")
        await kernel.wait_for_status(term.id, {TerminalStatus.COMPLETED}, timeout=20)
        done_at, done = transitions.first(TerminalStatus.COMPLETED, sent)
        assert not done.evidence.startswith("native:")
        assert await kernel.get_output(term.id, "last") == answer
        [turn] = model_server.turns()
        print(f"\nClaude Code: model's last byte -> completed (screen): {(done_at - turn.at) * 1000:.0f} ms")
