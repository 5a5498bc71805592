"""The three orchestration semantics (send_message, assign, handoff) plus answer_user_prompt.

Protocol strings that agents' prompts rely on are upstream's, word for word:
- assign suffix: ``[Assigned by terminal <sup>. When done, send results back to terminal <sup> using
  send_message]``
- send_message suffix: ``[Message from terminal <own>. Use send_message MCP tool for any follow-up work.]``
- handoff banner (providers that ask for it) starts ``[CAO Handoff] Supervisor terminal ID: <id>.``
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING

import attrs

from cao_hookspecs import (
    AgentProfile,
    CreateTerminalRequest,
    DelegationRequest,
    DelegationResult,
    Message,
    MessageDraft,
    MessageState,
    OrchestrationType,
    Terminal,
    PromptEvent,
    TerminalStatus,
    TimelineEvent,
)
from cao_hookspecs.names import MAX_ANSWER_CHARS

from . import validate, worktrees
from .delivery import sender_suffix, validate_message
from .errors import AgentFailed, CaoError, Conflict, InvalidInput, NotFound, Timeout, Vetoed
from .inbox_limits import PendingCap

if TYPE_CHECKING:
    from .delivery import DeliveryEngine
    from .handoff_results import HandoffJobs
    from .hooks import Emit, Hooks
    from .live import LiveTerminal
    from .pools import WarmPools
    from .prompt_desk import PromptDesk
    from .terminals import Terminals

log = logging.getLogger(__name__)

# Stored with a handoff's worker: the call it runs (``<caller>:<call id>``) and the wall-clock time its
# wait ends, so a retry of the call after a restart finds the worker and keeps the original deadline.
HANDOFF_CALL = "handoff_call"
HANDOFF_DEADLINE = "handoff_deadline"
# How long, and how many, finished handoffs with a call id keep their result for a late retry.
FINISHED_KEEP_SECONDS = 600.0
FINISHED_KEEP = 256
# An idle reading only ends a handoff once it has held this long (some CLIs flash idle mid-turn).
IDLE_SETTLE = 0.4
# Stored with a handoff's worker whose result reported its kept worktree (no inbox note then).
WORKTREE_REPORTED = "worktree_reported"


def assign_suffix(supervisor_id: str) -> str:
    return (f"[Assigned by terminal {supervisor_id}. When done, send results back to terminal "
            f"{supervisor_id} using send_message]")


def handoff_banner(supervisor_id: str) -> str:
    return (
        f"[CAO Handoff] Supervisor terminal ID: {supervisor_id}. The supervisor is blocked until you finish; "
        "your final reply is captured and returned to it automatically, so answer in your reply and do not "
        "call send_message."
    )


def _with_suffix(text: str, suffix: str) -> str:
    # Idempotent: a client that already appended the suffix (upstream's MCP server does) gets one copy.
    return text if text.rstrip().endswith(suffix) else f"{text}\n\n{suffix}"


LAST_LINES = 10


def _worktree_line(worker: Terminal) -> str:
    if not worker.worktree_branch:
        return ""
    return (f" It works in its own git worktree at {worker.worktree_path} on branch "
            f"{worker.worktree_branch}; when it is deleted, the worktree goes too unless it holds commits "
            f"or changes (you are told then).")


def _last_lines(screen: str, count: int = LAST_LINES) -> str:
    """The last ``count`` non-blank lines of a screen, for a report on what an agent was doing."""
    return "\n".join([line.rstrip() for line in screen.splitlines() if line.strip()][-count:])


class AssignWatch:
    """Assigns whose task is still on its way: each ends (``cao_after_assign_finished``) when its task is
    delivered, dies in the inbox, or its worker fails to start."""

    def __init__(self, emit: Emit) -> None:
        self._emit = emit
        self._pending: dict[int, DelegationRequest] = {}

    def add(self, message_id: int, request: DelegationRequest) -> None:
        self._pending[message_id] = request

    def drop(self, message_id: int) -> None:
        self._pending.pop(message_id, None)

    def delivered(self, message: Message) -> None:
        request = self._pending.pop(message.id, None)
        if request is not None:
            self.finish(request, message.receiver_id, True,
                        f"Task delivered to {request.agent_profile} in terminal {message.receiver_id}")

    def dead(self, message: Message, reason: str) -> None:
        request = self._pending.pop(message.id, None)
        if request is not None:
            self.finish(request, message.receiver_id, False, f"Task could not be delivered: {reason}")

    def finish(self, request: DelegationRequest, worker_id: str, success: bool, text: str) -> None:
        self._emit("cao_after_assign_finished", result=DelegationResult(
            kind=OrchestrationType.ASSIGN, success=success, message=text, agent_profile=request.agent_profile,
            caller_id=request.caller_id, terminal_id=worker_id,
        ))


@attrs.define(kw_only=True, eq=False)
class Orchestration:
    """send_message, assign, handoff and answer_user_prompt over the terminals and the delivery engine."""

    _terminals: Terminals
    _delivery: DeliveryEngine
    _hooks: Hooks
    _assigns: AssignWatch
    _load_profile: Callable[[str], AgentProfile]
    _pending_cap: PendingCap = attrs.field(factory=PendingCap)
    _prompts: PromptDesk | None = None
    _pools: WarmPools | None = None
    _jobs: HandoffJobs | None = None
    _watches: set[asyncio.Task[None]] = attrs.field(init=False, factory=set)
    # Finished handoffs' workers being removed after their answer went back; awaited at close.
    _dismissals: set[asyncio.Future[None]] = attrs.field(init=False, factory=set)
    # Handoffs with a call id, running and recently finished, by ``<caller>:<call id>``.
    _calls: dict[str, asyncio.Task[DelegationResult]] = attrs.field(init=False, factory=dict)
    _finished: dict[str, tuple[float, DelegationResult]] = attrs.field(init=False, factory=dict)

    # -- send_message -----------------------------------------------------------------------------

    async def send_message(
        self, sender_id: str, receiver_id: str | None, message: str, *, idempotency_key: str | None = None
    ) -> Message:
        """Queue ``message`` for ``receiver_id`` (default: the sender's caller); delivered when it is ready."""
        validate_message(message)
        validate.input_text(message)
        sender = self._terminals.get(sender_id) if validate.TERMINAL_ID_RE.match(sender_id or "") else None
        if receiver_id is None:
            if sender is None or not sender.record.caller_id:
                raise InvalidInput("no receiver given and the sender has no caller to reply to")
            receiver_id = sender.record.caller_id
        self._terminals.live(receiver_id)
        if receiver_id == sender_id:
            raise InvalidInput("a terminal cannot send a message to itself")
        body = _with_suffix(message, sender_suffix(sender_id)) if sender is not None else message
        # The sender line counts too: the store refuses a body over the limit.
        validate.input_text(body, what="message with its sender line")
        await self._check_room(receiver_id, body)
        return await self._enqueue(MessageDraft(sender_id=sender_id, receiver_id=receiver_id, body=body,
                                                idempotency_key=idempotency_key))

    async def _check_room(self, receiver_id: str, body: str) -> None:
        """Refuse a message the receiver's inbox has no room for (``cao_kernel.inbox_limits``)."""
        cap = self._pending_cap
        if cap.active:
            waiting = await self._delivery.list(receiver_id, state=MessageState.PENDING, limit=cap.list_limit)
            cap.check(receiver_id, waiting, body)

    async def _enqueue(self, draft: MessageDraft) -> Message:
        draft = self._hooks.before("cao_before_message_send", draft)
        self._terminals.live(draft.receiver_id)
        gone = self._terminals.gone(draft.receiver_id)
        if gone is not None:
            raise gone
        return await self._delivery.enqueue(draft)

    async def list_messages(
        self, terminal_id: str, *, state: MessageState | str | None = None, limit: int = 10
    ) -> list[Message]:
        validate.terminal_id(terminal_id)
        wanted = MessageState(state) if state is not None else None
        if not 1 <= int(limit) <= 1000:
            raise InvalidInput("limit must be between 1 and 1000")
        return await self._delivery.list(terminal_id, state=wanted, limit=int(limit))

    async def retry_message(self, message_id: int) -> Message:
        return await _by_operator(self._delivery.retry, message_id)

    async def cancel_message(self, message_id: int) -> Message:
        return await _by_operator(self._delivery.cancel, message_id)

    # -- assign -----------------------------------------------------------------------------------

    async def assign(self, caller_id: str, agent_profile: str, message: str, *, model: str | None = None,
                     use_worktree: bool = False, worktree_changes: bool = False) -> DelegationResult:
        """Start a worker and queue the task for it; return at once with the worker's id."""
        validate_message(message)
        caller = self._terminals.live(caller_id)
        request = DelegationRequest(kind=OrchestrationType.ASSIGN, caller_id=caller_id,
                                    agent_profile=agent_profile, message=message, model=model or None,
                                    use_worktree=use_worktree, worktree_changes=worktree_changes)
        request = self._hooks.before("cao_before_assign", request)
        worker = await self._start_worker(caller, request, wait_ready=False)
        self._hooks.after("cao_after_assign_started", request=request, worker=worker)
        task = _with_suffix(request.message, assign_suffix(caller_id))
        queued = await self._delivery.enqueue(MessageDraft(
            sender_id=caller_id, receiver_id=worker.id, body=task, orchestration_type=OrchestrationType.ASSIGN,
        ))
        self._assigns.add(queued.id, request)
        watch = asyncio.ensure_future(self._watch_assign(worker, request, queued.id))
        self._watches.add(watch)
        watch.add_done_callback(self._watches.discard)
        return DelegationResult(
            kind=OrchestrationType.ASSIGN, success=True, agent_profile=request.agent_profile, caller_id=caller_id,
            terminal_id=worker.id,
            message=(f"Assigned {request.agent_profile} in terminal {worker.id}. It is starting and receives the "
                     f"task as soon as it is ready; its results will arrive in your inbox. End your turn to "
                     f"receive them, and delete the worker with delete_terminal when it is done."
                     f"{_worktree_line(worker)}"),
            worktree_branch=worker.worktree_branch, worktree_path=worker.worktree_path,
        )

    async def _watch_assign(self, worker: Terminal, request: DelegationRequest, message_id: int) -> None:
        """Report an assigned worker to its caller if it fails to start, or later stops for good (its
        caller would otherwise wait for results that never come)."""
        live = self._terminals.get(worker.id)
        if live is None:
            return
        if await self._watch_assign_start(live, worker, request, message_id):
            ended = await live.tracker.ended()
            if ended is not None and self._terminals.get(request.caller_id or "") is not None:
                try:
                    shown = await self._terminals.history(worker.id)
                except Exception:  # noqa: BLE001 - its pane may be gone with it
                    shown = live.tracker.screen
                notice = (f"[cao] Assigned worker {worker.id} ({request.agent_profile}) stopped: "
                          f"{ended.evidence}. Whatever it had not sent you yet is lost. Its last lines:\n"
                          f"{_last_lines(shown)}")
                await self._enqueue(MessageDraft(sender_id=worker.id, receiver_id=request.caller_id,
                                                 body=notice))

    async def _watch_assign_start(self, live: LiveTerminal, worker: Terminal, request: DelegationRequest,
                                  message_id: int) -> bool:
        """Whether the worker started; one that did not was deleted and its caller told."""
        try:
            assert live.started is not None
            # Resolved once the worker can act: its cao MCP server too has connected (the task waits in
            # its inbox until then). A worker whose server never does goes like one that failed to start.
            await asyncio.shield(live.started)
        except CaoError as exc:
            self._assigns.drop(message_id)
            if self._terminals.get(worker.id) is None:
                return False  # deleted while starting, by whoever deleted it: nothing to report
            reason = str(exc).splitlines()[0].rstrip(".")
            try:
                await self._terminals.delete_terminal(worker.id)
            except CaoError:
                pass
            notice = (f"[cao] Assigned worker {worker.id} ({request.agent_profile}) failed to start: {reason}. "
                      f"It was deleted; assign the task again or choose another profile.")
            if self._terminals.get(request.caller_id or "") is not None:
                await self._enqueue(MessageDraft(sender_id=worker.id, receiver_id=request.caller_id, body=notice))
            self._assigns.finish(request, worker.id, False, notice)
            return False
        return True

    async def finish_dismissals(self) -> None:
        """Wait until the finished handoff workers still being removed are gone (and reported gone)."""
        await asyncio.gather(*self._dismissals, return_exceptions=True)

    async def aclose(self) -> None:
        """Stop watching assigned workers and waiting for handoffs with a call id (their workers keep
        running for the next kernel, where a retry of the call resumes). Finished workers still being
        removed are removed first: nothing is left running that no handoff will ever read."""
        await self.finish_dismissals()
        watches = [*self._watches, *self._calls.values()]
        for watch in watches:
            watch.cancel()
        await asyncio.gather(*watches, return_exceptions=True)

    # -- handoff ----------------------------------------------------------------------------------

    async def handoff(
        self, caller_id: str | None, agent_profile: str, message: str, *, timeout: float = 600.0,
        call_id: str | None = None, model: str | None = None, use_worktree: bool = False,
        worktree_changes: bool = False, job_id: str | None = None,
    ) -> DelegationResult:
        """Start a worker, give it the task, wait for its answer, remove it, return the answer.

        With a ``call_id``, the call survives its caller's connection and the kernel: a retry with the same
        id joins the running call, gets the answer of one that finished, or, in the next kernel, resumes
        waiting on the same worker (typing its task only if it never went in). With a ``job_id`` it runs
        to its end whatever its caller does, its outcome stored under the id (``handoff_results``).
        """
        validate_message(message)
        if not 1 <= float(timeout) <= 3600:
            raise InvalidInput("timeout must be between 1 and 3600 seconds")
        caller = self._terminals.live(caller_id) if caller_id is not None else None
        request = DelegationRequest(kind=OrchestrationType.HANDOFF, caller_id=caller_id,
                                    agent_profile=agent_profile, message=message, timeout=float(timeout),
                                    model=model or None, use_worktree=use_worktree,
                                    worktree_changes=worktree_changes)
        if job_id is not None:
            assert self._jobs is not None, "the kernel gives orchestration its handoff jobs"
            return await self._jobs.run(job_id, agent_profile=agent_profile, caller_id=caller_id,
                                        work=lambda on_worker: self._handoff_call(caller, request, call_id,
                                                                                  on_worker))
        return await self._handoff_call(caller, request, call_id)

    async def _handoff_call(self, caller: LiveTerminal | None, request: DelegationRequest,
                            call_id: str | None, on_worker: Callable[[str], object] | None = None) -> DelegationResult:
        caller_id = request.caller_id
        if call_id is None:
            return await self._handoff(caller, request, None, on_worker)
        key = f"{caller_id or ''}:{validate.call_id(call_id)}"
        running = self._calls.get(key)
        if running is None:
            finished = self._finished.get(key)
            if finished is not None:
                return finished[1]
            running = self._calls[key] = asyncio.ensure_future(self._handoff(caller, request, key, on_worker))
            running.add_done_callback(lambda task: self._call_ended(key, task))
        # The caller going away (its connection dropped) must not stop the call its retry will join.
        return await asyncio.shield(running)

    def _call_ended(self, key: str, task: asyncio.Task[DelegationResult]) -> None:
        self._calls.pop(key, None)
        if task.cancelled() or task.exception() is not None:
            return
        now = time.monotonic()
        self._finished[key] = (now, task.result())
        for old in [k for k, (at, _) in self._finished.items() if now - at > FINISHED_KEEP_SECONDS]:
            del self._finished[old]
        while len(self._finished) > FINISHED_KEEP:
            del self._finished[next(iter(self._finished))]

    async def _handoff(self, caller: LiveTerminal | None, request: DelegationRequest, key: str | None,
                       on_worker: Callable[[str], object] | None = None) -> DelegationResult:
        request = self._hooks.before("cao_before_handoff", request)
        started = time.monotonic()
        mark = None if key is None else "handoff:" + key.split(":", 1)[1]
        resumed = None if key is None else self._terminals.find(
            lambda live: live.extra.get(HANDOFF_CALL) == key)
        if resumed is not None:
            deadline = float(resumed.extra.get(HANDOFF_DEADLINE) or 0.0)
            request = attrs.evolve(request, timeout=max(0.1, deadline - time.time()))
            live = resumed
        else:
            extra = None if key is None else {HANDOFF_CALL: key,
                                              HANDOFF_DEADLINE: repr(time.time() + request.timeout)}
            worker = await self._start_worker(caller, request, wait_ready=True, extra=extra)
            self._hooks.after("cao_after_handoff_started", request=request, worker=worker)
            live = self._terminals.live(worker.id)
        if on_worker is not None:
            on_worker(live.id)
        task = request.message
        if live.provider is not None and live.provider.capabilities.handoff_banner and request.caller_id:
            task = f"{handoff_banner(request.caller_id)}\n\n{task}"
        result = await self._run_handoff(live, request, task, started, mark=mark, resumed=resumed is not None)
        self._hooks.after("cao_after_handoff_finished", result=result)
        return result

    async def _run_handoff(
        self, live: LiveTerminal, request: DelegationRequest, task: str, started: float, *,
        mark: str | None = None, resumed: bool = False,
    ) -> DelegationResult:
        def result(success: bool, text: str, output: str | None = None) -> DelegationResult:
            return DelegationResult(
                kind=OrchestrationType.HANDOFF, success=success, message=text, output=output,
                agent_profile=request.agent_profile, caller_id=request.caller_id, terminal_id=live.id,
                duration=time.monotonic() - started,
            )

        remaining = request.timeout - (time.monotonic() - started)
        try:
            if resumed:
                await self._give_task_once(live, task, mark, remaining)
            else:
                await self._terminals.send_input(live.id, task, mark=mark)
            await self._wait_done(live, max(0.1, request.timeout - (time.monotonic() - started)))
        except Timeout:
            return result(False, f"Handoff timed out after {request.timeout:g} seconds; the worker {live.id} "
                                 f"was kept so you can inspect it or delete it with delete_terminal.")
        except (AgentFailed, Conflict) as exc:
            return result(False, f"Handoff failed: worker errored ({live.tracker.report.evidence}); the worker "
                                 f"{live.id} was kept. {str(exc).splitlines()[0]}")
        source = "signal" if live.tracker.native_answer is not None else "screen"
        try:
            output = await self._terminals.get_output(live.id, "last")
        except CaoError as exc:
            output = None
            failure = f"Handoff failed: the worker finished but its answer could not be read ({exc})"
        else:
            failure = ""
            self._terminals.timelines.record(live.id, "answer_read", detail={"from": source})
        # The answer is in hand: the caller gets it now, while the worker is asked to exit and removed.
        dismissing = asyncio.ensure_future(self._dismiss(live.id))
        self._dismissals.add(dismissing)
        dismissing.add_done_callback(self._dismissals.discard)
        if output is None:
            return result(False, failure)
        provider = live.record.provider
        done = result(True, f"Successfully handed off to {request.agent_profile} ({provider}) in "
                            f"{time.monotonic() - started:.2f}s", output)
        done = await self._with_worktree(live, done)
        self._terminals.timelines.record(live.id, "handoff_returned")
        return done

    async def _with_worktree(self, live: LiveTerminal, done: DelegationResult) -> DelegationResult:
        """A finished handoff's result, saying where its worker's worktree stays when it holds work (the
        worker is removed next; its worktree goes with it otherwise)."""
        made = worktrees.Worktree.from_extra(live.id, live.extra)
        if made is None:
            return done
        outcome = await self._terminals.inspect_worktree(made)
        if not outcome.kept:
            return done
        live.extra[WORKTREE_REPORTED] = "1"  # the caller hears it here, not again when the worker goes
        return attrs.evolve(done, message=f"{done.message}; {outcome.describe()}",
                            worktree_branch=made.branch, worktree_path=made.path)

    def worktree_kept(self, worker: Terminal, extra: Mapping[str, str], outcome: worktrees.Outcome) -> None:
        """A removed worker's worktree was kept for the work in it: its caller gets a note in its inbox
        (unless a handoff's result told it already)."""
        caller = worker.caller_id
        if not caller or extra.get(WORKTREE_REPORTED) or self._terminals.get(caller) is None:
            return
        note = (f"[cao] Worker {worker.id} ({worker.agent_profile}) was removed; {outcome.describe()}.")
        sending = asyncio.ensure_future(self._enqueue(MessageDraft(sender_id=worker.id, receiver_id=caller,
                                                                   body=note)))
        self._watches.add(sending)  # type: ignore[arg-type]
        sending.add_done_callback(self._note_sent)

    def _note_sent(self, sending: asyncio.Future[Message]) -> None:
        self._watches.discard(sending)  # type: ignore[arg-type]
        if not sending.cancelled() and sending.exception() is not None:
            log.warning("telling a caller that its worker's worktree was kept failed: %s",
                        sending.exception())

    async def _give_task_once(self, live: LiveTerminal, task: str, mark: str | None, timeout: float) -> None:
        """A resumed handoff's worker: its input mark says whether an earlier kernel typed the task."""
        try:
            typed = await self._terminals.input_mark(live.id)
        except Exception:  # noqa: BLE001 - a backend without marks, or a pane that cannot be read
            typed = None
        if typed is not None and typed.mark == mark:
            if not typed.submitted:
                await self._terminals.submit_input(live, typed.mark)
            return
        # The earlier kernel stopped before the task went in (the worker may still be starting).
        await live.tracker.wait_for({TerminalStatus.IDLE, TerminalStatus.COMPLETED}, timeout)
        await self._terminals.send_input(live.id, task, mark=mark)

    async def _wait_done(self, live: LiveTerminal, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while True:
            report = await live.tracker.wait_for({TerminalStatus.COMPLETED, TerminalStatus.IDLE},
                                                 max(0.05, deadline - time.monotonic()))
            if report.status == TerminalStatus.COMPLETED:
                return
            try:
                # Idle must hold: wait for any change for a short while.
                await live.tracker.wait_for({s for s in TerminalStatus if s != TerminalStatus.IDLE},
                                            min(IDLE_SETTLE, max(0.05, deadline - time.monotonic())))
            except Timeout:
                return

    async def _dismiss(self, terminal_id: str) -> None:
        """Ask a finished worker to exit, then delete its terminal."""
        try:
            await self._terminals.exit_terminal(terminal_id)
        except CaoError:
            pass
        try:
            await self._terminals.delete_terminal(terminal_id)
        except NotFound:
            pass
        except Exception:  # noqa: BLE001 - in the background: no caller left to hear of it
            log.exception("removing the finished handoff worker %s failed", terminal_id)

    async def _start_worker(
        self, caller: LiveTerminal | None, request: DelegationRequest, *, wait_ready: bool,
        extra: dict[str, str] | None = None,
    ) -> Terminal:
        requested = TimelineEvent(name="requested", at=time.time(),
                                  detail={"kind": request.kind.value, "caller": request.caller_id or ""})
        profile = self._load_profile(validate.profile_name(request.agent_profile))
        if caller is None:
            return await self._terminals.create_session(CreateTerminalRequest(
                agent_profile=request.agent_profile, working_directory=request.working_directory,
                model=request.model, use_worktree=request.use_worktree,
                worktree_changes=request.worktree_changes,
            ), wait_ready=wait_ready, extra=extra, requested=requested)
        provider = profile.provider or caller.record.provider
        workdir = request.working_directory
        if workdir is None:
            try:
                workdir = await self._terminals.working_directory(caller.id)
            except Exception:  # noqa: BLE001 - fall back to where the caller started
                workdir = None
            workdir = workdir or caller.record.working_directory
        worker = CreateTerminalRequest(
            session_name=caller.record.session_name, agent_profile=request.agent_profile, provider=provider,
            working_directory=workdir, caller_id=caller.id, model=request.model,
            use_worktree=request.use_worktree, worktree_changes=request.worktree_changes,
        )
        if self._pools is not None and not request.use_worktree:  # a warm worker has no worktree
            warm = await self._pools.take(profile, worker, extra=extra, requested=requested)
            if warm is not None:
                return warm
        return await self._terminals.create_terminal(worker, wait_ready=wait_ready, extra=extra,
                                                     requested=requested)

    # -- answer_user_prompt -----------------------------------------------------------------------

    async def answer_user_prompt(self, terminal_id: str, answer: str, *, prompt_id: str | None = None,
                                 as_terminal: str | None = None) -> PromptEvent | None:
        """Upstream's answer (``KernelAPI.answer_user_prompt``): an option of the open prompt, or text."""
        live = self._terminals.live(terminal_id)
        if not isinstance(answer, str) or not answer.strip():
            raise InvalidInput("answer must not be empty")
        if len(answer) > MAX_ANSWER_CHARS:
            raise InvalidInput(f"answer is {len(answer)} characters; the limit is {MAX_ANSWER_CHARS}")
        prompts = self._prompts
        assert prompts is not None, "the kernel gives orchestration its prompt desk"
        resolved = prompts.resolve(terminal_id, answer)
        if resolved is not None:
            option, text = resolved
            return await prompts.answer(terminal_id, option=option, text=text, prompt_id=prompt_id,
                                        as_terminal=as_terminal)
        if live.tracker.status != TerminalStatus.WAITING_USER_ANSWER:
            raise Conflict(f"terminal {terminal_id} is not waiting for an answer (status "
                           f"{live.tracker.status.value})")
        if prompt_id is not None:
            raise Conflict(f"prompt {prompt_id} is no longer open on terminal {terminal_id}")
        if as_terminal is not None and as_terminal not in prompts.callers(live):
            raise Vetoed(f"terminal {as_terminal} may not answer the prompts of terminal {terminal_id}: it "
                         "did not start it (directly or through its workers)")
        # A prompt no reader could type: the answer goes in as text, as upstream does.
        await self._terminals.send_input(terminal_id, answer)
        return None


__all__ = ["AssignWatch", "Orchestration", "assign_suffix", "handoff_banner"]


async def _by_operator(action: Callable[[int], Awaitable[Message]], message_id: int) -> Message:
    """Run an operator's action on one message, with the store's refusals as cao's errors."""
    if isinstance(message_id, bool) or not isinstance(message_id, int) or message_id < 1:
        raise InvalidInput(f"invalid message id {message_id!r}: a positive integer")
    try:
        return await action(message_id)
    except CaoError:
        raise
    except LookupError as exc:
        raise NotFound(str(exc)) from None
    except ValueError as exc:
        raise Conflict(str(exc)) from None
