"""The raw-mode key decoder: events do not depend on how reads split the bytes."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from cao_provider_mock.keys import (
    BACKSPACE,
    DOWN,
    ENTER,
    EOF,
    ESCAPE,
    INTERRUPT,
    PASTE,
    PASTE_END,
    PASTE_START,
    TEXT,
    UP,
    KeyDecoder,
)


def decode(*chunks: bytes) -> list[tuple[str, str]]:
    decoder = KeyDecoder()
    events = []
    for chunk in chunks:
        events.extend(decoder.feed(chunk))
    return merged(events)


def merged(events):
    out = []
    for kind, text in events:
        if kind == TEXT and out and out[-1][0] == TEXT:
            out[-1] = (TEXT, out[-1][1] + text)
        else:
            out.append((kind, text))
    return out


def test_keys():
    assert decode(b"ab\rc\x7f\x08\x03\x04\n") == [
        (TEXT, "ab"), (ENTER, ""), (TEXT, "c"), (BACKSPACE, ""), (BACKSPACE, ""), (INTERRUPT, ""), (EOF, ""),
        (ENTER, ""),
    ]


def test_crlf_is_one_enter_but_lf_lf_is_two():
    assert decode(b"a\r\nb\n\n") == [(TEXT, "a"), (ENTER, ""), (TEXT, "b"), (ENTER, ""), (ENTER, "")]
    assert decode(b"a\r", b"\n") == [(TEXT, "a"), (ENTER, "")]


def test_escape_sequences_and_other_controls_are_dropped():
    # Right arrow, F1 (SS3), a focus report, a bell and a C1 control.
    assert decode(b"\x1b[C\x1bOP\x1b[I\x07y\xc2\x85z\t") == [(TEXT, "yz\t")]


def test_up_down_and_escape_are_keys_of_their_own():
    # Both cursor modes' arrows; Alt+x is Esc then x; an ESC at the end is held until more comes.
    assert decode(b"a\x1b[A\x1bOA\x1b[B\x1bOB\x1bxb") == [
        (TEXT, "a"), (UP, ""), (UP, ""), (DOWN, ""), (DOWN, ""), (ESCAPE, ""), (TEXT, "xb")]
    decoder = KeyDecoder()
    assert decoder.feed(b"q\x1b") == [(TEXT, "q")]
    assert decoder.holds_escape
    assert decoder.lone_escape() == [(ESCAPE, "")]
    assert not decoder.holds_escape and decoder.lone_escape() == []
    assert decoder.feed(b"\x1b") == [] and decoder.feed(b"[B") == [(DOWN, "")]
    assert decoder.feed(PASTE_START.encode() + b"\x1b") == [] and not decoder.holds_escape


def test_paste_is_literal_and_normalises_cr():
    data = (PASTE_START + "a\r\nb\rc\nd\x03\x04\x7f\x1b[A" + PASTE_END).encode()
    assert decode(data) == [(PASTE, "a\nb\nc\nd\x03\x04\x7f\x1b[A")]


def test_utf8_split_between_reads():
    data = "\u276f\u4e2d".encode()
    assert decode(*[bytes([b]) for b in data]) == [(TEXT, "\u276f\u4e2d")]


def test_invalid_utf8_becomes_replacement_characters():
    assert decode(b"a\xffb") == [(TEXT, "a\ufffdb")]


def test_unterminated_paste_waits_for_its_end():
    decoder = KeyDecoder()
    assert decoder.feed((PASTE_START + "half").encode()) == []
    assert decoder.in_paste
    assert decoder.feed(b"\x1b[20") == []
    assert decoder.feed(b"1~\r") == [(PASTE, "half"), (ENTER, "")]
    assert not decoder.in_paste


_pieces = st.one_of(
    st.text(max_size=8),
    st.sampled_from(["\r", "\n", "\r\n", "\x03", "\x04", "\x7f", "\x1b", "\x1b[", "\x1b[1;5A", "\x1bO",
                     "\x1bOQ", PASTE_START, PASTE_END, "\x1b[20", "\x1b[201"]),
)


@st.composite
def streams_and_cuts(draw):
    data = "".join(draw(st.lists(_pieces, max_size=20))).encode("utf-8", "surrogatepass")
    data += draw(st.binary(max_size=6))
    cuts = sorted(draw(st.lists(st.integers(0, len(data)), max_size=8)))
    return data, cuts


@given(streams_and_cuts())
def test_events_do_not_depend_on_how_input_is_split(case):
    data, cuts = case
    chunks = [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)])]
    assert decode(*chunks) == decode(data)


@given(st.text().filter(lambda t: PASTE_END not in t))
def test_any_paste_arrives_whole_as_one_event(text):
    events = decode((PASTE_START + text + PASTE_END + "\r").encode("utf-8", "surrogatepass"))
    assert len(events) == 2 and events[0][0] == PASTE and events[1] == (ENTER, "")
    expected = text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    assert events[0][1] == expected.replace("\r\n", "\n").replace("\r", "\n")


@given(st.binary())
def test_arbitrary_bytes_never_break_the_decoder(data):
    for kind, text in decode(data):
        assert kind in (TEXT, PASTE, ENTER, BACKSPACE, INTERRUPT, EOF, UP, DOWN, ESCAPE)
        if kind == TEXT:
            assert text and all(ch == "\t" or ch.isprintable() or ord(ch) >= 0xA0 for ch in text)
