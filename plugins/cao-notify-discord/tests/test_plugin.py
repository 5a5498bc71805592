"""The plugin in a kernel: its entry point, which events it forwards, and how it stays off."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from cao_hookspecs import StatusReport, Terminal
from cao_notify_discord.events import EVENT_KINDS
from cao_notify_discord.plugin import DiscordPlugin
from cao_notify_discord.testing import FakeWebhook, example_hook_calls

OBSERVERS = {
    "cao_after_session_created", "cao_after_session_killed", "cao_after_terminal_created",
    "cao_after_terminal_killed", "cao_after_message_delivered", "cao_after_message_dead",
    "cao_after_handoff_finished", "cao_after_assign_finished", "cao_after_status_changed",
}


def _fire_all(kernel: Any) -> list[str]:
    calls = example_hook_calls()
    for hook, kwargs, _kind in calls:
        kernel.hooks.after(hook, **kwargs)
    return [kind for _, _, kind in calls]


def _records(caplog: pytest.LogCaptureFixture, level: int) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "cao_notify_discord" and r.levelno == level]


@pytest.fixture
def enabled_plugins() -> tuple[str, ...]:
    return ("notify_discord",)


def test_the_entry_point_loads_an_inert_plugin(kernel: Any) -> None:
    record = next(r for r in kernel.plugin_records() if r.name == "notify_discord")
    assert record.status == "active" and record.distribution == "cao-notify-discord"
    assert set(record.hooks) == OBSERVERS | {"cao_startup", "cao_shutdown"}
    plugin = kernel.pm.get_plugin("notify_discord")
    assert isinstance(plugin, DiscordPlugin) and plugin.notifier is None


def test_every_event_kind_is_forwarded_by_default(start_plugin, webhook: FakeWebhook) -> None:
    kernel, _plugin = start_plugin(CAO_DISCORD_WEBHOOK_URL=webhook.url)
    kinds = _fire_all(kernel)
    assert sorted(kinds) == sorted(EVENT_KINDS)
    kernel.hooks.shutdown(kernel)
    assert webhook.event_kinds() == kinds


def test_only_the_selected_events_are_forwarded(start_plugin, webhook: FakeWebhook) -> None:
    kernel, _plugin = start_plugin(CAO_DISCORD_WEBHOOK_URL=webhook.url,
                                  CAO_DISCORD_EVENTS="session_created,handoff_finished")
    _fire_all(kernel)
    kernel.hooks.shutdown(kernel)
    assert webhook.event_kinds() == ["session_created", "handoff_finished"]


def test_only_a_change_to_waiting_user_answer_is_forwarded(start_plugin, webhook: FakeWebhook) -> None:
    kernel, _plugin = start_plugin(CAO_DISCORD_WEBHOOK_URL=webhook.url)
    terminal = Terminal(id="0a1b2c3d", name="dev-1a2b", session_name="cao-x", provider="mock_cli",
                        agent_profile="developer")
    for old, new in (("unknown", "idle"), ("idle", "processing"), ("processing", "waiting_user_answer"),
                     ("waiting_user_answer", "processing"), ("processing", "completed")):
        kernel.hooks.after("cao_after_status_changed", terminal=terminal, old=StatusReport(status=old),
                           new=StatusReport(status=new, evidence="allow this tool? [y/n]"))
    kernel.hooks.shutdown(kernel)
    assert webhook.event_kinds() == ["waiting_user_answer"]
    embed = webhook.payloads()[0]["embeds"][0]
    assert embed["title"] == "dev-1a2b needs your answer"
    assert "allow this tool? [y/n]" in embed["description"]


def test_no_configuration_is_one_info_line_and_no_warning(start_plugin, webhook: FakeWebhook, caplog) -> None:
    with caplog.at_level(logging.DEBUG, logger="cao_notify_discord"):
        kernel, plugin = start_plugin()
    assert plugin.notifier is None
    assert len(_records(caplog, logging.INFO)) == 1 and not _records(caplog, logging.WARNING)
    assert "CAO_DISCORD_WEBHOOK_URL" in _records(caplog, logging.INFO)[0].getMessage()
    _fire_all(kernel)
    assert webhook.received == []


@pytest.mark.parametrize(("settings", "named"), [
    ({"CAO_DISCORD_TIMEOUT_SECONDS": "fast"}, "CAO_DISCORD_TIMEOUT_SECONDS"),
    ({"CAO_DISCORD_EVENTS": "everything"}, "CAO_DISCORD_EVENTS"),
    ({"CAO_DISCORD_WEBHOOK_URL": None, "CAO_DISCORD_QUEUE_SIZE": "5"}, "CAO_DISCORD_WEBHOOK_URL"),
])
def test_a_malformed_configuration_is_one_warning_and_the_plugin_stays_off(
    start_plugin, webhook: FakeWebhook, caplog, settings: dict, named: str
) -> None:
    merged = {"CAO_DISCORD_WEBHOOK_URL": webhook.url, **settings}
    with caplog.at_level(logging.DEBUG, logger="cao_notify_discord"):
        kernel, plugin = start_plugin(**{k: v for k, v in merged.items() if v is not None})
    warnings = _records(caplog, logging.WARNING)
    assert len(warnings) == 1 and named in warnings[0].getMessage()
    assert "disabled" in warnings[0].getMessage()
    assert plugin.notifier is None
    _fire_all(kernel)
    assert webhook.received == []


def test_a_broken_config_file_is_one_warning_naming_the_file(start_plugin, webhook, cao_home: Path,
                                                            caplog) -> None:
    (cao_home / "config.yaml").write_text("notify:\n  discord: [oops\n", encoding="utf-8")
    with caplog.at_level(logging.DEBUG, logger="cao_notify_discord"):
        _kernel, plugin = start_plugin()
    (warning,) = _records(caplog, logging.WARNING)
    assert str(cao_home / "config.yaml") in warning.getMessage()
    assert plugin.notifier is None


def test_the_config_file_configures_the_plugin(start_plugin, webhook: FakeWebhook, cao_home: Path) -> None:
    (cao_home / "config.yaml").write_text(
        f"notify:\n  discord:\n    webhook_url: {webhook.url}\n    events: [session_killed]\n"
        "    username: nightly\n", encoding="utf-8")
    kernel, _plugin = start_plugin()
    _fire_all(kernel)
    kernel.hooks.shutdown(kernel)
    assert webhook.event_kinds() == ["session_killed"]
    assert webhook.payloads()[0]["username"] == "nightly"


def test_a_second_startup_restarts_and_a_foreign_shutdown_is_ignored(start_plugin, webhook: FakeWebhook,
                                                                     cao_home: Path) -> None:
    from cao_kernel.kernel import Kernel

    kernel, plugin = start_plugin(CAO_DISCORD_WEBHOOK_URL=webhook.url)
    first = plugin.notifier
    other = Kernel(load_entrypoints=False, home=cao_home, settings={"CAO_DISCORD_WEBHOOK_URL": webhook.url})
    plugin.cao_shutdown(other)
    assert plugin.notifier is first
    plugin.cao_startup(kernel)
    assert plugin.notifier is not None and plugin.notifier is not first
    assert first.stats()["queued"] == 0
    _fire_all(kernel)
    kernel.hooks.shutdown(kernel)
    assert len(webhook.received) == len(EVENT_KINDS)
