"""Status detection and answer extraction on hand-built screens shaped like ``tmux capture-pane -p`` output.

These pin each rule of the detector one screen at a time; the conformance kit (test_conformance.py) runs
the screens recorded from the real mock_cli in tmux (tests/screens/) and the general properties.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cao_hookspecs import StatusReport, TerminalStatus
from cao_provider_mock.contract import NO_ANSWER_LINE, answer_rows, reply_payload, shown_answer
from cao_provider_mock.screen import detect_status, extract_last_message

P = "\u276f"
BLANK_ROWS = "\n" * 20  # capture-pane prints the empty rows below the cursor too

SCREENS = {
    "starting": ("", TerminalStatus.UNKNOWN),
    "shell noise": ("$ exec mock_cli --delay-ms 50\n", TerminalStatus.UNKNOWN),
    "banner only": ("MockCli ready.\n" + BLANK_ROWS, TerminalStatus.PROCESSING),
    "idle": (f"MockCli ready.\n{P}\n" + BLANK_ROWS, TerminalStatus.IDLE),
    "typing": (f"MockCli ready.\n{P} hello wor\n" + BLANK_ROWS, TerminalStatus.PROCESSING),
    "submitted": (f"MockCli ready.\n{P} hello world\n\n" + BLANK_ROWS, TerminalStatus.PROCESSING),
    "completed": (f"MockCli ready.\n{P} hello world\n> MOCK: hello world\n{P}\n" + BLANK_ROWS,
                  TerminalStatus.COMPLETED),
    "error": (f"MockCli ready.\n{P} __mock_error__\nERROR: mock failure injected\n{P}\n" + BLANK_ROWS,
              TerminalStatus.ERROR),
    "second turn busy": (f"MockCli ready.\n{P} one\n> MOCK: one\n{P} two\n\n", TerminalStatus.PROCESSING),
    "error then answered": (
        f"{P} __mock_error__\nERROR: mock failure injected\n{P} again\n> MOCK: again\n{P}\n",
        TerminalStatus.COMPLETED,
    ),
    "answer then error": (
        f"{P} one\n> MOCK: one\n{P} __mock_error__\nERROR: mock failure injected\n{P}\n",
        TerminalStatus.ERROR,
    ),
    "empty input after an answer": (f"{P} one\n> MOCK: one\n{P}\n{P}\n", TerminalStatus.COMPLETED),
    "ctrl-c while idle": (f"{P} one\n> MOCK: one\n{P} draft^C\n{P}\n", TerminalStatus.IDLE),
    "ctrl-c while busy": (f"{P} __mock_sleep_30\n^C\n{P}\n", TerminalStatus.IDLE),
    "sleeping": (f"MockCli ready.\n{P} __mock_sleep_2\n", TerminalStatus.PROCESSING),
    "pasted, not submitted": (f"MockCli ready.\n{P} [Pasted text: 3 lines, 20 chars]\n",
                              TerminalStatus.PROCESSING),
    "long answer scrolled its input away": (
        "x" * 120 + "\n" + "x" * 80 + " [200 lines, 22199 chars]\n" + P + "\n", TerminalStatus.COMPLETED,
    ),
    "goodbye": (f"{P} /exit\ngoodbye\n", TerminalStatus.PROCESSING),
    "multi-line answer": (f"{P} report please\n> MOCK: Report\n\u2502 line two\n\u2502\n\u2502 four\n{P}\n",
                          TerminalStatus.COMPLETED),
    "behaviour at work": (f"{P} report please\n\u23fa assign(agent_profile='x')\n  \u23bf {{}}\n",
                          TerminalStatus.PROCESSING),
    "turn ended without an answer": (f"{P} one\n> MOCK: one\n{P} two\n\u23fa note\n{NO_ANSWER_LINE}\n{P}\n",
                                     TerminalStatus.COMPLETED),
    "behaviour failed": (f"{P} one\nERROR: mock behaviour failed: RuntimeError: no\n{P}\n", TerminalStatus.ERROR),
    "coloured capture (-e)": (f"\x1b[1m{P}\x1b[0m one\n\x1b[32m> MOCK: one\x1b[0m\n\x1b[1m{P}\x1b[0m \n",
                              TerminalStatus.COMPLETED),
}


@pytest.mark.parametrize("name", list(SCREENS))
def test_status_of_each_screen(name):
    screen, expected = SCREENS[name]
    report = detect_status(screen)
    assert report.status == expected, (name, report)
    assert report.evidence.startswith("mock_cli: ")


def test_evidence_names_distinct_rules():
    evidences = {detect_status(screen).evidence for screen, _ in SCREENS.values()}
    assert len(evidences) >= 10


def test_extract_last_answer():
    screen = SCREENS["completed"][0]
    assert extract_last_message(screen) == "hello world"
    history = f"{P} one\n> MOCK: one\n{P} __mock_sleep_2\n> MOCK: slept 2s\n{P} x\n"
    assert extract_last_message(history) == "slept 2s"
    assert extract_last_message("\x1b[32m>  MOCK:   spaced  \x1b[0m\n") == "  spaced"


def test_extract_joins_a_wrapped_answer_up_to_the_next_prompt():
    wrapped = f"{P} {'a' * 78}\n{'a' * 20}\n> MOCK: {'a' * 72}\n{'a' * 26}\n{P}\n"
    assert extract_last_message(wrapped) == "a" * 98
    # Without a prompt below, the rows after the answer are not known to belong to it.
    assert extract_last_message("> MOCK: first\nsomething else\n") == "first"


def test_extract_without_answer_raises_value_error():
    no_answer = ("", "MockCli ready.\n" + P, f"{P} > MOCK: typed, not answered\n",
                 "ERROR: mock failure injected")
    for text in no_answer:
        with pytest.raises(ValueError, match="MOCK"):
            extract_last_message(text)


_rows = st.lists(
    st.one_of(
        st.text(max_size=30),
        st.sampled_from([P, f"{P} ", f"{P} hi", "> MOCK: hi", ">MOCK:", "ERROR: mock failure injected",
                         "MockCli ready.", "", "\x1b[0m", "\r"]),
    ),
    max_size=30,
)


@given(_rows)
def test_detect_never_raises_on_screen_like_text(rows):
    report = detect_status("\n".join(rows))
    assert isinstance(report, StatusReport) and report.evidence


MINIMAL = {
    TerminalStatus.UNKNOWN: "",
    TerminalStatus.IDLE: P,
    TerminalStatus.PROCESSING: f"{P} x",
    TerminalStatus.COMPLETED: f"{P} x\n> MOCK: x\n{P}",
    TerminalStatus.ERROR: f"{P} x\nERROR: mock failure injected\n{P}",
}


def test_each_status_has_a_minimal_screen():
    for status, screen in MINIMAL.items():
        assert detect_status(screen).status == status


_history_row = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40).filter(
    lambda row: "\n" not in row
)


TURNS = {
    TerminalStatus.IDLE: f"{P} draft^C\n{P}",
    TerminalStatus.PROCESSING: f"{P} x",
    TerminalStatus.COMPLETED: f"{P} x\n> MOCK: x\n{P}",
    TerminalStatus.ERROR: f"{P} x\nERROR: mock failure injected\n{P}",
}


@given(st.lists(_history_row, max_size=15), st.sampled_from(sorted(TURNS)))
def test_the_last_turn_decides_whatever_came_before(history, status):
    # Any earlier rows, then one full turn: the status is that turn's.
    screen = "\n".join([*history, TURNS[status]]) + BLANK_ROWS
    assert detect_status(screen).status == status


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), min_size=1).filter(
    lambda t: t.strip() == t and t not in ("/exit", "/quit")
))
def test_a_real_turn_reads_completed_and_extracts_the_input(text):
    payload = reply_payload(text)
    screen = f"MockCli ready.\n{P} {text}\n> MOCK: {payload}\n{P}\n"
    assert detect_status(screen).status == TerminalStatus.COMPLETED
    assert extract_last_message(screen) == payload


_answer = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=300)


@given(_answer, st.lists(_history_row, max_size=5))
def test_a_behaviour_answer_reads_back_exactly_from_a_joined_capture(answer, history):
    screen = "\n".join([*history, f"{P} the task", *answer_rows(answer), P]) + BLANK_ROWS
    assert detect_status(screen).status == TerminalStatus.COMPLETED
    assert extract_last_message(screen) == shown_answer(answer)


def test_plain_text_answers_are_shown_unchanged():
    text = "Final report\n\n  indented line\n> MOCK: not an answer start\n\u276f not a prompt\nend"
    assert shown_answer(text) == text
    screen = "\n".join([f"{P} go", *answer_rows(text), P])
    assert extract_last_message(screen) == text
    assert shown_answer("tab\there  \r\nnext\x1b") == "tab here\nnext^["


def test_extract_joins_wrapped_rows_of_each_line_of_a_multi_line_answer():
    # A capture without -J at 20 columns: each long line continues on rows without the marker.
    screen = f"{P} go\n> MOCK: aaaaaaaaaaaa\nbbbb\n\u2502 cccccccccccccccccc\ndd\n\u2502\n{P}\n"
    assert extract_last_message(screen) == "aaaaaaaaaaaabbbb\nccccccccccccccccccdd\n"


def test_a_turn_without_an_answer_hides_the_previous_answer():
    screen = f"{P} one\n> MOCK: one\n{P} two\n{NO_ANSWER_LINE}\n{P}\n"
    with pytest.raises(ValueError, match="ended without an answer"):
        extract_last_message(screen)
    assert extract_last_message(screen + f"{P} three\n> MOCK: three\n{P}") == "three"
