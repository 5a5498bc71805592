"""Removed terminals' screen logs and ``restore_terminal``, on real tmux with the mock agent."""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path

import pytest

from cao_hookspecs import CreateTerminalRequest, TerminalStatus
from cao_kernel.errors import Conflict, InvalidInput, NotFound
from cao_kernel.terminal_history import TerminalHistory

pytestmark = pytest.mark.tmux

READY = {TerminalStatus.IDLE, TerminalStatus.COMPLETED}


async def _session(kernel, name: str, workdir: str):
    return await kernel.create_session(CreateTerminalRequest(
        agent_profile="developer", session_name=name, working_directory=workdir))


async def test_a_removed_terminal_is_restored_with_its_log(make_kernel, workdir, cao_home: Path) -> None:
    async with make_kernel(agents=["developer"]) as kernel:
        first = await _session(kernel, "hist", workdir)
        second = await kernel.create_terminal(CreateTerminalRequest(
            agent_profile="developer", session_name="cao-hist", working_directory=workdir))
        await kernel.send_input(second.id, "remember the tangerine-42 marker")
        await kernel.wait_for_status(second.id, {TerminalStatus.COMPLETED}, timeout=10)
        await kernel.delete_terminal(second.id)

        folder = cao_home / "logs" / "terminals"
        assert "tangerine-42" in (folder / f"{second.id}.log").read_text()
        meta = json.loads((folder / f"{second.id}.json").read_text())
        assert meta["record"]["agent_profile"] == "developer" and meta["record"]["provider"] == "mock_cli"
        for name in (f"{second.id}.log", f"{second.id}.json"):
            assert stat.S_IMODE((folder / name).stat().st_mode) == 0o600

        restored = await kernel.restore_terminal(second.id)
        assert restored.id not in (first.id, second.id)
        assert (restored.session_name, restored.agent_profile, restored.provider) == (
            "cao-hist", "developer", "mock_cli")
        assert restored.working_directory == os.path.realpath(workdir)
        await kernel.wait_for_status(restored.id, {TerminalStatus.COMPLETED}, timeout=10)
        screen = await kernel.get_output(restored.id, "full")
        assert f"You take over from terminal {second.id}" in screen and "tangerine-42" in screen

        with pytest.raises(Conflict, match="still running"):
            await kernel.restore_terminal(restored.id)
        with pytest.raises(NotFound, match="never removed here"):
            await kernel.restore_terminal("0123abcd")
        with pytest.raises(InvalidInput, match="expected 8 lowercase hex"):
            await kernel.restore_terminal("../../etc")


async def test_a_deleted_session_comes_back_under_its_name(make_kernel, workdir, cao_home: Path) -> None:
    async with make_kernel(agents=["developer"]) as kernel:
        term = await _session(kernel, "gone", workdir)
        assert await kernel.delete_session("cao-gone") == [term.id]
        assert (cao_home / "logs" / "terminals" / f"{term.id}.log").is_file()
        restored = await kernel.restore_terminal(term.id)
        assert restored.session_name == "cao-gone"
        assert [t.id for t in await kernel.list_terminals("cao-gone")] == [restored.id]
        await kernel.delete_session("cao-gone")


async def test_a_folder_that_is_gone_is_refused_and_leaves_nothing(make_kernel, tmp_path: Path) -> None:
    folder = tmp_path / "vanishing"
    folder.mkdir()
    async with make_kernel(agents=["developer"]) as kernel:
        term = await _session(kernel, "vanish", str(folder))
        await kernel.delete_session("cao-vanish")
        folder.rmdir()
        with pytest.raises(InvalidInput, match="does not exist"):
            await kernel.restore_terminal(term.id)
        assert [s.name for s in await kernel.list_sessions()] == []


async def test_nothing_is_kept_with_zero_days_and_old_logs_go_at_start(make_kernel, workdir,
                                                                       cao_home: Path) -> None:
    folder = cao_home / "logs" / "terminals"
    async with make_kernel(agents=["developer"], CAO_TERMINAL_HISTORY_DAYS="0") as kernel:
        term = await _session(kernel, "none", workdir)
        await kernel.delete_session("cao-none")
        assert not (folder / f"{term.id}.log").exists()
        with pytest.raises(NotFound):
            await kernel.restore_terminal(term.id)

    # Logs of a terminal removed ten days ago: past the default seven, removed when a kernel starts.
    folder.mkdir(parents=True, exist_ok=True)
    old = time.time() - 10 * 86400
    stale = json.dumps({"record": {}, "removed_at": old})
    for name, text in (("aaaaaaaa.log", "x"), ("aaaaaaaa.json", stale)):
        (folder / name).write_text(text)
        os.utime(folder / name, (old, old))
    (folder / "bbbbbbbb.log").write_text("recent")
    async with make_kernel(agents=["developer"]) as kernel:
        await asyncio_wait_for(lambda: not (folder / "aaaaaaaa.json").exists())
        assert (folder / "bbbbbbbb.log").exists()
        with pytest.raises(NotFound, match="never removed here, or its log is older than the 7 days"):
            await kernel.restore_terminal("aaaaaaaa")


async def asyncio_wait_for(predicate, timeout: float = 5.0) -> None:
    import asyncio

    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached"
        await asyncio.sleep(0.02)


def test_an_expired_log_not_yet_swept_is_refused_and_the_sweep_takes_it(tmp_path: Path) -> None:
    history = TerminalHistory(tmp_path, 1.0)
    (tmp_path / "cccccccc.log").write_text("old")
    (tmp_path / "cccccccc.json").write_text(json.dumps({"record": {"id": "cccccccc"},
                                                         "removed_at": time.time() - 2 * 86400}))
    with pytest.raises(NotFound, match="older than the 1 days kept"):
        history.load("cccccccc")
    assert history.prune(now=time.time() + 2 * 86400) == 1
    assert list(tmp_path.iterdir()) == []


def test_a_bad_days_setting_stops_the_start_by_name(make_kernel) -> None:
    import asyncio

    kernel = make_kernel(CAO_TERMINAL_HISTORY_DAYS="soon")
    with pytest.raises(InvalidInput, match="CAO_TERMINAL_HISTORY_DAYS must be a number of days"):
        asyncio.run(kernel.start())
