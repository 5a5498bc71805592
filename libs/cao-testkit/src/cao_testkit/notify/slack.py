"""A fake Slack incoming webhook for tests, on ``cao_testkit.notify.webhook.FakeWebhook`` (a real HTTP
server on 127.0.0.1 that records every post and answers from a script): Slack's URL shape, its
``200 ok``, and the event kind read from each message's context line. Point ``CAO_SLACK_WEBHOOK_URL``
at ``hook.url``.
"""

from __future__ import annotations

from typing import Any

from cao_notify_slack.payload import CONTEXT_PREFIX

from . import webhook
from .webhook import Received, Reply

__all__ = ["FakeWebhook", "Received", "Reply"]


class FakeWebhook(webhook.FakeWebhook):
    """A Slack incoming webhook: answers 200 ``ok``, and a post names its kind in its context line."""

    default_path = "/services/T0000000/B0000000/fake-webhook-secret"

    @classmethod
    def ok_reply(cls) -> Reply:
        return Reply(status=200, body="ok")

    def event_kind(self, payload: Any) -> str:
        context = payload["blocks"][-1]["elements"][0]["text"]
        return context.removeprefix(CONTEXT_PREFIX).split(" · ", 1)[0]
