"""The Discord plugin in a kernel: the username, from a setting or the config file, names the posts.
What every notifier does in a kernel is tested in cao-notify-core, for Discord too."""

from __future__ import annotations

from pathlib import Path

from cao_hookspecs import SessionInfo
from cao_notify_discord.plugin import DiscordPlugin
from cao_testkit.notify.discord import FakeWebhook
from cao_testkit.notify.examples import example_hook_calls


def test_the_username_setting_names_the_posts(start_plugin, webhook: FakeWebhook) -> None:
    kernel, _plugin = start_plugin(CAO_DISCORD_WEBHOOK_URL=webhook.url, CAO_DISCORD_USERNAME="ci")
    terminal = example_hook_calls()[0][1]["terminal"]
    kernel.hooks.after("cao_after_session_created", session=SessionInfo(name="cao-s0"), terminal=terminal)
    (request,) = webhook.wait_for(1)
    payload = request.json()
    assert payload["username"] == "ci"
    assert payload["embeds"][0]["title"] == "Session started: cao-s0"


def test_the_config_file_configures_the_plugin(start_plugin, webhook: FakeWebhook, cao_home: Path) -> None:
    (cao_home / "config.yaml").write_text(
        f"notify:\n  discord:\n    webhook_url: {webhook.url}\n    events: [session_killed]\n"
        "    username: nightly\n", encoding="utf-8")
    kernel, plugin = start_plugin()
    assert isinstance(plugin, DiscordPlugin)
    for hook, kwargs, _kind in example_hook_calls():
        kernel.hooks.after(hook, **kwargs)
    kernel.hooks.shutdown(kernel)
    assert webhook.event_kinds() == ["session_killed"]
    assert webhook.payloads()[0]["username"] == "nightly"
