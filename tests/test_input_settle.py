"""The settle window after input starts when the input has really gone out (after the last Enter).

After input the kernel distrusts a ready reading of the unchanged screen for a short window; once the
window passes with no sign of a new turn it trusts the screen again. A CLI that needs a pause between
the paste and its Enter (``ProviderCapabilities.submit_delay``) gets its Enter late: a window counted
from before the paste could end before the Enter was even pressed, and on a loaded machine the previous
answer, still on screen, would be read as the answer to the new input.
"""

from __future__ import annotations

import asyncio
import sys
import time

import pytest

from cao_hookspecs import (
    AgentProfile,
    CreateTerminalRequest,
    LaunchPlan,
    ProviderCapabilities,
    ProviderSpec,
    StatusReport,
    TerminalStatus,
    hookimpl,
)

pytestmark = pytest.mark.tmux

SETTLE = 0.3
SUBMIT_DELAY = 1.0

# A line-mode agent: the pasted text is echoed on the prompt row by the terminal, and nothing happens
# until Enter arrives.
PROGRAM = """\
import sys, time
n = 0
print("ready", flush=True)
while True:
    sys.stdout.write("> ")
    sys.stdout.flush()
    line = sys.stdin.readline()
    if not line:
        break
    print("working", flush=True)
    time.sleep(0.4)
    n += 1
    print(f"ANSWER {n}: {line.strip()}", flush=True)
"""


def detect(screen: str) -> StatusReport:
    rows = [row for row in screen.splitlines() if row.strip()]
    last = rows[-1] if rows else ""
    if last.startswith("working"):
        return StatusReport(status="processing", evidence="working row")
    if last.startswith(">"):
        answers = [row for row in rows if row.startswith("ANSWER")]
        # Text typed on the prompt row does not change the reading: the answer above is still the last.
        if answers:
            return StatusReport(status="completed", evidence=f"prompt after {answers[-1]!r}")
        return StatusReport(status="idle", evidence="prompt")
    return StatusReport(status="unknown", evidence="no prompt")


class SlowSubmitProvider:
    @staticmethod
    @hookimpl
    def cao_register_providers():
        return [ProviderSpec(
            name="slow_submit", binary="python",
            launch=lambda ctx: LaunchPlan(argv=[sys.executable, "-u", "-c", PROGRAM]),
            detect_status=detect, extract_last_message=lambda text: text,
            capabilities=ProviderCapabilities(enter_count=1, submit_delay=SUBMIT_DELAY),
        )]


async def _watch(kernel, terminal_id: str, seen: list[tuple[float, StatusReport]],
                 stop: asyncio.Event) -> None:
    while not stop.is_set():
        seen.append((time.monotonic(), await kernel.get_status(terminal_id)))
        await asyncio.sleep(0.02)


async def test_the_settle_window_starts_after_the_last_enter(make_kernel, workdir):
    kernel = make_kernel(CAO_INPUT_SETTLE=str(SETTLE))
    kernel.register_plugin(SlowSubmitProvider, name="slow_submit")
    kernel.add_profile(AgentProfile(name="slow", provider="slow_submit"))
    async with kernel:
        term = await kernel.create_session(CreateTerminalRequest(
            agent_profile="slow", working_directory=workdir))
        await kernel.send_input(term.id, "first")
        first = await kernel.wait_for_status(term.id, {TerminalStatus.COMPLETED}, timeout=10)
        assert "ANSWER 1: first" in first.evidence

        seen: list[tuple[float, StatusReport]] = []
        stop = asyncio.Event()
        watcher = asyncio.ensure_future(_watch(kernel, term.id, seen, stop))
        started = time.monotonic()
        await kernel.send_input(term.id, "second")
        sent = time.monotonic()
        stop.set()
        await watcher
        # The paste and the delayed Enter took the submit delay, longer than the settle window.
        assert sent - started >= SUBMIT_DELAY
        changes = [f"+{at - started:.2f}s {r.status.value}: {r.evidence}"
                   for i, (at, r) in enumerate(seen) if i == 0 or r != seen[i - 1][1]]
        assert {report.status for at, report in seen if at < sent} == {TerminalStatus.PROCESSING}, changes

        # Whatever the kernel says next is about the second input, never the first answer again.
        report = await kernel.wait_for_status(term.id, {TerminalStatus.COMPLETED}, timeout=10)
        assert "ANSWER 2: second" in report.evidence, report
