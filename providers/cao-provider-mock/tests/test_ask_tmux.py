"""A behaviour's prompt in a real tmux window (private server): what it draws, what each key does, and
that nothing of it stays on screen once answered."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from cao_hookspecs import TerminalStatus
from cao_provider_mock.contract import PERMISSION_HINT, QUESTION_HINT, TEXT_HINT
from cao_provider_mock.prompts import read_prompt
from cao_provider_mock.screen import detect_status

from .conftest import mock_argv

pytestmark = pytest.mark.tmux

P = "\u276f"
PROGRAMS = Path(__file__).parent / "programs"


class Window:
    def __init__(self, tmux, width: int, height: int) -> None:
        self.tmux = tmux
        tmux.run("new-session", "-d", "-s", "ask", "-x", str(width), "-y", str(height), "-e",
                 f"CAO_MOCK_BEHAVIOUR_PATH={PROGRAMS}",
                 *mock_argv("--behaviour", "behaviours_for_tests:asking"))
        self.wait(lambda rows: rows[-1:] == [P])

    def rows(self) -> list[str]:
        rows = [row.rstrip() for row in self.tmux.run("capture-pane", "-p", "-t", "ask").stdout.split("\n")]
        while rows and not rows[-1]:
            rows.pop()
        return rows

    def wait(self, sign, timeout: float = 10.0) -> list[str]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            rows = self.rows()
            if sign(rows):
                time.sleep(0.05)  # let the program finish the write it is in
                if sign(self.rows()):
                    return self.rows()
            time.sleep(0.02)
        raise AssertionError("screen never matched:\n" + "\n".join(self.rows()))

    def keys(self, *keys: str) -> None:
        self.tmux.run("send-keys", "-t", "ask", *keys)

    def type(self, text: str) -> None:
        self.tmux.run("send-keys", "-t", "ask", "-l", text)
        self.keys("Enter")

    def answered(self, answer: str) -> list[str]:
        return self.wait(lambda rows: rows[-2:] == [f"> MOCK: {answer}", P])


def last_is(text: str):
    return lambda rows: rows[-1:] == [text]


def test_the_question_is_drawn_and_arrows_and_enter_pick(private_tmux):
    window = Window(private_tmux, 60, 20)
    window.type("ask")
    rows = window.wait(last_is(QUESTION_HINT))
    assert rows[-8:] == [f"{P} ask", "", "Pick a colour?", f"{P} 1. Red", "  2. Green", "     the calm one",
                         "  3. Other \u270e", QUESTION_HINT]
    assert detect_status("\n".join(rows)).status == TerminalStatus.WAITING_USER_ANSWER
    window.keys("Down")
    rows = window.wait(lambda rows: rows[-4] == f"{P} 2. Green")
    assert read_prompt("\n".join(rows)).default == 2
    window.keys("Up", "Up", "Down", "Enter")
    rows = window.answered("2 Green None")
    # The prompt is gone; the question and the answer stay as progress rows.
    assert rows == ["MockCli ready.", f"{P} ask", "\u23fa Pick a colour?", "  \u23bf 2. Green",
                    "> MOCK: 2 Green None", P]
    assert detect_status("\n".join(rows)).status == TerminalStatus.COMPLETED


def test_escape_refuses_and_the_text_field_opens_goes_back_and_sends(private_tmux):
    window = Window(private_tmux, 100, 20)
    window.type("allow command=make")
    window.wait(last_is(PERMISSION_HINT))
    window.keys("Escape")
    window.answered("3 No, and tell the agent what to do differently None")
    window.type("allow a=1 b=2")
    rows = window.wait(last_is(PERMISSION_HINT))
    assert rows[-5] == "Allow tool(a=1, b=2)?"
    window.keys("Down", "Down", "Enter")
    rows = window.wait(last_is(TEXT_HINT))
    assert rows[-3:] == ["  3. No, and tell the agent what to do differently \u270e", "\u270e", TEXT_HINT]
    window.keys("-l", "nope")
    window.wait(lambda rows: rows[-2] == "\u270e nope")
    window.keys("Escape")
    rows = window.wait(last_is(PERMISSION_HINT))
    assert rows[-2] == f"{P} 3. No, and tell the agent what to do differently \u270e"
    window.keys("3")
    window.wait(last_is(TEXT_HINT))
    window.keys("-l", "not now")
    window.keys("BSpace", "BSpace", "BSpace")
    window.keys("-l", "yet")
    window.wait(lambda rows: rows[-2] == "\u270e not yet")
    window.keys("Enter")
    window.answered("3 No, and tell the agent what to do differently not yet")


def test_a_wrapped_prompt_is_erased_whole(private_tmux):
    window = Window(private_tmux, 40, 12)
    window.type("allow command=" + "x" * 70)
    rows = window.wait(last_is(PERMISSION_HINT))
    prompt = read_prompt("\n".join(rows))
    assert prompt is not None and dict(prompt.arguments) == {"command": "x" * 70}
    window.keys("1")
    rows = window.answered("1 Yes None")
    assert not any("Yes, and" in row or row == PERMISSION_HINT for row in rows)


def test_ctrl_c_cancels_the_turn_and_keys_typed_before_the_prompt_stay_input(private_tmux):
    window = Window(private_tmux, 60, 20)
    window.type("ask")
    window.wait(last_is(QUESTION_HINT))
    window.keys("C-c")
    rows = window.wait(lambda rows: rows[-2:] == ["^C", P])
    assert detect_status("\n".join(rows)).status == TerminalStatus.IDLE
    # "1" is typed while the turn thinks, before its question shows: it must not answer the question.
    window.type("slow")
    window.keys("1")
    window.wait(last_is(QUESTION_HINT))
    time.sleep(0.3)
    assert window.rows()[-1] == QUESTION_HINT
    window.keys("2")
    window.wait(lambda rows: rows[-2:] == ["> MOCK: 2 Green None", f"{P} 1"])
