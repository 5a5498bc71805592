"""Configuration: settings, the config file, precedence, and errors that name the setting."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cao_notify_slack.config import (
    ConfigError,
    SlackConfig,
    Secret,
    load_config,
    parse_events,
    parse_int,
    parse_seconds,
    parse_url,
)
from cao_notify_slack.events import EVENT_KINDS

URL = "https://hooks.slack.com/services/T0001/B0001/s3cr3t-t0ken"
TOKEN = "s3cr3t-t0ken"


def _file(tmp_path: Path, text: str | None = None) -> Path:
    path = tmp_path / "config.yaml"
    if text is not None:
        path.write_text(text, encoding="utf-8")
    return path


def test_nothing_configured_is_none(tmp_path: Path) -> None:
    assert load_config({}, _file(tmp_path)) is None
    assert load_config({"CAO_SLACK_WEBHOOK_URL": ""}, _file(tmp_path)) is None


def test_url_alone_gives_the_defaults(tmp_path: Path) -> None:
    config = load_config({"CAO_SLACK_WEBHOOK_URL": URL}, _file(tmp_path))
    assert config == SlackConfig(webhook_url=Secret(URL))
    assert config.events == frozenset(EVENT_KINDS)
    assert (config.timeout_seconds, config.queue_size) == (5.0, 256)
    assert (config.retries, config.flush_seconds) == (3, 2.0)


def test_every_setting_from_the_environment(tmp_path: Path) -> None:
    config = load_config({
        "CAO_SLACK_WEBHOOK_URL": f"  {URL}\n",
        "CAO_SLACK_EVENTS": "session_created, handoff_finished",
        "CAO_SLACK_TIMEOUT_SECONDS": "2.5",
        "CAO_SLACK_QUEUE_SIZE": "10",
        "CAO_SLACK_RETRIES": "0",
        "CAO_SLACK_FLUSH_SECONDS": "0",
    }, _file(tmp_path))
    assert config.webhook_url.reveal() == URL
    assert config.events == {"session_created", "handoff_finished"}
    assert (config.timeout_seconds, config.queue_size) == (2.5, 10)
    assert (config.retries, config.flush_seconds) == (0, 0.0)


def test_the_config_file_section_and_precedence(tmp_path: Path) -> None:
    path = _file(tmp_path, f"""
notify:
  slack:
    webhook_url: {URL}
    events: [session_created, waiting_user_answer]
    timeout_seconds: 3
    queue_size: 50
    flush_seconds: 1
  discord:
    webhook_url: https://discord.com/api/webhooks/1/x
""")
    config = load_config({}, path)
    assert config.webhook_url.reveal() == URL
    assert config.events == {"session_created", "waiting_user_answer"}
    assert (config.timeout_seconds, config.queue_size, config.flush_seconds) == (3.0, 50, 1.0)
    # A non-empty setting wins over the file, key by key.
    config = load_config({"CAO_SLACK_QUEUE_SIZE": "7", "CAO_SLACK_FLUSH_SECONDS": ""}, path)
    assert (config.queue_size, config.flush_seconds, config.timeout_seconds) == (7, 1.0, 3.0)


def test_a_file_without_a_slack_section_configures_nothing(tmp_path: Path) -> None:
    assert load_config({}, _file(tmp_path, "notify:\n  discord: {}\n")) is None
    assert load_config({}, _file(tmp_path, "")) is None
    assert load_config({}, _file(tmp_path, "other: 1\n")) is None


@pytest.mark.parametrize(("settings", "named", "says"), [
    ({"CAO_SLACK_TIMEOUT_SECONDS": "soon"}, "CAO_SLACK_TIMEOUT_SECONDS", "number of seconds"),
    ({"CAO_SLACK_TIMEOUT_SECONDS": "0"}, "CAO_SLACK_TIMEOUT_SECONDS", "more than 0 and at most 60"),
    ({"CAO_SLACK_TIMEOUT_SECONDS": "nan"}, "CAO_SLACK_TIMEOUT_SECONDS", "number of seconds"),
    ({"CAO_SLACK_QUEUE_SIZE": "0"}, "CAO_SLACK_QUEUE_SIZE", "between 1 and 100000"),
    ({"CAO_SLACK_QUEUE_SIZE": "1.5"}, "CAO_SLACK_QUEUE_SIZE", "whole number"),
    ({"CAO_SLACK_RETRIES": "11"}, "CAO_SLACK_RETRIES", "between 0 and 10"),
    ({"CAO_SLACK_FLUSH_SECONDS": "-1"}, "CAO_SLACK_FLUSH_SECONDS", "between 0 and 30"),
    ({"CAO_SLACK_EVENTS": "session_created,lunch"}, "CAO_SLACK_EVENTS", "'lunch'"),
    ({"CAO_SLACK_EVENTS": ",,"}, "CAO_SLACK_EVENTS", "names no event kind"),
])
def test_a_malformed_setting_is_named(tmp_path: Path, settings: dict, named: str, says: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config({"CAO_SLACK_WEBHOOK_URL": URL, **settings}, _file(tmp_path))
    assert caught.value.setting == named
    assert str(caught.value).startswith(named) and says in str(caught.value)
    assert TOKEN not in str(caught.value)


@pytest.mark.parametrize("url", [
    f"http://hooks.slack.com/services/T0001/B0001/{TOKEN}",
    f"ftp://hooks.slack.com/{TOKEN}",
    f"https:///{TOKEN}",
    f"https://hooks.slack.com/a {TOKEN}",
    f"https://hooks.slack.com:99999/{TOKEN}",
    f"{TOKEN}",
])
def test_a_bad_url_is_named_without_showing_it(tmp_path: Path, url: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config({"CAO_SLACK_WEBHOOK_URL": url}, _file(tmp_path))
    assert caught.value.setting == "CAO_SLACK_WEBHOOK_URL"
    assert TOKEN not in str(caught.value)


@pytest.mark.parametrize("url", ["http://127.0.0.1:8080/hook", "http://[::1]/hook", "http://localhost/h",
                                 "https://hooks.slack.com/services/T/B/x", "HTTPS://hooks.slack.com/services/T/B/x"])
def test_https_or_loopback_http_is_accepted(url: str) -> None:
    assert parse_url("CAO_SLACK_WEBHOOK_URL", url).reveal() == url


def test_missing_url_with_other_settings_is_an_error_naming_the_url(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config({"CAO_SLACK_EVENTS": "all"}, _file(tmp_path))
    assert caught.value.setting == "CAO_SLACK_WEBHOOK_URL"
    with pytest.raises(ConfigError) as caught:
        load_config({}, _file(tmp_path, "notify:\n  slack:\n    retries: 1\n"))
    assert caught.value.setting == "CAO_SLACK_WEBHOOK_URL"


def test_an_unknown_setting_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config({"CAO_SLACK_WEBHOOK_URL": URL, "CAO_SLACK_TIMEOUT": "3"}, _file(tmp_path))
    assert caught.value.setting == "CAO_SLACK_TIMEOUT"
    assert "CAO_SLACK_TIMEOUT_SECONDS" in str(caught.value)
    # A mistyped name for the URL is reported as what it is, without its value.
    with pytest.raises(ConfigError) as caught:
        load_config({"CAO_SLACK_WEBHOOK": URL}, _file(tmp_path))
    assert caught.value.setting == "CAO_SLACK_WEBHOOK"
    assert TOKEN not in str(caught.value)


def test_file_errors_name_the_key_and_never_quote_the_file(tmp_path: Path) -> None:
    path = _file(tmp_path, f"notify:\n  slack:\n    webhook_url: {URL}\n    timeout_seconds: [1\n")
    with pytest.raises(ConfigError) as caught:
        load_config({}, path)
    assert caught.value.setting == f"config file {path}" and "line" in str(caught.value)
    assert TOKEN not in str(caught.value)

    path = _file(tmp_path, f"notify:\n  slack:\n    webhook_url: {URL}\n    timout_seconds: 1\n")
    with pytest.raises(ConfigError) as caught:
        load_config({}, path)
    assert caught.value.setting == f"notify.slack.timout_seconds in {path}"

    path = _file(tmp_path, f"notify:\n  slack:\n    webhook_url: {URL}\n    queue_size: lots\n")
    with pytest.raises(ConfigError) as caught:
        load_config({}, path)
    assert caught.value.setting == f"notify.slack.queue_size in {path}"

    for text in ("- a\n- b\n", "notify: [1]\n", "notify:\n  slack: yes\n"):
        with pytest.raises(ConfigError):
            load_config({}, _file(tmp_path, text))


def test_secrets_never_show_in_reprs() -> None:
    config = SlackConfig(webhook_url=Secret(URL))
    for text in (repr(config), str(config), repr(config.webhook_url), str(config.webhook_url), f"{config}"):
        assert TOKEN not in text


# -- properties over arbitrary input ----------------------------------------------------------------------

anything = st.one_of(st.text(max_size=30), st.integers(), st.floats(), st.booleans(), st.none(),
                     st.lists(st.text(max_size=10), max_size=3))


@given(anything)
def test_seconds_are_in_range_or_a_named_error(value: object) -> None:
    try:
        seconds = parse_seconds("S", value, low=0, high=60)
    except ConfigError as exc:
        assert exc.setting == "S" and str(exc).startswith("S ")
    else:
        assert 0 < seconds <= 60


@given(anything)
def test_counts_are_in_range_or_a_named_error(value: object) -> None:
    try:
        number = parse_int("N", value, low=1, high=100)
    except ConfigError as exc:
        assert exc.setting == "N"
    else:
        assert isinstance(number, int) and 1 <= number <= 100


@given(st.one_of(st.text(max_size=60),
                 st.lists(st.sampled_from([*EVENT_KINDS, "all", "x", " "]), max_size=5)))
def test_events_are_known_kinds_or_a_named_error(value: object) -> None:
    try:
        kinds = parse_events("E", value)
    except ConfigError as exc:
        assert exc.setting == "E"
    else:
        assert kinds and kinds <= set(EVENT_KINDS)


@given(scheme=st.sampled_from(["http", "https", "ftp", "", "javascript"]), host=st.text(max_size=20),
       token=st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_", min_size=12, max_size=40))
def test_url_errors_never_contain_the_secret(scheme: str, host: str, token: str) -> None:
    url = f"{scheme}://{host}/api/webhooks/1/{token}"
    try:
        parse_url("U", url)
    except ConfigError as exc:
        assert token not in str(exc)
