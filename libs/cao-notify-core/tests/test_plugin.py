"""Each notifier in a kernel: its entry point, which events it forwards, and how it stays off."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from cao_hookspecs import OpenPrompt, Prompt, PromptEvent, PromptOption, StatusReport, Terminal
from cao_notify_core.events import EVENT_KINDS
from cao_notify_core.plugin import NotifierPlugin
from cao_testkit.notify.examples import example_hook_calls
from cao_testkit.notify.webhook import FakeWebhook

OBSERVERS = {
    "cao_after_session_created", "cao_after_session_killed", "cao_after_terminal_created",
    "cao_after_terminal_killed", "cao_after_message_delivered", "cao_after_message_dead",
    "cao_after_handoff_finished", "cao_after_assign_finished", "cao_after_status_changed", "cao_after_prompt",
}


def _fire_all(kernel: Any) -> list[str]:
    calls = example_hook_calls()
    for hook, kwargs, _kind in calls:
        kernel.hooks.after(hook, **kwargs)
    return [kind for _, _, kind in calls]


def _records(caplog: pytest.LogCaptureFixture, case: Any, level: int) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == case.service.logger and r.levelno == level]


@pytest.fixture
def enabled_plugins(case) -> tuple[str, ...]:
    return (case.name,)


def test_the_entry_point_loads_an_inert_plugin(case, kernel: Any) -> None:
    record = next(r for r in kernel.plugin_records() if r.name == case.name)
    assert record.status == "active" and record.distribution == case.service.distribution
    assert set(record.hooks) == OBSERVERS | {"cao_startup", "cao_shutdown"}
    plugin = kernel.pm.get_plugin(case.name)
    assert isinstance(plugin, case.plugin) and plugin.notifier is None
    assert repr(plugin) == f"<{case.plugin.__name__} inert>"


def test_a_plugin_without_a_service_path_says_so() -> None:
    class Nameless(NotifierPlugin):
        service_path = "no_colon_here"

    with pytest.raises(TypeError, match="Nameless.service_path must be 'module:attribute'"):
        Nameless.load_service()


def test_every_event_kind_is_forwarded_by_default(case, start_plugin, webhook: FakeWebhook) -> None:
    kernel, _plugin = start_plugin(**{case.setting("webhook_url"): webhook.url})
    kinds = _fire_all(kernel)
    assert sorted(kinds) == sorted(EVENT_KINDS)
    kernel.hooks.shutdown(kernel)
    assert webhook.event_kinds() == kinds


def test_only_the_selected_events_are_forwarded(case, start_plugin, webhook: FakeWebhook) -> None:
    kernel, _plugin = start_plugin(**{case.setting("webhook_url"): webhook.url,
                                      case.setting("events"): "session_created,handoff_finished"})
    _fire_all(kernel)
    kernel.hooks.shutdown(kernel)
    assert webhook.event_kinds() == ["session_created", "handoff_finished"]


def test_only_a_change_to_waiting_user_answer_is_forwarded(case, start_plugin, webhook: FakeWebhook) -> None:
    kernel, _plugin = start_plugin(**{case.setting("webhook_url"): webhook.url})
    terminal = Terminal(id="0a1b2c3d", name="dev-1a2b", session_name="cao-x", provider="mock_cli",
                        agent_profile="developer")
    for old, new in (("unknown", "idle"), ("idle", "processing"), ("processing", "waiting_user_answer"),
                     ("waiting_user_answer", "processing"), ("processing", "completed")):
        kernel.hooks.after("cao_after_status_changed", terminal=terminal, old=StatusReport(status=old),
                           new=StatusReport(status=new, evidence="allow this tool? [y/n]"))
    kernel.hooks.shutdown(kernel)
    assert webhook.event_kinds() == ["waiting_user_answer"]
    payload = webhook.payloads()[0]
    assert case.title(payload) == "dev-1a2b needs your answer"
    assert "allow this tool? [y/n]" in case.summary(payload)


def test_no_configuration_is_one_info_line_and_no_warning(case, start_plugin, webhook: FakeWebhook,
                                                          caplog) -> None:
    with caplog.at_level(logging.DEBUG, logger=case.service.logger):
        kernel, plugin = start_plugin()
    assert plugin.notifier is None
    assert len(_records(caplog, case, logging.INFO)) == 1 and not _records(caplog, case, logging.WARNING)
    assert case.setting("webhook_url") in _records(caplog, case, logging.INFO)[0].getMessage()
    _fire_all(kernel)
    assert webhook.received == []


@pytest.mark.parametrize(("settings", "named"), [
    ({"timeout_seconds": "fast"}, "timeout_seconds"),
    ({"events": "everything"}, "events"),
    ({"webhook_url": None, "queue_size": "5"}, "webhook_url"),
])
def test_a_malformed_configuration_is_one_warning_and_the_plugin_stays_off(
    case, start_plugin, webhook: FakeWebhook, caplog, settings: dict, named: str
) -> None:
    merged = {"webhook_url": webhook.url, **settings}
    with caplog.at_level(logging.DEBUG, logger=case.service.logger):
        kernel, plugin = start_plugin(**{case.setting(k): v for k, v in merged.items() if v is not None})
    warnings = _records(caplog, case, logging.WARNING)
    assert len(warnings) == 1 and case.setting(named) in warnings[0].getMessage()
    assert "disabled" in warnings[0].getMessage()
    assert plugin.notifier is None
    _fire_all(kernel)
    assert webhook.received == []


def test_a_broken_config_file_is_one_warning_naming_the_file(case, start_plugin, webhook, cao_home: Path,
                                                            caplog) -> None:
    (cao_home / "config.yaml").write_text(f"notify:\n  {case.service.key}: [oops\n", encoding="utf-8")
    with caplog.at_level(logging.DEBUG, logger=case.service.logger):
        _kernel, plugin = start_plugin()
    (warning,) = _records(caplog, case, logging.WARNING)
    assert str(cao_home / "config.yaml") in warning.getMessage()
    assert plugin.notifier is None


def test_the_config_file_configures_the_plugin(case, start_plugin, webhook: FakeWebhook,
                                               cao_home: Path) -> None:
    (cao_home / "config.yaml").write_text(
        f"notify:\n  {case.service.key}:\n    webhook_url: {webhook.url}\n    events: [session_killed]\n",
        encoding="utf-8")
    kernel, _plugin = start_plugin()
    _fire_all(kernel)
    kernel.hooks.shutdown(kernel)
    assert webhook.event_kinds() == ["session_killed"]


def test_a_second_startup_restarts_and_a_foreign_shutdown_is_ignored(case, start_plugin, webhook: FakeWebhook,
                                                                     cao_home: Path) -> None:
    from cao_kernel.kernel import Kernel

    kernel, plugin = start_plugin(**{case.setting("webhook_url"): webhook.url})
    assert repr(plugin) == f"<{case.plugin.__name__} active>"
    first = plugin.notifier
    other = Kernel(load_entrypoints=False, home=cao_home, settings={case.setting("webhook_url"): webhook.url})
    plugin.cao_shutdown(other)
    assert plugin.notifier is first
    plugin.cao_startup(kernel)
    assert plugin.notifier is not None and plugin.notifier is not first
    assert first.stats()["queued"] == 0
    _fire_all(kernel)
    kernel.hooks.shutdown(kernel)
    assert len(webhook.received) == len(EVENT_KINDS)


def _permission(terminal_id: str = "0a1b2c3d") -> OpenPrompt:
    prompt = Prompt(kind="permission", question="Allow Bash(make clean)?", tool="Bash",
                    arguments={"command": "make clean"}, default=1, options=(
                        PromptOption(label="Yes", keys=("1",), effect="allow"),
                        PromptOption(label="Yes, and don't ask again for Bash", keys=("2",),
                                     effect="allow_always"),
                        PromptOption(label="No, and tell the agent what to do differently", keys=("3",),
                                     effect="deny", takes_text=True)))
    return OpenPrompt(id=f"{terminal_id}-4", terminal_id=terminal_id, prompt=prompt, opened_at=1.7e9)


def test_each_prompt_is_posted_once_with_its_options_and_the_command_that_answers_it(
        case, start_plugin, webhook: FakeWebhook) -> None:
    console = "http://127.0.0.1:9889/"
    kernel, _plugin = start_plugin(**{case.setting("webhook_url"): webhook.url,
                                      case.setting("console_url"): console})
    opened = _permission()
    terminal = Terminal(id=opened.terminal_id, name="dev-1a2b", session_name="cao-x", provider="mock_cli",
                        agent_profile="developer", prompt=opened)
    # The kernel records the prompt, then the status change that carries it: one post, not two.
    kernel.hooks.after("cao_after_prompt", event=PromptEvent(kind="opened", prompt=opened, at=1.0))
    waiting = StatusReport(status="waiting_user_answer", evidence="a permission prompt", prompt=opened)
    kernel.hooks.after("cao_after_status_changed", terminal=terminal, old=StatusReport(status="processing"),
                       new=waiting)
    for kind in ("refused", "answered", "closed"):  # told to whoever answered; nobody needs a post
        event = PromptEvent(kind=kind, prompt=opened, at=2.0, by="person")
        kernel.hooks.after("cao_after_prompt", event=event)
    kernel.hooks.after("cao_after_prompt", event=PromptEvent(
        kind="escalated", prompt=opened, at=3.0, by="timeout", detail="told supervisor 99887766"))
    kernel.hooks.shutdown(kernel)
    assert webhook.event_kinds() == ["waiting_user_answer", "waiting_user_answer"]
    first, escalated = webhook.payloads()
    assert case.title(first) == "Terminal 0a1b2c3d waits for your answer"
    text = json.dumps(first, ensure_ascii=False)
    for line in ("Bash: make clean", "1. Yes  (default)", "2. Yes, and don't ask again for Bash",
                 "3. No, and tell the agent what to do differently  (takes text)",
                 "cao terminal answer 0a1b2c3d OPTION --prompt 0a1b2c3d-4",
                 "cao terminal answer 0a1b2c3d OPTION --text 'TEXT' --prompt 0a1b2c3d-4",
                 "http://127.0.0.1:9889/#/terminal/0a1b2c3d"):
        assert json.dumps(line, ensure_ascii=False)[1:-1] in text, line
    assert "Allow Bash(make clean)?" in case.summary(first)
    assert case.title(escalated) == "Prompt escalated: terminal 0a1b2c3d"
    assert "told supervisor 99887766" in case.summary(escalated)
    assert "--prompt 0a1b2c3d-4" in json.dumps(escalated)


def test_without_a_console_url_a_prompt_post_has_no_link(case, start_plugin, webhook) -> None:
    kernel, _plugin = start_plugin(**{case.setting("webhook_url"): webhook.url})
    kernel.hooks.after("cao_after_prompt", event=PromptEvent(kind="opened", prompt=_permission(), at=1.0))
    kernel.hooks.shutdown(kernel)
    (payload,) = webhook.payloads()
    assert "/#/terminal/" not in json.dumps(payload) and "--prompt 0a1b2c3d-4" in json.dumps(payload)


def test_a_console_url_that_is_not_a_url_is_refused(case, start_plugin, webhook, caplog) -> None:
    with caplog.at_level(logging.WARNING, logger=case.service.logger):
        _kernel, plugin = start_plugin(**{case.setting("webhook_url"): webhook.url,
                                          case.setting("console_url"): "ftp://example.com"})
    assert plugin.notifier is None
    assert case.setting("console_url") in _records(caplog, case, logging.WARNING)[0].getMessage()
