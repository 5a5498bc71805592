"""The native signals of signals.py, and their place in the provider record.

TODO (real CLI): once the launch makes the CLI send its turn events, test each mapped event with a
payload copied from what the CLI really sends (status, evidence, the answer of a turn end), and that
events it also sends but that say nothing (side threads, reminders) map to None.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from {{ cookiecutter.__module }}.provider import provider
from {{ cookiecutter.__module }}.signals import native_answer, native_signal


def test_the_record_maps_native_signals_with_signals_py():
    spec = provider()
    assert (spec.native_signal, spec.native_answer) == (native_signal, native_answer)
    # The screen decides until the CLI sends events (signals.py says how to make it).
    assert not spec.capabilities.native_status


@given(event=st.text(max_size=30),
       payload=st.dictionaries(st.text(max_size=20), st.one_of(st.none(), st.booleans(), st.text())))
def test_the_stand_in_sends_no_event_that_means_anything(event, payload):
    assert native_signal(event, payload) is None
    assert native_answer(event, payload) is None
