"""A turn that ends before its busy screen is ever read still ends the input latch at once.

After input the tracker refuses a ready reading that looks like the previous turn's (the same screen, or
the same evidence) until the settle window passes. A fast agent can answer between two screen reads:
then the only difference is the answer itself. With the provider's answer reading, a ready screen whose
answer is new ends the latch; an answer that one contains the other (the old one cut short by a scroll)
does not.
"""

from __future__ import annotations

import asyncio
import sys
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

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
from cao_kernel.status import StatusTracker

S = TerminalStatus
DONE = StatusReport(status=S.COMPLETED, evidence="prompt after an answer")


def answer_of(screen: str) -> str | None:
    rows = [row[len("A: "):] for row in screen.splitlines() if row.startswith("A: ")]
    return rows[-1] if rows else None


def latched_tracker(first_answer: str, **kw) -> StatusTracker:
    tracker = StatusTracker("0123abcd", input_settle=3600, **kw)
    tracker.observe(f"A: {first_answer}\n>", DONE)
    tracker.note_input()
    tracker.input_sent()
    return tracker


async def test_a_new_answer_with_the_same_evidence_ends_the_latch():
    tracker = latched_tracker("first", answer_of=answer_of)
    tracker.observe("A: first\n> second question", DONE)  # the input typed; the old answer still last
    assert tracker.status == S.PROCESSING
    tracker.observe("A: first\n> second question\nA: second\n>", DONE)
    assert tracker.status == S.COMPLETED


async def test_without_an_answer_reader_only_the_settle_window_ends_the_latch():
    tracker = latched_tracker("first")
    tracker.observe("A: first\n> second question\nA: second\n>", DONE)
    assert tracker.status == S.PROCESSING


async def test_an_unreadable_answer_keeps_the_latch():
    tracker = latched_tracker("first", answer_of=lambda screen: None)
    tracker.observe("A: first\n> q\nA: second\n>", DONE)
    assert tracker.status == S.PROCESSING


# Screen text: no line breaks of any kind (a row is one line).
row_text = st.text(alphabet=st.characters(categories=("L", "N", "P", "S", "Zs")), max_size=30)


@given(old=row_text.filter(str.strip), cut=st.integers(0, 30), extra=row_text)
def test_an_answer_that_contains_the_other_is_not_new(old, cut, extra):
    async def check() -> None:
        for shown in (old[cut:], old + extra):
            tracker = latched_tracker(old, answer_of=answer_of)
            tracker.observe(f"scrolled\nA: {shown}\n>", DONE)
            assert tracker.status == S.PROCESSING, shown

    asyncio.run(check())


# An agent that answers the moment Enter arrives and draws no busy row: between two screen reads the only
# change is the new answer. Its detector reads every prompt after an answer with the same evidence.
INSTANT = """\
import sys
n = 0
print("ready", flush=True)
while True:
    sys.stdout.write("> ")
    sys.stdout.flush()
    line = sys.stdin.readline()
    if not line:
        break
    n += 1
    print(f"ANSWER {n}: {line.strip()}", flush=True)
"""


def detect_instant(screen: str) -> StatusReport:
    rows = [row for row in screen.splitlines() if row.strip()]
    if not rows or not rows[-1].startswith(">"):
        return StatusReport(status=S.UNKNOWN, evidence="no prompt")
    if any(row.startswith("ANSWER") for row in rows):
        return StatusReport(status=S.COMPLETED, evidence="prompt after an answer")
    return StatusReport(status=S.IDLE, evidence="prompt")


def last_instant_answer(text: str) -> str:
    answers = [row for row in text.splitlines() if row.startswith("ANSWER")]
    if not answers:
        raise ValueError("no answer")
    return answers[-1].split(": ", 1)[1]


class InstantProvider:
    @staticmethod
    @hookimpl
    def cao_register_providers():
        return [ProviderSpec(name="instant", binary="python",
                             launch=lambda ctx: LaunchPlan(argv=[sys.executable, "-u", "-c", INSTANT]),
                             detect_status=detect_instant, extract_last_message=last_instant_answer,
                             capabilities=ProviderCapabilities(enter_count=1, submit_delay=0.0))]


@pytest.mark.tmux
async def test_turns_faster_than_a_screen_read_complete_well_inside_the_settle_window(make_kernel, workdir):
    kernel = make_kernel(CAO_INPUT_SETTLE="5")
    kernel.register_plugin(InstantProvider, name="instant")
    kernel.add_profile(AgentProfile(name="quick", provider="instant"))
    async with kernel:
        term = await kernel.create_session(CreateTerminalRequest(
            agent_profile="quick", working_directory=workdir))
        for n in range(1, 5):
            started = time.monotonic()
            await kernel.send_input(term.id, f"question {n}")
            await kernel.wait_for_status(term.id, {S.COMPLETED}, timeout=10)
            took = time.monotonic() - started
            assert await kernel.get_output(term.id, "last") == f"question {n}"
            assert took < 2.5, f"turn {n} took {took:.2f} s: the latch waited for its settle window"
