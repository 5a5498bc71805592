"""Warm worker pools on real tmux with mock agents: filled ahead, taken by a delegation that matches,
filled again, stopped when idle too long and when the kernel closes, never taken when they do not
match."""

from __future__ import annotations

import asyncio
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cao_hookspecs import CreateTerminalRequest, hookimpl
from cao_kernel.errors import InvalidInput, Vetoed
from cao_kernel.pool_config import PoolConfig, parse_pool, parse_settings
from cao_kernel.pools import POOL_KEY
from cao_testkit.waiting import eventually

pytestmark = pytest.mark.tmux


async def _pooled(kernel) -> list:
    """The warm workers waiting now: terminals of pool sessions."""
    found = []
    for info in await kernel.list_sessions():
        if info.name.startswith("cao-pool-"):
            found += [t for t in await kernel.list_terminals(info.name) if t.status.value == "idle"]
    return found


async def _filled(kernel, size: int) -> list:
    """Wait until the pool holds ``size`` warm workers; those workers."""
    async def full():
        found = await _pooled(kernel)
        return found if len(found) == size else None

    return await eventually(full, 20, "the pool did not fill", interval=0.05)


async def _supervisor(kernel, name: str, workdir: str):
    return await kernel.create_session(CreateTerminalRequest(
        agent_profile="supervisor", session_name=name, working_directory=workdir))


def _names(events) -> list[str]:
    return [event.name for event in events]


async def test_a_handoff_takes_a_warm_worker_and_the_pool_fills_again(make_kernel, workdir):
    async with make_kernel(agents=("supervisor", "developer"), CAO_POOLS="developer=1") as kernel:
        sup = await _supervisor(kernel, "warm", workdir)
        (warm,) = await eventually(lambda: _pooled(kernel), 15, "no warm worker started", interval=0.05)
        assert warm.agent_profile == "developer" and warm.caller_id is None
        # The pool starts once the session's own CLI is ready, not alongside its start.
        (ready,) = [s.at for s in await kernel.get_timeline(sup.id) if s.name == "cli_ready"]
        assert (await kernel.get_timeline(warm.id))[0].at >= ready
        assert (await kernel.terminals.get_terminal(warm.id)).working_directory == workdir

        handoff = asyncio.ensure_future(kernel.handoff(sup.id, "developer", "__mock_sleep_1", timeout=30))

        async def working_for_the_supervisor():
            return [t for t in await kernel.list_terminals(sup.session_name) if t.id == warm.id]

        (moved,) = await eventually(working_for_the_supervisor, 10, "the warm worker never joined", 0.02)
        assert moved.caller_id == sup.id and moved.session_name == sup.session_name
        assert warm.session_name not in {info.name for info in await kernel.list_sessions()}
        result = await handoff
        assert result.success and result.output == "slept 1s", result
        assert result.terminal_id == warm.id
        steps = await kernel.get_timeline(warm.id)
        names = _names(steps)
        # Started and ready before the request: after it, only the take and the work.
        after = names[names.index("requested"):]
        assert after[:3] == ["requested", "pool_taken", "task_typed"], names
        assert "cli_ready" in names[:names.index("requested")] and "cli_ready" not in after
        assert float(steps[names.index("pool_taken")].detail["pooled_for"]) > 0

        (again,) = await eventually(lambda: _pooled(kernel), 15, "the pool did not fill again", interval=0.05)
        assert again.id != warm.id


async def test_an_assign_takes_a_warm_worker_whose_task_goes_in_at_once(make_kernel, workdir):
    async with make_kernel(agents=("supervisor", "developer"), CAO_POOLS="developer=2") as kernel:
        sup = await _supervisor(kernel, "warm-assign", workdir)
        pooled = await _filled(kernel, 2)
        result = await kernel.assign(sup.id, "developer", "assigned work")
        assert result.success and result.terminal_id in {t.id for t in pooled}, result
        steps = await eventually(lambda: _delivered(kernel, result.terminal_id), 10, "task not typed", 0.02)
        names = _names(steps)
        assert names[names.index("requested"):][:3] == ["requested", "pool_taken", "task_typed"], names


async def _delivered(kernel, terminal_id):
    steps = await kernel.get_timeline(terminal_id)
    return steps if any(e.name == "task_typed" and "message" in e.detail for e in steps) else None


async def test_a_worker_for_another_directory_is_started_fresh(make_kernel, workdir, tmp_path):
    other = tmp_path / "elsewhere"
    other.mkdir()
    async with make_kernel(agents=("supervisor", "developer"), CAO_POOLS="developer=1") as kernel:
        await _supervisor(kernel, "here", workdir)
        (warm,) = await eventually(lambda: _pooled(kernel), 15, "no warm worker started", interval=0.05)
        sup = await _supervisor(kernel, "there", str(other))
        result = await kernel.handoff(sup.id, "developer", "elsewhere", timeout=30)
        assert result.success and result.terminal_id != warm.id
        assert warm.id in {t.id for t in await _pooled(kernel)}


async def test_idle_warm_workers_stop_after_their_time_to_live(make_kernel, workdir):
    async with make_kernel(agents=("supervisor", "developer"), CAO_POOLS="developer=1",
                           CAO_POOL_TTL="1") as kernel:
        await _supervisor(kernel, "ttl", workdir)
        (warm,) = await eventually(lambda: _pooled(kernel), 15, "no warm worker started", interval=0.05)
        started = time.monotonic()
        await eventually(lambda: kernel.terminals.get(warm.id) is None, 10, "it kept running", 0.05)
        assert time.monotonic() - started < 5
        assert await _pooled(kernel) == []
        steps = await kernel.get_timeline(warm.id)
        assert _names(steps)[-1] == "terminal_gone"


async def test_closing_the_kernel_stops_warm_workers_and_a_later_kernel_stops_leftovers(
        make_kernel, workdir, tmux_socket):
    import subprocess

    def windows() -> list[str]:
        out = subprocess.run(["tmux", "-S", tmux_socket, "list-windows", "-a", "-F", "#{session_name}"],
                             capture_output=True, text=True).stdout
        return [line for line in out.split() if line.startswith("cao-pool-")]

    async with make_kernel(agents=("supervisor", "developer"), CAO_POOLS="developer=2") as kernel:
        await _supervisor(kernel, "closing", workdir)
        await eventually(lambda: len(windows()) == 2, 15, "the pool did not fill", interval=0.05)
    assert windows() == []

    # A kernel that ends without closing leaves its warm workers; the next one stops them.
    first = make_kernel(agents=("developer",))
    await first.start()
    try:
        await first.terminals.create_session(CreateTerminalRequest(
            agent_profile="developer", session_name="pool-left", working_directory=workdir),
            extra={POOL_KEY: "developer"})
        assert windows() == ["cao-pool-left"]
        async with make_kernel(agents=("developer",)):
            assert windows() == []
    finally:
        await first.aclose()


class Refuse:
    """A guardrail: no more developers."""

    @hookimpl
    def cao_before_terminal_create(self, request):
        if request.agent_profile == "developer":
            raise Vetoed("no more developers")
        return request


async def test_a_vetoed_profile_gets_no_warm_workers(make_kernel, register_plugin, workdir):
    kernel = make_kernel(agents=("supervisor", "developer"), CAO_POOLS="developer=1")
    with register_plugin(kernel, Refuse(), name="refuse"):
        async with kernel:
            sup = await _supervisor(kernel, "vetoed", workdir)
            await asyncio.sleep(0.5)
            assert await _pooled(kernel) == []
            with pytest.raises(Vetoed, match="no more developers"):
                await kernel.handoff(sup.id, "developer", "x", timeout=10)


async def test_bad_pool_settings_stop_the_start_naming_the_setting(make_kernel):
    kernel = make_kernel(CAO_POOLS="developer=lots")
    with pytest.raises(InvalidInput, match="CAO_POOLS: 'developer=lots' is not 'profile=size'"):
        await kernel.start()
    await kernel.aclose()
    kernel = make_kernel(CAO_POOLS="developer=1", CAO_POOL_TTL="soon")
    with pytest.raises(InvalidInput, match="CAO_POOL_TTL: 'idleTtl' must be a number"):
        await kernel.start()
    await kernel.aclose()


def test_pool_frontmatter_and_settings_are_read_or_refused_by_name():
    assert parse_pool({"size": 2, "idleTtl": 30}) == PoolConfig(size=2, ttl=30.0)
    assert parse_pool({"size": 1}, default_ttl=5.0) == PoolConfig(size=1, ttl=5.0)
    for value, problem in [([], "must be a mapping"), ({}, "'size' is missing"),
                           ({"size": 99}, "'size' must be a whole number from 0 to 8"),
                           ({"size": True}, "'size'"), ({"size": 1, "idleTtl": 0}, "'idleTtl'"),
                           ({"size": 1, "ttl": 5}, "unknown key 'ttl'")]:
        with pytest.raises(InvalidInput, match=problem):
            parse_pool(value)
    pools, ttl, starts = parse_settings({"CAO_POOLS": " developer=2, reviewer=1 ", "CAO_POOL_TTL": "90"})
    assert pools == {"developer": PoolConfig(2, 90.0), "reviewer": PoolConfig(1, 90.0)} and ttl == 90.0
    assert starts == 1 and parse_settings({"CAO_POOL_STARTS": "3"})[2] == 3
    with pytest.raises(InvalidInput, match="invalid agent profile name"):
        parse_settings({"CAO_POOLS": "../x=1"})
    for starts_value in ("0", "-1", "two", "9"):
        with pytest.raises(InvalidInput, match="CAO_POOL_STARTS: must be a whole number from 1 to 8"):
            parse_settings({"CAO_POOL_STARTS": starts_value})


@given(st.dictionaries(st.sampled_from(["CAO_POOLS", "CAO_POOL_TTL", "CAO_POOL_STARTS", "OTHER"]),
                       st.text(max_size=40)),
       st.one_of(st.none(), st.integers(), st.text(), st.dictionaries(st.text(max_size=8),
                                                                      st.one_of(st.integers(), st.floats(),
                                                                                st.text(max_size=5)))))
def test_any_pool_configuration_is_read_or_refused_with_a_clear_error(settings, frontmatter):
    for read in (lambda: parse_settings(settings), lambda: parse_pool(frontmatter)):
        try:
            read()
        except InvalidInput as exc:
            assert str(exc).startswith(("CAO_POOL", "pool", "invalid agent profile name")), exc


async def test_warm_workers_start_one_at_a_time_and_a_delegation_does_not_wait_for_one_not_started(
        make_kernel, workdir):
    async with make_kernel(agents=("supervisor", "developer"), CAO_POOLS="developer=3") as kernel:
        sup = await _supervisor(kernel, "queue", workdir)
        pooled = await _filled(kernel, 3)
        steps = [await kernel.get_timeline(t.id) for t in pooled]
        spans = sorted((s[0].at, next(e.at for e in s if e.name == "cli_ready")) for s in steps)
        # Each started once the one before it was ready.
        assert all(later[0] >= earlier[1] for earlier, later in zip(spans, spans[1:])), spans

        # Three taken at once empty the pool; the pool starts three more, one at a time. A fourth
        # delegation now waits for the one starting, and a fifth, finding only queued ones, starts its own.
        taken = await asyncio.gather(*(kernel.assign(sup.id, "developer", f"task {n}") for n in range(3)))
        assert {r.terminal_id for r in taken} == {t.id for t in pooled}
        fourth, fifth = await asyncio.gather(kernel.assign(sup.id, "developer", "four"),
                                             kernel.assign(sup.id, "developer", "five"))
        kinds = []
        for result in (fourth, fifth):
            names = _names(await kernel.get_timeline(result.terminal_id))
            kinds.append("warm" if "pool_taken" in names else "fresh")
        assert sorted(kinds) == ["fresh", "warm"], kinds


async def test_a_pool_for_a_profile_that_does_not_exist_does_not_stop_a_launch(make_kernel, workdir, caplog):
    async with make_kernel(agents=("supervisor", "developer"), CAO_POOLS="nobody=1,developer=1") as kernel:
        await _supervisor(kernel, "missing", workdir)
        (warm,) = await _filled(kernel, 1)
        assert warm.agent_profile == "developer"
    assert "pool of profile 'nobody'" in caplog.text
