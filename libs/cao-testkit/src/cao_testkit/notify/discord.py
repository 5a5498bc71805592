"""A fake Discord webhook for tests: ``cao_testkit.notify.webhook.FakeWebhook`` (a real HTTP server on
127.0.0.1 that records every post and answers from a script) with Discord's URL shape, its 204, and
the event kind read from each embed's footer.

Discord's own 429 says how long to wait in its JSON body::

    hook.script(Reply(status=429, body={"retry_after": 0.3}))
"""

from __future__ import annotations

from typing import Any

from cao_notify_discord.payload import FOOTER_PREFIX

from . import webhook
from .webhook import Received, Reply

__all__ = ["FakeWebhook", "Received", "Reply"]


class FakeWebhook(webhook.FakeWebhook):
    """A Discord execute-webhook endpoint: answers 204, and a post names its kind in its embed's footer."""

    default_path = "/api/webhooks/123456789/fake-webhook-token"

    def event_kind(self, payload: Any) -> str:
        return payload["embeds"][0]["footer"]["text"].removeprefix(FOOTER_PREFIX)
