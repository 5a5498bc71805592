"""The reply rule and the input line editor, without a process."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from cao_provider_mock.composer import Composer, display_width, paste_placeholder
from cao_provider_mock.contract import ANSWER, EMPTY, EXIT, react, reply_payload, sleep_seconds


def test_reactions():
    assert react("", 0.05).kind == EMPTY
    assert react("   ", 0.05).kind == EMPTY
    for command in ("/exit", "/quit", " /exit "):
        reaction = react(command, 0.05)
        assert (reaction.kind, reaction.line) == (EXIT, "goodbye")
    error = react("__mock_error__", 0.05)
    assert (error.kind, error.line, error.wait) == (ANSWER, "ERROR: mock failure injected", 0.0)
    sleep = react("__mock_sleep_1.5", 0.05)
    assert (sleep.kind, sleep.line, sleep.wait) == (ANSWER, "> MOCK: slept 1.5s", 1.5)
    normal = react("hello", 0.25)
    assert (normal.kind, normal.line, normal.wait) == (ANSWER, "> MOCK: hello", 0.25)
    assert "Reaction('answer'" in repr(normal)


def test_sleep_labels():
    assert sleep_seconds("2") == 2.0
    assert sleep_seconds("0.25") == 0.25
    assert sleep_seconds(".5") == 0.5
    for bad in ("", ".", "-1", "1e3", "inf", "nan", "1.2.3", "\u0663"):
        assert sleep_seconds(bad) is None


def test_multiline_reply_is_one_line_with_counts():
    assert reply_payload("a\nb\n") == "a \u23ce b \u23ce  [3 lines, 4 chars]"
    assert reply_payload("tab\there\x1b[31m") == "tab\there^[[31m"


@given(st.text().filter(lambda t: "\n" not in t and t.isprintable()))
def test_single_line_input_is_answered_exactly(text):
    assert reply_payload(text) == text


@given(st.text())
def test_every_reply_is_a_single_harmless_line(text):
    payload = reply_payload(text)
    assert all(ch == "\t" or ord(ch) >= 0x20 and not 0x7F <= ord(ch) < 0xA0 for ch in payload)
    if "\n" in text:
        assert payload.endswith(f" [{text.count(chr(10)) + 1} lines, {len(text)} chars]")


def test_composer_typing_pasting_and_backspace():
    line = Composer()
    assert line.empty and line.backspace() == ""
    assert line.type("ab\t") == "ab "
    assert line.paste("short") == "short"
    long_paste = "x\ny"
    assert line.paste(long_paste) == paste_placeholder(long_paste) == "[Pasted text: 2 lines, 3 chars]"
    # One backspace removes a whole placeholder, the next one a single character.
    width = len(paste_placeholder(long_paste))
    assert line.backspace() == "\b" * width + " " * width + "\b" * width
    assert line.backspace() == "\b \b"
    assert line.text == "ab\tshor"
    assert line.take() == "ab\tshor" and line.empty
    assert paste_placeholder("z" * 1001) == "[Pasted text: 1 line, 1001 chars]"
    assert line.paste("z" * 1001) == "[Pasted text: 1 line, 1001 chars]"
    line.clear()
    assert line.text == ""


def test_display_width():
    assert display_width("abc") == 3
    assert display_width("\u4e2d\u6587") == 4
    assert display_width("e\u0301") == 1
