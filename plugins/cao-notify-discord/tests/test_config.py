"""Discord's own setting, the username: its default, its sources, and Discord's rules for it. The
settings every notifier has are tested in cao-notify-core."""

from __future__ import annotations

import pytest

from cao_notify_core.config import ConfigError, load_config
from cao_notify_core.redact import Secret
from cao_notify_discord.config import DiscordConfig
from cao_notify_discord.service import SERVICE

URL = "https://discord.com/api/webhooks/123/s3cr3t-t0ken"
TOKEN = "s3cr3t-t0ken"


def test_the_username_defaults_to_cao(config_file) -> None:
    config = load_config(SERVICE, {"CAO_DISCORD_WEBHOOK_URL": URL}, config_file())
    assert config == DiscordConfig(webhook_url=Secret(URL))
    assert config.username == "cao"


def test_the_username_from_the_environment(config_file) -> None:
    settings = {"CAO_DISCORD_WEBHOOK_URL": URL, "CAO_DISCORD_USERNAME": " build bot "}
    assert load_config(SERVICE, settings, config_file()).username == "build bot"


def test_the_username_from_the_file_and_precedence(config_file) -> None:
    path = config_file(f"notify:\n  discord:\n    webhook_url: {URL}\n    username: nightly\n")
    assert load_config(SERVICE, {}, path).username == "nightly"
    # An empty setting counts as unset; a non-empty one wins over the file.
    assert load_config(SERVICE, {"CAO_DISCORD_USERNAME": ""}, path).username == "nightly"
    assert load_config(SERVICE, {"CAO_DISCORD_USERNAME": "ci"}, path).username == "ci"


@pytest.mark.parametrize(("username", "says"), [
    ("Discord Bot", "must not contain"),
    ("my clyde", "must not contain"),
    ("x" * 81, "at most 80"),
    ("  ", "non-empty"),
    ("a\x07b", "control characters"),
])
def test_a_malformed_username_is_named(config_file, username: str, says: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(SERVICE, {"CAO_DISCORD_WEBHOOK_URL": URL, "CAO_DISCORD_USERNAME": username},
                    config_file())
    assert caught.value.setting == "CAO_DISCORD_USERNAME"
    assert str(caught.value).startswith("CAO_DISCORD_USERNAME") and says in str(caught.value)
    assert TOKEN not in str(caught.value)


def test_a_username_alone_in_the_file_is_an_error_naming_the_url(config_file) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(SERVICE, {}, config_file("notify:\n  discord:\n    username: ci\n"))
    assert caught.value.setting == "CAO_DISCORD_WEBHOOK_URL"
    assert "other Discord settings" in str(caught.value)
