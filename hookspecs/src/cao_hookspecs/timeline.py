"""A terminal's timeline: when each step of its start and of the work given to it happened.

The kernel records one ``TimelineEvent`` per step, in the order they happen, and keeps a terminal's
timeline for a while after the terminal is gone, so a handoff's worker can be read once the handoff has
returned. ``KernelAPI.get_timeline`` reads it. Names are one of ``TIMELINE_STEPS``, or ``signal:<event>``
for a native signal of the CLI (mapped to a status or not), or a plugin's own name with a dot in it.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from .prompts import _string_mapping

#: The kernel's steps, in the order a delegated worker goes through them. Every one is recorded once per
#: terminal except ``task_typed``, ``input_resubmitted``, ``first_output`` and ``answer_ready`` (once per
#: input and turn; ``input_resubmitted`` at most twice per input), and those after ``cli_ready`` that a
#: terminal's path does not take.
TIMELINE_STEPS = (
    "requested",  # a handoff or assign asked for this worker (detail: kind, caller)
    "terminal_created",  # its record was made (the terminal's created_at)
    "process_started",  # the backend runs the CLI (detail: pid when the backend knows it)
    "first_screen",  # the CLI drew something
    "cli_ready",  # the provider read it ready for input (detail: evidence)
    "mcp_started",  # cao's MCP server process for the agent started (as the relay reports)
    "mcp_asked",  # the agent sent it ``initialize``
    "mcp_initialized",  # it answered the agent's ``initialize``
    "tools_listed",  # it handed back the last of the lists the agent asked for (detail: received)
    "gate_open",  # the readiness gate opened: the agent can use cao's tools (detail: settle)
    "gate_failed",  # the gate's bounded wait ran out
    "pool_taken",  # a warm worker was handed to a delegation (detail: pooled_for seconds)
    "task_typed",  # an input was typed and submitted (detail: mark or message)
    "input_resubmitted",  # the input still sat at the prompt, unsent: Enter pressed again (detail: attempt)
    "first_output",  # the CLI's first screen change after the input went out
    "answer_ready",  # the turn ended (``completed``, or ``idle`` after its first output)
    "answer_read",  # a handoff has the answer (detail: from signal or screen)
    "handoff_returned",  # the handoff's result went back to its caller
    "terminal_gone",  # the terminal was removed
)


@attrs.frozen(kw_only=True)
class TimelineEvent:
    """One step of a terminal's timeline: its ``name`` (see ``TIMELINE_STEPS``), when it happened
    (``at``, Unix time) and what else is worth knowing about it (``detail``, text values)."""

    name: str
    at: float
    detail: Mapping[str, str] = attrs.field(factory=dict, converter=_string_mapping)


__all__ = ["TIMELINE_STEPS", "TimelineEvent"]
