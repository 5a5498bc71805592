"""Reading Slack's 429 answers: the ``Retry-After`` header."""

from __future__ import annotations

import time
from email.utils import formatdate

from hypothesis import given
from hypothesis import strategies as st

from cao_notify_slack.ratelimit import DEFAULT_RETRY_AFTER, MAX_WAIT, retry_after_seconds


def test_seconds_whole_or_fractional() -> None:
    assert retry_after_seconds({"Retry-After": "30"}) == 30.0
    assert retry_after_seconds({"retry-after": " 0.3 "}) == 0.3


def test_an_http_date_is_a_delay_from_now() -> None:
    seconds = retry_after_seconds({"Retry-After": formatdate(time.time() + 10, usegmt=True)})
    assert 8 <= seconds <= 10


def test_unreadable_or_absurd_values_are_bounded() -> None:
    assert retry_after_seconds({}) == DEFAULT_RETRY_AFTER
    assert retry_after_seconds({"Retry-After": "later"}) == DEFAULT_RETRY_AFTER
    assert retry_after_seconds({"Retry-After": "inf"}) == DEFAULT_RETRY_AFTER
    assert retry_after_seconds({"Retry-After": "-4"}) == 0.0
    assert retry_after_seconds({"Retry-After": "86400"}) == MAX_WAIT


@given(st.text(max_size=60))
def test_any_header_gives_a_bounded_wait(value: str) -> None:
    assert 0.0 <= retry_after_seconds({"Retry-After": value}) <= MAX_WAIT
