"""Steps of a provider's live tests that drive one terminal of the real CLI through a kernel.

- :func:`start_idle`: create a session and check it came up idle, in time.
- :func:`run_turn`: type a task, check the terminal showed it was busy, wait for the turn's end.
- :func:`failed_start`: a start the CLI refuses; when the kernel reported it, and when the refusal
  first showed on screen (watched from outside the kernel, see :class:`cao_testkit.tmux.PaneWatch`).
- :class:`Transitions`: every status change the kernel reports, with its time (a plugin to register).
- :func:`wait_for_evidence`: read a terminal's status until its evidence is the one expected (a status
  that keeps its value but changes its evidence sends no event to wait on).

The checks these steps make are the ones every provider's live tests make the same way; what is
particular to a CLI (the evidence it gives, its prompt, its files) stays in the provider's tests.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import TYPE_CHECKING, Any

import attrs
from cao_hookspecs import CreateTerminalRequest, StatusReport, TerminalStatus, hookimpl

if TYPE_CHECKING:
    from cao_hookspecs import Terminal

__all__ = ["FailedStart", "Transitions", "failed_start", "run_turn", "start_idle", "wait_for_evidence"]


async def start_idle(kernel: Any, workdir: str, profile: str = "developer",
                     within: float = 20.0) -> Terminal:
    """A new session of ``profile``, which must be idle, and within ``within`` seconds (the screen is
    shown when it is not)."""
    started = time.monotonic()
    request = CreateTerminalRequest(agent_profile=profile, working_directory=workdir)
    term = await kernel.create_session(request)
    ready_after = time.monotonic() - started
    assert term.status == TerminalStatus.IDLE, await kernel.get_output(term.id, "full")
    assert ready_after < within
    return term


async def run_turn(kernel: Any, terminal_id: str, text: str, *, busy_within: float = 5.0,
                   timeout: float = 20.0) -> StatusReport:
    """Type ``text``; the terminal must report ``processing`` within ``busy_within`` seconds. The report
    of the turn's completion, within ``timeout`` seconds."""
    await kernel.send_input(terminal_id, text)
    processing = await kernel.wait_for_status(terminal_id, {TerminalStatus.PROCESSING}, timeout=busy_within)
    assert processing.status == TerminalStatus.PROCESSING
    return await kernel.wait_for_status(terminal_id, {TerminalStatus.COMPLETED}, timeout=timeout)


@attrs.frozen
class FailedStart:
    """A start the CLI refused: the kernel's error message; when the session was asked for and when the
    kernel raised; when the watched sign first showed on the tmux server (None: not watched, or the
    kernel reported and removed the window before the watcher looked)."""

    message: str
    started_at: float
    raised_at: float
    seen_at: float | None


async def failed_start(kernel: Any, workdir: str, profile: str = "developer", *,
                       tmux_socket: str | None = None, sign: str | None = None) -> FailedStart:
    """Start ``kernel``, then create a session of ``profile``, which must fail with ``AgentFailed``; with
    ``sign``, the panes of the tmux server at ``tmux_socket`` are watched for it meanwhile."""
    import pytest
    from cao_kernel.errors import AgentFailed

    from .tmux import PaneWatch

    await kernel.start()
    request = CreateTerminalRequest(agent_profile=profile, working_directory=workdir)
    with contextlib.ExitStack() as stack:
        watch = stack.enter_context(PaneWatch(tmux_socket, sign)) if sign and tmux_socket else None
        started_at = time.monotonic()
        with pytest.raises(AgentFailed) as failed:
            await kernel.create_session(request)
        raised_at = time.monotonic()
    return FailedStart(message=str(failed.value), started_at=started_at, raised_at=raised_at,
                       seen_at=watch.seen_at if watch else None)


class Transitions:
    """Every status change the kernel reports, with the time it was made: register it with
    ``kernel.register_plugin(transitions, name="transitions")``."""

    def __init__(self) -> None:
        self.seen: list[tuple[float, StatusReport]] = []

    @hookimpl
    def cao_after_status_changed(self, terminal, new):  # noqa: ANN001
        self.seen.append((time.time(), new))

    def after(self, moment: float) -> list[tuple[float, StatusReport]]:
        return [(at, report) for at, report in self.seen if at >= moment]

    def first(self, status: TerminalStatus, moment: float) -> tuple[float, StatusReport]:
        """The first change to ``status`` at or after ``moment`` (a ``time.time()``); there must be one."""
        found = [(at, r) for at, r in self.after(moment) if r.status == status]
        assert found, f"no {status.value} after the input: {self.describe(moment)}"
        return found[0]

    def describe(self, moment: float) -> list[str]:
        return [f"+{at - moment:.3f}s {r.status.value}: {r.evidence}" for at, r in self.after(moment)]


async def wait_for_evidence(kernel: Any, terminal_id: str, evidence: str,
                            timeout: float = 2.0) -> StatusReport:
    """The terminal's status once its evidence is ``evidence``, read every 10 ms for ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    seen: list[StatusReport] = []
    while time.monotonic() < deadline:
        report = await kernel.get_status(terminal_id)
        if report.evidence == evidence:
            return report
        if not seen or seen[-1] != report:
            seen.append(report)
        await asyncio.sleep(0.01)
    raise AssertionError(f"never saw evidence {evidence!r}: {seen}")
