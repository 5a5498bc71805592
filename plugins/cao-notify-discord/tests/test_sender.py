"""Discord's rate limits through a real kernel and a local webhook: the JSON ``retry_after`` of a 429,
and the bucket headers of a success. The sender's other behaviour is tested in cao-notify-core."""

from __future__ import annotations

from typing import Any

from cao_hookspecs import SessionInfo, Terminal
from cao_testkit.notify.discord import FakeWebhook, Reply

TERMINAL = Terminal(id="0a1b2c3d", name="supervisor-1a2b", session_name="cao-demo", provider="mock_cli",
                    agent_profile="supervisor")


def _fire(kernel: Any, n: int = 1) -> None:
    for i in range(n):
        session = SessionInfo(name=f"cao-s{i}")
        kernel.hooks.after("cao_after_session_created", session=session, terminal=TERMINAL)


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

