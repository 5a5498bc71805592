"""An input left unsent at the prompt after its Enter gets Enter again (``cao_kernel.resubmit``).

Gemini CLI, busy finishing its start-up, took the Enter after a paste as a newline: the task stayed in
its input box and the worker waited forever. The program here draws a prompt in raw mode with bracketed
paste on and, as told, ignores the first Enter after a paste (``stubborn``), submits at once
(``prompt``), or shows another text at its prompt than what was pasted (``other``, as when someone types).
"""

from __future__ import annotations

import asyncio
import sys

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

SUBMIT_DELAY = 0.2

PROGRAM = r"""
import os, sys, time, tty
mode = sys.argv[1]
START, END = b"\x1b[200~", b"\x1b[201~"
tty.setraw(0)
os.write(1, b"\x1b[?2004hready\r\n")
typed, shown, ignore, enters = "", None, False, 0

def prompt():
    os.write(1, ("\r\x1b[K> " + (typed if shown is None else shown)).encode())

prompt()
data = b""
while True:
    chunk = os.read(0, 4096)
    if not chunk:
        break
    data += chunk
    while data:
        if data.startswith(START):
            end = data.find(END)
            if end < 0:
                break
            typed += data[len(START):end].decode()
            data = data[end + len(END):]
            ignore = mode != "prompt"
            shown = "a draft typed by hand" if mode == "other" else None
            prompt()
            continue
        if START.startswith(data):
            break
        key, data = data[:1], data[1:]
        if key != b"\r":
            continue
        enters += 1
        if ignore:
            ignore = False
            continue
        sent = typed if shown is None else shown
        os.write(1, b"\r\nworking\r\n")
        time.sleep(0.3)
        os.write(1, f"DONE {sent} after {enters} enters\r\n".encode())
        typed, shown = "", None
        prompt()
"""


def _rows(screen: str) -> list[str]:
    return [row for row in screen.splitlines() if row.strip()]


def detect(screen: str) -> StatusReport:
    rows = _rows(screen)
    last = rows[-1] if rows else ""
    if last.startswith("working"):
        return StatusReport(status="processing", evidence="working row")
    if last.startswith(">"):
        done = [row for row in rows if row.startswith("DONE")]
        if done:
            return StatusReport(status="completed", evidence=f"prompt after {done[-1]!r}")
        return StatusReport(status="idle", evidence="prompt")
    return StatusReport(status="unknown", evidence="no prompt")


def pending_input(screen: str) -> str:
    rows = _rows(screen)
    return rows[-1][2:].strip() if rows and rows[-1].startswith("> ") else ""


def provider_plugin(mode: str) -> object:
    class Provider:
        @staticmethod
        @hookimpl
        def cao_register_providers():
            return [ProviderSpec(
                name="unsent", binary="python",
                launch=lambda ctx: LaunchPlan(argv=[sys.executable, "-u", "-c", PROGRAM, mode]),
                detect_status=detect, extract_last_message=lambda text: text, pending_input=pending_input,
                capabilities=ProviderCapabilities(enter_count=1, submit_delay=SUBMIT_DELAY),
            )]

    return Provider


async def _run(make_kernel, workdir, mode: str, *, deliver: bool = False) -> tuple[str, list[str]]:
    """Type one task into a fresh terminal of ``mode``; the screen two seconds on and the timeline."""
    kernel = make_kernel()
    kernel.register_plugin(provider_plugin(mode), name="unsent")
    kernel.add_profile(AgentProfile(name="unsent", provider="unsent"))
    async with kernel:
        term = await kernel.create_session(CreateTerminalRequest(agent_profile="unsent",
                                                                 working_directory=workdir))
        if deliver:  # through the inbox and ``cao_deliver_message``
            await kernel.send_message("tester", term.id, "Run the tests and report back")
        else:
            await kernel.send_input(term.id, "Run the tests and report back")
        if mode != "other":
            await kernel.wait_for_status(term.id, {TerminalStatus.COMPLETED}, timeout=10)
        await asyncio.sleep(2 * (SUBMIT_DELAY + 0.5) + 0.5)  # past every check's windows
        screen = await kernel.get_output(term.id)
        steps = [event.name for event in await kernel.get_timeline(term.id)]
    return screen, steps


@pytest.mark.parametrize("deliver", [False, True], ids=["typed", "delivered"])
async def test_an_input_left_at_the_prompt_gets_enter_again(make_kernel, workdir, deliver):
    screen, steps = await _run(make_kernel, workdir, "stubborn", deliver=deliver)
    assert "DONE Run the tests and report back after 2 enters" in screen, screen
    assert steps.count("input_resubmitted") == 1, steps


async def test_an_input_submitted_at_once_gets_no_second_enter(make_kernel, workdir):
    screen, steps = await _run(make_kernel, workdir, "prompt")
    assert "DONE Run the tests and report back after 1 enters" in screen, screen
    assert "input_resubmitted" not in steps, steps


async def test_other_text_at_the_prompt_gets_no_enter(make_kernel, workdir):
    screen, steps = await _run(make_kernel, workdir, "other")
    assert "DONE" not in screen and "> a draft typed by hand" in screen, screen
    assert "input_resubmitted" not in steps, steps
