"""mock_cli under a real pseudo-terminal: raw mode, its own echo, bracketed paste, Ctrl-C, clean exits."""

from __future__ import annotations

import hashlib
import os
import signal
import termios
import time

import pytest

from cao_provider_mock.contract import reply_payload

PROMPT = "\u276f ".encode()
PASTE_ON = b"\x1b[?2004h"
PASTE_OFF = b"\x1b[?2004l"
START, END = b"\x1b[200~", b"\x1b[201~"


def _started(spawn_pty, *args):
    """mock_cli started with ``args``, once it has drawn its ready line and prompt."""
    agent = spawn_pty(*args)
    agent.expect(PASTE_ON + b"MockCli ready.\r\n" + PROMPT)
    return agent


@pytest.fixture
def agent(spawn_pty):
    """mock_cli answering at once, ready."""
    return _started(spawn_pty, "--delay-ms", "0")


def test_raw_mode_bracketed_paste_on_and_terminal_restored_on_exit(agent):
    lflag = agent.mode()[3]
    assert not lflag & (termios.ECHO | termios.ICANON | termios.ISIG)
    assert not agent.mode()[0] & termios.ICRNL
    agent.send(b"/exit\r")
    assert agent.expect(b"goodbye\r\n" + PASTE_OFF) == b"/exit\r\ngoodbye\r\n" + PASTE_OFF
    assert agent.wait() == 0
    assert agent.mode() == agent.original_mode


def test_typed_text_is_echoed_once_and_answered(agent):
    agent.send(b"hello w")
    assert agent.expect(b"hello w") == b"hello w"
    agent.send(b"orld\r")
    assert agent.expect(PROMPT) == b"orld\r\n> MOCK: hello world\r\n" + PROMPT


def test_backspace_edits_the_line(agent):
    agent.send(b"abx\x7fc\x08d\r")
    out = agent.expect(PROMPT)
    assert out == b"abx\b \bc\b \bd\r\n> MOCK: abd\r\n" + PROMPT
    # Backspace removes one wide character as two cells, and does nothing on an empty line.
    agent.send("\u4e2d".encode() + b"\x7f\x7f\x7fz\r")
    assert agent.expect(PROMPT) == "\u4e2d".encode() + b"\b\b  \b\bz\r\n> MOCK: z\r\n" + PROMPT


def test_crlf_counts_as_one_enter_and_empty_input_just_reprints_the_prompt(agent):
    agent.send(b"one\r\n")
    assert agent.expect(PROMPT) == b"one\r\n> MOCK: one\r\n" + PROMPT
    agent.send(b"\r")
    assert agent.expect(PROMPT) == b"\r\n" + PROMPT
    agent.send(b"two\n")
    assert agent.expect(PROMPT) == b"two\r\n> MOCK: two\r\n" + PROMPT


def test_twenty_kib_multiline_paste_is_one_input(spawn_pty):
    lines = [f"line {i:04d} " + "x" * 100 for i in range(200)]
    text = "\n".join(lines)
    assert len(text.encode()) > 20 * 1024
    agent = _started(spawn_pty, "--delay-ms", "0")
    # Terminals turn pasted newlines into CR; the program reads them back as newlines of the paste.
    agent.send(START + text.replace("\n", "\r").encode() + END)
    assert agent.expect(b"]") == f"[Pasted text: 200 lines, {len(text)} chars]".encode()
    assert agent.quiet(0.2) == b""
    agent.send(b"\r")
    out = agent.expect(b"\r\n" + PROMPT, timeout=10).decode()
    assert out.count("> MOCK:") == 1
    answer = out.split("> MOCK: ", 1)[1].removesuffix("\r\n\u276f ")
    assert answer == reply_payload(text)
    assert answer.startswith("line 0000 ")
    assert answer.endswith(f"line 0199 {lines[-1][10:]} [200 lines, {len(text)} chars]")
    assert "\n" not in answer
    # The paste survived byte for byte: rebuild it from the answer.
    rebuilt = "\n".join(answer.rsplit(" [", 1)[0].split(" \u23ce "))
    assert hashlib.sha256(rebuilt.encode()).digest() == hashlib.sha256(text.encode()).digest()


def test_paste_is_literal_even_with_control_keys_and_split_markers(agent):
    # Ctrl-C, Ctrl-D, Backspace and a CR inside a paste are text, and the end marker may arrive late.
    agent.send(START + b"a\x03b\x04c\x7fd\re" + END[:3])
    assert agent.quiet(0.2) == b""
    agent.send(END[3:])
    agent.send(b"\r")
    out = agent.expect(PROMPT).decode()
    assert "> MOCK: a^Cb^Dc^?d \u23ce e [2 lines, 9 chars]\r\n" in out


def test_short_single_line_paste_is_echoed_verbatim(agent):
    agent.send(b"say " + START + b"pasted words" + END + b"!\r")
    assert agent.expect(PROMPT) == b"say pasted words!\r\n> MOCK: say pasted words!\r\n" + PROMPT


def test_ctrl_c_while_idle_clears_the_line(agent):
    agent.send(b"discard me\x03")
    assert agent.expect(PROMPT) == b"discard me^C\r\n" + PROMPT
    agent.send(b"kept\r")
    assert agent.expect(PROMPT) == b"kept\r\n> MOCK: kept\r\n" + PROMPT


def test_ctrl_c_while_busy_cancels_the_sleep(agent):
    agent.send(b"__mock_sleep_30\r")
    agent.expect(b"__mock_sleep_30\r\n")
    # Typed ahead while busy: not echoed yet, and discarded by the Ctrl-C that follows it.
    agent.send(b"typed ahead")
    assert agent.quiet(0.2) == b""
    started = time.monotonic()
    agent.send(b"\x03")
    assert agent.expect(PROMPT, timeout=2) == b"^C\r\n" + PROMPT
    assert time.monotonic() - started < 1
    agent.send(b"after\r")
    assert agent.expect(PROMPT) == b"after\r\n> MOCK: after\r\n" + PROMPT


def test_ctrl_c_cancels_the_reply_delay_and_type_ahead_is_kept_otherwise(spawn_pty):
    agent = _started(spawn_pty, "--delay-ms", "300")
    agent.send(b"first\rsecond\r")
    # The second input waits until the first is answered, then is echoed and answered in turn.
    out = agent.expect(b"> MOCK: second\r\n" + PROMPT, timeout=5)
    assert out == b"first\r\n> MOCK: first\r\n" + PROMPT + b"second\r\n> MOCK: second\r\n" + PROMPT
    agent.send(b"slow\r")
    agent.expect(b"slow\r\n")
    agent.send(b"\x03")
    assert agent.expect(PROMPT, timeout=2) == b"^C\r\n" + PROMPT
    assert b"MOCK" not in agent.quiet(0.5)


def test_error_and_sleep_commands(agent):
    agent.send(b"__mock_error__\r")
    assert agent.expect(PROMPT) == b"__mock_error__\r\nERROR: mock failure injected\r\n" + PROMPT
    started = time.monotonic()
    agent.send(b"__mock_sleep_0.3\r")
    assert agent.expect(PROMPT) == b"__mock_sleep_0.3\r\n> MOCK: slept 0.3s\r\n" + PROMPT
    assert time.monotonic() - started >= 0.3


def test_ctrl_d_on_an_empty_line_exits_and_restores(spawn_pty):
    agent = _started(spawn_pty)
    agent.send(b"x\x04")
    assert agent.expect(b"x") == b"x"
    assert agent.quiet(0.2) == b""
    assert agent.proc.poll() is None
    agent.send(b"\x7f\x04")
    assert agent.expect(PASTE_OFF) == b"\b \b\r\n" + PASTE_OFF
    assert agent.wait() == 0
    assert agent.mode() == agent.original_mode


def test_sigterm_restores_the_terminal(spawn_pty):
    agent = _started(spawn_pty)
    agent.send(b"__mock_sleep_30\r")
    agent.expect(b"__mock_sleep_30\r\n")
    agent.proc.send_signal(signal.SIGTERM)
    assert agent.wait() == 128 + signal.SIGTERM
    assert agent.mode() == agent.original_mode
    assert agent.expect(PASTE_OFF) == PASTE_OFF


def test_hangup_ends_the_program(spawn_pty):
    agent = _started(spawn_pty)
    os.close(agent.slave)
    os.close(agent.master)
    agent.master = agent.slave = -1
    assert agent.proc.wait(timeout=5) in (0, 128 + signal.SIGHUP)


def test_start_up_to_prompt_is_fast(spawn_pty):
    timings = []
    for _ in range(5):
        agent = _started(spawn_pty)
        timings.append(time.monotonic() - agent.started)
        agent.send(b"/exit\r")
        assert agent.wait() == 0
    # The target is about 80 ms on a loaded CI machine; an idle one measures about 20 ms.
    assert min(timings) < 0.15, timings
