"""The line-based chat read on its own: statuses with their evidence, the answer's rows, and
properties over screens built from the rows these CLIs draw."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cao_agent_file_core.chat_screen import ChatScreen, Reading, last_answer, reading
from cao_hookspecs import TerminalStatus

CHAT = ChatScreen(name="Acme", tool=re.compile(r"Using tool: (?P<tool>\S+)"),
                  turn_error=re.compile(r"Acme is having trouble responding"))
PROMPT = "[cao-dev-0a1b2c3d] 4% >"


def read(*rows: str) -> Reading:
    return CHAT.read(list(rows))


def test_a_finished_turn_is_completed_with_its_answer_rows():
    found = read(f"{PROMPT} List the files.", "> There are three", "files.", " ▸ Credits: 0.1", "", PROMPT)
    assert found.status == TerminalStatus.COMPLETED
    assert found.evidence == "answer to 'List the files.', prompt back"
    assert found.answer == (1, 5) and found.marker == ">"
    assert last_answer(lambda text: found, "", "Acme") == "There are three\nfiles."


@pytest.mark.parametrize(("rows", "status", "evidence"), [
    ((), TerminalStatus.UNKNOWN, "no Acme chat prompt on screen"),
    (("0 of 1 mcp servers initialized",), TerminalStatus.PROCESSING,
     "MCP servers still loading, no prompt yet"),
    ((PROMPT,), TerminalStatus.IDLE, "prompt waiting, no message sent yet"),
    ((f"{PROMPT} How can I help?",), TerminalStatus.IDLE, "prompt waiting, no message sent yet"),
    ((f"{PROMPT} hi", "thinking"), TerminalStatus.PROCESSING, "working on 'hi': thinking"),
    ((PROMPT, f"{PROMPT} typed"), TerminalStatus.PROCESSING, "input not submitted yet: 'typed'"),
    ((f"{PROMPT} hi", "Using tool: fs_write", "Allow this action? Use 't' to trust [y/n/t]:", PROMPT),
     TerminalStatus.WAITING_USER_ANSWER, "asks to allow fs_write [y/n/t]"),
    ((f"{PROMPT} hi", "Acme is having trouble responding right now", PROMPT), TerminalStatus.ERROR,
     "turn to 'hi' ended in an error: Acme is having trouble responding right now"),
    ((f"{PROMPT} hi", "no answer here", PROMPT), TerminalStatus.IDLE,
     "prompt back without an answer to 'hi'"),
])
def test_each_rule_names_itself(rows, status, evidence):
    found = read(*rows)
    assert (found.status, found.evidence) == (status, evidence)
    assert found.report.status == status and found.report.evidence == evidence


def test_a_fatal_message_counts_only_with_nothing_drawn_after_it():
    rows = ["You are not logged in, please log in with acme login", PROMPT]
    assert CHAT.stopped(rows, [0, 1], [1]) is None
    stopped = CHAT.stopped(rows, [0, 1], [])
    assert stopped is not None and stopped.status == TerminalStatus.ERROR
    assert stopped.evidence == ("Acme stopped: not logged in: "
                                "You are not logged in, please log in with acme login")


def test_an_unfinished_or_empty_answer_is_a_value_error_naming_the_product():
    with pytest.raises(ValueError, match=r"^no finished Acme CLI answer on screen \(idle: x\)$"):
        last_answer(lambda text: reading(TerminalStatus.IDLE, "x"), "", "Acme CLI")
    empty = reading(TerminalStatus.COMPLETED, "x", [">", " ▸ Credits: 1", PROMPT], (0, 2), ">")
    with pytest.raises(ValueError, match="^the last Acme CLI answer is empty$"):
        last_answer(lambda text: empty, "", "Acme CLI")

    def broken(text: str) -> Reading:
        raise IndexError("boom")

    with pytest.raises(ValueError, match=r"^screen not understood: IndexError\('boom'\)$"):
        last_answer(broken, "", "Acme CLI")


def test_full_screen_answers_lose_their_bullet_and_indent():
    bullet = reading(TerminalStatus.COMPLETED, "x", ["• First", "  second", "▸ Credits: 1"], (0, 3), "•")
    assert last_answer(lambda text: bullet, "", "Acme") == "First\nsecond"
    bare = reading(TerminalStatus.COMPLETED, "x", ["  First", "  second"], (0, 2), "")
    assert last_answer(lambda text: bare, "", "Acme") == "First\nsecond"


ROWS = st.lists(st.sampled_from([
    PROMPT, f"{PROMPT} hi", f"{PROMPT} How can I help?", "> answer", ">", "more text", "", " ▸ Credits: 0.1",
    "Using tool: shell", "Allow this action? [y/n/t]:", "Acme is having trouble responding",
    "1 of 2 mcp servers initialized", "x" * 300,
]), max_size=12)


@given(ROWS)
def test_any_screen_reads_with_short_evidence_and_answer_bounds_inside_it(rows):
    found = CHAT.read(rows)
    assert len(found.evidence) <= 200
    if found.answer is not None:
        first, end = found.answer
        assert found.status == TerminalStatus.COMPLETED and 0 <= first < end <= len(found.rows)
        assert found.rows[first].startswith(">")
        try:
            text = last_answer(lambda screen: found, "", "Acme")
        except ValueError as exc:
            assert str(exc) == "the last Acme answer is empty"
        else:
            assert text and text == text.strip() and "▸ Credits" not in text.splitlines()[-1]


# -- the [y/n/t] permission question as a prompt --------------------------------------------------

ASK = "Allow this action? Use 't' to trust (always allow) this tool for the session. [y/n/t]:"


def test_an_open_question_reads_as_a_permission_prompt_with_letter_keys():
    from cao_hookspecs import OptionEffect, PromptKind

    rows = [f"{PROMPT} clean up", "> Cleaning.", "Using tool: fs_read", " ● Completed in 0.1s", "",
            "Using tool: execute_bash", " ● I will run the following shell command:", "rm -rf build", "tmp",
            "",
            ASK, "", PROMPT]
    prompt = CHAT.prompt(rows)
    assert prompt is not None and prompt.kind == PromptKind.PERMISSION
    assert (prompt.question, prompt.tool, dict(prompt.arguments)) == (
        "Allow this action?", "execute_bash", {"command": "rm -rf build\ntmp"})
    assert [(o.label, o.keys, o.effect) for o in prompt.options] == [
        ("y", ("y", "Enter"), OptionEffect.ALLOW), ("n", ("n", "Enter"), OptionEffect.DENY),
        ("t", ("t", "Enter"), OptionEffect.ALLOW_ALWAYS)]
    assert prompt.default is None and not prompt.free_text
    # The evidence starts at the asking tool, not at an earlier tool of the same turn.
    assert prompt.evidence[0] == "Using tool: execute_bash" and prompt.evidence[-2:] == (ASK, PROMPT)


def test_the_command_on_the_tool_row_and_a_question_naming_no_command():
    kiro = ChatScreen(name="Kiro", tool=re.compile(r"[Uu]sing tool:? (?P<tool>[\w.-]+)"),
                      turn_error=re.compile("x"))
    rows = [f"{PROMPT} go", "I will run the following command: ls -la (using tool: shell)", "Purpose: look",
            ASK, PROMPT]
    prompt = kiro.prompt(rows)
    assert prompt is not None and (prompt.tool, dict(prompt.arguments)) == ("shell", {"command": "ls -la"})
    bare = CHAT.prompt([ASK, PROMPT])
    assert bare is not None and bare.tool is None and not bare.arguments and bare.evidence == (ASK, PROMPT)


@pytest.mark.parametrize("rows", [
    [f"{PROMPT} go", ASK, f"{PROMPT} y", "> Done.", PROMPT],        # answered: it stays in the scrollback
    [f"{PROMPT} go", ASK, f"{PROMPT} [Message from terminal 0a1b2c3d] Status?"],  # text typed at the prompt
    [f"{PROMPT} go", ASK, PROMPT, "⠋ Thinking..."],                 # the prompt is not the last row
    [f"{PROMPT} go", ASK, "some output", PROMPT],                   # the question is not the row above it
    [f"{PROMPT} go", "> The CLI asks: " + ASK, "", PROMPT + " t"],
    [PROMPT],
    [],
])
def test_no_open_question(rows):
    assert CHAT.prompt(rows) is None


def test_a_hint_at_the_prompt_is_not_typed_text():
    assert CHAT.prompt([ASK, f"{PROMPT} How can I help?"]) is not None


@given(st.lists(st.text(max_size=60), max_size=20))
def test_the_question_reader_never_raises(rows):
    CHAT.prompt(rows)
    CHAT.prompt([*rows, ASK, PROMPT])
