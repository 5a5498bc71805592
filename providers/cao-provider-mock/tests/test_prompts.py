"""Prompts a behaviour raises: the reader on recorded and hand-built screens, the prompt's key handling
and drawing, answers from input lines, and the shipped ``permission`` behaviour without a terminal.

The same prompts in a real tmux window, driven by keys: test_ask_tmux.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cao_hookspecs import OptionEffect, PromptKind, TerminalStatus
from cao_provider_mock.asking import (
    Choice,
    Option,
    PromptState,
    build_ask,
    erase,
    lines_answer,
    physical_rows,
    wrap,
)
from cao_provider_mock.contract import PERMISSION_HINT, QUESTION_HINT, TEXT_HINT
from cao_provider_mock.keys import BACKSPACE, DOWN, ENTER, ESCAPE, PASTE, TEXT, UP
from cao_provider_mock.prompts import read_prompt
from cao_provider_mock.screen import detect_status

from .test_behaviours import run_agent

SCREENS = Path(__file__).parent / "screens" / "0.1.0"
MANIFEST = json.loads((SCREENS / "manifest.json").read_text(encoding="utf-8"))["screens"]
P = "\u276f"
REFUSAL = "No, and tell the agent what to do differently"


def screen(name: str) -> str:
    return (SCREENS / f"{name}.txt").read_text(encoding="utf-8")


def prompt_free_screens() -> list[str]:
    return [name for name, entry in MANIFEST.items() if entry["status"] != "waiting_user_answer"]


# -- the reader on recorded screens --------------------------------------------------------------


def test_permission_prompt():
    prompt = read_prompt(screen("waiting_user_answer"))
    assert prompt is not None
    assert prompt.kind == PromptKind.PERMISSION
    assert prompt.question == "Allow Bash(touch recorded.txt)?"
    assert (prompt.tool, dict(prompt.arguments)) == ("Bash", {"command": "touch recorded.txt"})
    assert [o.label for o in prompt.options] == ["Yes", "Yes, and don't ask again for Bash", REFUSAL]
    assert [o.keys for o in prompt.options] == [("1",), ("2",), ("3",)]
    assert [o.effect for o in prompt.options] == [OptionEffect.ALLOW, OptionEffect.ALLOW_ALWAYS,
                                                  OptionEffect.DENY]
    assert [o.takes_text for o in prompt.options] == [False, False, True]
    assert prompt.default == 1 and not prompt.free_text and prompt.arguments_complete
    assert prompt.evidence[0] == prompt.question and prompt.evidence[-1] == PERMISSION_HINT


def test_a_wrapped_command_is_read_whole():
    prompt = read_prompt(screen("waiting_user_answer-100x30"))
    assert prompt is not None
    command = ("python -m pytest tests/unit tests/integration --maxfail=3 --durations=10 "
               "-k 'not slow and not network' --junitxml=reports/junit.xml")
    assert dict(prompt.arguments) == {"command": command}
    # The question took two rows, the second starting with the blank mock_cli kept off the first.
    assert prompt.evidence[1].startswith(" not network")


def test_question_prompt_with_descriptions_and_a_text_option():
    for name in ("waiting_user_answer_question", "waiting_user_answer_question-100x30"):
        prompt = read_prompt(screen(name))
        assert prompt is not None, name
        assert prompt.kind == PromptKind.QUESTION and prompt.tool is None and not prompt.arguments
        assert prompt.question == "Which database should I use?"
        assert [o.label for o in prompt.options] == ["SQLite", "Postgres", "Type something."]
        assert prompt.options[0].description == ("One file next to the code: nothing to run, nothing to "
                                                 "configure, and a backup is a copy of that file")
        assert prompt.options[1].description == "A server; what production uses"
        assert [o.effect for o in prompt.options] == [OptionEffect.ANSWER] * 3
        assert [o.takes_text for o in prompt.options] == [False, False, True]
        assert prompt.default == 1


def test_the_text_field_reads_as_a_free_text_prompt_of_the_picked_option():
    prompt = read_prompt(screen("waiting_user_answer_text"))
    assert prompt is not None
    assert (prompt.kind, prompt.title, prompt.tool) == (PromptKind.PERMISSION, REFUSAL, "Bash")
    assert prompt.free_text and prompt.options == () and prompt.default is None
    assert prompt.evidence[-2:] == ("\u270e use make clean instead", TEXT_HINT)
    question = read_prompt(screen("waiting_user_answer_question_answer3"))
    assert question is not None and question.kind == PromptKind.QUESTION
    assert question.title == "Type something."
    # Not the menu it came from: the kernel sees a new prompt, waiting for text.
    menu = read_prompt(screen("waiting_user_answer"))
    assert menu is not None and prompt.fingerprint != menu.fingerprint


def test_waiting_screens_read_as_waiting_with_evidence():
    for name, entry in MANIFEST.items():
        report = detect_status(screen(name))
        assert report.status.value == entry["status"], name
        if entry["status"] == "waiting_user_answer":
            assert "prompt" in report.evidence and "key hint" in report.evidence


@pytest.mark.parametrize("name", prompt_free_screens())
def test_no_prompt_on_prompt_free_screens(name):
    assert read_prompt(screen(name)) is None


# -- the reader on hand-built screens ------------------------------------------------------------


def _prompt_rows(*, cursor: int = 1, question: str = "Allow tool(a=1, b=x, y)?") -> list[str]:
    rows = ["", question]
    for number, label in enumerate(["Yes", "Yes, and don't ask again for tool", REFUSAL + " \u270e"], 1):
        rows.append(f"{P if number == cursor else ' '} {number}. {label}")
    return [*rows, PERMISSION_HINT]


def test_cursor_and_named_arguments():
    prompt = read_prompt("\n".join(["MockCli ready.", f"{P} allow", *_prompt_rows(cursor=2), "", ""]))
    assert prompt is not None and prompt.default == 2
    assert dict(prompt.arguments) == {"a": "1", "b": "x, y"}
    assert read_prompt("\n".join(_prompt_rows(question="Allow tool()?"))).arguments == {}


def test_an_answered_prompt_above_a_new_prompt_row_is_not_open():
    # mock_cli erases what it drew; even a prompt left on screen is closed once the chat prompt follows.
    assert read_prompt("\n".join(["MockCli ready.", *_prompt_rows(), "> MOCK: Ran it.", P])) is None
    report = detect_status("\n".join(["MockCli ready.", f"{P} x", *_prompt_rows(), "> MOCK: Ran it.", P]))
    assert report.status == TerminalStatus.COMPLETED


def test_an_answer_quoting_a_prompt_is_not_one():
    quoted = ["> MOCK: It looked like this:", *(f"\u2502 {row}".rstrip() for row in _prompt_rows()), P]
    assert read_prompt("\n".join(["MockCli ready.", f"{P} show me", *quoted])) is None


@pytest.mark.parametrize("broken", [
    lambda rows: rows[1:],                                     # no blank row above the question
    lambda rows: [rows[0], *rows[2:]],                         # no question
    lambda rows: [*rows[:2], rows[2].replace(P, " "), *rows[3:]],  # no cursor
    lambda rows: [*rows[:3], "  stray row", *rows[3:]],        # a row that is neither option nor description
    lambda rows: [*rows[:-1], "Enter to confirm"],             # not the hint
])
def test_damaged_prompts_are_not_read(broken):
    assert read_prompt("\n".join(broken(_prompt_rows()))) is None


# -- asking: what a behaviour may ask ---------------------------------------------------------------


def test_a_permission_gets_its_question_and_default_options():
    ask = build_ask(tool="Bash", arguments={"command": "ls\n-la"})
    assert ask.kind == "permission" and ask.question == "Allow Bash(ls \u23ce -la)?"
    assert [o.label for o in ask.options] == ["Yes", "Yes, and don't ask again for Bash", REFUSAL]
    assert [o.takes_text for o in ask.options] == [False, False, True]
    edit = build_ask(tool="edit", arguments={"path": "a", "mode": "w"})
    assert edit.question == "Allow edit(path=a, mode=w)?"


@pytest.mark.parametrize("call, message", [
    (lambda: build_ask(tool="Bash", question="Sure?"), "drawn from its tool"),
    (lambda: build_ask(tool="two words"), "without blanks"),
    (lambda: build_ask("Pick?", ["only one"]), "2 to 9 options"),
    (lambda: build_ask("Pick?", [str(n) for n in range(10)]), "2 to 9 options"),
    (lambda: build_ask(None, ["a", "b"]), "needs its question"),
    (lambda: build_ask("Pick?", ["a", "b"], kind="plan"), "kind is one of"),
    (lambda: build_ask("Pick?", ["a", ""]), "needs a label"),
])
def test_bad_asks_are_refused(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# -- the prompt's keys -----------------------------------------------------------------------------


def _state() -> PromptState:
    return PromptState(build_ask("Pick?", ["Red", Option("Green", "calm"), Option("Other", takes_text=True)]))


def test_a_digit_picks_at_once_and_what_follows_it_is_left_over():
    state = _state()
    assert state.feed(TEXT, "x0") == (None, [])  # not an option's digit
    assert state.feed(TEXT, "2ab") == (Choice(2, "Green"), [(TEXT, "ab")])


def test_arrows_move_the_cursor_within_the_menu_and_enter_takes_it():
    state = _state()
    for kind in (UP, DOWN, DOWN, DOWN, DOWN):
        assert state.feed(kind, "") == (None, [])
    assert state.cursor == 3
    state.feed(UP, "")
    assert state.feed(ENTER, "") == (Choice(2, "Green"), [])


def test_escape_picks_the_last_option_without_text():
    assert _state().feed(ESCAPE, "") == (Choice(3, "Other"), [])


def test_a_paste_picks_only_when_it_is_a_digit_alone():
    state = _state()
    for pasted in ("[Message from terminal 12345678] pick 1", "12", "0", "4", ""):
        assert state.feed(PASTE, pasted) == (None, [])
    assert state.cursor == 1 and state.typing is None
    assert state.feed(PASTE, " 2\n") == (Choice(2, "Green"), [])


def test_the_text_field_takes_typing_pastes_and_backspace_and_esc_goes_back():
    state = _state()
    assert state.feed(TEXT, "3bl") == (None, [])
    assert state.typing == 3 and state.rows(80)[-2:] == ["\u270e bl", TEXT_HINT]
    state.feed(BACKSPACE, "")
    state.feed(PASTE, "ue\nish")
    assert state.rows(80)[-2] == "\u270e b[Pasted text: 2 lines, 6 chars]"
    state.feed(ESCAPE, "")
    assert state.typing is None and state.rows(80)[-1] == QUESTION_HINT
    state.feed(DOWN, "")
    state.feed(DOWN, "")
    assert state.feed(ENTER, "") == (None, [])  # the cursor's option takes text: its field opens
    state.feed(TEXT, "teal")
    assert state.feed(ENTER, "") == (Choice(3, "Other", "teal"), [])


def test_drawing_marks_the_cursor_and_the_text_option():
    state = _state()
    state.feed(DOWN, "")
    assert state.rows(80) == ["", "Pick?", "  1. Red", f"{P} 2. Green", "     calm", "  3. Other \u270e",
                              QUESTION_HINT]
    assert read_prompt("\n".join(state.rows(80))).default == 2


def test_long_labels_are_cut_and_erasing_counts_wrapped_rows():
    state = PromptState(build_ask("Q" * 30, ["A" * 40, "b"]))
    rows = state.rows(20)
    assert rows[1:3] == ["Q" * 20, "Q" * 10] and rows[3] == f"{P} 1. " + "A" * 14 + "\u2026"
    assert physical_rows(["", "x" * 20, "x" * 21], 20) == 4
    assert erase(["", "x" * 21], 20) == "\r\x1b[2A\x1b[J" and erase(["only"], 20) == "\r\x1b[J"


@given(st.text(st.sampled_from("ab \u754c"), max_size=80), st.integers(2, 30))
def test_wrapping_keeps_the_text_and_never_ends_a_row_with_a_blank(text, width):
    rows = wrap(text, width)
    assert "".join(rows) == text
    for row in rows[:-1]:
        assert row and (not row.endswith(" ") or not row.strip())


def test_answers_from_input_lines():
    ask = build_ask(tool="Bash", arguments={"command": "ls"})
    assert lines_answer(ask, iter(["", "x"])) == Choice(1, "Yes")
    assert lines_answer(ask, iter(["nine", "7", " 2 "])) == Choice(2, "Yes, and don't ask again for Bash")
    assert lines_answer(ask, iter(["3", "not now"])) == Choice(3, REFUSAL, "not now")
    assert lines_answer(ask, iter([])) == Choice(3, REFUSAL)


# -- mock_cli without a terminal ---------------------------------------------------------------------


def test_the_permission_behaviour_asks_once_per_command_until_always_allowed():
    out = run_agent("run: make\n3\ntoo risky\nplease run: rm -rf build\n2\ndo it again run: ls\n/exit\n",
                    "--behaviour", "permission").stdout.decode()
    assert out.count("Enter to confirm") == 2  # the third task was not asked: Bash is allowed for good
    assert "> MOCK: Did not run make.\n\u2502 Reason: too risky\n" in out
    assert "Allow Bash(rm -rf build)?\n" in out and "> MOCK: Ran rm -rf build.\n" in out
    assert out.endswith("> MOCK: Ran ls.\n\u276f goodbye\n")


def test_the_permission_behaviour_has_a_default_command():
    out = run_agent("clean up\n1\n", "--behaviour", "permission").stdout.decode()
    assert "Allow Bash(rm -rf build)?" in out and "> MOCK: Ran rm -rf build.\n" in out


def test_asking_twice_in_a_turn(monkeypatch):
    monkeypatch.setenv("CAO_MOCK_BEHAVIOUR_PATH", str(Path(__file__).parent / "programs"))
    out = run_agent("twice\n3\nmauve\n2\n", "--behaviour", "behaviours_for_tests:asking").stdout.decode()
    assert "> MOCK: 3 Other mauve; 2 No\n" in out
    # Each prompt is printed as drawn, then its answer as progress rows.
    assert "\u23fa Pick a colour?\n  \u23bf 3. Other: mauve\n\nSure?\n" in out
    assert out.endswith("Enter to select \u00b7 Esc to cancel\n\u23fa Sure?\n  \u23bf 2. No\n"
                        "> MOCK: 3 Other mauve; 2 No\n\u276f ")
