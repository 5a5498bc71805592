"""``dumps`` against the standard library's reader: whatever it writes reads back equal."""

from __future__ import annotations

import tomllib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cao_toml_core import dumps

keys = st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=10)
scalars = (st.booleans() | st.integers(min_value=-(2**63), max_value=2**63 - 1)
           | st.floats(allow_nan=False) | st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=30))
values = st.recursive(scalars,
                      lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4),
                      max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(keys, values, max_size=6))
def test_round_trips_through_tomllib(data):
    assert tomllib.loads(dumps(data)) == data


def test_tables_become_headers_and_keys_are_bare_where_they_can_be():
    text = dumps({"model": "m", "a b": 1, "mcp_servers": {"cao": {"command": "c", "args": ["x"]}}})
    assert text == 'model = "m"\n"a b" = 1\n\n[mcp_servers.cao]\ncommand = "c"\nargs = ["x"]\n'


def test_control_characters_are_escaped():
    assert dumps({"s": 'a"\\\n\t\x00\x7f'}) == 's = "a\\"\\\\\\n\\t\\u0000\\u007f"\n'


def test_what_toml_cannot_say_is_an_error_naming_the_key():
    with pytest.raises(ValueError, match=r"^a\.b\[1\]: TOML has no null value"):
        dumps({"a": {"b": [1, None]}})
    with pytest.raises(ValueError, match=r"^models\.k2\.display_name: TOML has no null value"):
        dumps({"models": {"k2": {"display_name": None}}})
    with pytest.raises(ValueError, match=r"^a: cannot write a bytes as TOML"):
        dumps({"a": b"x"})
    with pytest.raises(ValueError, match=r"^t: keys must be strings, got 1"):
        dumps({"t": {1: "x"}})
    assert dumps({"n": float("inf"), "m": float("-inf")}) == "n = inf\nm = -inf\n"
