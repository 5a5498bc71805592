"""A handoff with a call id survives its caller's lost connection and a restart of the kernel: a retry with
the same id joins the running call, gets the answer of one that finished, or resumes waiting on the same
worker in the next kernel. The worker is started once and its task typed once (counted in its pane)."""

from __future__ import annotations

import asyncio
import contextlib
import time

from cao_hookspecs import CreateTerminalRequest, TerminalStatus
from cao_kernel.orchestration import HANDOFF_CALL, HANDOFF_DEADLINE

TASK = "__mock_sleep_1.5"


def _count_typing(kernel, typed: dict[str, int]) -> None:
    """Count, per terminal, the inputs carrying the task that the kernel's backend types."""
    backend = kernel.terminals.backend
    send_text = backend.send_text

    def counted(terminal_id, text, **options):
        if TASK in text:
            typed[terminal_id] = typed.get(terminal_id, 0) + 1
        return send_text(terminal_id, text, **options)

    backend.send_text = counted


async def _workers(kernel, supervisor) -> list:
    return [t for t in await kernel.list_terminals(supervisor.session_name) if t.caller_id == supervisor.id]


async def _removed(kernel, supervisor, worker_id: str) -> None:
    """Wait until the finished handoff's worker is removed (after its answer went back); no other worker
    may appear meanwhile."""
    deadline = time.monotonic() + 10
    while workers := await _workers(kernel, supervisor):
        assert [t.id for t in workers] == [worker_id], "a second worker was started"
        assert time.monotonic() < deadline, "the worker was not removed"
        await asyncio.sleep(0.02)


async def _one_worker_started(kernel, supervisor) -> object:
    deadline = time.monotonic() + 15
    while not (workers := await _workers(kernel, supervisor)):
        assert time.monotonic() < deadline, "no worker was started"
        await asyncio.sleep(0.05)
    (worker,) = workers
    return worker


async def test_a_retry_after_a_restart_resumes_the_same_worker(make_kernel, workdir):
    request = CreateTerminalRequest(agent_profile="developer", session_name="resume", working_directory=workdir)
    typed: dict[str, int] = {}
    async with make_kernel(agents=("developer",)) as kernel:
        _count_typing(kernel, typed)
        supervisor = await kernel.create_session(request)
        first = asyncio.ensure_future(kernel.handoff(supervisor.id, "developer", TASK, call_id="call-1"))
        worker = await _one_worker_started(kernel, supervisor)
        await kernel.wait_for_status(worker.id, {TerminalStatus.PROCESSING}, timeout=15)
    # The kernel stopped mid-call: its wait ended with it, the worker runs on.
    with contextlib.suppress(asyncio.CancelledError):
        await first
    assert first.cancelled()
    async with make_kernel(agents=("developer",)) as kernel:
        _count_typing(kernel, typed)
        result = await kernel.handoff(supervisor.id, "developer", TASK, call_id="call-1")
        assert result.success, result
        assert result.terminal_id == worker.id and result.output == "slept 1.5s", result
        await _removed(kernel, supervisor, worker.id)
    assert typed == {worker.id: 1}


async def test_a_retry_finds_a_worker_whose_task_never_went_in_and_types_it_once(make_kernel, workdir):
    request = CreateTerminalRequest(agent_profile="developer", session_name="untyped",
                                    working_directory=workdir)
    async with make_kernel(agents=("developer",)) as kernel:
        supervisor = await kernel.create_session(request)
        # Where a kernel stops between starting a handoff's worker and typing its task.
        worker = await kernel.terminals.create_terminal(
            CreateTerminalRequest(agent_profile="developer", session_name=supervisor.session_name,
                                  working_directory=workdir, caller_id=supervisor.id),
            extra={HANDOFF_CALL: f"{supervisor.id}:call-2", HANDOFF_DEADLINE: repr(time.time() + 60)},
        )
    async with make_kernel(agents=("developer",)) as kernel:
        typed: dict[str, int] = {}
        _count_typing(kernel, typed)
        result = await kernel.handoff(supervisor.id, "developer", TASK, call_id="call-2")
        assert result.success and result.terminal_id == worker.id and result.output == "slept 1.5s", result
        assert typed == {worker.id: 1}
        await _removed(kernel, supervisor, worker.id)


async def test_retries_in_one_kernel_join_the_running_call_and_get_the_finished_answer(make_kernel, workdir):
    request = CreateTerminalRequest(agent_profile="developer", session_name="join", working_directory=workdir)
    async with make_kernel(agents=("developer",)) as kernel:
        supervisor = await kernel.create_session(request)
        typed: dict[str, int] = {}
        _count_typing(kernel, typed)
        first = asyncio.ensure_future(kernel.handoff(supervisor.id, "developer", TASK, call_id="call-3"))
        worker = await _one_worker_started(kernel, supervisor)
        # The first caller's connection drops (its request is cancelled); the retry joins the same call.
        first.cancel()
        joined = await kernel.handoff(supervisor.id, "developer", TASK, call_id="call-3")
        assert joined.success and joined.terminal_id == worker.id and joined.output == "slept 1.5s", joined
        assert typed == {worker.id: 1}
        late = await kernel.handoff(supervisor.id, "developer", TASK, call_id="call-3")
        assert late == joined
        await _removed(kernel, supervisor, worker.id)
        # Another call id is another handoff.
        other = await kernel.handoff(supervisor.id, "developer", TASK, call_id="call-4")
        assert other.success and other.terminal_id != worker.id
