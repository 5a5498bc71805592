"""Example arguments of every observer hook a notifier forwards, and the notices they become: what a
notifier's plugin and payload tests fire and render.

- ``example_hook_calls()``: one observer call per event kind.
- ``example_notices()``: event kind -> the ``Notice`` that ``cao_notify_core.events.describe`` builds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cao_notify_core.events import Notice

__all__ = ["example_hook_calls", "example_notices"]


def example_hook_calls() -> list[tuple[str, dict[str, Any], str]]:
    """One observer call per event kind: ``(hook name, keyword arguments, event kind)``.

    Useful to fire every forwarded event through ``kernel.hooks.after(hook, **kwargs)``.
    """
    from cao_hookspecs import (
        DelegationResult,
        DeliveryReceipt,
        Message,
        SessionInfo,
        StatusReport,
        Terminal,
    )

    supervisor = Terminal(id="0a1b2c3d", name="supervisor-1a2b", session_name="cao-demo", provider="mock_cli",
                          agent_profile="supervisor", working_directory="~/projects/demo")
    worker = Terminal(id="4e5f6a7b", name="developer-3c4d", session_name="cao-demo", provider="mock_cli",
                      agent_profile="developer", caller_id=supervisor.id, working_directory="~/projects/demo")
    gone = "receiver terminal no longer exists"
    message = Message(id=7, sender_id=worker.id, receiver_id=supervisor.id, body="tests pass on main",
                      state="delivered", created_at=1_700_000_000.0, attempts=1)
    dead = Message(id=8, sender_id=supervisor.id, receiver_id=worker.id, body="please rerun",
                   state="dead", created_at=1_700_000_000.0, attempts=5, last_error=gone)
    handoff = DelegationResult(kind="handoff", success=True, agent_profile="developer",
                               message="Successfully handed off to developer (mock_cli)",
                               caller_id=supervisor.id,
                               terminal_id=worker.id, output="The design fits on one page.", duration=1.25)
    assign = DelegationResult(kind="assign", success=False, agent_profile="developer",
                              message="Task could not be delivered: worker exited", caller_id=supervisor.id,
                              terminal_id=worker.id)
    receipt = DeliveryReceipt(message_id=7, terminal_id=supervisor.id, delivered_at=1_700_000_000.0)
    return [
        ("cao_after_terminal_created", {"terminal": supervisor}, "terminal_created"),
        ("cao_after_session_created", {"session": SessionInfo(name="cao-demo"), "terminal": supervisor},
         "session_created"),
        ("cao_after_message_delivered", {"message": message, "receipt": receipt}, "message_delivered"),
        ("cao_after_message_dead", {"message": dead, "reason": gone}, "message_dead"),
        ("cao_after_handoff_finished", {"result": handoff}, "handoff_finished"),
        ("cao_after_assign_finished", {"result": assign}, "assign_finished"),
        ("cao_after_status_changed",
         {"terminal": worker, "old": StatusReport(status="processing"),
          "new": StatusReport(status="waiting_user_answer", evidence="permission prompt")},
         "waiting_user_answer"),
        ("cao_after_terminal_killed", {"terminal": worker}, "terminal_killed"),
        ("cao_after_session_killed", {"session_name": "cao-demo", "terminal_ids": [supervisor.id, worker.id]},
         "session_killed"),
    ]


def example_notices(at: float = 1_700_000_000.5) -> dict[str, Notice]:
    """Event kind -> its notice, in the order of ``example_hook_calls``: what ``describe`` builds from
    the arguments the observers queue. A service's payload tests render them."""
    from cao_notify_core.events import describe

    notices = {}
    for hook, kwargs, kind in example_hook_calls():
        args = dict(kwargs)
        if hook == "cao_after_status_changed":
            # The observer queues the new report only, under the name ``describe`` takes.
            args = {"terminal": kwargs["terminal"], "report": kwargs["new"]}
        notices[kind] = describe(kind, args, at)
    return notices
