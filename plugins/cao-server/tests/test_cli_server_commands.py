"""The server commands end to end: real ``cao`` subprocesses against a real ``cao server --port 0``
running mock_cli agents on a private tmux server (one server for the module; each test uses its own
sessions)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from cao_hookspecs import CreateTerminalRequest
from cao_testkit.tmux import PrivateTmux, private_tmux_socket

pytestmark = pytest.mark.tmux
T = TypeVar("T")

CAO = str(Path(sys.executable).with_name("cao"))
LISTENING = re.compile(r"cao-server listening on (http://\S+):(\d+)")
# Variables of the calling environment that must not leak into the commands under test.
_SCRUB = ("TMUX", "TMUX_PANE")
# Exactly the plugins these commands need: what else is installed is not under test here.
PLUGINS = "tmux,mock_cli,inbox_sqlite,server,mcp"


@dataclasses.dataclass
class Server:
    """A running cao server and how to call ``cao`` against it."""

    env: dict[str, str]
    tmux: PrivateTmux
    workdir: str
    url: str

    def cao(self, *args: str, env: dict[str, str] | None = None, input: str | None = None,
            timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return subprocess.run([CAO, *args], env={**self.env, **(env or {})}, input=input, capture_output=True,
                              text=True, timeout=timeout, cwd=self.workdir, check=False)

    def ok(self, *args: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
        done = self.cao(*args, **kwargs)  # type: ignore[arg-type]
        assert done.returncode == 0, f"cao {' '.join(args)}: {done.returncode}\n{done.stdout}\n{done.stderr}"
        return done

    def api(self, call: Callable[[Any], Awaitable[T]]) -> T:
        """Run ``call(client)`` with an HTTP client of the server: setting up and polling from the test
        itself costs no ``cao`` process."""
        from cao_server.client import connect

        async def main() -> T:
            client = connect(self.env)
            try:
                return await call(client)
            finally:
                await client.aclose()

        return asyncio.run(main())

    def session(self, name: str) -> str:
        """A session running mock_cli, made through the API; returns its terminal id."""
        async def create(api: Any) -> str:
            terminal = await api.create_session(CreateTerminalRequest(
                agent_profile="developer", provider="mock_cli", session_name=name,
                working_directory=self.workdir))
            return terminal.id

        return self.api(create)

    def status(self, terminal_id: str) -> str:
        return self.api(lambda api: api.get_status(terminal_id)).status.value

    def wait_status(self, terminal_id: str, wanted: set[str], timeout: float = 15) -> str:
        return self.api(lambda api: api.wait_for_status(terminal_id, wanted, timeout)).status.value

    def session_names(self) -> list[str]:
        return [info.name for info in self.api(lambda api: api.list_sessions())]


def _client_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAO_") and k not in _SCRUB}
    return {**env, "CAO_LOAD_PLUGINS": PLUGINS}


def _start_server(env: dict[str, str], log: Path) -> tuple[subprocess.Popen[bytes], str, str]:
    with log.open("wb") as out:
        proc = subprocess.Popen([CAO, "server", "--port", "0"], env=env, stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        found = LISTENING.search(log.read_text(errors="replace"))
        if found:
            return proc, found.group(1), found.group(2)
        if proc.poll() is not None:
            break
        time.sleep(0.02)
    proc.kill()
    proc.wait()
    raise AssertionError(f"cao server did not start:\n{log.read_text(errors='replace')}")


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A ``cao server --port 0`` subprocess for the module, with its own cao home and tmux server."""
    home = tmp_path_factory.mktemp("cli-home")
    workdir = tmp_path_factory.mktemp("cli-project")
    with private_tmux_socket() as tmux:
        env = {**_client_env(), "CAO_HOME_DIR": str(home), **tmux.settings,
               "CAO_DEFAULT_PROVIDER": "mock_cli", "TMUX_TMPDIR": tmux.tmpdir}
        proc, url, port = _start_server(env, home / "server.log")
        host = url.removeprefix("http://").strip("[]")
        try:
            yield Server(env={**env, "CAO_API_HOST": host, "CAO_API_PORT": port}, tmux=tmux,
                         workdir=str(workdir), url=f"{url}:{port}")
        finally:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def test_upstream_session_management_flow(live: Server) -> None:
    launched = live.ok("launch", "--agents", "developer", "--provider", "mock_cli", "--headless", "--yolo",
                         "--session-name", "t", "--working-directory", live.workdir, "hello")
    lines = launched.stdout.splitlines()
    assert lines[0] == "Session created: cao-t"
    assert re.fullmatch(r"Terminal created: developer-[0-9a-f]{4}", lines[1])
    assert lines[2:] == ["hello"]
    assert launched.stderr == ""  # no progress line when stderr is not a terminal

    status = json.loads(live.ok("session", "status", "cao-t", "--json").stdout)
    conductor = status["conductor"]
    assert re.fullmatch(r"[0-9a-f]{8}", conductor["id"])
    assert status == {"session": "cao-t", "conductor": {
        "id": conductor["id"], "agent_profile": "developer", "provider": "mock_cli", "status": "completed",
        "last_output": "hello"}}

    assert live.ok("session", "send", "cao-t", "again").stdout == "again\n"

    text = live.ok("session", "status", "cao-t", "--workers").stdout
    assert text == (f"Session:  cao-t\nTerminal: {conductor['id']}\nAgent:    developer\nProvider: mock_cli\n"
                    f"Status:   completed\n\nLast response:\nagain\n\nNo worker terminals\n")

    listed = json.loads(live.ok("session", "list", "--json").stdout)
    assert listed == [{"session": "cao-t", "terminal_count": 1, "conductor": {
        "id": conductor["id"], "agent_profile": "developer", "provider": "mock_cli", "status": "completed"}}]
    table = live.ok("session", "list").stdout.splitlines()
    assert [line.split() for line in table] == [
        ["SESSION", "CONDUCTOR", "STATUS", "TERMINALS"], ["-" * 65],
        ["cao-t", conductor["id"], "completed", "1"]]

    down = live.ok("shutdown", "--session", "cao-t")
    assert down.stdout == "✓ Shutdown session 'cao-t'\n"
    assert live.session_names() == []
    assert live.tmux.run("has-session", "-t", "=cao-t", check=False).returncode != 0


def test_session_status_of_a_worker_and_send_to_one_terminal(live: Server) -> None:
    conductor = live.session("crew")

    async def add_worker(api: Any) -> str:
        worker = await api.create_terminal(CreateTerminalRequest(
            session_name="cao-crew", agent_profile="reviewer", provider="mock_cli",
            working_directory=live.workdir, caller_id=conductor))
        return worker.id

    worker = live.api(add_worker)
    sent = live.ok("session", "send", "cao-crew", "check this", "--terminal", worker)
    assert sent.stdout == "check this\n"
    status = json.loads(live.ok("session", "status", "cao-crew", "--workers", "--json").stdout)
    assert status["conductor"]["id"] == conductor and status["conductor"]["last_output"] is None
    assert status["workers"] == [{"id": worker, "agent_profile": "reviewer", "provider": "mock_cli",
                                  "status": "completed"}]
    one = json.loads(live.ok("session", "status", "cao-crew", "--terminal", worker, "--json").stdout)
    assert one["conductor"]["id"] == worker and one["conductor"]["last_output"] == "check this"
    stranger = live.cao("session", "send", "cao-crew", "hi", "--terminal", "0badc0de")
    assert (stranger.returncode, stranger.stderr) == (
        1, "Error: terminal 0badc0de is not in session 'cao-crew'\n")
    live.api(lambda api: api.delete_session("cao-crew"))


def test_terminal_commands(live: Server) -> None:
    tid = live.session("term")
    listed = live.ok("terminal", "list", "cao-term").stdout.splitlines()
    assert listed[0].split() == ["ID", "NAME", "AGENT", "PROVIDER", "STATUS"]
    assert listed[2].split()[0] == tid and listed[2].split()[2:] == ["developer", "mock_cli", "idle"]

    record = json.loads(live.ok("terminal", "status", tid, "--json").stdout)
    assert record["id"] == tid and record["session_name"] == "cao-term"
    assert record["working_directory"] == os.path.realpath(live.workdir)
    assert record["status"] == "idle" and record["evidence"].startswith("mock_cli")

    assert live.ok("terminal", "send", tid, "typed").stdout == f"Message sent to terminal {tid}\n"
    live.wait_status(tid, {"completed"})
    assert live.ok("terminal", "output", tid, "--mode", "last").stdout == "typed\n"
    assert "> MOCK: typed" in live.ok("terminal", "output", tid).stdout

    # Keys arrive without an Enter of their own: a line typed straight into tmux is submitted by Enter.
    live.tmux.run("send-keys", "-t", f"=cao-term:{record['name']}", "-l", "draft")
    assert live.ok("terminal", "key", tid, "Enter").stdout == f"Sent Enter to terminal {tid}\n"
    deadline = time.monotonic() + 15
    while live.api(lambda api: api.get_output(tid, "last")) != "draft":
        assert time.monotonic() < deadline, "the Enter key did not submit the typed line"
        time.sleep(0.05)
    bad_key = live.cao("terminal", "key", tid, "NoSuchKey")
    assert bad_key.returncode == 1 and "invalid key 'NoSuchKey'" in bad_key.stderr

    assert live.ok("terminal", "exit", tid).stdout == f"Exit command sent to terminal {tid}\n"
    live.wait_status(tid, {"error"})
    assert live.ok("terminal", "delete", tid).stdout == f"✓ Deleted terminal {tid}\n"
    gone = live.cao("terminal", "status", tid)
    assert (gone.returncode, gone.stderr) == (1, f"Error: terminal {tid} not found\n")
    assert "cao-term" not in live.session_names()  # its only terminal gone, the session went with it


def test_terminal_timeline(live: Server) -> None:
    """``cao terminal timeline``: the terminal's steps as a table and as JSON, also once it is gone."""
    tid = live.session("steps")
    assert live.ok("terminal", "send", tid, "one turn").stdout == f"Message sent to terminal {tid}\n"
    live.wait_status(tid, {"completed"})
    data = json.loads(live.ok("terminal", "timeline", tid, "--json").stdout)
    assert data["terminal_id"] == tid
    names = [event["name"] for event in data["events"]]
    assert names[:2] == ["terminal_created", "process_started"], names
    assert {"first_screen", "cli_ready", "task_typed", "first_output", "answer_ready"} <= set(names), names
    assert names.index("cli_ready") < names.index("task_typed") < names.index("answer_ready"), names
    typed = next(event for event in data["events"] if event["name"] == "task_typed")
    assert typed["detail"] == {} and typed["at"].endswith("+00:00")

    lines = live.ok("terminal", "timeline", tid).stdout.splitlines()
    assert lines[0].split()[:3] == ["at", "gap", "step"]
    rows = [line.split() for line in lines[1:]]
    assert [row[2] for row in rows] == names
    assert rows[0][:2] == ["0.000", "+0.000"]
    offsets = [float(row[0]) for row in rows]
    assert offsets == sorted(offsets) and all(float(row[1]) >= 0 for row in rows)
    assert any("evidence=mock_cli" in line for line in lines if " cli_ready " in line), lines

    assert live.ok("terminal", "delete", tid).stdout == f"✓ Deleted terminal {tid}\n"
    after = json.loads(live.ok("terminal", "timeline", tid, "--json").stdout)["events"]
    assert [event["name"] for event in after][-1] == "terminal_gone"
    unknown = live.cao("terminal", "timeline", "0123abcd")
    assert unknown.returncode == 1 and "terminal 0123abcd not found" in unknown.stderr
    bad = live.cao("terminal", "timeline", "../etc")
    assert bad.returncode == 1 and "invalid terminal id" in bad.stderr


def test_terminal_inbox(live: Server) -> None:
    receiver = live.session("inbox")
    assert live.ok("terminal", "inbox", receiver).stdout == f"No messages for terminal {receiver}\n"

    async def send(api: Any) -> None:
        await api.send_message("operator", receiver, "please review\nthe plan")

    live.api(send)
    deadline = time.monotonic() + 15
    while live.api(lambda api: api.list_messages(receiver))[0].state.value != "delivered":
        assert time.monotonic() < deadline, "the message was not delivered"
        time.sleep(0.05)
    rows = json.loads(live.ok("terminal", "inbox", receiver, "--json").stdout)
    assert [(r["sender_id"], r["receiver_id"], r["message"], r["status"]) for r in rows] == [
        ("operator", receiver, "please review\nthe plan", "delivered")]
    table = live.ok("terminal", "inbox", receiver, "--state", "delivered").stdout.splitlines()
    assert table[0].split() == ["ID", "FROM", "STATE", "TIME", "MESSAGE"]
    assert table[2].split()[1:3] == ["operator", "delivered"] and table[2].endswith("please review the plan")
    assert live.ok("terminal", "inbox", receiver, "--state", "pending", "--json").stdout == "[]\n"
    live.api(lambda api: api.delete_session("cao-inbox"))


def test_launch_async_then_send_refused_while_busy(live: Server) -> None:
    launched = live.ok("launch", "--agents", "developer", "--provider", "mock_cli", "--headless", "--async",
                         "--session-name", "busy", "--auto-approve", "__mock_sleep_2")
    name = launched.stdout.splitlines()[1].removeprefix("Terminal created: ")
    assert launched.stdout.splitlines()[2:] == [f"Message sent to {name}. Running in background."]
    refused = live.cao("session", "send", "cao-busy", "more")
    assert refused.returncode == 1
    assert re.fullmatch(r"Error: Terminal [0-9a-f]{8} is currently processing\. Wait for it to finish before "
                        r"sending\.\n", refused.stderr)
    tid = live.api(lambda api: api.list_terminals("cao-busy"))[0].id
    live.wait_status(tid, {"completed"})
    assert live.ok("session", "send", "cao-busy", "more").stdout == "more\n"
    slow = live.cao("session", "send", "cao-busy", "__mock_sleep_2", "--timeout", "0.3")
    assert (slow.returncode, slow.stdout) == (1, "")
    assert slow.stderr.startswith(f"Error: terminal {tid} did not finish within 0.3 s; the agent keeps running")
    live.api(lambda api: api.delete_session("cao-busy"))


def test_session_send_ctrl_c_prints_output_and_exits_130(live: Server) -> None:
    tid = live.session("intr")
    live.api(lambda api: api.send_input(tid, "first"))
    live.wait_status(tid, {"completed"})
    proc = subprocess.Popen([CAO, "session", "send", "cao-intr", "__mock_sleep_30"], env=live.env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=live.workdir)
    try:
        live.wait_status(tid, {"processing"})
        time.sleep(0.3)  # the command is now inside its wait
        started = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert time.monotonic() - started < 5
    assert out == "first\n"  # the answer on screen when the wait ended
    assert err == f"Interrupted; the agent in terminal {tid} keeps working.\n"
    assert live.status(tid) == "processing"
    live.api(lambda api: api.delete_session("cao-intr"))


def test_launch_failures_leave_nothing_behind(live: Server) -> None:
    missing = live.cao("launch", "--agents", "no-such-agent", "--provider", "mock_cli", "--headless",
                         "--session-name", "ghost")
    assert missing.returncode == 1 and "no-such-agent" in missing.stderr
    bad_env = live.cao("launch", "--agents", "developer", "--headless", "--env", "NOEQUALS")
    assert bad_env.returncode == 2 and "'NOEQUALS' is not KEY=VALUE" in bad_env.stderr
    bad_dir = live.cao("launch", "--agents", "developer", "--headless",
                         "--working-directory", "/nonexistent/x")
    assert bad_dir.returncode == 2 and "/nonexistent/x" in bad_dir.stderr
    declined = live.cao("launch", "--agents", "developer", "--provider", "kiro_cli", "--headless",
                          "--session-name", "declined", input="n\n")
    assert declined.returncode == 1
    assert f"Agent developer will run with kiro_cli in {os.path.realpath(live.workdir)}" in declined.stdout
    assert "Proceed? [Y/n]" in declined.stdout and declined.stderr == "Aborted!\n"
    assert live.session_names() == []


def test_error_paths(live: Server) -> None:
    for args in (["session", "status", "cao-nope"], ["terminal", "list", "nope"]):
        done = live.cao(*args)
        expected = (1, "", "Error: session 'cao-nope' not found\n")
        assert (done.returncode, done.stdout, done.stderr) == expected, args
    unknown = live.cao("shutdown", "--session", "cao-nope")
    assert (unknown.returncode, unknown.stdout) == (1, "")
    assert unknown.stderr == "Session 'cao-nope' already removed (the server has no such session)\n"
    bad_id = live.cao("terminal", "status", "not-an-id")
    assert (bad_id.returncode, bad_id.stderr) == (
        1, "Error: invalid terminal id 'not-an-id': expected 8 lowercase hex characters\n")
    usage = live.cao("shutdown")
    assert usage.returncode == 2 and "give exactly one of --all or --session NAME" in usage.stderr
    failing = live.cao("launch", "--agents", "developer", "--provider", "mock_cli", "--headless",
                         "--session-name", "err", "__mock_error__")
    assert failing.returncode == 1
    assert failing.stdout.splitlines()[0] == "Session created: cao-err"
    assert re.fullmatch(r"Error: terminal [0-9a-f]{8} is in error: mock_cli: .*\n", failing.stderr)
    live.api(lambda api: api.delete_session("cao-err"))


def test_terminal_restore(live: Server) -> None:
    """A terminal removed through the server comes back as a new agent holding its screen log."""
    tid = live.session("back")
    live.api(lambda api: api.send_input(tid, "plum-77 notes"))
    live.wait_status(tid, {"completed"})
    live.api(lambda api: api.delete_session("cao-back"))
    done = live.ok("terminal", "restore", tid)
    lines = done.stdout.splitlines()
    new_id = re.fullmatch(rf"Restored terminal {tid} as terminal ([0-9a-f]{{8}}) \(developer-[0-9a-f]{{4}}\) "
                          r"in session 'cao-back'", lines[0]).group(1)
    assert lines[1:] == ["Agent: developer | Provider: mock_cli",
                         f"Working directory: {os.path.realpath(live.workdir)}"]
    live.wait_status(new_id, {"completed"})
    screen = live.api(lambda api: api.get_output(new_id, "full"))
    assert f"You take over from terminal {tid}" in screen and "plum-77 notes" in screen
    again = live.cao("terminal", "restore", new_id)
    assert again.returncode == 1 and "still running" in again.stderr
    unknown = live.cao("terminal", "restore", "abcdef12")
    assert unknown.returncode == 1 and "no saved screen log of terminal abcdef12" in unknown.stderr
    live.api(lambda api: api.delete_session("cao-back"))


def test_shutdown_all(live: Server) -> None:
    live.session("short")
    assert live.ok("shutdown", "--session", "short").stdout == "✓ Shutdown session 'cao-short'\n"
    live.session("all1")
    live.session("all2")
    done = live.ok("shutdown", "--all")
    assert sorted(done.stdout.splitlines()) == [
        "✓ Shutdown session 'cao-all1'", "✓ Shutdown session 'cao-all2'"]
    assert live.ok("session", "list").stdout == "No active sessions\n"
    assert live.ok("session", "list", "--json").stdout == "[]\n"
    assert live.ok("shutdown", "--all").stdout == "No cao sessions found to shutdown\n"


def test_info(live: Server, tmp_path: Path) -> None:
    home = f"cao home: {live.env['CAO_HOME_DIR']}"
    running = f"Server: {live.url} (running)"
    assert live.ok("info").stdout.splitlines() == [home, running, "Not currently in a CAO session."]
    tid = live.session("info")
    by_id = live.ok("info", env={"CAO_TERMINAL_ID": tid}).stdout.splitlines()
    assert by_id == [home, running, "Session ID: cao-info", "Active terminals: 1"]
    # From a shell inside the session's tmux: the session comes from tmux itself.
    out = tmp_path / "info.txt"
    env_args = [f"{k}={v}" for k, v in live.env.items() if k.startswith("CAO_") or k in ("PATH", "HOME")]
    live.tmux.run("new-window", "-d", "-t", "=cao-info:", "env", *env_args,
                    "sh", "-c", f"{CAO} info > {out}.part 2>&1; mv {out}.part {out}")
    deadline = time.monotonic() + 15
    while not out.exists():
        assert time.monotonic() < deadline, "cao info did not finish inside tmux"
        time.sleep(0.05)
    assert out.read_text().splitlines() == [home, running, "Session ID: cao-info", "Active terminals: 1"]
    live.api(lambda api: api.delete_session("cao-info"))


def test_launch_attaches_on_a_terminal_and_explains_otherwise(live: Server) -> None:
    hint = live.ok("launch", "--agents", "developer", "--provider", "mock_cli", "--session-name", "att", "hi")
    name = hint.stdout.splitlines()[1].removeprefix("Terminal created: ")
    assert hint.stdout.splitlines()[2:] == [
        f"Message sent to {name}.", f"Attach with: tmux -S {live.tmux.socket_path} attach-session -t cao-att"]
    tid = live.api(lambda api: api.list_terminals("cao-att"))[0].id
    live.wait_status(tid, {"completed"})
    assert live.api(lambda api: api.get_output(tid, "last")) == "hi"

    import fcntl
    import pty
    import struct
    import termios
    import threading

    primary, secondary = pty.openpty()
    fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    argv = [CAO, "launch", "--agents", "developer", "--provider", "mock_cli", "--session-name", "att2"]
    proc = subprocess.Popen(argv, env={**live.env, "TERM": "xterm"}, stdin=secondary, stdout=secondary,
                            stderr=secondary, cwd=live.workdir, close_fds=True)
    os.close(secondary)
    seen = bytearray()

    def drain() -> None:  # tmux draws into the pty; a full pty would block it
        try:
            while chunk := os.read(primary, 65536):
                seen.extend(chunk)
        except OSError:
            pass

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 20
        clients = ""
        while "cao-att2" not in clients:
            assert time.monotonic() < deadline, f"cao launch did not attach a tmux client: {bytes(seen)!r}"
            time.sleep(0.1)
            clients = live.tmux.run("list-clients", "-F", "#{session_name}", check=False).stdout
        live.tmux.run("detach-client", "-s", "cao-att2")
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        reader.join(timeout=5)
        os.close(primary)
    assert b"Session created: cao-att2" in seen
    assert b"starting developer (" in seen  # the progress line, drawn on a terminal only
    live.ok("shutdown", "--all")


def test_commands_report_a_missing_server_in_one_line(tmp_path: Path) -> None:
    import socket

    with socket.socket() as sock:  # a port that was free a moment ago and has no listener now
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**_client_env(), "CAO_HOME_DIR": str(tmp_path), "CAO_API_HOST": "127.0.0.1",
           "CAO_API_PORT": str(port)}
    expected = f"Error: no cao-server is running at http://127.0.0.1:{port}; start it with `cao server`\n"
    commands = (["session", "list"], ["launch", "--agents", "developer", "--headless"],
                ["shutdown", "--all"], ["terminal", "status", "deadbeef"])
    for args in commands:
        done = subprocess.run([CAO, *args], env=env, capture_output=True, text=True, timeout=30, cwd=tmp_path)
        assert (done.returncode, done.stdout, done.stderr) == (1, "", expected), args
    for wrong in ("http", "99999", "0"):
        bad_port = subprocess.run([CAO, "info"], env={**env, "CAO_API_PORT": wrong}, capture_output=True,
                                  text=True, timeout=30, cwd=tmp_path)
        assert (bad_port.returncode, bad_port.stderr) == (
            1, f"Error: CAO_API_PORT must be a port number (1-65535), got {wrong!r}\n")
    out_of_range = subprocess.run([CAO, "session", "list"], env={**env, "CAO_API_PORT": "99999"},
                                  capture_output=True, text=True, timeout=30, cwd=tmp_path)
    assert "Traceback" not in out_of_range.stderr and "(1-65535)" in out_of_range.stderr
    info = subprocess.run([CAO, "info"], env=env, capture_output=True, text=True, timeout=30, cwd=tmp_path)
    assert info.returncode == 0
    assert info.stdout.splitlines() == [
        f"cao home: {tmp_path}",
        f"Server: http://127.0.0.1:{port} (not running; start it with `cao server`)",
        "Not currently in a CAO session.",
    ]


def test_launch_use_worktree_starts_the_agent_in_a_worktree_of_the_folder(live: Server,
                                                                         tmp_path: Path) -> None:
    repo, plain = tmp_path / "repo", tmp_path / "plain"
    plain.mkdir()
    repo.mkdir()
    for args in (["init", "-q", "-b", "main"], ["-c", "user.name=Dev", "-c", "user.email=dev@example.com",
                                                "commit", "-q", "--allow-empty", "-m", "one"]):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)
    base = ("launch", "--agents", "developer", "--provider", "mock_cli", "--headless", "--yolo")
    launched = live.ok(*base, "--session-name", "wtl", "--working-directory", str(repo), "--use-worktree")
    worktree = launched.stdout.splitlines()[2]
    assert re.fullmatch(rf"Worktree: {re.escape(str(repo))}/\.cao/worktrees/([0-9a-f]{{8}}) "
                        r"\(branch cao/developer-\1\)", worktree), launched.stdout
    folder = Path(worktree.split()[1])
    assert folder.is_dir()
    refused = live.cao(*base, "--session-name", "wtn", "--working-directory", str(plain), "--use-worktree")
    assert refused.returncode == 1 and "is not inside a git repository" in refused.stderr, refused.stderr
    assert "cao-wtn" not in live.session_names() and list(plain.iterdir()) == []
    live.ok("shutdown", "--session", "cao-wtl")
    assert not folder.exists()
