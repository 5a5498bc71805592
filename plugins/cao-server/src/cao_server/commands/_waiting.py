"""Waiting for an agent: "done" semantics, a progress line on a terminal, and Ctrl-C.

The server pushes status changes, so a wait is one long request per chunk rather than a poll loop;
chunks keep every request well inside the client's timeout and let Ctrl-C end a wait at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import sys
import time
from collections.abc import AsyncIterator, Awaitable
from typing import IO, TYPE_CHECKING, TypeVar

import click

from cao_hookspecs import StatusReport, TerminalStatus

if TYPE_CHECKING:
    from cao_hookspecs import KernelAPI, Terminal

T = TypeVar("T")

# Longest single server-side wait; below the client's default 30 s request timeout.
WAIT_CHUNK = 20.0
# An idle reading ends a turn only once it has held this long: some agent CLIs flash their prompt
# between two steps of one turn.
IDLE_SETTLE = 0.4
DEFAULT_TIMEOUT = 300.0
_NOT_IDLE = frozenset(s for s in TerminalStatus if s != TerminalStatus.IDLE)
# Where a wait ends: finished, or stopped on a question only a person can answer.
_STOPS = frozenset({TerminalStatus.COMPLETED, TerminalStatus.IDLE, TerminalStatus.WAITING_USER_ANSWER})


async def wait_done(api: KernelAPI, terminal_id: str, timeout: float) -> StatusReport:
    """Wait until the terminal's agent has finished its turn and return the final reading.

    Done means ``completed``, or ``idle`` that holds for ``IDLE_SETTLE`` seconds. An agent that reaches
    ``error`` makes the server raise ``AgentFailed``. A click error ends the wait when the agent asks
    the user a question (waiting would only run into the timeout) and when ``timeout`` runs out; both
    say that the agent keeps running.
    """
    from cao_hookspecs.errors import Timeout

    deadline = time.monotonic() + timeout
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise click.ClickException(
                f"terminal {terminal_id} did not finish within {timeout:g} s; the agent keeps running "
                f"(see `cao terminal status {terminal_id}`)"
            )
        try:
            report = await api.wait_for_status(terminal_id, _STOPS, min(remaining, WAIT_CHUNK))
        except Timeout:
            continue
        if report.status == TerminalStatus.COMPLETED:
            return report
        if report.status == TerminalStatus.WAITING_USER_ANSWER:
            raise click.ClickException(
                f"terminal {terminal_id} is waiting for an answer from the user; answer it in tmux or with "
                f"`cao terminal send {terminal_id} ANSWER`"
            )
        try:
            await api.wait_for_status(terminal_id, _NOT_IDLE, IDLE_SETTLE)
        except Timeout:
            return report


async def interruptible(awaitable: Awaitable[T]) -> tuple[bool, T | None]:
    """Await ``awaitable``; return ``(True, None)`` when Ctrl-C ended it, else ``(False, result)``.

    ``asyncio.run`` answers the first Ctrl-C by cancelling the main task. Taking that cancellation back
    here lets the command still talk to the server (print what the agent wrote so far) before exiting.
    """
    try:
        return False, await awaitable
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if task is None or task.cancelling() == 0:
            raise
        task.uncancel()
        return True, None


def _frames(stream: IO[str]) -> str:
    encoding = (getattr(stream, "encoding", None) or "").lower().replace("-", "")
    return "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏" if encoding == "utf8" else "|/-\\"


@contextlib.asynccontextmanager
async def progress(label: str, stream: IO[str] | None = None, interval: float = 0.1) -> AsyncIterator[None]:
    """Show ``label`` with a spinner and the elapsed seconds on ``stream`` (stderr) while the block runs.

    Nothing at all is written when the stream is not a terminal, so piped output and logs stay clean.
    The line is erased when the block ends.
    """
    out = stream if stream is not None else sys.stderr
    if not out.isatty():
        yield
        return
    started = time.monotonic()

    async def spin() -> None:
        for frame in itertools.cycle(_frames(out)):
            out.write(f"\r{frame} {label} ({time.monotonic() - started:.0f}s)\x1b[K")
            out.flush()
            await asyncio.sleep(interval)

    task = asyncio.ensure_future(spin())
    try:
        yield
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        out.write("\r\x1b[K")
        out.flush()


async def wait_and_print(api: KernelAPI, terminal: Terminal, timeout: float) -> bool:
    """Wait for the agent's answer and print it. Returns True when Ctrl-C ended the wait: whatever
    answer is on screen by then is printed, and the agent keeps working."""
    from cao_hookspecs.errors import CaoError

    async def waiting() -> None:
        async with progress(f"waiting for {terminal.name}"):
            await wait_done(api, terminal.id, timeout)

    interrupted, _ = await interruptible(waiting())
    try:
        output = await api.get_output(terminal.id, "last")
    except CaoError:
        if not interrupted:
            raise
        output = ""
    if output:
        click.echo(output)
    if interrupted:
        click.echo(f"Interrupted; the agent in terminal {terminal.id} keeps working.", err=True)
    return interrupted
