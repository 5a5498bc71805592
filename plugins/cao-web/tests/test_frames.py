"""A client's frames: whatever a client sends is a frame cao acts on, within bounds, or nothing; never an
error."""

from __future__ import annotations

import json

from cao_web.terminal_socket import MAX_COLS, MAX_ROWS, Input, Resize, parse_frame
from hypothesis import given
from hypothesis import strategies as st

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
# Frames shaped like upstream's, with anything in their fields.
FRAMES = st.fixed_dictionaries(
    {"type": st.sampled_from(["input", "resize", "Input", "other"]) | JSON},
    optional={"data": st.text() | JSON, "rows": st.integers() | JSON, "cols": st.integers() | JSON},
)


def _in_bounds(frame):
    if isinstance(frame, Resize):
        return 1 <= frame.rows <= MAX_ROWS and 1 <= frame.cols <= MAX_COLS
    return frame is None or (isinstance(frame, Input) and frame.data)


@given(st.text())
def test_any_text_is_a_frame_or_nothing(text):
    assert _in_bounds(parse_frame(text))


@given(JSON | FRAMES)
def test_any_json_is_a_frame_or_nothing(value):
    assert _in_bounds(parse_frame(json.dumps(value)))


@given(st.text(min_size=1))
def test_input_is_typed_as_sent(data):
    assert parse_frame(json.dumps({"type": "input", "data": data})) == Input(data.encode())


@given(st.integers(), st.integers())
def test_sizes_are_taken_within_bounds(rows, cols):
    frame = parse_frame(json.dumps({"type": "resize", "rows": rows, "cols": cols}))
    if rows >= 1 and cols >= 1:
        assert frame == Resize(min(rows, MAX_ROWS), min(cols, MAX_COLS))
    else:
        assert frame is None


def test_what_json_spells_but_python_refuses_is_nothing_or_replaced():
    assert parse_frame("[" * 100_000) is None  # nested deeper than the parser goes
    assert parse_frame('{"type": "resize", "rows": ' + "9" * 5000 + ', "cols": 80}') is None
    assert parse_frame('{"type": "input", "data": "a\\ud800b"}') == Input(b"a?b")
    assert parse_frame('{"type": "input", "data": ""}') is None
    assert parse_frame('{"type": "resize", "rows": true, "cols": 80}') is None
    assert parse_frame('{"type": "resize", "rows": 24.0, "cols": 80}') is None
