"""The handoff result store and the settings of this part: job ids, keeping, restart marking, and the
terminal cap's value (real SQLite files in temporary folders)."""

from __future__ import annotations

import re
import stat
import time

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from cao_hookspecs import DelegationResult, OrchestrationType
from cao_hookspecs.handoff_jobs import job_id_problem
from cao_kernel.errors import Conflict, InvalidInput, TerminalLimit
from cao_kernel.handoff_results import HandoffResults, keep_seconds
from cao_kernel.terminal_cap import TerminalCap, max_terminals

JOB = re.compile(r"[0-9a-f]{32}")
A, B = "a" * 32, "b" * 32


@given(st.one_of(st.text(), st.from_regex(JOB, fullmatch=True), st.integers(), st.none()))
@example("a" * 32 + "\n")
@example("A" * 32)
def test_a_job_id_is_exactly_32_lowercase_hex(value: object) -> None:
    problem = job_id_problem(value)
    assert (problem is None) == (isinstance(value, str) and JOB.fullmatch(value) is not None)
    if problem is not None and isinstance(value, str) and len(value) > 8:
        assert value not in problem  # never quoted whole


def _result(success: bool) -> DelegationResult:
    return DelegationResult(kind=OrchestrationType.HANDOFF, success=success, agent_profile="developer",
                            terminal_id="0badc0de", message="done" if success else "Handoff timed out",
                            output="the answer" if success else None)


def test_results_are_kept_across_reopening_and_running_ones_end_as_interrupted(tmp_path) -> None:
    path = tmp_path / "db" / "handoff-results.db"
    store = HandoffResults(path, keep=3600)
    store.start(A, agent_profile="developer", caller_id=None)
    store.start(B, agent_profile="reviewer", caller_id="0badc0de")
    with pytest.raises(Conflict, match="already in use"):
        store.start(A, agent_profile="developer", caller_id=None)
    store.worker(B, "1234abcd")
    store.finish(A, _result(True))
    assert store.get(B).state == "running" and store.get(B).terminal_id == "1234abcd"
    store.close()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600

    again = HandoffResults(path, keep=3600)  # the next server
    done, cut = again.get(A), again.get(B)
    assert (done.state, done.last_message, done.terminal_id, done.error_message) == (
        "completed", "the answer", "0badc0de", None)
    assert cut.state == "error" and "stopped before this handoff finished" in cut.error_message
    assert cut.terminal_id == "1234abcd" and cut.caller_id == "0badc0de"
    again.fail(A, "ignored")  # the store writes what it is told; the runner decides
    assert again.get("c" * 32) is None
    again.close()


def test_a_result_past_its_keeping_time_is_gone(tmp_path) -> None:
    store = HandoffResults(tmp_path / "r.db", keep=0.2)
    store.start(A, agent_profile="developer", caller_id=None)
    store.finish(A, _result(False))
    assert store.get(A).error_message == "Handoff timed out"
    time.sleep(0.3)
    assert store.get(A) is None
    store.start(B, agent_profile="developer", caller_id=None)  # a write prunes the old row for good
    assert store._conn.execute("SELECT count(*) FROM handoff_results").fetchone()[0] == 1
    store.close()


@pytest.mark.parametrize("raw", ["0", "-1", "abc", "4000", "nan"])
def test_a_bad_keeping_time_is_named(raw: str) -> None:
    with pytest.raises(InvalidInput, match="CAO_HANDOFF_RESULT_DAYS"):
        keep_seconds({"CAO_HANDOFF_RESULT_DAYS": raw})
    assert keep_seconds({}) == 14 * 86400 and keep_seconds({"CAO_HANDOFF_RESULT_DAYS": "0.5"}) == 43200


@given(st.one_of(st.none(), st.text(max_size=6), st.integers(-5, 50).map(str)))
def test_the_terminal_cap_setting(raw: str | None) -> None:
    settings = {} if raw is None else {"CAO_MAX_TERMINALS": raw}
    text = (raw or "").strip()
    if text in ("", "0"):
        assert max_terminals(settings) is None
    elif text.isascii() and text.isdigit():
        assert max_terminals(settings) == int(text)
    else:
        with pytest.raises(InvalidInput, match="CAO_MAX_TERMINALS"):
            max_terminals(settings)


def test_a_reserved_slot_counts_until_released() -> None:
    cap = TerminalCap({"CAO_MAX_TERMINALS": "2"})
    cap.reserve("00000001", live={"00000000"})
    with pytest.raises(TerminalLimit, match="Terminal limit reached: 2 live"):
        cap.reserve("00000002", live={"00000000"})
    cap.release("00000001")
    cap.reserve("00000002", live={"00000000"})
