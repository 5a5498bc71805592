"""Reading Discord's rate-limit answers: body ``retry_after`` before ``Retry-After``, bucket headers.
Reading ``Retry-After`` itself is tested in cao-notify-core."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from cao_notify_core.ratelimit import DEFAULT_RETRY_AFTER, MAX_WAIT
from cao_notify_discord.ratelimit import pause_seconds, retry_after_seconds


def test_the_json_body_wins_over_the_header() -> None:
    body = json.dumps({"message": "You are being rate limited.", "retry_after": 0.25, "global": False})
    assert retry_after_seconds({"Retry-After": "1"}, body.encode()) == 0.25


def test_the_header_counts_when_the_body_says_nothing() -> None:
    assert retry_after_seconds({"retry-after": "0.3"}, b"") == 0.3
    assert retry_after_seconds({"Retry-After": "2"}, b"not json") == 2.0
    assert retry_after_seconds({"Retry-After": "2"}, json.dumps({"retry_after": "soon"}).encode()) == 2.0


def test_unreadable_or_absurd_values_are_bounded() -> None:
    assert retry_after_seconds({}, None) == DEFAULT_RETRY_AFTER
    assert retry_after_seconds({}, b'{"retry_after": 1e999}') == DEFAULT_RETRY_AFTER
    assert retry_after_seconds({}, b'{"retry_after": 86400}') == MAX_WAIT


def test_an_empty_bucket_pauses_the_next_post() -> None:
    assert pause_seconds({"X-RateLimit-Remaining": "0", "X-RateLimit-Reset-After": "0.4"}) == 0.4
    assert pause_seconds({"X-RateLimit-Remaining": "3", "X-RateLimit-Reset-After": "0.4"}) == 0.0
    assert pause_seconds({"X-RateLimit-Remaining": "0"}) == 0.0
    assert pause_seconds({}) == 0.0


json_bodies = st.text(max_size=60).map(lambda t: json.dumps({"retry_after": t}))


@given(header=st.none() | st.text(max_size=40), body=st.none() | st.binary(max_size=60) | json_bodies)
def test_any_answer_gives_a_bounded_wait(header: str | None, body: bytes | str | None) -> None:
    headers = {} if header is None else {"Retry-After": header}
    assert 0.0 <= retry_after_seconds(headers, body) <= MAX_WAIT


@given(remaining=st.text(max_size=10), reset=st.text(max_size=20))
def test_any_bucket_headers_give_a_bounded_pause(remaining: str, reset: str) -> None:
    headers = {"X-RateLimit-Remaining": remaining, "X-RateLimit-Reset-After": reset}
    assert 0.0 <= pause_seconds(headers) <= MAX_WAIT
