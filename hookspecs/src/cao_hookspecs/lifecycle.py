"""Area 4: lifecycle events.

Two kinds of hook live here:

- ``cao_before_*`` hooks run before an action, in call order (``tryfirst`` first), and are chained:
  each receives the request as rewritten by the ones before it. Return a replacement record to
  rewrite the request, None to keep it, or raise to veto: the action stops with your exception's
  message and nothing is created. Before-hooks support no ``wrapper`` implementations.
- ``cao_after_*`` hooks observe. Each implementation is called on its own; one that raises is logged
  with its plugin's name and the others still run. They run on the kernel's event loop thread, so they
  must return quickly: hand slow work (network posts) to a thread or queue of your own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .markers import _hookspec

if TYPE_CHECKING:
    from .activity import Activity
    from .types import (
        CreateTerminalRequest,
        DelegationRequest,
        DelegationResult,
        DeliveryReceipt,
        Message,
        MessageDraft,
        OpenPrompt,
        PromptDecision,
        PromptEvent,
        SessionInfo,
        StatusReport,
        Terminal,
    )


# -- before: veto or rewrite -------------------------------------------------------------------------


@_hookspec(firstresult=True)
def cao_decide_prompt(terminal: Terminal, prompt: OpenPrompt) -> PromptDecision | None:
    """Decide how a prompt that just opened is answered, before any policy rule is looked at.

    Kind: lookup, ``firstresult=True``: the first non-None decision wins; when every plugin returns
    None, the session's, the profile's and the settings' policy rules decide, and a prompt none of them
    answers waits for a person. A plugin brings its own policy engine this way.

    :param terminal: the waiting terminal (its ``caller_id`` leads to its supervisor).
    :param prompt: the prompt, with the id an answer names and the options an answer picks from.
    :return: a :class:`~cao_hookspecs.prompts.PromptDecision`: an option (and text) to answer with,
        or ``ask=True`` to leave the prompt to a person whatever the rules say; None to let the next
        plugin and then the rules decide. ``by`` names the decider in the audit trail.

    Errors: an exception is logged and counts as None. A decision naming an option the prompt lacks is
    refused (recorded as such) and the prompt waits for a person. Called on the kernel's event loop:
    return quickly.

    Stability: provisional since 0.2.

    Example::

        @hookimpl
        def cao_decide_prompt(terminal, prompt):
            if prompt.prompt.tool == "Bash" and prompt.prompt.arguments.get("command") == "make test":
                return PromptDecision(by="plugin:ci-rules", option=prompt.prompt.numbers_with("allow")[0])
    """


@_hookspec
def cao_before_session_create(request: CreateTerminalRequest) -> CreateTerminalRequest | None:
    """Inspect, rewrite or veto the creation of a new session (and its first terminal).

    Kind: before-hook (chained; raise to veto).

    :param request: the session's first terminal as requested (profile, provider, name, directory...).
    :return: a replacement :class:`~cao_hookspecs.types.CreateTerminalRequest`, or None to keep it.

    Errors: raising vetoes: no session and no terminal is created and the caller gets the message.

    Stability: stable since 0.1.

    Example::

        @hookimpl
        def cao_before_session_create(request):
            if request.provider == "codex":
                raise PermissionError("codex sessions are disabled on this machine")
    """


@_hookspec
def cao_before_terminal_create(request: CreateTerminalRequest) -> CreateTerminalRequest | None:
    """Inspect, rewrite or veto the creation of any terminal (first of a session, worker, ...).

    Kind: before-hook (chained; raise to veto).

    :param request: the terminal as requested; ``session_name`` is always set.
    :return: a replacement request, or None to keep it.

    Errors: raising vetoes: nothing is created and the caller gets the message.

    Stability: stable since 0.1.

    Example::

        @hookimpl
        def cao_before_terminal_create(request):
            return attrs.evolve(request, model=request.model or "small-model")
    """


@_hookspec
def cao_before_message_send(draft: MessageDraft) -> MessageDraft | None:
    """Inspect, rewrite or veto an inbox message before it is stored.

    Kind: before-hook (chained; raise to veto).

    :param draft: sender, receiver and body as the sender wrote them (sender suffix included).
    :return: a replacement :class:`~cao_hookspecs.types.MessageDraft`, or None to keep it.

    Errors: raising vetoes: nothing is stored and the sender gets the message.

    Stability: stable since 0.1.

    Example::

        @hookimpl
        def cao_before_message_send(draft):
            return attrs.evolve(draft, body=redact(draft.body))
    """


@_hookspec
def cao_before_handoff(request: DelegationRequest) -> DelegationRequest | None:
    """Inspect, rewrite or veto a handoff before its worker is created.

    Kind: before-hook (chained; raise to veto).

    :param request: caller, worker profile, task text and timeout.
    :return: a replacement :class:`~cao_hookspecs.types.DelegationRequest`, or None.

    Errors: raising vetoes: no worker is created; the caller's handoff fails with the message.

    Stability: stable since 0.1.

    Example::

        @hookimpl
        def cao_before_handoff(request):
            return attrs.evolve(request, timeout=min(request.timeout, 300))
    """


@_hookspec
def cao_before_assign(request: DelegationRequest) -> DelegationRequest | None:
    """Inspect, rewrite or veto an assign before its worker is created.

    Kind: before-hook (chained; raise to veto).

    :param request: caller, worker profile and task text.
    :return: a replacement :class:`~cao_hookspecs.types.DelegationRequest`, or None.

    Errors: raising vetoes: no worker is created; the caller's assign fails with the message.

    Stability: stable since 0.1.

    Example::

        @hookimpl
        def cao_before_assign(request):
            if request.agent_profile == "deployer":
                raise PermissionError("deployer may only be reached by handoff")
    """


# -- after: observe ----------------------------------------------------------------------------------


@_hookspec
def cao_after_session_created(session: SessionInfo, terminal: Terminal) -> None:
    """A session was created, with its first terminal.

    Kind: observer (each implementation isolated; the return value is ignored).

    :param session: the new session.
    :param terminal: its first terminal (fired after ``cao_after_terminal_created`` for it).

    Errors: an exception is logged with the plugin's name; the session is unaffected.

    Stability: stable since 0.1.

    Example::

        @hookimpl
        def cao_after_session_created(session, terminal):
            log.info("session %s started with %s", session.name, terminal.agent_profile)
    """


@_hookspec
def cao_after_session_killed(session_name: str, terminal_ids: list[str]) -> None:
    """A session and all its terminals were deleted.

    Kind: observer.

    :param session_name: the deleted session.
    :param terminal_ids: ids of the terminals that were deleted with it.

    Errors: an exception is logged; the deletion is unaffected.

    Stability: stable since 0.1.

    Example::

        @hookimpl
        def cao_after_session_killed(session_name):
            metrics.sessions.dec()
    """


@_hookspec
def cao_after_terminal_created(terminal: Terminal) -> None:
    """A terminal was created and its agent CLI started.

    Also called when a warm worker (started ahead in its own ``cao-pool-*`` session) is taken by a
    delegation: it then appears in its caller's session, with its new ``session_name`` and
    ``caller_id``, as any new worker does.

    Kind: observer.

    :param terminal: the new terminal (status as first detected, often ``unknown``).

    Errors: an exception is logged; the terminal is unaffected.

    Stability: stable since 0.1.

    Example::

        @hookimpl
        def cao_after_terminal_created(terminal):
            log.info("%s runs %s", terminal.id, terminal.provider)
    """


@_hookspec
def cao_after_terminal_killed(terminal: Terminal) -> None:
    """A terminal was deleted (its processes are gone).

    Kind: observer.

    :param terminal: the terminal as it was last known.

    Errors: an exception is logged; the deletion is unaffected.

    Stability: stable since 0.1.

    Example::

        @hookimpl
        def cao_after_terminal_killed(terminal):
            log.info("%s gone", terminal.id)
    """


@_hookspec
def cao_after_status_changed(terminal: Terminal, old: StatusReport, new: StatusReport) -> None:
    """A terminal's status changed (for example processing -> completed, or -> waiting_user_answer).

    Kind: observer. Fired once per change, never for a repeated reading of the same status.

    :param terminal: the terminal (``terminal.status`` is the new status).
    :param old: the previous reading.
    :param new: the new reading, with ``evidence`` and ``since``.

    Errors: an exception is logged; status tracking is unaffected.

    Stability: stable since 0.1.

    Example::

        @hookimpl
        def cao_after_status_changed(terminal, new):
            if new.status == "waiting_user_answer":
                notify(f"{terminal.name} needs you")
    """


@_hookspec
def cao_after_prompt(event: PromptEvent) -> None:
    """Something happened to a prompt: it opened, was answered, an answer was refused, it escalated
    after its timeout, or it left the screen.

    Kind: observer. Fired once per event, in order, after the event is in the terminal's audit trail.

    :param event: ``event.kind`` says what happened; ``event.prompt`` is the prompt (its id, terminal
        and record); ``by``, ``option``, ``text`` and ``detail`` say who answered what, or why not.

    Errors: an exception is logged; the prompt is unaffected.

    Stability: provisional since 0.2.

    Example::

        @hookimpl
        def cao_after_prompt(event):
            if event.kind == "opened":
                post(f"{event.prompt.prompt.question} -> cao terminal answer {event.prompt.terminal_id}")
    """


@_hookspec
def cao_after_activity(activity: Activity) -> None:
    """A plugin reported what its own work did (``KernelAPI.report_activity``): a flow fired, a workflow
    run or step started or ended, an approval is awaited.

    Kind: observer. Fired once per report, in the order the reports arrive.

    :param activity: ``activity.kind`` (dotted, led by its area: ``flow.run``, ``workflow.step``) says
        what happened; ``activity.data`` is a JSON object (by convention ``run_id``, ``state``,
        ``summary`` and, when there is one, ``session_name``); ``activity.at`` is when it was reported.

    Errors: an exception is logged; the report and the work it describes are unaffected.

    Stability: [experimental] since 0.3.

    Example::

        @hookimpl
        def cao_after_activity(activity):
            if activity.kind == "workflow.approval" and activity.data.get("state") == "waiting":
                notify(activity.data["summary"])
    """


@_hookspec
def cao_after_message_queued(message: Message) -> None:
    """A message was stored (durably) in its receiver's inbox.

    Kind: observer.

    :param message: the stored message (state ``pending``).

    Errors: an exception is logged; the message stays queued.

    Stability: stable since 0.1.

    Example::

        @hookimpl
        def cao_after_message_queued(message):
            log.info("message %d for %s", message.id, message.receiver_id)
    """


@_hookspec
def cao_after_message_delivered(message: Message, receipt: DeliveryReceipt) -> None:
    """A message was typed into its receiver.

    Kind: observer.

    :param message: the message (state ``delivered``).
    :param receipt: how and when it was delivered.

    Errors: an exception is logged; the delivery stands.

    Stability: stable since 0.1.

    Example::

        @hookimpl
        def cao_after_message_delivered(message, receipt):
            log.info("message %d delivered at %s", message.id, receipt.delivered_at)
    """


@_hookspec
def cao_after_message_failed(message: Message, reason: str) -> None:
    """A delivery attempt failed; the message will be retried (``message.not_before``).

    Kind: observer.

    :param message: the message after the failure (state ``pending``, ``attempts`` counted).
    :param reason: why the attempt failed.

    Errors: an exception is logged; the retry still happens.

    Stability: stable since 0.1.

    Example::

        @hookimpl
        def cao_after_message_failed(message, reason):
            log.warning("message %d: %s", message.id, reason)
    """


@_hookspec
def cao_after_message_dead(message: Message, reason: str) -> None:
    """A message ran out of delivery attempts and was dead-lettered; its sender is told.

    Kind: observer.

    :param message: the message (state ``dead``).
    :param reason: the last failure.

    Errors: an exception is logged.

    Stability: stable since 0.1.

    Example::

        @hookimpl
        def cao_after_message_dead(message, reason):
            alert(f"message {message.id} to {message.receiver_id} lost: {reason}")
    """


@_hookspec
def cao_after_message_uncertain(message: Message, reason: str) -> None:
    """A delivery was cut short and nothing records whether its text went in: the message is marked
    ``uncertain`` and never typed again (its provider chose ``uncertain_delivery="report"``); its sender
    is told.

    Kind: observer.

    :param message: the message (state ``uncertain``).
    :param reason: why it cannot be known.

    Errors: an exception is logged.

    Stability: provisional since 0.2.

    Example::

        @hookimpl
        def cao_after_message_uncertain(message, reason):
            alert(f"message {message.id} to {message.receiver_id} may not have arrived: {reason}")
    """


@_hookspec
def cao_after_handoff_started(request: DelegationRequest, worker: Terminal) -> None:
    """A handoff's worker was created; the caller now blocks until it answers.

    Kind: observer.

    :param request: the handoff as finally requested (after before-hooks).
    :param worker: the worker terminal.

    Errors: an exception is logged; the handoff continues.

    Stability: stable since 0.1.

    Example::

        @hookimpl
        def cao_after_handoff_started(request, worker):
            log.info("%s -> %s", request.caller_id, worker.id)
    """


@_hookspec
def cao_after_handoff_finished(result: DelegationResult) -> None:
    """A handoff ended: answered, timed out or failed.

    Kind: observer.

    :param result: success flag, the worker's answer (``output``), summary and duration.

    Errors: an exception is logged; the caller still gets its result.

    Stability: stable since 0.1.

    Example::

        @hookimpl
        def cao_after_handoff_finished(result):
            metrics.handoff_seconds.observe(result.duration)
    """


@_hookspec
def cao_after_assign_started(request: DelegationRequest, worker: Terminal) -> None:
    """An assign's worker was created; the caller already has its id and goes on working.

    Kind: observer.

    :param request: the assign as finally requested.
    :param worker: the worker terminal (still starting).

    Errors: an exception is logged; the assign continues.

    Stability: stable since 0.1.

    Example::

        @hookimpl
        def cao_after_assign_started(request, worker):
            log.info("assigned %s to %s", request.agent_profile, worker.id)
    """


@_hookspec
def cao_after_assign_finished(result: DelegationResult) -> None:
    """An assign's worker received its task, or failed to start (the caller was told by inbox).

    Kind: observer.

    :param result: ``success`` says whether the task reached the worker.

    Errors: an exception is logged.

    Stability: stable since 0.1.

    Example::

        @hookimpl
        def cao_after_assign_finished(result):
            if not result.success:
                alert(result.message)
    """
