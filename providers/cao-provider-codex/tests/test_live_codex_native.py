"""The real Codex reports each turn's end through cao's ``notify`` program, and the kernel goes by it.

cao's private config names the kernel's signal command as Codex's ``notify``; Codex runs it with its
``agent-turn-complete`` JSON when a turn ends, and the kernel maps it through ``codex``'s
``native_signal``. Codex starts ``notify`` without waiting for it and draws its turn summary at the same
time, so either can reach the kernel first: each turn must end with the native evidence either way.
Each test measures the time from the model's last byte (``RecordedRequest.at``, taken just before the
server writes it) to the moment the kernel first reports ``completed``.
"""

from __future__ import annotations

import time
import tomllib
from pathlib import Path

import pytest

from cao_hookspecs import StatusReport, TerminalStatus
from cao_testkit.live_terminal import Transitions, wait_for_evidence
from cao_testkit.models.script import reply, think

pytestmark = [pytest.mark.live_cli, pytest.mark.tmux, pytest.mark.timeout(600)]

NATIVE = "native: notify (agent-turn-complete)"


async def _turn(live_codex, workdir: str,
                **settings: str) -> tuple[float, StatusReport, Path, list[str]]:
    """Two scripted turns; the first one's latency from the model's last byte to completed, its report,
    the terminal's config file, and the status changes seen."""
    live_codex.script.add(think(1.0, "The answer is 42."), reply("Second answer, on its own."))
    transitions = Transitions()
    async with live_codex.kernel(**settings) as kernel:
        kernel.register_plugin(transitions, name="transitions")
        term = await live_codex.start_session(kernel, workdir)
        config = Path(kernel.home.runtime) / "terminals" / term.id / "codex-home" / "config.toml"
        sent = time.time()
        await kernel.send_input(term.id, "What is the answer?")
        await kernel.wait_for_status(term.id, {TerminalStatus.COMPLETED}, timeout=30)
        done_at, done = transitions.first(TerminalStatus.COMPLETED, sent)
        if "CAO_NATIVE_SIGNALS" not in settings:
            done = await wait_for_evidence(kernel, term.id, NATIVE)
        assert await kernel.get_output(term.id, "last") == "The answer is 42."
        (turn,) = live_codex.server.turns()

        # The next input right away: the previous turn's answer is not taken for this one's.
        again = time.time()
        await kernel.send_input(term.id, "And again?")
        await kernel.wait_for_status(term.id, {TerminalStatus.COMPLETED}, timeout=30)
        transitions.first(TerminalStatus.COMPLETED, again)
        if "CAO_NATIVE_SIGNALS" not in settings:
            await wait_for_evidence(kernel, term.id, NATIVE)
        assert await kernel.get_output(term.id, "last") == "Second answer, on its own."
        live_codex.script.assert_done()
        return done_at - turn.at, done, config, transitions.describe(sent)


async def test_notify_reports_the_turns_end(live_codex, workdir):
    latency, done, config, seen = await _turn(live_codex, workdir)
    notify = tomllib.loads(config.read_text())["notify"]
    assert notify[-1] == "notify" and "--terminal" in notify
    assert done.status == TerminalStatus.COMPLETED and done.evidence == NATIVE, seen
    first = "native" if next(line for line in seen if " completed: " in line).endswith(NATIVE) else "screen"
    print(f"\nCodex: model's last byte -> completed (notify on, first from the {first}): "
          f"{latency * 1000:.0f} ms")
    assert 0 <= latency < 2.0


async def test_screen_only_latency_for_comparison(live_codex, workdir):
    latency, done, config, seen = await _turn(live_codex, workdir, CAO_NATIVE_SIGNALS="0")
    assert "notify" not in tomllib.loads(config.read_text())
    assert not done.evidence.startswith("native:"), seen
    print(f"\nCodex: model's last byte -> completed (screen): {latency * 1000:.0f} ms")
