"""A fake Slack incoming webhook for tests, on ``cao_notify_core.testing.FakeWebhook`` (a real HTTP
server on 127.0.0.1 that records every post and answers from a script): Slack's URL shape, its
``200 ok``, and the event kind read from each message's context line. Point ``CAO_SLACK_WEBHOOK_URL``
at ``hook.url``.
"""

from __future__ import annotations

from typing import Any

from cao_notify_core import testing
from cao_notify_core.testing import Received, Reply, example_hook_calls

from .payload import CONTEXT_PREFIX

__all__ = ["FakeWebhook", "Received", "Reply", "example_hook_calls"]


class FakeWebhook(testing.FakeWebhook):
    """A Slack incoming webhook: answers 200 ``ok``, and a post names its kind in its context line."""

    default_path = "/services/T0000000/B0000000/fake-webhook-secret"

    @classmethod
    def ok_reply(cls) -> Reply:
        return Reply(status=200, body="ok")

    def event_kind(self, payload: Any) -> str:
        context = payload["blocks"][-1]["elements"][0]["text"]
        return context.removeprefix(CONTEXT_PREFIX).split(" · ", 1)[0]
