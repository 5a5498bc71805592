"""A handoff's durable result, read back by its job id (``KernelAPI.get_handoff_result``).

A caller that may stop waiting before a handoff ends (an MCP client's tool-call limit, a script that is
interrupted) names the call with a job id it chose: 32 lowercase hex characters, upstream's form
(``uuid4().hex``). The job id is the only key to the answer, so it is never guessable and never logged
whole. Field names are upstream's ``GET /handoff-results/{job_id}`` answer; cao adds the profile and the
caller.
"""

from __future__ import annotations

import re

import attrs

#: A job id: 32 lowercase hex characters.
JOB_ID_RE = re.compile(r"[0-9a-f]{32}\Z")
JOB_ID_PATTERN = "^[0-9a-f]{32}$"

RUNNING = "running"
COMPLETED = "completed"
ERROR = "error"
#: ``running``: the worker is on it; ``completed``: its answer is in ``last_message``; ``error``: the
#: handoff failed (timed out, the worker errored, cao stopped) and ``error_message`` says how.
JOB_STATES = (RUNNING, COMPLETED, ERROR)


@attrs.frozen(kw_only=True)
class HandoffJob:
    """One handoff's state, as stored under its job id. Times are Unix times."""

    job_id: str
    state: str
    terminal_id: str | None = None
    last_message: str | None = None
    error_message: str | None = None
    created_at: float = 0.0
    updated_at: float = 0.0
    agent_profile: str | None = None
    caller_id: str | None = None


def job_id_problem(value: object) -> str | None:
    """What is wrong with a job id, or None when it is one (a short prefix only is ever quoted)."""
    if isinstance(value, str) and JOB_ID_RE.match(value):
        return None
    shown = repr(value[:8] + "...") if isinstance(value, str) and len(value) > 8 else repr(value)
    return f"invalid job id {shown}: expected 32 lowercase hex characters (as uuid4().hex writes them)"


__all__ = ["COMPLETED", "ERROR", "HandoffJob", "JOB_ID_PATTERN", "JOB_ID_RE", "JOB_STATES", "RUNNING",
           "job_id_problem"]
