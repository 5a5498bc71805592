"""Reading a 429's ``Retry-After`` header into a bounded wait."""

from __future__ import annotations

import time
from email.utils import formatdate

from hypothesis import given
from hypothesis import strategies as st

from cao_notify_core.ratelimit import DEFAULT_RETRY_AFTER, MAX_WAIT, header, retry_after_seconds, seconds


def test_seconds_whole_or_fractional() -> None:
    assert retry_after_seconds({"Retry-After": "30"}) == 30.0
    assert retry_after_seconds({"retry-after": " 0.3 "}) == 0.3


def test_an_http_date_is_a_delay_from_now() -> None:
    wait = retry_after_seconds({"Retry-After": formatdate(time.time() + 10, usegmt=True)})
    assert 8 <= wait <= 10


def test_unreadable_or_absurd_values_are_bounded() -> None:
    assert retry_after_seconds({}) == DEFAULT_RETRY_AFTER
    assert retry_after_seconds({"Retry-After": "later"}) == DEFAULT_RETRY_AFTER
    assert retry_after_seconds({"Retry-After": "inf"}) == DEFAULT_RETRY_AFTER
    assert retry_after_seconds({"Retry-After": "-4"}) == 0.0
    assert retry_after_seconds({"Retry-After": "86400"}) == MAX_WAIT


def test_json_values_are_read_as_seconds_too() -> None:
    assert seconds(0.25) == 0.25 and seconds(2) == 2.0
    assert seconds(True) is None and seconds(None) is None and seconds([1]) is None
    assert seconds(float("nan")) is None


def test_headers_are_found_whatever_their_case() -> None:
    assert header({"X-RateLimit-Remaining": "0"}, "x-ratelimit-remaining") == "0"
    assert header({}, "Retry-After") is None


@given(st.text(max_size=60))
def test_any_header_gives_a_bounded_wait(value: str) -> None:
    assert 0.0 <= retry_after_seconds({"Retry-After": value}) <= MAX_WAIT


@given(st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=30)))
def test_any_value_is_a_bounded_wait_or_none(value: object) -> None:
    wait = seconds(value)
    assert wait is None or 0.0 <= wait <= MAX_WAIT
