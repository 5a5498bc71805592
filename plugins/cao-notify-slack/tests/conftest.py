"""Fixtures from ``cao_testkit.notify.fixtures`` (a fake webhook on 127.0.0.1, real kernels running a fresh
plugin), pointed at ``SlackPlugin``."""

from __future__ import annotations

import pytest

# The fixtures are used by name.
from cao_notify_slack.plugin import SlackPlugin
from cao_testkit.notify.fixtures import NotifyTarget, config_file, start_plugin, until, webhook  # noqa: F401
from cao_testkit.notify.slack import FakeWebhook


@pytest.fixture
def notify_target() -> NotifyTarget:
    return NotifyTarget(plugin=SlackPlugin, name="notify_slack", webhook=FakeWebhook)
