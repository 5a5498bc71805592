"""Output pushed from real tmux panes, and input typed into them."""

from __future__ import annotations

import hashlib
import os
import random
import re
import time
from pathlib import Path

import pytest
from cao_hookspecs import InputMark
from hypothesis import given, settings
from hypothesis import strategies as st

from cao_tmux import checks

pytestmark = pytest.mark.tmux

START, END = b"\x1b[200~", b"\x1b[201~"


def test_create_then_output_event_arrives(backend, launch, recorder):
    events = recorder()
    spec = launch(["sh", "-c", "echo hello from the agent; exec cat"])
    started = time.monotonic()
    backend.create_terminal(spec)
    backend.watch(spec.terminal_id, events)
    arrived = events.wait_output(b"hello from the agent")
    assert arrived - started < 1.0
    assert all(kind == "output" for kind in events.kinds())
    assert backend.info(spec.terminal_id).alive


def test_output_before_watch_is_not_lost(backend, launch, recorder, wait_until):
    spec = launch(["sh", "-c", "echo early bird; exec cat"])
    backend.create_terminal(spec)
    wait_until(lambda: "early bird" in backend.capture(spec.terminal_id), what="the agent to print")
    events = recorder()
    backend.watch(spec.terminal_id, events)
    events.wait_output(b"early bird", timeout=2)


def test_environment_reaches_the_program(start, python, tmp_path):
    out = tmp_path / "env.txt"
    tricky = "a b;c$d \"q\" 's' #{pane_id} `x`;"
    code = (
        "import os, sys, time\n"
        "open(sys.argv[1], 'w').write(os.environ['CAO_TERMINAL_ID'] + '\\n' + os.environ['TRICKY'])\n"
        "print('written', flush=True)\n"
        "time.sleep(60)\n"
    )
    spec, events = start([python, "-c", code, str(out)], env={"TRICKY": tricky})
    events.wait_output(b"written")
    tid, value = out.read_text().split("\n", 1)
    assert tid == spec.terminal_id
    assert value == tricky


def test_argv_is_run_without_a_shell(backend, start, launch, recorder, python, tmp_path):
    # Shell syntax in arguments stays literal; a single-element argv is a program, not a command line.
    out = tmp_path / "argv.txt"
    args = ["$HOME", "a;", "b && c", "#{pane_id}", "*"]
    code = "import sys, json; open(sys.argv[1], 'w').write(json.dumps(sys.argv[2:]))"
    spec, events = start([python, "-c", code, str(out), *args])
    events.wait_kind("exited")
    import json

    assert json.loads(out.read_text()) == args

    script = tmp_path / "agent with space.sh"
    script.write_text("#!/bin/sh\necho single argv ran\nsleep 0.05\n")
    script.chmod(0o755)
    single = launch([str(script)])
    backend.create_terminal(single)
    events2 = recorder()
    backend.watch(single.terminal_id, events2)
    events2.wait_output(b"single argv ran")


def test_multiline_20k_text_arrives_as_one_bracketed_paste(backend, start, probe, tmp_path):
    log = tmp_path / "input.log"
    spec, events = start(probe(log, bracketed=True))
    events.wait_output(b"probe ready")

    rng = random.Random(7)
    alphabet = "abcdefghijklmnopqrstuvwxyz ABC;$#{}()'\"\\`~!|&<>*?-\t" + "éß漢字🙂"
    lines = ["".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 120))) for _ in range(400)]
    text = "\n".join(["#{pane_id} ; echo not-run", *lines, "last line ends with ;"])
    body = text.encode()
    assert len(body) > 20 * 1024

    backend.send_text(spec.terminal_id, text, enter_count=1)
    digest = hashlib.sha256(body).hexdigest()[:12]
    events.wait_output(f"paste {len(body)} {digest}".encode())
    events.wait_output(b"keys b'\\r'")
    assert log.read_bytes() == START + body + END + b"\r"


def test_paste_to_a_program_without_bracketed_paste_is_raw(backend, start, probe, tmp_path):
    log = tmp_path / "input.log"
    spec, events = start(probe(log))
    events.wait_output(b"probe ready")
    backend.send_text(spec.terminal_id, "one\ntwo", enter_count=2, submit_delay=0.05)
    events.wait_output(b"\\r")
    time.sleep(0.3)
    assert log.read_bytes() == b"one\ntwo\r\r"


def test_embedded_paste_markers_cannot_end_the_paste_early(backend, start, probe, tmp_path):
    log = tmp_path / "input.log"
    spec, events = start(probe(log, bracketed=True))
    events.wait_output(b"probe ready")
    backend.send_text(spec.terminal_id, "safe\x1b[201~rm -rf x\x1b[200~", enter_count=0)
    events.wait_output(b"paste 12 ")
    assert log.read_bytes() == START + b"saferm -rf x" + END


def test_send_keys(backend, start, probe, tmp_path):
    log = tmp_path / "input.log"
    spec, events = start(probe(log))
    events.wait_output(b"probe ready")
    backend.send_keys(spec.terminal_id, ["Escape"])
    events.wait_output(b"keys b'\\x1b'")
    backend.send_keys(spec.terminal_id, ["C-c", "y", ";", "-", "Tab", "Enter"])
    events.wait_output(b"\\r'")
    backend.send_keys(spec.terminal_id, ["Up"])
    events.wait_output(b"[A'")
    time.sleep(0.1)
    assert log.read_bytes().replace(b"\x1bOA", b"\x1b[A") == b"\x1b" + b"\x03y;-\t\r" + b"\x1b[A"


def test_capture_visible_and_history(backend, start, python):
    code = (
        "import time\n"
        "for i in range(1, 101): print(f'line {i:03d}   ')\n"
        "print('W' * 250)\n"
        "print('end', flush=True)\n"
        "time.sleep(60)\n"
    )
    spec, events = start([python, "-c", code], width=80, height=20)
    events.wait_output(b"end")
    time.sleep(0.05)

    screen = backend.capture(spec.terminal_id)
    rows = screen.split("\n")
    assert rows[-1] == "end"
    assert len(rows) <= 20
    assert "line 001" not in screen
    assert all(row == row.rstrip() for row in rows)
    assert "W" * 80 in rows  # a long line is shown wrapped on screen

    everything = backend.capture(spec.terminal_id, history=-1)
    assert everything.startswith("line 001\nline 002")
    assert "W" * 250 in everything.split("\n")  # ... and joined with history (-J)
    assert everything.endswith("end")

    some = backend.capture(spec.terminal_id, history=10)
    assert len(rows) < len(some.split("\n")) <= len(rows) + 10
    assert "line 001" not in some
    assert backend.capture(spec.terminal_id, history=0) == screen


def test_working_directory_is_live(backend, launch, tmp_path, wait_until):
    (tmp_path / "sub").mkdir()
    spec = launch(["sh", "-c", "cd sub && exec cat"], working_directory=str(tmp_path))
    backend.create_terminal(spec)
    expected = os.path.realpath(tmp_path / "sub")
    wait_until(lambda: backend.working_directory(spec.terminal_id) == expected, what="the cwd to follow cd")
    assert backend.info(spec.terminal_id).working_directory == expected


def test_program_exit_gives_exited_event_and_keeps_last_screen(backend, start):
    spec, events = start(["sh", "-c", "echo first line; echo working; sleep 0.2; echo goodbye; exit 3"])
    exited = events.wait_kind("exited")
    assert "status 3" in exited.detail
    assert events.kinds()[-1] == "exited"
    assert b"goodbye" in events.output()  # every byte came before the exit event
    assert backend.capture(spec.terminal_id) == "first line\nworking\ngoodbye"
    info = backend.info(spec.terminal_id)
    assert (info.alive, info.exit_status) == (False, 3)
    assert spec.terminal_id in {t.terminal_id for t in backend.list_terminals()}


def test_immediate_exit_is_reported_with_its_output(backend, start):
    # The pause keeps tmux 3.3a's own race out of the test: it may reap a program before reading
    # the output it wrote in its last milliseconds (see the README).
    spec, events = start(["sh", "-c", "echo bad flag >&2; sleep 0.05; exit 2"])
    exited = events.wait_kind("exited", timeout=2)
    assert "status 2" in exited.detail
    assert b"bad flag" in events.output()
    assert backend.capture(spec.terminal_id) == "bad flag"


def test_program_killed_by_signal(backend, start):
    spec, events = start(["sh", "-c", "echo about to die; kill -TERM $$"])
    exited = events.wait_kind("exited")
    assert "signal 15 (SIGTERM)" in exited.detail
    assert backend.info(spec.terminal_id).exit_status == 128 + 15


def test_bursts_are_coalesced_and_intact(start, python):
    code = (
        "import os, time\n"
        "time.sleep(0.2)\n"
        "for i in range(300): os.write(1, b'%04d,' % i)\n"
        "os.write(1, b'done')\n"
        "time.sleep(60)\n"
    )
    spec, events = start([python, "-c", code])
    events.wait_output(b"done")
    data = events.output()
    expected = b"".join(b"%04d," % i for i in range(300)) + b"done"
    assert data[data.index(b"0000,") :] == expected
    assert len(events.events) < 50  # 301 writes, a handful of events


def test_large_output_arrives_in_order(start, python):
    code = (
        "import sys, time; sys.stdout.write(''.join(f'{i:07d}' for i in range(150000)) + 'END'); "
        "sys.stdout.flush(); time.sleep(60)"
    )
    spec, events = start([python, "-c", code])
    events.wait_output(b"END", timeout=20)
    data = events.output()
    assert data.endswith(b"END")
    assert data[:-3] == "".join(f"{i:07d}" for i in range(150000)).encode()


def test_watch_is_idempotent_and_unwatch_stops_events(backend, launch, recorder, python):
    spec = launch(["cat"])
    backend.create_terminal(spec)
    first, second = recorder(), recorder()
    backend.watch(spec.terminal_id, first)
    backend.watch(spec.terminal_id, second)  # replaces the callback; no second pipe
    backend.send_text(spec.terminal_id, "ping", enter_count=1)
    second.wait_output(b"ping\r\nping")
    time.sleep(0.1)
    assert second.output().count(b"ping") == 2  # echo + cat's copy, once each
    assert b"ping" not in first.output()

    backend.unwatch(spec.terminal_id)
    backend.send_text(spec.terminal_id, "silent", enter_count=1)
    time.sleep(0.3)
    assert b"silent" not in second.output()

    third = recorder()
    backend.watch(spec.terminal_id, third)
    backend.send_text(spec.terminal_id, "again", enter_count=1)
    third.wait_output(b"again\r\nagain")
    assert b"silent" not in third.output()


@pytest.mark.parametrize("pidfd", [True, False], ids=["pidfd", "hook-only"])
def test_nasty_paths_and_names(
    make_backend, launch, recorder, tmp_path, monkeypatch, pidfd, wait_until, private_tmux
):
    # Without pidfds the exit can only come from the pane-died hook, quoted into tmux's language.
    if not pidfd:
        from cao_tmux import procs

        monkeypatch.setattr(procs, "open_pidfd", lambda pid: None)
    home = tmp_path / "home with 'quotes' \"and\" $dollar #{hash} ;semi"
    home.mkdir()
    backend = make_backend(home=home)
    workdir = tmp_path / "work #{pane_id} $x;"
    workdir.mkdir()
    spec = launch(
        ["sh", "-c", "pwd; echo started; sleep 0.3; exit 4"],
        window_name="win #{pane_id} ;",
        working_directory=str(workdir),
    )
    backend.create_terminal(spec)
    events = recorder()
    backend.watch(spec.terminal_id, events)
    if not pidfd:
        # tmux 3.3a sometimes misses SIGCHLD, never reaps the program and so never runs the hook
        # (the reason the backend watches a pidfd). Another child of tmux exiting makes it reap.
        events.wait_output(b"started")
        wait_until(
            lambda: (
                private_tmux.run("display-message", "-p", "-t", "=cao-test:", "#{pane_dead}").stdout.strip()
                == "1"
            ),
            what="the pane to die",
        )
        private_tmux.run("run-shell", "true")
    assert "status 4" in events.wait_kind("exited").detail
    assert str(workdir).encode() in events.output()
    [info] = backend.list_terminals()
    assert info.window_name == "win #{pane_id} ;"
    assert Path(info.working_directory) == workdir


def test_a_marked_input_is_recorded_with_the_paste_and_with_its_last_enter(backend, start, probe, tmp_path):
    import threading

    log = tmp_path / "input.log"
    spec, events = start(probe(log))
    events.wait_output(b"probe ready")
    tid = spec.terminal_id
    assert backend.input_mark(tid) is None
    backend.send_text(tid, "first", enter_count=1, mark="41")
    assert backend.input_mark(tid) == InputMark(mark="41", submitted=True)
    # With a submit delay the paste and the Enter are two steps: in between, the Enter is owed.
    sending = threading.Thread(target=backend.send_text, args=(tid, "second"),
                               kwargs={"enter_count": 2, "submit_delay": 0.4, "mark": "42"})
    sending.start()
    events.wait_output(b"second")
    assert backend.input_mark(tid) == InputMark(mark="42", submitted=False)
    sending.join(5)
    assert backend.input_mark(tid) == InputMark(mark="42", submitted=True)
    backend.send_text(tid, "", enter_count=1, mark="43")  # an Enter alone is an input too
    assert backend.input_mark(tid) == InputMark(mark="43", submitted=True)
    backend.send_text(tid, "unmarked", enter_count=1)
    assert backend.input_mark(tid) == InputMark(mark="43", submitted=True)
    events.wait_output(b"unmarked")
    time.sleep(0.1)
    assert log.read_bytes() == b"first\rsecond\r\r\runmarked\r"


def test_input_into_an_ended_program_leaves_the_mark_as_it_was(backend, start, python):
    from cao_tmux.errors import TerminalExited

    spec, events = start([python, "-c", "import sys; sys.stdin.readline()"])
    backend.send_text(spec.terminal_id, "go", enter_count=1, mark="7")
    events.wait_kind("exited")
    with pytest.raises(TerminalExited):
        backend.send_text(spec.terminal_id, "too late", enter_count=1, mark="8")
    with pytest.raises(TerminalExited):
        backend.send_text(spec.terminal_id, "", enter_count=1, mark="9")  # an Enter alone
    with pytest.raises(TerminalExited):
        backend.send_text(spec.terminal_id, "late", enter_count=1, submit_delay=0.05, mark="10")
    assert backend.input_mark(spec.terminal_id) == InputMark(mark="7", submitted=True)


@settings(max_examples=200, deadline=None)
@given(value=st.none() | st.text(max_size=140) | st.integers())
def test_input_marks_are_checked_before_anything_is_sent(value):
    from cao_hookspecs.errors import InvalidInput

    try:
        checked = checks.mark(value)
    except InvalidInput as exc:
        assert "input mark" in str(exc)
        assert not (isinstance(value, str) and re.fullmatch(r"[A-Za-z0-9.:_-]{1,128}", value))
        return
    assert checked == value
    assert value is None or re.fullmatch(r"[A-Za-z0-9.:_-]{1,128}", value)
