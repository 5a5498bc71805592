"""Fixtures from ``cao_testkit.notify.fixtures`` (a fake webhook on 127.0.0.1, real kernels running a fresh
plugin), pointed at ``DiscordPlugin``."""

from __future__ import annotations

import pytest

# The fixtures are used by name.
from cao_notify_discord.plugin import DiscordPlugin
from cao_testkit.notify.discord import FakeWebhook
from cao_testkit.notify.fixtures import NotifyTarget, config_file, start_plugin, until, webhook  # noqa: F401


@pytest.fixture
def notify_target() -> NotifyTarget:
    return NotifyTarget(plugin=DiscordPlugin, name="notify_discord", webhook=FakeWebhook)
