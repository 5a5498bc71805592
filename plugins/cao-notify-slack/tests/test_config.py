"""Slack has no settings beyond the common ones (tested in cao-notify-core): an incoming webhook's
channel, name and icon are its app's, so a Discord-style username is refused, not ignored."""

from __future__ import annotations

import pytest

from cao_notify_core.config import ConfigError, NotifyConfig, load_config
from cao_notify_slack.service import SERVICE

URL = "https://hooks.slack.com/services/T0001/B0001/s3cr3t-t0ken"


def test_the_configuration_is_the_common_one(config_file) -> None:
    config = load_config(SERVICE, {"CAO_SLACK_WEBHOOK_URL": URL}, config_file())
    assert type(config) is NotifyConfig
    assert list(SERVICE.settings) == ["webhook_url", "events", "timeout_seconds", "queue_size", "retries",
                                      "flush_seconds", "console_url"]


def test_a_username_is_refused(config_file) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(SERVICE, {"CAO_SLACK_WEBHOOK_URL": URL, "CAO_SLACK_USERNAME": "ci"}, config_file())
    assert caught.value.setting == "CAO_SLACK_USERNAME" and "not a setting" in str(caught.value)
    path = config_file(f"notify:\n  slack:\n    webhook_url: {URL}\n    username: ci\n")
    with pytest.raises(ConfigError) as caught:
        load_config(SERVICE, {}, path)
    assert caught.value.setting == f"notify.slack.username in {path}"
