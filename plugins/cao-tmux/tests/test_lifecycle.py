"""Killing, losing, listing and re-adopting terminals on a real tmux server."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from pathlib import Path

import pytest
from cao_hookspecs.errors import Conflict, InvalidInput, NotFound
from cao_tmux.errors import TerminalExited, TerminalNotFound, TmuxError

pytestmark = pytest.mark.tmux

# Starts two `sleep 1000` children that escape the usual clean-up: one in its own process group,
# one in its own session (no controlling terminal at all). Prints their pids, then idles.
ESCAPER = """
import os, subprocess, sys, time
own_group = subprocess.Popen(["sleep", "1000"], process_group=0)
own_session = subprocess.Popen(["sleep", "1000"], start_new_session=True)
print("pids", os.getpid(), own_group.pid, own_session.pid, flush=True)
time.sleep(1000)
"""


def _escapers(start, python, **fields):
    spec, events = start([python, "-c", ESCAPER], **fields)
    events.wait_output(b"\r\n")
    line = next(x for x in events.output().decode().splitlines() if x.startswith("pids"))
    return spec, [int(p) for p in line.split()[1:]]


def test_kill_terminal_leaves_no_process(backend, start, python, alive, wait_until):
    spec, pids = _escapers(start, python)
    other, other_pids = _escapers(start, python)
    assert len(pids) == 3 and all(alive(p) for p in pids)

    started = time.monotonic()
    backend.kill_terminal(spec.terminal_id)
    elapsed = time.monotonic() - started

    wait_until(lambda: not any(alive(p) for p in pids), timeout=3, what="the agent and its escapees to die")
    assert elapsed < 2.0
    assert backend.info(spec.terminal_id) is None
    assert [t.terminal_id for t in backend.list_terminals()] == [other.terminal_id]
    assert all(alive(p) for p in other_pids), "another terminal's processes must survive"
    backend.kill_terminal(spec.terminal_id)  # unknown now: not an error
    backend.kill_terminal("0badc0de")


def test_kill_of_an_exited_terminal_finds_its_orphans_by_marker(backend, start, python, alive, wait_until):
    # The agent is gone (its pid and tty may be anyone's now); a daemon it left behind is still found
    # through the CAO_TERMINAL_ID in its environment, and nothing of another terminal is touched.
    code = (
        "import subprocess; p = subprocess.Popen(['sleep', '1000'], start_new_session=True,"
        " stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); print('orphan', p.pid, flush=True)"
    )
    spec, events = start([python, "-c", code])
    events.wait_kind("exited")
    orphan = int(events.output().split(b"orphan ")[1].split()[0])
    neighbour, neighbour_pids = _escapers(start, python)
    assert alive(orphan)
    backend.kill_terminal(spec.terminal_id)
    wait_until(lambda: not alive(orphan), timeout=3, what="the orphan to die")
    assert all(alive(p) for p in neighbour_pids)
    assert backend.info(neighbour.terminal_id).alive


def test_kill_session_kills_every_window_and_process(backend, start, launch, python, alive, wait_until):
    a, pids_a = _escapers(start, python, session_name="cao-doomed")
    b, pids_b = _escapers(start, python, session_name="cao-doomed")
    _keep, pids_keep = _escapers(start, python, session_name="cao-kept")
    backend.kill_session("cao-doomed")
    wait_until(
        lambda: not any(alive(p) for p in pids_a + pids_b), timeout=3, what="the session's processes to die"
    )
    assert [s.name for s in backend.list_sessions()] == ["cao-kept"]
    assert all(alive(p) for p in pids_keep)
    assert backend.info(a.terminal_id) is None and backend.info(b.terminal_id) is None
    backend.kill_session("cao-doomed")  # gone already: a no-op
    # A new terminal in the killed session's name recreates it.
    backend.create_terminal(launch(["cat"], session_name="cao-doomed"))
    assert {s.name for s in backend.list_sessions()} == {"cao-kept", "cao-doomed"}


def test_no_event_for_a_terminal_cao_kills(backend, start):
    spec, events = start(["cat"])
    backend.kill_terminal(spec.terminal_id)
    time.sleep(0.3)
    assert "lost" not in events.kinds() and "exited" not in events.kinds()


def test_killing_the_tmux_server_gives_lost_events_promptly(backend, launch, recorder, private_tmux):
    recorders = {}
    for session in ("cao-one", "cao-two", "cao-two"):
        spec = launch(["cat"], session_name=session)
        backend.create_terminal(spec)
        recorders[spec.terminal_id] = recorder()
        backend.watch(spec.terminal_id, recorders[spec.terminal_id])
    killed = time.monotonic()
    private_tmux.run("kill-server")
    for events in recorders.values():
        lost = events.wait_kind("lost", timeout=3)
        assert "not running" in lost.detail
        assert events.events[-1][0] - killed < 2.0
    assert backend.list_sessions() == []
    assert backend.list_terminals() == []
    with pytest.raises(TerminalNotFound):
        backend.capture(next(iter(recorders)))


def test_window_killed_outside_cao_gives_lost_event(backend, start, launch, private_tmux):
    backend.create_terminal(launch(["cat"], session_name="cao-other"))  # keeps the server up
    spec, events = start(["cat"])
    private_tmux.run("kill-window", "-t", "=cao-test:")
    lost = events.wait_kind("lost", timeout=3)
    assert "no longer exists" in lost.detail
    assert backend.info(spec.terminal_id) is None


def test_list_sessions_reports_attached_clients(backend, launch, private_tmux, wait_until):
    backend.create_terminal(launch(["cat"], session_name="cao-seen", working_directory=str(Path.cwd())))
    backend.create_terminal(launch(["cat"], session_name="not-cao"))
    [session] = backend.list_sessions()
    assert (session.name, session.status, session.working_directory) == (
        "cao-seen",
        "detached",
        str(Path.cwd()),
    )
    client = subprocess.Popen(
        private_tmux.argv("-C", "attach", "-t", "=cao-seen"), stdin=subprocess.PIPE, stdout=subprocess.DEVNULL
    )
    try:
        wait_until(lambda: backend.list_sessions()[0].status == "active", what="the control client to attach")
    finally:
        client.stdin.close()
        client.wait(5)
    wait_until(lambda: backend.list_sessions()[0].status == "detached", what="the client to detach")


def test_restart_readopts_terminals_with_metadata(make_backend, launch, recorder, python):
    first = make_backend()
    live = launch(["cat"], session_name="cao-alpha", metadata={"provider": "mock", "profile": "dev ops;"})
    done = launch(["sh", "-c", "echo finished; exit 5"], session_name="cao-beta", metadata={"k": "v"})
    first.create_terminal(live)
    first.create_terminal(done)
    early = recorder()
    first.watch(live.terminal_id, early)
    first.send_text(live.terminal_id, "before restart", enter_count=1)
    early.wait_output(b"before restart\r\nbefore restart")
    first.close()  # the kernel stops; terminals keep running
    assert not [t for t in threading.enumerate() if t.name == "cao-tmux-reader"]

    second = make_backend()
    assert {s.name for s in second.list_sessions()} == {"cao-alpha", "cao-beta"}
    listed = {t.terminal_id: t for t in second.list_terminals()}
    assert set(listed) == {live.terminal_id, done.terminal_id}
    assert dict(listed[live.terminal_id].metadata) == {"provider": "mock", "profile": "dev ops;"}
    assert (listed[live.terminal_id].alive, listed[done.terminal_id].alive) == (True, False)
    assert listed[done.terminal_id].exit_status == 5
    assert listed[live.terminal_id].window_name == live.window_name
    assert [t.terminal_id for t in second.list_terminals("cao-beta")] == [done.terminal_id]
    assert second.list_terminals("cao-nothing") == []

    events = recorder()
    second.watch(live.terminal_id, events)
    second.watch(live.terminal_id, events)  # re-arming twice must not double the output
    second.send_text(live.terminal_id, "after restart", enter_count=1)
    events.wait_output(b"after restart\r\nafter restart")
    time.sleep(0.1)
    assert events.output().count(b"after restart") == 2
    assert b"before restart" not in events.output()

    ended = recorder()
    second.watch(done.terminal_id, ended)
    assert "status 5" in ended.wait_kind("exited", timeout=2).detail


def test_a_second_backend_taking_over_reports_lost_to_the_first(make_backend, launch, recorder):
    first, second = make_backend(), make_backend()
    spec = launch(["cat"])
    first.create_terminal(spec)
    old, new = recorder(), recorder()
    first.watch(spec.terminal_id, old)
    second.watch(spec.terminal_id, new)
    assert "another cao backend" in old.wait_kind("lost", timeout=3).detail
    second.send_text(spec.terminal_id, "hello", enter_count=1)
    new.wait_output(b"hello\r\nhello")


def test_output_pipe_is_rearmed_when_its_reader_process_dies(backend, start, private_tmux):
    spec, events = start(["cat"])
    server = private_tmux.server_pid()
    children = subprocess.run(
        ["pgrep", "-P", str(server)], capture_output=True, text=True, check=True
    ).stdout.split()
    pipes = [int(p) for p in children if os.readlink(f"/proc/{p}/fd/1").endswith(".out")]
    assert len(pipes) == 1
    os.kill(pipes[0], 9)
    time.sleep(0.3)
    backend.send_text(spec.terminal_id, "still here", enter_count=1)
    events.wait_output(b"still here\r\nstill here")
    assert "lost" not in events.kinds()


def test_bad_input_gives_clear_errors_and_creates_nothing(
    backend, launch, tmp_path, fifo_files, private_tmux
):
    missing = tmp_path / "missing"
    with pytest.raises(InvalidInput, match="working directory .*missing.* does not exist"):
        backend.create_terminal(launch(["cat"], working_directory=str(missing)))
    with pytest.raises(ValueError, match="agent program 'no-such-agent-cli' was not found"):
        backend.create_terminal(launch(["no-such-agent-cli", "--flag"]))
    with pytest.raises(ValueError, match="invalid terminal id"):
        backend.create_terminal(launch(["cat"], terminal_id="NOT-HEX!"))
    with pytest.raises(ValueError, match="invalid session name"):
        backend.create_terminal(launch(["cat"], session_name="cao:bad.name"))
    with pytest.raises(ValueError, match="invalid environment variable name"):
        backend.create_terminal(launch(["cat"], env={"BAD=NAME": "x"}))
    with pytest.raises(ValueError, match="empty argv"):
        backend.create_terminal(launch([]))
    assert backend.list_sessions() == [] and fifo_files() == []
    assert private_tmux.server_pid() is None  # not even a server was started

    spec = launch(["cat"])
    backend.create_terminal(spec)
    with pytest.raises(Conflict, match="already exists"):
        backend.create_terminal(spec)
    assert len(backend.list_terminals()) == 1

    with pytest.raises(ValueError, match="invalid key 'Enter Enter'"):
        backend.send_keys(spec.terminal_id, ["Enter Enter"])
    with pytest.raises(ValueError, match="invalid key"):
        backend.send_keys(spec.terminal_id, ["C-c", "\x1b"])
    with pytest.raises(ValueError, match="sequence of key names"):
        backend.send_keys(spec.terminal_id, "Enter")
    with pytest.raises(ValueError, match="invalid history"):
        backend.capture(spec.terminal_id, history=-5)
    with pytest.raises(ValueError, match="enter_count"):
        backend.send_text(spec.terminal_id, "x", enter_count=-1)

    unknown = "deadbeef"
    with pytest.raises(TerminalNotFound, match="no terminal deadbeef"):
        backend.capture(unknown)
    with pytest.raises(NotFound):
        backend.send_text(unknown, "hello")
    with pytest.raises(LookupError):
        backend.watch(unknown, lambda event: None)
    assert backend.info(unknown) is None
    with pytest.raises(ValueError, match="invalid terminal id"):
        backend.info("deadbeef0")


def test_input_to_an_exited_terminal_is_refused_and_tmux_survives(backend, launch, recorder, private_tmux):
    # Pasting into a dead pane crashes tmux 3.3a's server; the backend must never let it happen.
    spec = launch(["sh", "-c", "exit 0"])
    bystander = launch(["cat"])
    backend.create_terminal(spec)
    backend.create_terminal(bystander)
    events = recorder()
    backend.watch(spec.terminal_id, events)
    events.wait_kind("exited")
    with pytest.raises(TerminalExited, match="has exited"):
        backend.send_text(spec.terminal_id, "anyone there?\nline two")
    with pytest.raises(Conflict, match="has exited"):
        backend.send_keys(spec.terminal_id, ["Enter"])
    assert private_tmux.server_pid() is not None
    assert backend.info(bystander.terminal_id).alive


def test_missing_tmux_is_reported_clearly(make_backend, launch, monkeypatch, tmp_path, python):
    empty = tmp_path / "empty-path"
    empty.mkdir()
    backend = make_backend()
    monkeypatch.setenv("PATH", str(empty))
    with pytest.raises(TmuxError, match="tmux is not installed"):
        backend.create_terminal(launch([python, "-c", "pass"]))


def test_asking_a_server_whose_socket_file_is_missing_runs_no_tmux(tmp_path, monkeypatch):
    from cao_tmux.errors import TmuxNotRunning
    from cao_tmux.server import TmuxServer

    calls = tmp_path / "calls"
    fake = tmp_path / "fake-tmux"
    fake.write_text(f'#!/bin/sh\necho "$@" >> {calls}\necho "no server running" >&2\nexit 1\n')
    fake.chmod(0o755)
    server = TmuxServer(socket_path=str(tmp_path / "missing.sock"), binary=str(fake))
    for query in (["list-sessions"], ["list-panes", "-a"], ["display-message", "-p", "x"]):
        with pytest.raises(TmuxNotRunning, match="is not running"):
            server.run(query)
    assert not calls.exists()
    # A command that may start a server always runs.
    with pytest.raises(TmuxNotRunning):
        server.run(["new-session", "-d"])
    assert "new-session -d" in calls.read_text()
    # So does a query when tmux itself is missing: that is reported first, as ever.
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    with pytest.raises(TmuxError, match="tmux is not installed"):
        TmuxServer(socket_path=str(tmp_path / "missing.sock")).run(["list-sessions"])


def test_close_stops_the_reader_and_keeps_terminals(backend, launch, recorder, fifo_files):
    spec = launch(["cat"])
    backend.create_terminal(spec)
    backend.watch(spec.terminal_id, recorder())
    assert len(fifo_files()) == 2
    backend.close()
    backend.close()  # idempotent
    assert not [t for t in threading.enumerate() if t.name == "cao-tmux-reader"]
    assert fifo_files() == []
    assert backend.info(spec.terminal_id).alive
    # The backend is still usable: watching starts a new reader.
    events = recorder()
    backend.watch(spec.terminal_id, events)
    backend.send_text(spec.terminal_id, "back", enter_count=1)
    events.wait_output(b"back\r\nback")


def test_an_agent_tmux_starts_in_another_folder_is_removed_with_a_clear_error(
    backend, launch, tmp_path, monkeypatch, fifo_files
):
    import cao_tmux.backend

    asked = tmp_path / "a#[b"
    asked.mkdir()
    # A tmux whose format rules differ from the ones the escaping knows: it expands the folder into one
    # that does not exist and starts the agent in its own folder instead.
    monkeypatch.setattr(cao_tmux.backend, "format_literal", lambda text: text.replace("#", "##"))
    spec = launch(["sleep", "30"], working_directory=str(asked))
    with pytest.raises(InvalidInput, match=rf"terminal {spec.terminal_id} started in .* instead of .*a#\[b"):
        backend.create_terminal(spec)
    assert backend.list_terminals() == []
    assert fifo_files() == []


def test_environment_values_never_appear_in_any_process_arguments(backend, launch, tmp_path, fifo_files):
    import secrets

    secret = f"s3cret-{secrets.token_hex(8)}"
    seen: list[str] = []
    stop = threading.Event()

    def watch() -> None:
        # Every process's arguments, as another local user can read them, while terminals are created.
        while not stop.is_set():
            for proc in Path("/proc").iterdir():
                if proc.name.isdigit():
                    try:
                        args = (proc / "cmdline").read_bytes()
                    except OSError:
                        continue
                    if secret.encode() in args:
                        seen.append(args.decode(errors="replace"))

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    out = tmp_path / "env.txt"
    try:
        for n in range(5):
            spec = launch(["sh", "-c", f'printf %s "$TOKEN" > {out}.{n}; exec cat'], env={"TOKEN": secret})
            backend.create_terminal(spec)
            # The file holding the values is gone once the terminal is created.
            assert [f for f in fifo_files() if f.endswith(".env")] == []
    finally:
        stop.set()
        watcher.join(5)
    assert seen == []
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and not all(Path(f"{out}.{n}").exists() for n in range(5)):
        time.sleep(0.01)
    assert [Path(f"{out}.{n}").read_text() for n in range(5)] == [secret] * 5


def test_a_running_terminal_moves_to_another_session_with_its_new_metadata(make_backend, launch, recorder):
    backend = make_backend()
    home = launch(["cat"], session_name="cao-home", metadata={"caller_id": ""})
    pooled = launch(["cat"], session_name="cao-pool-1", metadata={"caller_id": "", "cao.pool": "dev"})
    backend.create_terminal(home)
    backend.create_terminal(pooled)
    events = recorder()
    backend.watch(pooled.terminal_id, events)

    backend.move_terminal(pooled.terminal_id, "cao-home", {"caller_id": home.terminal_id})
    # The session it alone made up is gone; the program runs on, its output still watched.
    assert {s.name for s in backend.list_sessions()} == {"cao-home"}
    backend.send_text(pooled.terminal_id, "still here", enter_count=1)
    events.wait_output(b"still here\r\nstill here")
    assert "exited" not in events.kinds() and "lost" not in events.kinds()

    # A new backend (the next kernel) reads the move back from tmux alone.
    backend.close()
    listed = {t.terminal_id: t for t in make_backend().list_terminals("cao-home")}
    assert set(listed) == {home.terminal_id, pooled.terminal_id}
    assert dict(listed[pooled.terminal_id].metadata) == {"caller_id": home.terminal_id}
    assert listed[pooled.terminal_id].window_name == pooled.window_name


def test_moving_to_a_missing_session_or_an_unknown_terminal_is_refused_by_name(backend, start):
    spec, _ = start(["cat"], session_name="cao-stay")
    with pytest.raises(TerminalNotFound, match="cannot move terminal .* to session 'cao-nowhere'"):
        backend.move_terminal(spec.terminal_id, "cao-nowhere", {})
    with pytest.raises(TerminalNotFound):
        backend.move_terminal("0123abcd", "cao-stay", {})
    with pytest.raises(InvalidInput):
        backend.move_terminal(spec.terminal_id, "bad name;", {})
    assert [t.terminal_id for t in backend.list_terminals("cao-stay")] == [spec.terminal_id]
