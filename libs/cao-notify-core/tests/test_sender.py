"""Posting through a real kernel to a real local webhook, for each service: speed of the event path,
retries, 429, the queue bound, the shutdown flush, and secrets kept out of the logs."""

from __future__ import annotations

import dataclasses
import logging
import socket
import time
from typing import Any

import pytest

from cao_hookspecs import SessionInfo, Terminal
from cao_notify_core.sender import MAX_RATE_LIMITED, backoff
from cao_testkit.notify.webhook import FakeWebhook, Reply

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


def test_backoff_doubles_up_to_its_cap() -> None:
    assert [backoff(n) for n in range(1, 7)] == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0]


def test_a_post_reaches_the_webhook_as_json(case, start_plugin, webhook: FakeWebhook) -> None:
    kernel, _plugin = start_plugin(**{case.setting("webhook_url"): webhook.url})
    _fire(kernel)
    (request,) = webhook.wait_for(1)
    assert request.method == "POST" and request.path == webhook.path
    assert request.headers["content-type"] == "application/json"
    assert request.headers["user-agent"].startswith(f"{case.service.distribution}/")
    assert case.title(request.json()) == "Session started: cao-s0"
    assert webhook.event_kinds() == ["session_created"]


# The 500 comes late, so an observer that posted by itself would take at least 50 ms per call.
@pytest.mark.parametrize("reply", [Reply(hang=True), Reply(status=500, delay=0.05)],
                         ids=["hanging", "http-500"])
def test_a_bad_webhook_never_slows_the_observer(case, start_plugin, webhook: FakeWebhook,
                                                reply: Reply) -> None:
    webhook.default = reply
    kernel, _plugin = start_plugin(**{case.setting("webhook_url"): webhook.url,
                                      case.setting("timeout_seconds"): "0.5",
                                      case.setting("flush_seconds"): "0.2"})
    _fire(kernel)
    webhook.wait_for(1)  # the sender is now stuck on (or retrying) the first post
    durations = _fire(kernel, 120)
    # Each sample is the fastest of three consecutive calls: that filters out the odd moment the OS
    # takes the CPU away from the test (a loaded CI box), while an observer that waits on the network
    # is slow on every call and still fails.
    samples = [min(durations[i:i + 3]) for i in range(0, len(durations), 3)]
    assert max(samples) < OBSERVER_BUDGET, f"slowest observer call took {max(samples) * 1000:.1f} ms"
    assert sorted(durations)[len(durations) // 2] < OBSERVER_BUDGET / 10


def test_5xx_is_retried_with_backoff_then_dropped_and_counted(case, start_plugin, webhook: FakeWebhook,
                                                              until) -> None:
    webhook.default = Reply(status=503)
    kernel, plugin = start_plugin(**{case.setting("webhook_url"): webhook.url, case.setting("retries"): "2"})
    _fire(kernel)
    until(lambda: _stats(plugin)["dropped_failed"] == 1)
    times = [r.at for r in webhook.received]
    assert len(times) == 3
    assert times[1] - times[0] >= backoff(1) and times[2] - times[1] >= backoff(2)
    assert _stats(plugin)["retried"] == 2 and _stats(plugin)["sent"] == 0


def test_a_transient_500_then_success_is_sent_once(case, start_plugin, webhook: FakeWebhook, until) -> None:
    webhook.script(Reply(status=500))
    kernel, plugin = start_plugin(**{case.setting("webhook_url"): webhook.url})
    _fire(kernel)
    until(lambda: _stats(plugin)["sent"] == 1)
    assert len(webhook.received) == 2 and _stats(plugin)["retried"] == 1


def test_429_retry_after_header_is_honoured(case, start_plugin, webhook: FakeWebhook, until) -> None:
    webhook.script(Reply(status=429, headers={"Retry-After": "0.3"}))
    kernel, plugin = start_plugin(**{case.setting("webhook_url"): webhook.url})
    _fire(kernel)
    first, second = webhook.wait_for(2)
    gap = second.at - first.at
    assert 0.3 <= gap < 0.3 + 0.5, gap
    until(lambda: _stats(plugin)["sent"] == 1)
    assert _stats(plugin)["rate_limited"] == 1 and _stats(plugin)["retried"] == 0


def test_endless_429_drops_the_notification(case, start_plugin, webhook: FakeWebhook, until) -> None:
    webhook.default = case.rate_limited(0.01)
    kernel, plugin = start_plugin(**{case.setting("webhook_url"): webhook.url})
    _fire(kernel)
    until(lambda: _stats(plugin)["dropped_failed"] == 1)
    assert len(webhook.received) == MAX_RATE_LIMITED


def test_a_refused_payload_is_not_retried(case, start_plugin, webhook: FakeWebhook, until, caplog) -> None:
    webhook.default, explanation = case.refusal
    kernel, plugin = start_plugin(**{case.setting("webhook_url"): webhook.url})
    with caplog.at_level(logging.WARNING, logger=case.service.logger):
        _fire(kernel, 3)
        until(lambda: _stats(plugin)["dropped_rejected"] == 3)
    assert len(webhook.received) == 3
    warnings = [r for r in caplog.records if r.name == case.service.logger]
    # One warning per distinct status, with the service's explanation.
    assert len(warnings) == 1 and "HTTP 400" in warnings[0].getMessage()
    assert explanation in warnings[0].getMessage()


def test_transport_errors_are_retried_then_dropped(case, start_plugin, until) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    # Nothing listens on the port any more: every attempt is refused.
    path = case.webhook.default_path
    kernel, plugin = start_plugin(**{case.setting("webhook_url"): f"http://127.0.0.1:{port}{path}",
                                     case.setting("retries"): "1"})
    _fire(kernel)
    until(lambda: _stats(plugin)["dropped_failed"] == 1)
    assert _stats(plugin)["retried"] == 1


def test_the_queue_bound_holds_and_drops_are_counted(case, start_plugin, webhook: FakeWebhook,
                                                     caplog) -> None:
    webhook.default = Reply(hang=True)
    kernel, plugin = start_plugin(**{case.setting("webhook_url"): webhook.url,
                                     case.setting("queue_size"): "3",
                                     case.setting("timeout_seconds"): "0.5",
                                     case.setting("flush_seconds"): "0.1"})
    _fire(kernel)
    webhook.wait_for(1)  # one post in flight, the queue empty
    with caplog.at_level(logging.WARNING, logger=case.service.logger):
        _fire(kernel, 10)
    stats = _stats(plugin)
    assert stats["queued"] == 3 and stats["dropped_full"] == 7 and stats["submitted"] == 4
    full = [r for r in caplog.records if "queue is full" in r.getMessage()]
    assert len(full) == 1
    final = plugin.stop()
    accounted = sum(final[k] for k in ("sent", "dropped_failed", "dropped_rejected", "dropped_shutdown"))
    assert accounted == final["submitted"] and final["sent"] == 0


def test_shutdown_flushes_what_is_queued(case, start_plugin, webhook: FakeWebhook) -> None:
    webhook.default = dataclasses.replace(webhook.ok_reply(), delay=0.05)
    kernel, plugin = start_plugin(**{case.setting("webhook_url"): webhook.url})
    _fire(kernel, 5)
    kernel.hooks.shutdown(kernel)
    assert len(webhook.received) == 5
    assert plugin.notifier is None


def test_shutdown_against_a_hanging_webhook_is_bounded(case, start_plugin, webhook: FakeWebhook) -> None:
    webhook.default = Reply(hang=True)
    kernel, plugin = start_plugin(**{case.setting("webhook_url"): webhook.url,
                                     case.setting("flush_seconds"): "0.3"})
    _fire(kernel, 5)
    webhook.wait_for(1)
    started = time.monotonic()
    final = plugin.stop()
    assert time.monotonic() - started < 0.3 + 0.6
    assert final["sent"] == 0 and final["dropped_shutdown"] == 5
    # After shutdown the observers are inert.
    _fire(kernel)
    assert len(webhook.received) == 1


def test_the_webhook_secret_never_reaches_the_logs(case, start_plugin, webhook: FakeWebhook, until,
                                                   caplog) -> None:
    token = webhook.path.rsplit("/", 1)[1]
    webhook.script(
        webhook.ok_reply(),
        Reply(status=429, headers={"Retry-After": "0.01"}),
        webhook.ok_reply(),
        Reply(status=500),
        webhook.ok_reply(),
        # A server that echoes the URL back in its error text must not get it logged either.
        Reply(status=404, body=f"no webhook at {webhook.url}"),
    )
    caplog.set_level(logging.DEBUG)
    url_setting = case.setting("webhook_url")
    kernel, plugin = start_plugin(**{url_setting: webhook.url})
    _fire(kernel, 4)
    until(lambda: _stats(plugin)["sent"] + _stats(plugin)["dropped_rejected"] == 4)
    texts = [repr(plugin), repr(plugin.notifier), repr(plugin.notifier.config), str(_stats(plugin))]
    plugin.stop()
    # A malformed configuration that includes the URL is reported without it.
    start_plugin(**{url_setting: webhook.url, case.setting("queue_size"): "many"})
    start_plugin(**{url_setting: case.url(token).replace("https://", "http://")})
    assert "HTTP 404" in caplog.text and "httpx" in {r.name for r in caplog.records}
    assert token not in caplog.text
    for text in texts:
        assert token not in text
