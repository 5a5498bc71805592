"""``signal_command``: the kernel's signal command read from a launch context's environment."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cao_hookspecs.signals import SIGNAL_COMMAND_ENV, signal_command

WORDS = st.text(min_size=1, max_size=20)


def test_no_variable_or_an_empty_one_means_no_channel():
    assert signal_command({}) is None
    assert signal_command({SIGNAL_COMMAND_ENV: ""}) is None


@given(st.lists(WORDS, min_size=1, max_size=5))
def test_a_json_list_of_words_comes_back_as_it_is(command):
    assert signal_command({SIGNAL_COMMAND_ENV: json.dumps(command)}) == command


@pytest.mark.parametrize("raw", ["[]", '[""]', "[1]", '"cao-signal"', '{"a": 1}', "not json", '["a", null]'])
def test_anything_else_is_refused_naming_the_variable_and_the_value(raw):
    with pytest.raises(ValueError) as caught:
        signal_command({SIGNAL_COMMAND_ENV: raw})
    assert str(caught.value) == (f"CAO_SIGNAL_COMMAND must be a JSON list of program and arguments, "
                                 f"got {raw!r}")


@given(st.text(max_size=40))
def test_any_text_is_a_command_or_a_value_error(raw):
    try:
        command = signal_command({SIGNAL_COMMAND_ENV: raw})
    except ValueError:
        return
    assert command is None or (command and all(isinstance(word, str) and word for word in command))
