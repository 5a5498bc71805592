"""The Discord ``Service``: what the shared notifier machinery needs to know to post to Discord."""

from __future__ import annotations

from typing import Any

from cao_notify_core.events import Notice
from cao_notify_core.service import Service

from . import ratelimit
from .config import DiscordConfig, parse_username
from .payload import build_payload


def render(config: DiscordConfig, notice: Notice) -> dict[str, Any]:
    """The execute-webhook body for ``notice``, under the configured username."""
    return build_payload(notice, username=config.username)


SERVICE = Service(
    key="discord", title="Discord", distribution="cao-notify-discord",
    url_example="https://discord.com/api/webhooks/<id>/<token>", render=render,
    # The username: Discord lets each post choose the name it appears under.
    config_class=DiscordConfig, extra_settings={"username": ("cao", parse_username)},
    # A 429 says how long to wait in its JSON body, and a success says when the bucket is empty.
    retry_after=ratelimit.retry_after_seconds, pause_after=ratelimit.pause_seconds,
)
