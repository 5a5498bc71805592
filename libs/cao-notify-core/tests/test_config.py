"""Configuration: settings, the config file, precedence, and errors that name the setting (for each
service), plus properties of the value parsers over arbitrary input."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cao_notify_core.config import (
    ConfigError,
    load_config,
    parse_events,
    parse_int,
    parse_seconds,
    parse_url,
)
from cao_notify_core.events import EVENT_KINDS
from cao_notify_core.redact import Secret

TOKEN = "s3cr3t-t0ken"


def _other(case) -> str:
    # The other notifier's section shares the file and must not disturb this one.
    return "slack" if case.service.key == "discord" else "discord"


def test_nothing_configured_is_none(case, config_file) -> None:
    assert load_config(case.service, {}, config_file()) is None
    assert load_config(case.service, {case.setting("webhook_url"): ""}, config_file()) is None


def test_url_alone_gives_the_defaults(case, config_file) -> None:
    url = case.url(TOKEN)
    config = load_config(case.service, {case.setting("webhook_url"): url}, config_file())
    assert config == case.service.config_class(webhook_url=Secret(url))
    assert config.events == frozenset(EVENT_KINDS)
    assert (config.timeout_seconds, config.queue_size) == (5.0, 256)
    assert (config.retries, config.flush_seconds) == (3, 2.0)


def test_every_setting_from_the_environment(case, config_file) -> None:
    url = case.url(TOKEN)
    config = load_config(case.service, {
        case.setting("webhook_url"): f"  {url}\n",
        case.setting("events"): "session_created, handoff_finished",
        case.setting("timeout_seconds"): "2.5",
        case.setting("queue_size"): "10",
        case.setting("retries"): "0",
        case.setting("flush_seconds"): "0",
    }, config_file())
    assert config.webhook_url.reveal() == url
    assert config.events == {"session_created", "handoff_finished"}
    assert (config.timeout_seconds, config.queue_size) == (2.5, 10)
    assert (config.retries, config.flush_seconds) == (0, 0.0)


def test_the_config_file_section_and_precedence(case, config_file) -> None:
    url = case.url(TOKEN)
    path = config_file(f"""
notify:
  {case.service.key}:
    webhook_url: {url}
    events: [session_created, waiting_user_answer]
    timeout_seconds: 3
    queue_size: 50
    flush_seconds: 1
  {_other(case)}:
    webhook_url: https://hooks.example.com/other/x
""")
    config = load_config(case.service, {}, path)
    assert config.webhook_url.reveal() == url
    assert config.events == {"session_created", "waiting_user_answer"}
    assert (config.timeout_seconds, config.queue_size, config.flush_seconds) == (3.0, 50, 1.0)
    # A non-empty setting wins over the file, key by key.
    config = load_config(case.service, {case.setting("queue_size"): "7", case.setting("flush_seconds"): ""},
                         path)
    assert (config.queue_size, config.flush_seconds, config.timeout_seconds) == (7, 1.0, 3.0)


def test_a_file_without_the_services_section_configures_nothing(case, config_file) -> None:
    assert load_config(case.service, {}, config_file(f"notify:\n  {_other(case)}: {{}}\n")) is None
    assert load_config(case.service, {}, config_file("")) is None
    assert load_config(case.service, {}, config_file("other: 1\n")) is None


@pytest.mark.parametrize(("key", "value", "says"), [
    ("timeout_seconds", "soon", "number of seconds"),
    ("timeout_seconds", "0", "more than 0 and at most 60"),
    ("timeout_seconds", "nan", "number of seconds"),
    ("queue_size", "0", "between 1 and 100000"),
    ("queue_size", "1.5", "whole number"),
    ("retries", "11", "between 0 and 10"),
    ("flush_seconds", "-1", "between 0 and 30"),
    ("events", "session_created,lunch", "'lunch'"),
    ("events", ",,", "names no event kind"),
])
def test_a_malformed_setting_is_named(case, config_file, key: str, value: str, says: str) -> None:
    named = case.setting(key)
    with pytest.raises(ConfigError) as caught:
        load_config(case.service, {case.setting("webhook_url"): case.url(TOKEN), named: value},
                    config_file())
    assert caught.value.setting == named
    assert str(caught.value).startswith(named) and says in str(caught.value)
    assert TOKEN not in str(caught.value)


@pytest.mark.parametrize("shape", [
    "http://{host}/{path}",
    "ftp://{host}/{token}",
    "https:///{token}",
    "https://{host}/a {token}",
    "https://{host}:99999/{token}",
    "{token}",
])
def test_a_bad_url_is_named_without_showing_it(case, config_file, shape: str) -> None:
    https = case.url(TOKEN)
    host, path = https.removeprefix("https://").split("/", 1)
    url = shape.format(host=host, path=path, token=TOKEN)
    with pytest.raises(ConfigError) as caught:
        load_config(case.service, {case.setting("webhook_url"): url}, config_file())
    assert caught.value.setting == case.setting("webhook_url")
    assert TOKEN not in str(caught.value)


@pytest.mark.parametrize("url", ["http://127.0.0.1:8080/hook", "http://[::1]/hook", "http://localhost/h",
                                 "https://hooks.example.com/services/T/B/x",
                                 "HTTPS://hooks.example.com/services/T/B/x"])
def test_https_or_loopback_http_is_accepted(url: str) -> None:
    assert parse_url("CAO_X_WEBHOOK_URL", url).reveal() == url


def test_a_url_without_a_host_shows_what_one_looks_like(case) -> None:
    with pytest.raises(ConfigError, match="must name a host") as caught:
        parse_url(case.setting("webhook_url"), f"https:///{TOKEN}", example=case.service.url_example)
    assert case.service.url_example in str(caught.value)


def test_missing_url_with_other_settings_is_an_error_naming_the_url(case, config_file) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(case.service, {case.setting("events"): "all"}, config_file())
    assert caught.value.setting == case.setting("webhook_url")
    assert f"other {case.service.title} settings" in str(caught.value)
    with pytest.raises(ConfigError) as caught:
        load_config(case.service, {}, config_file(f"notify:\n  {case.service.key}:\n    retries: 1\n"))
    assert caught.value.setting == case.setting("webhook_url")


def test_an_unknown_setting_is_named(case, config_file) -> None:
    url = case.url(TOKEN)
    with pytest.raises(ConfigError) as caught:
        load_config(case.service, {case.setting("webhook_url"): url, case.setting("timeout"): "3"},
                    config_file())
    assert caught.value.setting == case.setting("timeout")
    assert case.setting("timeout_seconds") in str(caught.value)
    # A mistyped name for the URL is reported as what it is, without its value.
    with pytest.raises(ConfigError) as caught:
        load_config(case.service, {case.setting("webhook"): url}, config_file())
    assert caught.value.setting == case.setting("webhook")
    assert TOKEN not in str(caught.value)


def test_file_errors_name_the_key_and_never_quote_the_file(case, config_file) -> None:
    key, url = case.service.key, case.url(TOKEN)
    path = config_file(f"notify:\n  {key}:\n    webhook_url: {url}\n    timeout_seconds: [1\n")
    with pytest.raises(ConfigError) as caught:
        load_config(case.service, {}, path)
    assert caught.value.setting == f"config file {path}" and "line" in str(caught.value)
    assert TOKEN not in str(caught.value)

    path = config_file(f"notify:\n  {key}:\n    webhook_url: {url}\n    timout_seconds: 1\n")
    with pytest.raises(ConfigError) as caught:
        load_config(case.service, {}, path)
    assert caught.value.setting == f"notify.{key}.timout_seconds in {path}"

    path = config_file(f"notify:\n  {key}:\n    webhook_url: {url}\n    queue_size: lots\n")
    with pytest.raises(ConfigError) as caught:
        load_config(case.service, {}, path)
    assert caught.value.setting == f"notify.{key}.queue_size in {path}"

    for text in ("- a\n- b\n", "notify: [1]\n", f"notify:\n  {key}: yes\n"):
        with pytest.raises(ConfigError):
            load_config(case.service, {}, config_file(text))


def test_secrets_never_show_in_reprs(case) -> None:
    config = case.service.config_class(webhook_url=Secret(case.url(TOKEN)))
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
