"""The Kiro detector and extractor beyond the documented screens, for both interfaces: the prompt
formats, answers of any shape, typed input, permission questions, the consent dialog, busy rows.

Screens here are built from the layouts the documented screens show (tests/screens/), varying what a
real conversation varies: agent name, prompt markers, the message, the answer's text.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cao_hookspecs import TerminalStatus
from cao_provider_kiro_cli.classic import HINTS, PROMPT
from cao_provider_kiro_cli.dialogs import TRUST_ALL_TOOLS
from cao_provider_kiro_cli.screen import detect_status, extract_last_message, read_screen

AGENT = "cao-developer-0123abcd"
RULE = "─" * 120
agent_names = st.from_regex(r"[A-Za-z0-9_-]{1,64}", fullmatch=True)
text_rows = st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), max_size=50)
messages = st.text(alphabet=st.characters(whitelist_categories=("L", "N", "P", "Zs")), min_size=1, max_size=40).filter(
    lambda m: m.strip() and m.strip() not in HINTS)


def prompt(agent: str = AGENT, percent: int | None = None, code: bool = False, tangent: bool = False,
           warning: bool = False, rest: str = "") -> str:
    """A prompt row of the line-based chat (trailing space dropped, as a capture does)."""
    text = (f"[{agent}] " + (f"{percent}% " if percent is not None else "") + ("λ " if code else "")
            + ("↯ " if tangent else "") + ("!" if warning else "") + "> " + rest)
    return text.rstrip()


def frame(composer: str = "›  ask a question or describe a task ↵", pct: int = 4) -> list[str]:
    """The bottom frame of the full-screen interface, as in the 2.25 screens."""
    return [RULE, " Trust All Tools active, confirmations are off · /quit to exit", RULE,
            f"{AGENT} · auto · ◔ {pct}%" + " " * 40 + "~/project · (main)", composer]


def _plain(row: str) -> bool:
    """A row the CLI could print inside an answer without it reading as something else."""
    stripped = row.lstrip()
    return not (row.startswith(("[", ">", "•", "▸", "  ", "─", "✨")) or "having trouble" in row
                or "Allow this action" in row or "Kiro is working" in row or "esc to cancel" in row
                or stripped.startswith(("Initializing", "›")) or re.search(r"\bYes\b\s+\bNo\b", row)
                or (stripped[:1] and "\u2800" <= stripped[:1] <= "\u28ff") or "·" in row)


answer_rows = text_rows.filter(_plain)

# -- line-based chat (1.x, --legacy-ui) -------------------------------------------------------------

prompts = st.builds(prompt, agent_names, st.none() | st.integers(0, 100), st.booleans(), st.booleans(), st.booleans())


@given(prompts)
def test_every_prompt_form_is_a_waiting_prompt(row):
    assert PROMPT.match(row)
    assert detect_status("✓ 1 of 1 mcp servers initialized.\n\n" + row).status is TerminalStatus.IDLE


@settings(max_examples=50)
@given(user=prompts, message=messages, first=answer_rows, rest=st.lists(answer_rows, max_size=6), end=prompts,
       credits=st.booleans())
def test_any_classic_answer_is_extracted_exactly(user, message, first, rest, end, credits):
    summary = [" ▸ Credits: 0.14 • Time: 22s", ""] if credits else []
    screen = "\n".join([f"{user} {message}", "", f"> {first}", *rest, "", *summary, end])
    assert detect_status(screen).status is TerminalStatus.COMPLETED
    expected = "\n".join(row.rstrip() for row in [first, *rest]).strip()
    if expected:
        assert extract_last_message(screen) == expected
    else:
        with pytest.raises(ValueError):
            extract_last_message(screen)


@given(message=messages, typed=messages)
def test_text_typed_after_a_finished_classic_turn_is_not_its_completion(message, typed):
    screen = "\n".join([prompt(rest=message), "", "> Done.", "", prompt(percent=3, rest=typed)])
    assert detect_status(screen).status is TerminalStatus.PROCESSING
    with pytest.raises(ValueError):
        extract_last_message(screen)


@given(typed=st.sampled_from(["", "t", "[Assigned by terminal 63878fc7. When done, send results back]"]))
def test_a_classic_permission_question_waits(typed):
    screen = "\n".join([prompt(rest="list my bucket"), "",
                        "I will run the following command: aws s3 ls (using tool: shell)", "",
                        "Allow this action? Use 't' to trust (always allow) this tool for the session. [y/n/t]:",
                        "", prompt(percent=15, code=True, rest=typed)])
    report = detect_status(screen)
    assert report.status is TerminalStatus.WAITING_USER_ANSWER and report.evidence == "asks to allow shell [y/n/t]"


# -- full-screen interface (2.x) ---------------------------------------------------------------------

head = [RULE, "✨ What's new: Cloud sessions, specs, expanded hooks, improved trust model and workflows.", RULE]


@settings(max_examples=50)
@given(message=messages, first=answer_rows.filter(str.strip),
       rest=st.lists(answer_rows.map(lambda r: "  " + r if r else r), max_size=5), credits=st.booleans())
def test_any_bulleted_answer_is_extracted_exactly(message, first, rest, credits):
    summary = ["▸ Credits: turn 0.12 • session 0.12 | Time: 3s"] if credits else []
    screen = "\n".join([*head, f"  {message.strip()}", f"• {first}", *rest, *summary, *frame()])
    assert detect_status(screen).status is TerminalStatus.COMPLETED
    expected = "\n".join(row.rstrip()[2:] if row.startswith("  ") else row.rstrip() for row in [first, *rest])
    assert extract_last_message(screen) == expected.strip()


def test_the_older_unbulleted_layout():
    """Kiro 2.x before the bullets: upstream CAO's fixture kiro_cli_tui_completed_output.txt."""
    screen = "\n".join([
        RULE,
        "  What files are in this directory?",
        "",
        "  Here is a comprehensive response listing the files in the current directory.",
        "",
        "  The directory contains the following files:",
        "  - README.md",
        "  - package.json",
        "  - src/index.ts",
        "",
        "  This response includes multiple paragraphs to verify extraction.",
        "",
        "▸ Credits: 0.24 • Time: 3s",
        "",
        RULE,
        "developer · claude-opus-4.6-1m · ◔ 4%              ~/project · (main)",
        "",
        " ask a question, or describe a task ↵  ctrl+g: agent monitor",
    ])
    assert detect_status(screen).status is TerminalStatus.COMPLETED
    assert extract_last_message(screen) == (
        "Here is a comprehensive response listing the files in the current directory.\n\n"
        "The directory contains the following files:\n- README.md\n- package.json\n- src/index.ts\n\n"
        "This response includes multiple paragraphs to verify extraction.")


@given(typed=messages)
def test_text_typed_into_the_composer_is_not_the_last_turns_completion(typed):
    screen = "\n".join([*head, "  Reply with one word: A", "• A", "▸ Credits: 0.1 • Time: 1s",
                        *frame(composer=f"›  {typed.strip()}")])
    report = detect_status(screen)
    assert report.status is TerminalStatus.PROCESSING and "not submitted" in report.evidence
    with pytest.raises(ValueError):
        extract_last_message(screen)


def test_a_message_with_nothing_after_it_yet_is_processing():
    screen = "\n".join([*head, "  Reply with one word: A", *frame()])
    assert detect_status(screen).status is TerminalStatus.PROCESSING


def test_a_full_screen_permission_question_waits():
    """The three choices upstream CAO's kiro_cli.py matches (their exact layout is not documented)."""
    screen = "\n".join([*head, "  Create notes.txt", "◔ Write notes.txt", "  Yes   No   Always Allow", *frame()])
    assert detect_status(screen).status is TerminalStatus.WAITING_USER_ANSWER


def test_a_failed_full_screen_turn_is_an_error():
    screen = "\n".join([*head, "  Reply with one word: A", "Kiro is having trouble responding right now", *frame()])
    assert detect_status(screen).status is TerminalStatus.ERROR


@settings(max_examples=60)
@given(busy=st.sampled_from(["⠋ Thinking...", "  esc to cancel", "›  Kiro is working · Type to steer · Ctrl+S to queue",
                             "Initializing · type to queue a message"]),
       where=st.integers(0, 20))
def test_a_busy_row_anywhere_is_processing(busy, where):
    rows = [*head, "  Reply with one word: A", "• A", "▸ Credits: 0.1 • Time: 1s", *frame()]
    rows.insert(min(where, len(rows)), busy)
    assert detect_status("\n".join(rows)).status is TerminalStatus.PROCESSING


# -- the consent dialog --------------------------------------------------------------------------------

CONSENT = "Warning: Kiro is running in trust all tools mode\n\n  ❯ No, exit\n    Yes, I accept\n"


def test_the_consent_dialog_is_answered_only_with_the_cursor_on_no():
    assert re.search(TRUST_ALL_TOOLS.pattern, CONSENT, re.MULTILINE)
    moved = "Warning: Kiro is running in trust all tools mode\n\n    No, exit\n  ❯ Yes, I accept\n"
    assert not re.search(TRUST_ALL_TOOLS.pattern, moved, re.MULTILINE)  # no second Down+Enter
    assert detect_status(moved).status is TerminalStatus.WAITING_USER_ANSWER
    assert detect_status(CONSENT).evidence == "start-up dialog: trust all tools consent"


def test_a_fatal_message_counts_only_when_nothing_follows_it():
    quoted = "\n".join([*head, "  What does this log say?",
                        "• It says: error: You are not logged in, please log in with kiro-cli login",
                        "▸ Credits: 0.1 • Time: 1s", *frame()])
    assert detect_status(quoted).status is TerminalStatus.COMPLETED


@given(st.text())
def test_read_screen_keeps_answer_bounds_inside_the_screen(text):
    reading = read_screen(text)
    if reading.answer is not None:
        first, end = reading.answer
        assert 0 <= first < end <= len(reading.rows)
        assert reading.status is TerminalStatus.COMPLETED
