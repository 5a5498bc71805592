"""The Slack ``Service``: what the shared notifier machinery needs to know to post to Slack.

Slack's incoming webhooks have no settings of their own beyond the common ones (the channel, name and
icon are the app's), and a 429 says how long to wait in ``Retry-After`` only: the shared defaults.
"""

from __future__ import annotations

from typing import Any

from cao_notify_core.config import NotifyConfig
from cao_notify_core.events import Notice
from cao_notify_core.service import Service

from .payload import build_payload


def render(config: NotifyConfig, notice: Notice) -> dict[str, Any]:
    """The incoming-webhook body for ``notice``."""
    return build_payload(notice)


SERVICE = Service(key="slack", title="Slack", distribution="cao-notify-slack",
                  url_example="https://hooks.slack.com/services/...", render=render)
