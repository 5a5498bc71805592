"""Posting through a real kernel to a real local webhook: speed of the event path, retries, 429, the
queue bound, the shutdown flush, and secrets kept out of the logs."""

from __future__ import annotations

import logging
import socket
import time
from typing import Any

import pytest

from cao_hookspecs import SessionInfo, Terminal
from cao_notify_discord.sender import MAX_RATE_LIMITED, backoff
from cao_notify_discord.testing import FakeWebhook, Reply

TERMINAL = Terminal(id="0a1b2c3d", name="supervisor-1a2b", session_name="cao-demo", provider="mock_cli",
                    agent_profile="supervisor")
# The observer may take at most this long, whatever the webhook does.
OBSERVER_BUDGET = 0.010


def _fire(kernel: Any, n: int = 1) -> list[float]:
    """Call the session-created observer ``n`` times through the kernel; each call's duration."""
    durations = []
    for i in range(n):
        started = time.perf_counter()
        session = SessionInfo(name=f"cao-s{i}")
        kernel.hooks.after("cao_after_session_created", session=session, terminal=TERMINAL)
        durations.append(time.perf_counter() - started)
    return durations


def _stats(plugin: Any) -> dict[str, int]:
    return plugin.notifier.stats()


def test_a_post_reaches_the_webhook_as_json(start_plugin, webhook: FakeWebhook) -> None:
    kernel, _plugin = start_plugin(CAO_DISCORD_WEBHOOK_URL=webhook.url, CAO_DISCORD_USERNAME="ci")
    _fire(kernel)
    (request,) = webhook.wait_for(1)
    assert request.method == "POST" and request.path == webhook.path
    assert request.headers["content-type"] == "application/json"
    assert request.headers["user-agent"].startswith("cao-notify-discord/")
    payload = request.json()
    assert payload["username"] == "ci"
    assert payload["embeds"][0]["title"] == "Session started: cao-s0"
    assert webhook.event_kinds() == ["session_created"]


# The 500 comes late, so an observer that posted by itself would take at least 50 ms per call.
@pytest.mark.parametrize("reply", [Reply(hang=True), Reply(status=500, delay=0.05)],
                         ids=["hanging", "http-500"])
def test_a_bad_webhook_never_slows_the_observer(start_plugin, webhook: FakeWebhook, reply: Reply) -> None:
    webhook.default = reply
    kernel, _plugin = start_plugin(CAO_DISCORD_WEBHOOK_URL=webhook.url, CAO_DISCORD_TIMEOUT_SECONDS="0.5",
                                  CAO_DISCORD_FLUSH_SECONDS="0.2")
    _fire(kernel)
    webhook.wait_for(1)  # the sender is now stuck on (or retrying) the first post
    durations = _fire(kernel, 120)
    # Each sample is the fastest of three consecutive calls: that filters out the odd moment the OS
    # takes the CPU away from the test (a loaded CI box), while an observer that waits on the network
    # is slow on every call and still fails.
    samples = [min(durations[i:i + 3]) for i in range(0, len(durations), 3)]
    assert max(samples) < OBSERVER_BUDGET, f"slowest observer call took {max(samples) * 1000:.1f} ms"
    assert sorted(durations)[len(durations) // 2] < OBSERVER_BUDGET / 10


def test_5xx_is_retried_with_backoff_then_dropped_and_counted(start_plugin, webhook: FakeWebhook,
                                                              until) -> None:
    webhook.default = Reply(status=503)
    kernel, plugin = start_plugin(CAO_DISCORD_WEBHOOK_URL=webhook.url, CAO_DISCORD_RETRIES="2")
    _fire(kernel)
    until(lambda: _stats(plugin)["dropped_failed"] == 1)
    times = [r.at for r in webhook.received]
    assert len(times) == 3
    assert times[1] - times[0] >= backoff(1) and times[2] - times[1] >= backoff(2)
    assert _stats(plugin)["retried"] == 2 and _stats(plugin)["sent"] == 0


def test_a_transient_500_then_success_is_sent_once(start_plugin, webhook: FakeWebhook, until) -> None:
    webhook.script(Reply(status=500))
    kernel, plugin = start_plugin(CAO_DISCORD_WEBHOOK_URL=webhook.url)
    _fire(kernel)
    until(lambda: _stats(plugin)["sent"] == 1)
    assert len(webhook.received) == 2 and _stats(plugin)["retried"] == 1


def test_429_retry_after_header_is_honoured(start_plugin, webhook: FakeWebhook, until) -> None:
    webhook.script(Reply(status=429, headers={"Retry-After": "0.3"}))
    kernel, plugin = start_plugin(CAO_DISCORD_WEBHOOK_URL=webhook.url)
    _fire(kernel)
    first, second = webhook.wait_for(2)
    gap = second.at - first.at
    assert 0.3 <= gap < 0.3 + 0.5, gap
    until(lambda: _stats(plugin)["sent"] == 1)
    assert _stats(plugin)["rate_limited"] == 1 and _stats(plugin)["retried"] == 0


def test_429_json_retry_after_wins_over_the_header(start_plugin, webhook: FakeWebhook) -> None:
    limited = {"message": "You are being rate limited.", "retry_after": 0.25, "global": False}
    webhook.script(Reply(status=429, headers={"Retry-After": "2"}, body=limited))
    kernel, _plugin = start_plugin(CAO_DISCORD_WEBHOOK_URL=webhook.url)
    _fire(kernel)
    first, second = webhook.wait_for(2)
    assert 0.25 <= second.at - first.at < 0.25 + 0.5


def test_a_rate_limit_pauses_the_following_notifications_too(start_plugin, webhook: FakeWebhook) -> None:
    bucket = {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset-After": "0.3"}
    webhook.script(Reply(status=204, headers=bucket))
    kernel, _plugin = start_plugin(CAO_DISCORD_WEBHOOK_URL=webhook.url)
    _fire(kernel, 2)
    first, second = webhook.wait_for(2)
    assert 0.3 <= second.at - first.at < 0.3 + 0.5


def test_endless_429_drops_the_notification(start_plugin, webhook: FakeWebhook, until) -> None:
    webhook.default = Reply(status=429, body={"retry_after": 0.01})
    kernel, plugin = start_plugin(CAO_DISCORD_WEBHOOK_URL=webhook.url)
    _fire(kernel)
    until(lambda: _stats(plugin)["dropped_failed"] == 1)
    assert len(webhook.received) == MAX_RATE_LIMITED


def test_a_refused_payload_is_not_retried(start_plugin, webhook: FakeWebhook, until, caplog) -> None:
    webhook.default = Reply(status=400, body={"code": 50035, "message": "Invalid Form Body"})
    kernel, plugin = start_plugin(CAO_DISCORD_WEBHOOK_URL=webhook.url)
    with caplog.at_level(logging.WARNING, logger="cao_notify_discord"):
        _fire(kernel, 3)
        until(lambda: _stats(plugin)["dropped_rejected"] == 3)
    assert len(webhook.received) == 3
    warnings = [r for r in caplog.records if r.name == "cao_notify_discord"]
    # One warning per distinct status, with Discord's explanation.
    assert len(warnings) == 1 and "HTTP 400" in warnings[0].getMessage()
    assert "Invalid Form Body" in warnings[0].getMessage()


def test_transport_errors_are_retried_then_dropped(start_plugin, until) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    # Nothing listens on the port any more: every attempt is refused.
    kernel, plugin = start_plugin(CAO_DISCORD_WEBHOOK_URL=f"http://127.0.0.1:{port}/api/webhooks/1/t",
                                  CAO_DISCORD_RETRIES="1")
    _fire(kernel)
    until(lambda: _stats(plugin)["dropped_failed"] == 1)
    assert _stats(plugin)["retried"] == 1


def test_the_queue_bound_holds_and_drops_are_counted(start_plugin, webhook: FakeWebhook, caplog) -> None:
    webhook.default = Reply(hang=True)
    kernel, plugin = start_plugin(CAO_DISCORD_WEBHOOK_URL=webhook.url, CAO_DISCORD_QUEUE_SIZE="3",
                                  CAO_DISCORD_TIMEOUT_SECONDS="0.5", CAO_DISCORD_FLUSH_SECONDS="0.1")
    _fire(kernel)
    webhook.wait_for(1)  # one post in flight, the queue empty
    with caplog.at_level(logging.WARNING, logger="cao_notify_discord"):
        _fire(kernel, 10)
    stats = _stats(plugin)
    assert stats["queued"] == 3 and stats["dropped_full"] == 7 and stats["submitted"] == 4
    full = [r for r in caplog.records if "queue is full" in r.getMessage()]
    assert len(full) == 1
    final = plugin.stop()
    accounted = sum(final[k] for k in ("sent", "dropped_failed", "dropped_rejected", "dropped_shutdown"))
    assert accounted == final["submitted"] and final["sent"] == 0


def test_shutdown_flushes_what_is_queued(start_plugin, webhook: FakeWebhook) -> None:
    webhook.default = Reply(status=204, delay=0.05)
    kernel, plugin = start_plugin(CAO_DISCORD_WEBHOOK_URL=webhook.url)
    _fire(kernel, 5)
    kernel.hooks.shutdown(kernel)
    assert len(webhook.received) == 5
    assert plugin.notifier is None


def test_shutdown_against_a_hanging_webhook_is_bounded(start_plugin, webhook: FakeWebhook) -> None:
    webhook.default = Reply(hang=True)
    kernel, plugin = start_plugin(CAO_DISCORD_WEBHOOK_URL=webhook.url, CAO_DISCORD_FLUSH_SECONDS="0.3")
    _fire(kernel, 5)
    webhook.wait_for(1)
    started = time.monotonic()
    final = plugin.stop()
    assert time.monotonic() - started < 0.3 + 0.6
    assert final["sent"] == 0 and final["dropped_shutdown"] == 5
    # After shutdown the observers are inert.
    _fire(kernel)
    assert len(webhook.received) == 1


def test_the_webhook_secret_never_reaches_the_logs(start_plugin, webhook: FakeWebhook, until, caplog) -> None:
    token = webhook.path.rsplit("/", 1)[1]
    webhook.script(
        Reply(status=204),
        Reply(status=429, headers={"Retry-After": "0.01"}),
        Reply(status=204),
        Reply(status=500),
        Reply(status=204),
        # A server that echoes the URL back in its error text must not get it logged either.
        Reply(status=404, body=f"no webhook at {webhook.url}"),
    )
    caplog.set_level(logging.DEBUG)
    kernel, plugin = start_plugin(CAO_DISCORD_WEBHOOK_URL=webhook.url)
    _fire(kernel, 4)
    until(lambda: _stats(plugin)["sent"] + _stats(plugin)["dropped_rejected"] == 4)
    texts = [repr(plugin), repr(plugin.notifier), repr(plugin.notifier.config), str(_stats(plugin))]
    plugin.stop()
    # A malformed configuration that includes the URL is reported without it.
    start_plugin(CAO_DISCORD_WEBHOOK_URL=webhook.url, CAO_DISCORD_QUEUE_SIZE="many")
    start_plugin(CAO_DISCORD_WEBHOOK_URL=f"http://example.com/api/webhooks/1/{token}")
    assert "HTTP 404" in caplog.text and "httpx" in {r.name for r in caplog.records}
    assert token not in caplog.text
    for text in texts:
        assert token not in text
