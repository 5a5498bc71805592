"""Configuration: settings, the config file, precedence, and errors that name the setting."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cao_notify_discord.config import (
    ConfigError,
    DiscordConfig,
    Secret,
    load_config,
    parse_events,
    parse_int,
    parse_seconds,
    parse_url,
)
from cao_notify_discord.events import EVENT_KINDS

URL = "https://discord.com/api/webhooks/123/s3cr3t-t0ken"
TOKEN = "s3cr3t-t0ken"


def _file(tmp_path: Path, text: str | None = None) -> Path:
    path = tmp_path / "config.yaml"
    if text is not None:
        path.write_text(text, encoding="utf-8")
    return path


def test_nothing_configured_is_none(tmp_path: Path) -> None:
    assert load_config({}, _file(tmp_path)) is None
    assert load_config({"CAO_DISCORD_WEBHOOK_URL": ""}, _file(tmp_path)) is None


def test_url_alone_gives_the_defaults(tmp_path: Path) -> None:
    config = load_config({"CAO_DISCORD_WEBHOOK_URL": URL}, _file(tmp_path))
    assert config == DiscordConfig(webhook_url=Secret(URL))
    assert config.events == frozenset(EVENT_KINDS)
    assert (config.timeout_seconds, config.queue_size, config.retries) == (5.0, 256, 3)
    assert (config.flush_seconds, config.username) == (2.0, "cao")


def test_every_setting_from_the_environment(tmp_path: Path) -> None:
    config = load_config({
        "CAO_DISCORD_WEBHOOK_URL": f"  {URL}\n",
        "CAO_DISCORD_EVENTS": "session_created, handoff_finished",
        "CAO_DISCORD_TIMEOUT_SECONDS": "2.5",
        "CAO_DISCORD_QUEUE_SIZE": "10",
        "CAO_DISCORD_RETRIES": "0",
        "CAO_DISCORD_FLUSH_SECONDS": "0",
        "CAO_DISCORD_USERNAME": "build bot",
    }, _file(tmp_path))
    assert config.webhook_url.reveal() == URL
    assert config.events == {"session_created", "handoff_finished"}
    assert (config.timeout_seconds, config.queue_size, config.retries) == (2.5, 10, 0)
    assert (config.flush_seconds, config.username) == (0.0, "build bot")


def test_the_config_file_section_and_precedence(tmp_path: Path) -> None:
    path = _file(tmp_path, f"""
notify:
  discord:
    webhook_url: {URL}
    events: [session_created, waiting_user_answer]
    timeout_seconds: 3
    queue_size: 50
    username: nightly
  slack:
    webhook_url: https://hooks.slack.com/services/T/B/x
""")
    config = load_config({}, path)
    assert config.webhook_url.reveal() == URL
    assert config.events == {"session_created", "waiting_user_answer"}
    assert (config.timeout_seconds, config.queue_size, config.username) == (3.0, 50, "nightly")
    # A non-empty setting wins over the file, key by key.
    config = load_config({"CAO_DISCORD_QUEUE_SIZE": "7", "CAO_DISCORD_USERNAME": ""}, path)
    assert (config.queue_size, config.username, config.timeout_seconds) == (7, "nightly", 3.0)


def test_a_file_without_a_discord_section_configures_nothing(tmp_path: Path) -> None:
    assert load_config({}, _file(tmp_path, "notify:\n  slack: {}\n")) is None
    assert load_config({}, _file(tmp_path, "")) is None
    assert load_config({}, _file(tmp_path, "other: 1\n")) is None


@pytest.mark.parametrize(("settings", "named", "says"), [
    ({"CAO_DISCORD_TIMEOUT_SECONDS": "soon"}, "CAO_DISCORD_TIMEOUT_SECONDS", "number of seconds"),
    ({"CAO_DISCORD_TIMEOUT_SECONDS": "0"}, "CAO_DISCORD_TIMEOUT_SECONDS", "more than 0 and at most 60"),
    ({"CAO_DISCORD_TIMEOUT_SECONDS": "nan"}, "CAO_DISCORD_TIMEOUT_SECONDS", "number of seconds"),
    ({"CAO_DISCORD_QUEUE_SIZE": "0"}, "CAO_DISCORD_QUEUE_SIZE", "between 1 and 100000"),
    ({"CAO_DISCORD_QUEUE_SIZE": "1.5"}, "CAO_DISCORD_QUEUE_SIZE", "whole number"),
    ({"CAO_DISCORD_RETRIES": "11"}, "CAO_DISCORD_RETRIES", "between 0 and 10"),
    ({"CAO_DISCORD_FLUSH_SECONDS": "-1"}, "CAO_DISCORD_FLUSH_SECONDS", "between 0 and 30"),
    ({"CAO_DISCORD_EVENTS": "session_created,lunch"}, "CAO_DISCORD_EVENTS", "'lunch'"),
    ({"CAO_DISCORD_EVENTS": ",,"}, "CAO_DISCORD_EVENTS", "names no event kind"),
    ({"CAO_DISCORD_USERNAME": "Discord Bot"}, "CAO_DISCORD_USERNAME", "must not contain"),
    ({"CAO_DISCORD_USERNAME": "x" * 81}, "CAO_DISCORD_USERNAME", "at most 80"),
])
def test_a_malformed_setting_is_named(tmp_path: Path, settings: dict, named: str, says: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config({"CAO_DISCORD_WEBHOOK_URL": URL, **settings}, _file(tmp_path))
    assert caught.value.setting == named
    assert str(caught.value).startswith(named) and says in str(caught.value)
    assert TOKEN not in str(caught.value)


@pytest.mark.parametrize("url", [
    f"http://discord.com/api/webhooks/123/{TOKEN}",
    f"ftp://discord.com/{TOKEN}",
    f"https:///{TOKEN}",
    f"https://discord.com/a {TOKEN}",
    f"https://discord.com:99999/{TOKEN}",
    f"{TOKEN}",
])
def test_a_bad_url_is_named_without_showing_it(tmp_path: Path, url: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config({"CAO_DISCORD_WEBHOOK_URL": url}, _file(tmp_path))
    assert caught.value.setting == "CAO_DISCORD_WEBHOOK_URL"
    assert TOKEN not in str(caught.value)


@pytest.mark.parametrize("url", ["http://127.0.0.1:8080/hook", "http://[::1]/hook", "http://localhost/h",
                                 "https://discord.com/api/webhooks/1/x", "HTTPS://discord.com/api/webhooks/1/x"])
def test_https_or_loopback_http_is_accepted(url: str) -> None:
    assert parse_url("CAO_DISCORD_WEBHOOK_URL", url).reveal() == url


def test_missing_url_with_other_settings_is_an_error_naming_the_url(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config({"CAO_DISCORD_EVENTS": "all"}, _file(tmp_path))
    assert caught.value.setting == "CAO_DISCORD_WEBHOOK_URL"
    with pytest.raises(ConfigError) as caught:
        load_config({}, _file(tmp_path, "notify:\n  discord:\n    username: ci\n"))
    assert caught.value.setting == "CAO_DISCORD_WEBHOOK_URL"


def test_an_unknown_setting_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config({"CAO_DISCORD_WEBHOOK_URL": URL, "CAO_DISCORD_TIMEOUT": "3"}, _file(tmp_path))
    assert caught.value.setting == "CAO_DISCORD_TIMEOUT"
    assert "CAO_DISCORD_TIMEOUT_SECONDS" in str(caught.value)
    # A mistyped name for the URL is reported as what it is, without its value.
    with pytest.raises(ConfigError) as caught:
        load_config({"CAO_DISCORD_WEBHOOK": URL}, _file(tmp_path))
    assert caught.value.setting == "CAO_DISCORD_WEBHOOK"
    assert TOKEN not in str(caught.value)


def test_file_errors_name_the_key_and_never_quote_the_file(tmp_path: Path) -> None:
    path = _file(tmp_path, f"notify:\n  discord:\n    webhook_url: {URL}\n    timeout_seconds: [1\n")
    with pytest.raises(ConfigError) as caught:
        load_config({}, path)
    assert caught.value.setting == f"config file {path}" and "line" in str(caught.value)
    assert TOKEN not in str(caught.value)

    path = _file(tmp_path, f"notify:\n  discord:\n    webhook_url: {URL}\n    timout_seconds: 1\n")
    with pytest.raises(ConfigError) as caught:
        load_config({}, path)
    assert caught.value.setting == f"notify.discord.timout_seconds in {path}"

    path = _file(tmp_path, f"notify:\n  discord:\n    webhook_url: {URL}\n    queue_size: lots\n")
    with pytest.raises(ConfigError) as caught:
        load_config({}, path)
    assert caught.value.setting == f"notify.discord.queue_size in {path}"

    for text in ("- a\n- b\n", "notify: [1]\n", "notify:\n  discord: yes\n"):
        with pytest.raises(ConfigError):
            load_config({}, _file(tmp_path, text))


def test_secrets_never_show_in_reprs() -> None:
    config = DiscordConfig(webhook_url=Secret(URL))
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
def test_url_errors_never_contain_the_token(scheme: str, host: str, token: str) -> None:
    url = f"{scheme}://{host}/api/webhooks/1/{token}"
    try:
        parse_url("U", url)
    except ConfigError as exc:
        assert token not in str(exc)
