"""The shared machinery runs through both notifiers: ``notify_target`` is parametrized over Discord and
Slack, and each ``ServiceCase`` says how its service answers and where its posts carry their texts."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

# The fixtures are used by name.
from cao_notify_core.service import Service
from cao_testkit.notify.fixtures import NotifyTarget, config_file, start_plugin, until, webhook  # noqa: F401
from cao_testkit.notify.webhook import Reply


@dataclass(frozen=True, kw_only=True)
class ServiceCase(NotifyTarget):
    """A notifier under test, with what the shared tests need to know about its service."""

    #: A realistic webhook URL of the service, ending in the given token.
    url: Callable[[str], str]
    #: The service's 429 asking to wait the given number of seconds.
    rate_limited: Callable[[float], Reply]
    #: A refusal (HTTP 400) and the explanation in it that the warning must quote.
    refusal: tuple[Reply, str]
    #: The title and the summary of a post, as the service shows them.
    title: Callable[[Any], str]
    summary: Callable[[Any], str]

    @property
    def service(self) -> Service:
        return self.plugin.load_service()

    def setting(self, key: str) -> str:
        """The full name of a setting: ``setting("queue_size")`` is ``CAO_<SERVICE>_QUEUE_SIZE``."""
        return f"{self.service.prefix}{key.upper()}"


def _discord() -> ServiceCase:
    from cao_notify_discord.plugin import DiscordPlugin
    from cao_testkit.notify.discord import FakeWebhook

    return ServiceCase(
        plugin=DiscordPlugin, name="notify_discord", webhook=FakeWebhook,
        url=lambda token: f"https://discord.com/api/webhooks/123/{token}",
        rate_limited=lambda wait: Reply(status=429, body={"retry_after": wait}),
        refusal=(Reply(status=400, body={"code": 50035, "message": "Invalid Form Body"}),
                 "Invalid Form Body"),
        title=lambda payload: payload["embeds"][0]["title"],
        summary=lambda payload: payload["embeds"][0]["description"],
    )


def _slack() -> ServiceCase:
    from cao_notify_slack.plugin import SlackPlugin
    from cao_testkit.notify.slack import FakeWebhook

    return ServiceCase(
        plugin=SlackPlugin, name="notify_slack", webhook=FakeWebhook,
        url=lambda token: f"https://hooks.slack.com/services/T0001/B0001/{token}",
        rate_limited=lambda wait: Reply(status=429, headers={"Retry-After": str(wait)}),
        refusal=(Reply(status=400, body="invalid_blocks"), "invalid_blocks"),
        # The header leads with the emoji of the outcome; the fallback text starts with the title.
        title=lambda payload: payload["blocks"][0]["text"]["text"].split(" ", 1)[1],
        summary=lambda payload: payload["blocks"][1]["text"]["text"],
    )


CASES = {"discord": _discord, "slack": _slack}


@pytest.fixture(params=sorted(CASES))
def notify_target(request: pytest.FixtureRequest) -> ServiceCase:
    return CASES[request.param]()


@pytest.fixture
def case(notify_target: ServiceCase) -> ServiceCase:
    """The same ``ServiceCase``, under a shorter name."""
    return notify_target
