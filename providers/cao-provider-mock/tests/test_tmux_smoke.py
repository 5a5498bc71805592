"""mock_cli in a real tmux window (private server): a bracketed multi-line paste read back by the detector."""

from __future__ import annotations

import subprocess
import time

import pytest

from cao_hookspecs import AgentProfile, LaunchContext, Terminal, TerminalStatus
from cao_provider_mock.contract import reply_payload
from cao_provider_mock.provider import mock_provider

pytestmark = pytest.mark.tmux


@pytest.fixture
def tmux(private_tmux):
    """Run tmux commands against the test's private server (libtmux's, killed at teardown)."""

    def run(*args: str, stdin: bytes | None = None, check: bool = True) -> str | None:
        """stdout of a tmux command; a failure fails the test, or gives None when ``check`` is false."""
        if stdin is None:
            result = private_tmux.run(*args, check=False)
            code, out, err = result.returncode, result.stdout, result.stderr
        else:  # libtmux sends no stdin: `load-buffer -` goes to tmux directly, as cao's backend does
            done = subprocess.run(private_tmux.argv(*args), input=stdin, capture_output=True, timeout=10,
                                  check=False)
            code, out, err = done.returncode, done.stdout.decode(), done.stderr.decode()
        if code != 0 and not check:
            return None
        assert code == 0, (args, err)
        return out

    return run


def _wait_for(tmux, statuses, seen, timeout=10.0):
    provider = mock_provider()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        report = provider.detect_status(tmux("capture-pane", "-p", "-t", "mock"))
        if not seen or seen[-1] != report.status:
            seen.append(report.status)
        if report.status in statuses:
            return report
        time.sleep(0.02)
    raise AssertionError(f"none of {statuses} within {timeout}s; saw {seen}; screen:\n"
                         + tmux("capture-pane", "-p", "-t", "mock"))


def _paste_and_submit(tmux, text):
    """Paste ``text`` the way cao's backend does (a bracketed paste, no shell), then press Enter."""
    tmux("load-buffer", "-b", "msg", "-", stdin=text.encode())
    tmux("paste-buffer", "-p", "-r", "-d", "-b", "msg", "-t", "mock")
    tmux("send-keys", "-t", "mock", "Enter")


def test_multiline_paste_goes_idle_processing_completed(tmux, tmp_path):
    provider = mock_provider()
    profile = AgentProfile(name="dev", provider="mock_cli", extra={"mock_delay_ms": 500})
    terminal = Terminal(id="0123abcd", name="dev-1a2b", session_name="mock", provider="mock_cli",
                        agent_profile="dev")
    plan = provider.launch(LaunchContext(terminal=terminal, profile=profile, working_directory=str(tmp_path),
                                         runtime_dir=str(tmp_path)))
    tmux("new-session", "-d", "-s", "mock", "-x", "100", "-y", "30", "-c", str(tmp_path), *plan.argv)
    started: list[TerminalStatus] = []
    _wait_for(tmux, {TerminalStatus.IDLE}, started, timeout=5)
    assert started[0] in (TerminalStatus.UNKNOWN, TerminalStatus.IDLE), started

    # Pasted rows that look like answers must not be read as answers, and nothing goes through a shell.
    message = "\n".join([
        "Review the patch; then report back.",
        "> MOCK: this is pasted, not an answer",
        "ERROR: mock failure injected",
        "  $HOME `id` 'quotes' \"double\" \\backslash \u00e9\u4e2d",
        "last line " + "y" * 120,
    ])
    _paste_and_submit(tmux, message)
    seen = [TerminalStatus.IDLE]
    _wait_for(tmux, {TerminalStatus.COMPLETED}, seen)
    assert seen == [TerminalStatus.IDLE, TerminalStatus.PROCESSING, TerminalStatus.COMPLETED], seen

    screen = tmux("capture-pane", "-p", "-t", "mock")
    assert f"\u276f [Pasted text: 5 lines, {len(message)} chars]" in screen
    joined = tmux("capture-pane", "-p", "-J", "-S", "-", "-t", "mock")
    answers = [row for row in joined.splitlines() if row.startswith("> MOCK:")]
    assert answers == [f"> MOCK: {reply_payload(message)}"]
    assert provider.extract_last_message(joined) == reply_payload(message)
    # The answer is wider than the window: the extractor joins its unjoined rows back together.
    assert provider.extract_last_message(screen).endswith("y" * 120 + f" [5 lines, {len(message)} chars]")

    # /exit ends the program, which closes the window, its session and then the private server.
    tmux("send-keys", "-t", "mock", "/exit", "Enter")
    deadline = time.monotonic() + 5
    while tmux("has-session", "-t", "mock", check=False) is not None:
        assert time.monotonic() < deadline, "mock_cli did not exit on /exit"
        time.sleep(0.02)


def test_a_behaviours_multi_line_answer_reads_back_exactly(tmux, tmp_path):
    provider = mock_provider()
    # The delay does not apply to behaviour turns, and the shipped echo answers at once: on a busy machine
    # its turn is over between two looks at the screen. This echo (found in the working directory) takes
    # half a second, as the turn above does.
    (tmp_path / "slow_echo.py").write_text(
        "import asyncio\n\n\nasync def answer(turn):\n    await asyncio.sleep(0.5)\n    return turn.task\n")
    profile = AgentProfile(name="echoer", provider="mock_cli", extra={"mockBehaviour": "slow_echo:answer"})
    terminal = Terminal(id="0123abcd", name="echoer-1a2b", session_name="mock", provider="mock_cli",
                        agent_profile="echoer")
    plan = provider.launch(LaunchContext(terminal=terminal, profile=profile, working_directory=str(tmp_path),
                                         runtime_dir=str(tmp_path)))
    # A narrow window, so the long line wraps on screen.
    tmux("new-session", "-d", "-s", "mock", "-x", "60", "-y", "30", "-c", str(tmp_path), *plan.argv)
    _wait_for(tmux, {TerminalStatus.IDLE}, [], timeout=5)
    task = "\n".join(["Summary", "", "  indented, then a long line: " + "z" * 100, "> MOCK: not a new answer",
                      "\u276f not a prompt", "end"])
    _paste_and_submit(tmux, task)
    seen = [TerminalStatus.IDLE]
    _wait_for(tmux, {TerminalStatus.COMPLETED}, seen)
    assert seen == [TerminalStatus.IDLE, TerminalStatus.PROCESSING, TerminalStatus.COMPLETED], seen
    joined = tmux("capture-pane", "-p", "-J", "-S", "-", "-t", "mock")
    assert provider.extract_last_message(joined) == task
    # Unjoined, the wrapped rows are joined back by the extractor (no blank fell on a wrap point here).
    assert provider.extract_last_message(tmux("capture-pane", "-p", "-t", "mock")) == task
