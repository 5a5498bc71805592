"""The signal command a hook runs: delivered when the kernel listens, silent and quick when it does not,
and never a failure, whatever it is given."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cao_kernel import signal_send
from cao_kernel.signal_channel import sender_command

TERMINAL = "0123abcd"


@pytest.fixture
def listener(tmp_path):
    """A bound datagram socket standing in for the kernel (read with ``receive``)."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    path = tmp_path / "s.sock"
    sock.bind(str(path))
    sock.settimeout(5)
    yield path, sock
    sock.close()


def receive(sock: socket.socket):
    return signal_send.decode(sock.recv(signal_send.MAX_DATAGRAM + 1))


def run(args: list[str], *, stdin: bytes | None = None, env: dict[str, str] | None = None,
        timeout: float = 10) -> tuple[subprocess.CompletedProcess[bytes], float]:
    started = time.monotonic()
    done = subprocess.run(args, input=stdin, capture_output=True, timeout=timeout,
                          env={"PATH": os.environ.get("PATH", ""), **(env or {})},
                          stdin=None if stdin is not None else subprocess.DEVNULL)
    return done, time.monotonic() - started


def quiet_success(done: subprocess.CompletedProcess[bytes]) -> None:
    assert done.returncode == 0
    assert done.stdout == b"" and done.stderr == b""


def test_a_hook_payload_on_stdin_is_delivered_compacted(listener):
    path, sock = listener
    payload = {"hook_event_name": "Stop", "cwd": "/w", "stop_hook_active": False,
               "last_assistant_message": "x" * 5000, "transcript": [{"role": "user"}], "n": 3}
    done, _ = run([*sender_command(str(path), TERMINAL), "--stdin", "Stop"],
                  stdin=json.dumps(payload).encode())
    quiet_success(done)
    terminal_id, event, got, sent = receive(sock)
    assert (terminal_id, event) == (TERMINAL, "Stop")
    # The answer is kept whole (other long strings are shortened): the kernel returns it as the answer.
    assert got == {"hook_event_name": "Stop", "cwd": "/w", "stop_hook_active": False,
                   "last_assistant_message": "x" * 5000, "n": 3}
    assert sent is not None and abs(time.time() - sent) < 10


def test_an_answer_too_long_for_a_datagram_is_left_out_never_cut():
    fits = {"last_assistant_message": "é" * 3000, "cwd": "/w"}  # 6 bytes each once escaped
    _, _, got, _ = signal_send.decode(signal_send.encode(TERMINAL, "Stop", fits))
    assert got == fits
    for answer in ("é" * 10_000, "x" * signal_send.MAX_DATAGRAM):
        _, _, got, _ = signal_send.decode(signal_send.encode(TERMINAL, "Stop", {
            "last_assistant_message": answer, "last-assistant-message": answer, "cwd": "/w" * 600}))
        assert got == {"cwd": ("/w" * 600)[:signal_send.MAX_STRING]}


def test_a_payload_passed_as_the_last_argument_is_delivered(listener):
    path, sock = listener
    notify = json.dumps({"type": "agent-turn-complete", "turn-id": "t-1", "input-messages": ["hi"],
                         "last-assistant-message": "Done."})
    done, _ = run([*sender_command(str(path), TERMINAL), "notify", notify])
    quiet_success(done)
    assert receive(sock)[:3] == (TERMINAL, "notify", {"type": "agent-turn-complete", "turn-id": "t-1",
                                                       "last-assistant-message": "Done."})


def test_socket_and_terminal_come_from_the_environment_when_not_given(listener):
    path, sock = listener
    done, _ = run([sys.executable, "-I", "-S", signal_send.__file__, "completed"],
                  env={signal_send.SOCKET_ENV: str(path), signal_send.TERMINAL_ENV: TERMINAL})
    quiet_success(done)
    assert receive(sock)[:3] == (TERMINAL, "completed", {})


def test_a_socket_path_too_long_for_an_address_still_works(tmp_path):
    folder = tmp_path / ("deep" * 20) / ("er" * 20)
    folder.mkdir(parents=True)
    assert len(str(folder / "s.sock")) > 108
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    cwd = os.getcwd()
    try:
        os.chdir(folder)
        sock.bind("s.sock")
    finally:
        os.chdir(cwd)
    sock.settimeout(5)
    try:
        done, _ = run([*sender_command(str(folder / "s.sock"), TERMINAL), "Stop"])
        quiet_success(done)
        assert receive(sock)[:2] == (TERMINAL, "Stop")
    finally:
        sock.close()


@pytest.mark.parametrize("case", ["missing", "stale", "folder"])
def test_nobody_listening_is_silent_and_quick(tmp_path, case):
    path = tmp_path / "s.sock"
    if case == "stale":
        # What a kernel that died leaves behind: a socket file with nobody reading it.
        dead = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        dead.bind(str(path))
        dead.close()
    elif case == "folder":
        path.mkdir()
    done, took = run([*sender_command(str(path), TERMINAL), "--stdin", "Stop"], stdin=b'{"a": 1}')
    quiet_success(done)
    assert took < 2.0


def test_a_full_queue_never_blocks_the_hook(listener):
    path, sock = listener
    data = signal_send.encode(TERMINAL, "Stop", {"pad": "x" * 900})
    # Fill the listener's queue without reading it.
    while signal_send.send(str(path), data):
        pass
    done, took = run([*sender_command(str(path), TERMINAL), "Stop"])
    quiet_success(done)
    assert took < 2.0


def test_stdin_left_open_by_the_cli_does_not_hold_the_hook(listener):
    path, sock = listener
    reader, writer = os.pipe()
    try:
        started = time.monotonic()
        proc = subprocess.Popen([*sender_command(str(path), TERMINAL), "--stdin", "Stop"], stdin=reader,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        os.write(writer, b'{"hook_event_name": "Stop"')  # never finished, never closed
        out, err = proc.communicate(timeout=10)
        assert proc.returncode == 0 and out == b"" and err == b""
        assert time.monotonic() - started < signal_send.STDIN_WAIT + 2
        # Half a JSON object is no payload, but the event still arrives.
        assert receive(sock)[:3] == (TERMINAL, "Stop", {"text": '{"hook_event_name": "Stop"'})
    finally:
        os.close(reader)
        os.close(writer)


@pytest.mark.parametrize("stdin", [
    b"\xff\xfe\x00garbage", b"[" * 100_000 + b"]" * 100_000, b'{"a": ' + b"9" * 5000 + b"}",
    b"x" * (3 << 20), b'"just a string"', b"null",
], ids=["binary", "deep", "huge-number", "larger-than-the-limit", "string", "null"])
def test_hostile_stdin_is_survived(listener, stdin):
    path, sock = listener
    done, took = run([*sender_command(str(path), TERMINAL), "--stdin", "Stop"], stdin=stdin)
    quiet_success(done)
    terminal_id, event, payload, _ = receive(sock)
    assert (terminal_id, event) == (TERMINAL, "Stop")
    assert len(json.dumps(payload)) < signal_send.MAX_DATAGRAM


@pytest.mark.parametrize("args", [
    [], ["--socket"], ["--terminal", "NOT-HEX", "Stop"], ["--terminal", TERMINAL, "bad event name"],
    ["--terminal", TERMINAL, "-rf"], ["--terminal", TERMINAL, "x" * 65],
])
def test_bad_arguments_send_nothing_and_still_succeed(listener, args):
    path, sock = listener
    done, _ = run([sys.executable, "-I", "-S", signal_send.__file__, "--socket", str(path), *args])
    quiet_success(done)
    sock.settimeout(0.2)
    with pytest.raises(TimeoutError):
        sock.recv(100)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(argv=st.lists(st.text(max_size=40), max_size=6), environ=st.dictionaries(
    st.sampled_from([signal_send.SOCKET_ENV, signal_send.TERMINAL_ENV]), st.text(max_size=200)))
def test_any_arguments_and_environment_are_survived(argv, environ):
    # In-process: main() is what the command runs; it may send (to wherever argv points) but never raises.
    import contextlib
    import io

    out, err = io.StringIO(), io.StringIO()
    cwd = os.getcwd()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        assert signal_send.run(argv, environ) in (True, False)
        old = os.environ.copy()
        try:
            assert signal_send.main([a for a in argv if a != "--stdin"]) == 0
        finally:
            os.environ.clear()
            os.environ.update(old)
    assert out.getvalue() == "" and err.getvalue() == ""
    assert os.getcwd() == cwd


@given(st.binary(max_size=2000) | st.text(max_size=500).map(str.encode))
def test_decode_takes_any_bytes_and_only_raises_value_error(data):
    try:
        terminal_id, event, payload, sent = signal_send.decode(data)
    except ValueError:
        return
    assert signal_send.TERMINAL.fullmatch(terminal_id) and signal_send.EVENT.fullmatch(event)
    assert isinstance(payload, dict)


json_objects = st.dictionaries(
    st.text(max_size=70),
    st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=3000),
                 lambda inner: st.lists(inner, max_size=3)
                 | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                 max_leaves=10),
    max_size=50,
)


@given(terminal_id=st.text("0123456789abcdef", min_size=8, max_size=8),
       event=st.from_regex(signal_send.EVENT, fullmatch=True), payload=json_objects)
def test_encode_then_decode_gives_the_compacted_payload_back(terminal_id, event, payload):
    data = signal_send.encode(terminal_id, event, payload)
    assert len(data) <= signal_send.MAX_DATAGRAM
    got_terminal, got_event, got_payload, _ = signal_send.decode(data)
    assert (got_terminal, got_event) == (terminal_id, event)
    whole = signal_send.compact(payload)
    # Whole, or without an answer too long for the datagram (never a cut one), or nothing.
    assert got_payload in (whole, {k: v for k, v in whole.items() if k not in signal_send.ANSWER_KEYS}, {})
    assert all(not isinstance(v, list | dict) for v in got_payload.values())
    assert len(got_payload) <= signal_send.MAX_KEYS


def test_the_command_imports_nothing_of_cao_and_starts_quickly(tmp_path):
    """Hooks run it by path with -I -S: standard library only, so no package is imported on the way."""
    script = Path(signal_send.__file__)
    probe = (f"import runpy, sys; runpy.run_path({str(script)!r}, run_name='probe'); "
             "print(sorted(m for m in sys.modules if m.startswith(('cao', 'attrs', 'pluggy'))))")
    done = subprocess.run([sys.executable, "-I", "-S", "-c", probe], capture_output=True, text=True,
                          timeout=10)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
    times = []
    for _ in range(5):
        _, took = run([*sender_command(str(tmp_path / "none.sock"), TERMINAL), "Stop"])
        times.append(took)
    assert sorted(times)[2] < 0.5
