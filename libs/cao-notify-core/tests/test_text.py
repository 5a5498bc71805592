"""Cutting text to a service's limit: UTF-16 units, an ellipsis, never half a character."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from cao_notify_core.text import ELLIPSIS, fit, units


def test_fit_counts_utf16_units() -> None:
    assert fit("abc", 3) == "abc"
    assert fit("abcd", 3) == "ab…"
    # An emoji outside the BMP is two UTF-16 units and is never split.
    assert fit("😀😀😀", 4) == "😀…"
    assert fit("", 10, empty="-") == "-"
    assert units("a😀") == 3 and units(ELLIPSIS) == 1


@given(text=st.text(max_size=300), limit=st.integers(0, 300))
def test_fit_never_exceeds_and_keeps_short_text(text: str, limit: int) -> None:
    out = fit(text, limit)
    assert units(out) <= limit
    if not text.strip():
        assert out == ""
    elif units(text) <= limit:
        assert out == text
    else:
        assert out == "" or out.endswith("…")
        assert text.startswith(out[:-1].rstrip()) or out == ""
