"""Exactly once across crashes and restarts, from the outside: a real cao-server killed and restarted
under traffic among 20 mock agents, then the tmux server killed under waiting messages.

One seeded run (``cao_testkit.chaos``) serves every test here: 150 messages, the server stopped four
times (three SIGKILLs and a SIGTERM; right after a send, in the middle of a burst of sends, and while
everything is idle), then a last phase that kills the tmux server. Each test reads one promise off it.
A failure prints the run's record; the seed replays its choices.
"""

from __future__ import annotations

import json

import pytest

from cao_testkit.chaos import MOMENTS, ChaosPlan, ChaosResult, run_chaos

pytestmark = [pytest.mark.tmux, pytest.mark.slow]

PLAN = ChaosPlan(seed=7, agents=20, messages=150, kills=("SIGKILL", "SIGKILL", "SIGTERM", "SIGKILL"),
                 tmux_crash=20)


@pytest.fixture(scope="module")
def chaos(tmp_path_factory: pytest.TempPathFactory) -> ChaosResult:
    return run_chaos(PLAN, tmp_path_factory.mktemp("chaos"))


def _record(result: ChaosResult) -> str:
    return json.dumps(result.as_dict(), indent=1)


def test_the_run_stopped_the_server_at_every_kind_of_moment(chaos):
    moments = [kill.moment for kill in chaos.kills]
    assert set(MOMENTS) <= set(moments), _record(chaos)
    assert [kill.signal for kill in chaos.kills if kill.moment != "tmux_gone"] == list(PLAN.kills)
    # Most sends are acknowledged; only those on their way when the server died may not be.
    assert chaos.acknowledged >= PLAN.messages - PLAN.burst, _record(chaos)


def test_no_acknowledged_message_is_lost_or_typed_twice(chaos):
    assert (chaos.lost, chaos.duplicated) == (0, 0), _record(chaos)


def test_the_servers_states_agree_with_the_panes(chaos):
    assert chaos.untruthful == 0, _record(chaos)


def test_every_restart_comes_up_healthy_and_every_stop_ends_the_server(chaos):
    assert chaos.failed_restarts == 0, _record(chaos)
    assert all(kill.stopped_on_signal and kill.attempts == 1 for kill in chaos.kills), _record(chaos)


def test_when_tmux_dies_every_waiting_message_is_settled_with_a_reason(chaos):
    crash = chaos.tmux_crash
    assert crash is not None and crash.acknowledged == PLAN.tmux_crash, _record(chaos)
    # Settled by the running server, before the restart, and nothing reopened by the restart.
    assert crash.settle_s is not None, _record(chaos)
    assert crash.unsettled == 0 and crash.dead_without_reason == 0, _record(chaos)
    assert crash.dead > 0, _record(chaos)  # half the receivers were busy: their messages could not arrive


def test_when_tmux_dies_the_agents_programs_end_and_the_server_serves_a_new_agent(chaos):
    crash = chaos.tmux_crash
    assert crash is not None and crash.orphans == [], _record(chaos)
    assert crash.fresh_agent_typed == 1, _record(chaos)
