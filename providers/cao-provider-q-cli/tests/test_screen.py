"""The q chat detector and extractor beyond the documented screens: the prompt format q's own prompt
parser accepts, answers of any shape, typed input, permission questions, busy rows (properties).

Screens here are built from the layout the documented screens show (tests/screens/), varying the
parts a real conversation varies: agent name, prompt markers, the message, the answer's text.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cao_hookspecs import TerminalStatus
from cao_provider_q_cli.screen import HINTS, PROMPT, detect_status, extract_last_message, read_screen

AGENT = "cao-developer-0123abcd"
agent_names = st.from_regex(r"[A-Za-z0-9_-]{1,64}", fullmatch=True)


def prompt(agent: str = AGENT, percent: int | None = None, code: bool = False, tangent: bool = False,
           warning: bool = False, rest: str = "") -> str:
    """A prompt row as q's generate_prompt writes it (trailing space dropped, as a capture does)."""
    text = (f"[{agent}] " + (f"{percent}% " if percent is not None else "") + ("λ " if code else "")
            + ("↯ " if tangent else "") + ("!" if warning else "") + "> " + rest)
    return text.rstrip()


prompts = st.builds(prompt, agent_names, st.none() | st.integers(0, 100), st.booleans(), st.booleans(), st.booleans())
# Answer rows as q prints them: any text that does not itself look like a prompt, an answer marker, a
# spinner or an error message.
answer_rows = st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), max_size=50).filter(
    lambda row: not row.startswith(("[", ">")) and "having trouble" not in row and "Allow this action" not in row
    and not (row[:1] and "\u2800" <= row.lstrip()[:1] <= "\u28ff"))
messages = st.text(alphabet=st.characters(whitelist_categories=("L", "N", "P", "Zs")), min_size=1, max_size=40).filter(
    lambda m: m.strip() and m.strip() not in HINTS)


@given(prompts)
def test_every_prompt_form_is_read_as_a_waiting_prompt(row):
    assert PROMPT.match(row)
    assert detect_status("🤖 You are chatting with claude-4-sonnet\n\n" + row).status is TerminalStatus.IDLE


@settings(max_examples=50)
@given(user=prompts, message=messages, first=answer_rows, rest=st.lists(answer_rows, max_size=6), end=prompts)
def test_any_answer_after_the_last_message_is_extracted_exactly(user, message, first, rest, end):
    screen = "\n".join([f"{user} {message}", "", f"> {first}", *rest, "", end])
    report = detect_status(screen)
    assert report.status is TerminalStatus.COMPLETED, report
    expected = "\n".join([first, *rest]).rstrip()
    # Rows are compared as the capture gives them: trailing blanks dropped.
    expected = "\n".join(row.rstrip() for row in expected.split("\n")).strip()
    if expected:
        assert extract_last_message(screen) == expected
    else:
        with pytest.raises(ValueError):
            extract_last_message(screen)


@given(message=messages, typed=messages)
def test_text_typed_after_a_finished_turn_is_not_read_as_its_completion(message, typed):
    screen = "\n".join([prompt(rest=message), "", "> Done.", "", prompt(percent=3, rest=typed)])
    report = detect_status(screen)
    assert report.status is TerminalStatus.PROCESSING and "not submitted" in report.evidence
    with pytest.raises(ValueError):
        extract_last_message(screen)


@pytest.mark.parametrize("hint", sorted(HINTS))
def test_known_hints_after_the_prompt_are_not_typed_input(hint):
    screen = "\n".join([prompt(rest="Hi"), "", "> Hello.", "", prompt(rest=hint)])
    assert detect_status(screen).status is TerminalStatus.COMPLETED
    assert extract_last_message(screen) == "Hello."


QUESTIONS = ["Allow this action? Use 't' to trust (always allow) this tool for the session. [y/n/t]:",
             "Allow this action? [y/n/t]:"]


@given(typed=st.sampled_from(["", "y", "t", "[Message from terminal 9445aa60] Status?"]),
       question=st.sampled_from(QUESTIONS))
def test_a_permission_question_waits_whatever_is_typed_after_it(typed, question):
    screen = "\n".join([prompt(rest="Make the folders"), "", "🛠️  Using tool: execute_bash", " ⋮",
                        " ● I will run the following shell command:", "mkdir -p src", "", "", question, "",
                        prompt(percent=16, code=True, rest=typed)])
    report = detect_status(screen)
    assert report.status is TerminalStatus.WAITING_USER_ANSWER
    assert report.evidence == "asks to allow execute_bash [y/n/t]"


def test_an_answered_permission_is_not_the_next_message():
    """'y' typed at the permission prompt belongs to the running turn (upstream's case P7)."""
    screen = "\n".join([
        prompt(rest="Update the player"), "", "Allow this action? [y/n/t]:", "",
        prompt(percent=16, code=True, rest="y"), "", " - Completed in 0.3s", "", "> Done!", "",
        prompt(percent=18, code=True),
    ])
    reading = read_screen(screen)
    assert reading.status is TerminalStatus.COMPLETED
    assert reading.evidence == "answer to 'Update the player', prompt back"
    assert extract_last_message(screen) == "Done!"


def test_an_interrupted_turn_leaves_an_idle_prompt():
    screen = "\n".join([prompt(rest="Write a novel"), "", "^C", "", prompt()])
    assert detect_status(screen).status is TerminalStatus.IDLE


@settings(max_examples=60)
@given(frame=st.sampled_from(list("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏")), before=st.lists(answer_rows, max_size=5),
       where=st.integers(0, 10))
def test_a_spinner_anywhere_is_never_completed(frame, before, where):
    rows = [prompt(rest="Hi"), "", "> Hello.", *before, "", prompt()]
    rows.insert(min(where, len(rows) - 1), f"{frame} Thinking...")
    assert detect_status("\n".join(rows)).status is TerminalStatus.PROCESSING


def test_logo_rows_are_not_spinners():
    logo = "    ⠚⠛⠋⠀⠀⠀⠀⠘⠛⠛⠀⠘⠛⠛⠀⠀⠀⠛⠛⠀⠀⠀⠛⠛⠀⠀⠙⠻⠿⠟⠋⠛⠛\n       ⢠⣶⣶⣦⠀⠀⠀⠀⠀⠀⠀⠀⠀⢀⣤⣶⣿⣿⣿⣶⣦⡀⠀"
    assert detect_status(f"{logo}\n\n{prompt()}").status is TerminalStatus.IDLE


def test_a_fatal_message_counts_only_when_nothing_follows_it():
    """An answer quoting q's login error is an answer, not q stopping."""
    quoted = "\n".join([prompt(rest="What does this log say?"), "",
                        "> It says: error: You are not logged in, please log in with q login", "", prompt()])
    assert detect_status(quoted).status is TerminalStatus.COMPLETED
    stopped = "error: You are not logged in, please log in with q login"
    assert detect_status(stopped).evidence == f"q stopped: not logged in: {stopped}"


@given(st.text())
def test_read_screen_keeps_answer_bounds_inside_the_screen(text):
    reading = read_screen(text)
    if reading.answer is not None:
        first, end = reading.answer
        assert 0 <= first < end <= len(reading.rows)
        assert reading.status is TerminalStatus.COMPLETED
