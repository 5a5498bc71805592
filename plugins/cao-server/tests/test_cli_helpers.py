"""The command helpers that need no server: --env parsing, tmux argv, the progress line, rendering."""

from __future__ import annotations

import asyncio
import io
import string
import time
from typing import Any

import click
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cao_hookspecs import StatusReport, TerminalStatus
from cao_hookspecs.errors import AgentFailed, Timeout
from cao_server.commands import _envvars, _render, _tmux, _waiting

KEYS = st.from_regex(r"\A[A-Za-z_][A-Za-z0-9_]{0,20}\Z").filter(
    lambda k: not k.upper().startswith(_envvars.RESERVED_PREFIXES)
)
VALUES = st.text(st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)), max_size=50)


@given(st.dictionaries(KEYS, VALUES, max_size=5))
def test_env_items_round_trip(env: dict[str, str]) -> None:
    assert _envvars.parse_env([f"{k}={v}" for k, v in env.items()]) == env


@given(KEYS, VALUES, VALUES)
def test_env_value_keeps_every_equals_sign(key: str, left: str, right: str) -> None:
    assert _envvars.parse_env([f"{key}={left}={right}"]) == {key: f"{left}={right}"}


@given(st.text(max_size=30).filter(lambda s: "=" not in s))
def test_env_item_without_equals_is_refused(item: str) -> None:
    with pytest.raises(click.BadParameter, match="is not KEY=VALUE"):
        _envvars.parse_env([item])


@given(st.text(min_size=1, max_size=20).filter(
    lambda k: "=" not in k and not _envvars.KEY_RE.match(k)))
def test_env_bad_key_is_refused(key: str) -> None:
    with pytest.raises(click.BadParameter, match="invalid variable name"):
        _envvars.parse_env([f"{key}=x"])


@pytest.mark.parametrize("key", ["CLAUDECODE", "CLAUDE_CONFIG_DIR", "claude_x", "CODEX_HOME", "__MISE_X"])
def test_env_reserved_prefixes_are_refused(key: str) -> None:
    with pytest.raises(click.BadParameter, match="reserved"):
        _envvars.parse_env([f"{key}=1"])


def test_env_allowed_cloud_switch_and_limits() -> None:
    assert _envvars.parse_env(["CLAUDE_CODE_USE_BEDROCK=1"]) == {"CLAUDE_CODE_USE_BEDROCK": "1"}
    with pytest.raises(click.BadParameter, match="given twice"):
        _envvars.parse_env(["A=1", "A=2"])
    with pytest.raises(click.BadParameter, match="under 2048 bytes"):
        _envvars.parse_env(["A=" + "x" * 2048])
    assert _envvars.parse_env(["A=" + "x" * 2047]) == {"A": "x" * 2047}


def test_attach_argv_uses_the_backend_socket() -> None:
    plain = _tmux.attach_argv("cao-a", {}, {})
    assert plain[1:] == ["attach-session", "-t", "cao-a"]
    by_path = _tmux.attach_argv("cao-a", {"CAO_TMUX_SOCKET": "/s/sock"}, {})
    assert by_path[1:] == ["-S", "/s/sock", "attach-session", "-t", "cao-a"]
    by_name = _tmux.attach_argv("cao-a", {"CAO_TMUX_SOCKET_NAME": "cao"}, {})
    assert by_name[1:] == ["-L", "cao", "attach-session", "-t", "cao-a"]


def test_attach_switches_client_only_inside_the_same_server() -> None:
    inside = {"TMUX": "/s/sock,123,0"}
    switch = ["switch-client", "-t", "cao-a"]
    assert _tmux.attach_argv("cao-a", {"CAO_TMUX_SOCKET": "/s/sock"}, inside)[-3:] == switch
    assert _tmux.attach_argv("cao-a", {"CAO_TMUX_SOCKET": "/other"}, inside)[-3] == "attach-session"
    assert _tmux.attach_argv("cao-a", {}, {"TMUX": "/tmp/tmux-0/default,1,0"})[-3] == "switch-client"
    named = {"TMUX": "/tmp/tmux-0/cao,1,0"}
    assert _tmux.attach_argv("cao-a", {"CAO_TMUX_SOCKET_NAME": "cao"}, named)[-3] == "switch-client"


def test_current_session_outside_tmux_is_none() -> None:
    assert _tmux.current_session({"PATH": "/usr/bin"}) is None


class _Tty(io.StringIO):
    encoding = "utf-8"

    def isatty(self) -> bool:
        return True


async def _spin(stream: io.StringIO, seconds: float) -> None:
    async with _waiting.progress("waiting for dev-1a2b", stream=stream, interval=0.05):
        await asyncio.sleep(seconds)


def test_progress_draws_and_erases_on_a_terminal() -> None:
    stream = _Tty()
    asyncio.run(_spin(stream, 0.3))
    text = stream.getvalue()
    assert text.count("waiting for dev-1a2b") >= 3
    assert "(0s)" in text
    assert text.endswith("\r\x1b[K")


def test_progress_writes_nothing_when_not_a_terminal() -> None:
    stream = io.StringIO()
    asyncio.run(_spin(stream, 0.15))
    assert stream.getvalue() == ""


def test_interruptible_takes_back_the_first_cancellation() -> None:
    async def main() -> tuple[bool, object, str]:
        task = asyncio.current_task()
        assert task is not None
        asyncio.get_running_loop().call_later(0.05, task.cancel)
        interrupted, value = await _waiting.interruptible(asyncio.sleep(5, result="late"))
        # The task can still await after the interruption (the command prints the output).
        after = await asyncio.sleep(0, result="still running")
        return interrupted, value, after

    assert asyncio.run(main()) == (True, None, "still running")

    async def finished() -> tuple[bool, object]:
        return await _waiting.interruptible(asyncio.sleep(0, result="done"))

    assert asyncio.run(finished()) == (False, "done")


def test_table_pads_columns_and_never_cuts() -> None:
    runner_out = io.StringIO()
    with click.Context(click.Command("t")):
        import contextlib

        with contextlib.redirect_stdout(runner_out):
            _render.table([("A", 3), ("B", 4)], [("x", None), ("longer-than-3", 7)])
    lines = runner_out.getvalue().splitlines()
    assert lines == ["A   B", "--------", "x   N/A", "longer-than-3 7"]


@given(st.text(alphabet=string.printable + "é⏎\u2028", max_size=200), st.integers(1, 80))
def test_one_line_fits_and_has_no_line_breaks(text: str, width: int) -> None:
    line = _render.one_line(text, width)
    assert len(line) <= width
    assert "\n" not in line and "\r" not in line
    if len(" ".join(text.split())) <= width:
        assert line == " ".join(text.split())


class _Timeline:
    """A terminal whose status follows a script of ``(seconds after the first call, status)``, answering
    ``wait_for_status`` as the server does. mock_cli never flashes idle mid-turn or asks the user a
    question, so these readings are replayed here."""

    def __init__(self, *steps: tuple[float, str]) -> None:
        self.steps = [(at, TerminalStatus(status)) for at, status in steps]
        self.started: float | None = None

    def _now(self) -> TerminalStatus:
        assert self.started is not None
        elapsed = time.monotonic() - self.started
        return [status for at, status in self.steps if at <= elapsed][-1]

    async def wait_for_status(self, terminal_id: str, statuses: Any, timeout: float) -> StatusReport:
        if self.started is None:
            self.started = time.monotonic()
        deadline = time.monotonic() + timeout
        while True:
            current = self._now()
            if current in statuses:
                return StatusReport(status=current)
            if current == TerminalStatus.ERROR:
                raise AgentFailed(f"terminal {terminal_id} is in error: scripted")
            if time.monotonic() >= deadline:
                raise Timeout(f"terminal {terminal_id} did not reach it")
            await asyncio.sleep(0.005)


def _wait(timeline: _Timeline, timeout: float = 5.0) -> tuple[str, float]:
    async def main() -> tuple[str, float]:
        started = time.monotonic()
        report = await _waiting.wait_done(timeline, "0a1b2c3d", timeout)  # type: ignore[arg-type]
        return report.status.value, time.monotonic() - started

    return asyncio.run(main())


def test_wait_done_returns_at_once_on_completed() -> None:
    status, took = _wait(_Timeline((0, "processing"), (0.05, "completed")))
    assert status == "completed" and took < _waiting.IDLE_SETTLE


def test_wait_done_trusts_idle_only_once_it_holds() -> None:
    status, took = _wait(_Timeline((0, "processing"), (0.05, "idle")))
    assert status == "idle" and took >= 0.05 + _waiting.IDLE_SETTLE
    # An idle flash between two steps of one turn does not end the wait.
    status, took = _wait(_Timeline((0, "processing"), (0.05, "idle"), (0.15, "processing"), (0.6, "completed")))
    assert status == "completed" and took >= 0.6


def test_wait_done_stops_on_error_question_and_timeout() -> None:
    with pytest.raises(AgentFailed, match="is in error"):
        _wait(_Timeline((0, "processing"), (0.05, "error")))
    with pytest.raises(click.ClickException, match="waiting for an answer from the user"):
        _wait(_Timeline((0, "processing"), (0.05, "waiting_user_answer")))
    with pytest.raises(click.ClickException, match=r"did not finish within 0\.2 s; the agent keeps running"):
        _wait(_Timeline((0, "processing")), timeout=0.2)


@given(st.text())
def test_printable_leaves_no_control_or_reordering_character(text):
    from cao_server.printable import printable

    shown = printable(text)
    hidden = "\u200b\u200e\u200f\u2028\u2029\u202e\u2066"
    assert not any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F or c in hidden for c in shown)
    if all(c.isprintable() and c not in "\u2028\u2029" for c in text):
        assert shown == text


def test_tables_show_escape_sequences_instead_of_sending_them(capsys):
    _render.table([("FROM", 10), ("MESSAGE", 40)],
                  [("ab\x1b]0;owned\x07", _render.one_line("hi \x1b[2J\x1b[31mred \u202egnp.exe", 40))])
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    assert "ab\\x1b]0;owned\\x07" in out and "\\x1b[2J" in out and "\\u202e" in out
