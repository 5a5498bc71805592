"""Exactly once across crashes and restarts, from the outside: a real cao-server killed and restarted
under traffic among 20 mock agents, then the tmux server killed under waiting messages.

Two seeded runs (``cao_testkit.chaos``) serve every test here. The main one: 150 messages, the server
stopped four times (three SIGKILLs and a SIGTERM; right after a send, in the middle of a burst of sends,
while everything is idle, and right after a send with the next server killed again while it starts),
then the tmux server killed under the running server. A small one: the
server and the tmux server die together, and the next server starts on the messages they left. Each
test reads one promise off a run. A failure prints the run's record; the seed replays its choices.
"""

from __future__ import annotations

import json

import pytest

from cao_testkit.chaos import MOMENTS, ChaosPlan, ChaosResult, run_chaos

pytestmark = [pytest.mark.tmux, pytest.mark.slow]

PLAN = ChaosPlan(seed=7, agents=20, messages=150, kills=("SIGKILL", "SIGKILL", "SIGTERM", "SIGKILL"),
                 tmux_crash=20)
BOTH_DIE = ChaosPlan(seed=8, agents=6, messages=30, kills=("SIGKILL",), tmux_crash=15,
                     tmux_crash_while_down=True)


@pytest.fixture(scope="module")
def chaos(tmp_path_factory: pytest.TempPathFactory) -> ChaosResult:
    return run_chaos(PLAN, tmp_path_factory.mktemp("chaos"))


@pytest.fixture(scope="module")
def both_die(tmp_path_factory: pytest.TempPathFactory) -> ChaosResult:
    return run_chaos(BOTH_DIE, tmp_path_factory.mktemp("both-die"))


@pytest.fixture(params=["under_the_server", "with_the_server"])
def tmux_died(request: pytest.FixtureRequest) -> ChaosResult:
    name = {"under_the_server": "chaos", "with_the_server": "both_die"}[request.param]
    return request.getfixturevalue(name)


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


def test_a_running_server_settles_what_waits_when_tmux_dies_under_it(chaos):
    # Before any restart: the running server sees its terminals go and dead-letters what waits for them.
    assert chaos.tmux_crash is not None and chaos.tmux_crash.settle_s is not None, _record(chaos)


def test_when_tmux_dies_every_waiting_message_is_settled_with_a_reason(tmux_died):
    crash, plan = tmux_died.tmux_crash, tmux_died.plan
    assert crash is not None and crash.acknowledged == plan.tmux_crash, _record(tmux_died)
    assert crash.unsettled == 0 and crash.dead_without_reason == 0, _record(tmux_died)
    # Half the receivers were busy for longer than the phase: their messages could not arrive.
    assert crash.dead > 0, _record(tmux_died)
    assert crash.delivered + crash.dead == crash.acknowledged, _record(tmux_died)


def test_when_tmux_dies_the_agents_programs_end_and_the_server_serves_a_new_agent(tmux_died):
    crash = tmux_died.tmux_crash
    assert crash is not None and crash.orphans == [], _record(tmux_died)
    assert tmux_died.failed_restarts == 0, _record(tmux_died)
    assert crash.fresh_agent_typed == 1, _record(tmux_died)


def test_a_server_that_died_with_tmux_loses_and_duplicates_nothing_before(both_die):
    assert (both_die.lost, both_die.duplicated, both_die.untruthful) == (0, 0, 0), _record(both_die)
