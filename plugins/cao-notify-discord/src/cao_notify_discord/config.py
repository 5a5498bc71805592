"""Settings of the Discord notifier, from cao's settings (``CAO_DISCORD_*``) or the cao config file.

Every setting has a name in cao's settings (the environment, or ``Kernel(settings=...)``) and a key in
the ``notify.discord`` section of ``<cao home>/config.yaml``; a non-empty setting wins over the file.
Values are checked once, at start-up: a bad one raises ``ConfigError`` naming the setting, and the
plugin stays off. The webhook URL is a secret: it is kept in a ``Secret`` and never written into an
error message.
"""

from __future__ import annotations

import ipaddress
import math
import re
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .events import EVENT_KINDS

SERVICE = "discord"
SECTION = f"notify.{SERVICE}"
PREFIX = "CAO_DISCORD_"

#: file key -> (setting name, default)
SETTINGS: dict[str, tuple[str, Any]] = {
    "webhook_url": (f"{PREFIX}WEBHOOK_URL", None),
    "events": (f"{PREFIX}EVENTS", "all"),
    "timeout_seconds": (f"{PREFIX}TIMEOUT_SECONDS", 5.0),
    "queue_size": (f"{PREFIX}QUEUE_SIZE", 256),
    "retries": (f"{PREFIX}RETRIES", 3),
    "flush_seconds": (f"{PREFIX}FLUSH_SECONDS", 2.0),
    "username": (f"{PREFIX}USERNAME", "cao"),
}

LOOPBACK_NAMES = frozenset({"localhost"})
USERNAME_MAX = 80
# Discord refuses webhook names containing these words.
USERNAME_FORBIDDEN = ("discord", "clyde")


class ConfigError(ValueError):
    """A setting is present but unusable. ``setting`` names it as the user wrote it."""

    def __init__(self, setting: str, problem: str) -> None:
        self.setting = setting
        super().__init__(f"{setting} {problem}")


class Secret:
    """A string that never shows itself in a repr, a str or a log line; ``reveal()`` returns it."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('********')"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)


@dataclass(frozen=True, kw_only=True)
class DiscordConfig:
    """A checked configuration. Times are seconds."""

    webhook_url: Secret
    events: frozenset[str] = field(default_factory=lambda: frozenset(EVENT_KINDS))
    timeout_seconds: float = 5.0
    queue_size: int = 256
    retries: int = 3
    flush_seconds: float = 2.0
    username: str = "cao"


# -- one value at a time ------------------------------------------------------------------------------


def parse_url(name: str, value: Any) -> Secret:
    """An https URL, or http to a loopback address (a local relay, or a test)."""
    if not isinstance(value, str):
        raise ConfigError(name, "must be a URL string")
    text = value.strip()
    if not text or any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in text):
        raise ConfigError(name, "must be a single URL without spaces or control characters")
    try:
        parts = urllib.parse.urlsplit(text)
        host = parts.hostname
        parts.port  # noqa: B018 - raises ValueError for a bad port
    except ValueError:
        raise ConfigError(name, "is not a valid URL") from None
    if not host:
        raise ConfigError(name, "must name a host (e.g. https://discord.com/api/webhooks/<id>/<token>)")
    scheme = parts.scheme.lower()
    if scheme == "http" and not _is_loopback(host):
        raise ConfigError(name, "must use https (plain http is allowed only for 127.0.0.1, ::1 or localhost)")
    if scheme not in ("http", "https"):
        raise ConfigError(name, "must be an https URL")
    return Secret(text)


def _is_loopback(host: str) -> bool:
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def parse_seconds(name: str, value: Any, *, low: float, high: float, allow_zero: bool = False) -> float:
    """A number of seconds in ``(low, high]`` (``[0, high]`` with ``allow_zero``)."""
    number = _number(name, value, "a number of seconds")
    if allow_zero and not 0 <= number <= high:
        raise ConfigError(name, f"must be between 0 and {high:g} seconds, got {number:g}")
    if not allow_zero and not low < number <= high:
        raise ConfigError(name, f"must be more than {low:g} and at most {high:g} seconds, got {number:g}")
    return number


def parse_int(name: str, value: Any, *, low: int, high: int) -> int:
    """A whole number in ``[low, high]``."""
    if isinstance(value, bool):
        raise ConfigError(name, "must be a whole number")
    if isinstance(value, int):
        number = value
    elif isinstance(value, str) and re.fullmatch(r"\s*[+-]?\d{1,9}\s*", value):
        number = int(value)
    else:
        raise ConfigError(name, "must be a whole number")
    if not low <= number <= high:
        raise ConfigError(name, f"must be between {low} and {high}, got {number}")
    return number


def parse_events(name: str, value: Any) -> frozenset[str]:
    """Event kinds, comma- or space-separated (or a YAML list); ``all`` (or ``*``) means every kind."""
    if isinstance(value, str):
        items = [part for part in re.split(r"[\s,]+", value) if part]
    elif isinstance(value, (list, tuple)) and all(isinstance(item, str) for item in value):
        items = [item.strip() for item in value if item.strip()]
    else:
        raise ConfigError(name, "must be a comma-separated list of event kinds")
    if not items:
        raise ConfigError(name, f"names no event kind (use 'all' or some of: {', '.join(EVENT_KINDS)})")
    if any(item.lower() in ("all", "*") for item in items):
        return frozenset(EVENT_KINDS)
    unknown = sorted({item for item in items if item not in EVENT_KINDS})
    if unknown:
        shown = ", ".join(repr(item[:40]) for item in unknown[:5])
        raise ConfigError(name, f"has unknown event kind(s) {shown}; known: {', '.join(EVENT_KINDS)}")
    return frozenset(items)


def parse_username(name: str, value: Any) -> str:
    """The name the webhook posts under, within Discord's rules for webhook names."""
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(name, "must be a non-empty name")
    text = value.strip()
    if len(text) > USERNAME_MAX:
        raise ConfigError(name, f"must be at most {USERNAME_MAX} characters, got {len(text)}")
    if any(ord(ch) < 32 for ch in text):
        raise ConfigError(name, "must not contain control characters")
    lowered = text.lower()
    if any(word in lowered for word in USERNAME_FORBIDDEN):
        raise ConfigError(name, "must not contain 'discord' or 'clyde' (Discord refuses such webhook names)")
    return text


def _number(name: str, value: Any, what: str) -> float:
    if isinstance(value, bool):
        raise ConfigError(name, f"must be {what}")
    if isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            raise ConfigError(name, f"must be {what}, got {value[:40]!r}") from None
    else:
        raise ConfigError(name, f"must be {what}")
    if not math.isfinite(number):
        raise ConfigError(name, f"must be {what}, got {number}")
    return number


# -- the whole configuration ----------------------------------------------------------------------------


def read_section(path: Path) -> dict[str, Any] | None:
    """The ``notify.discord`` section of the config file, or None when the file or section is absent."""
    import yaml

    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"config file {path}", f"cannot be read ({type(exc).__name__})") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        # Never show yaml's own message: it quotes the offending line, which may hold the webhook URL.
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"config file {path}", f"is not valid YAML{where}") from None
    if data is None:
        return None
    if not isinstance(data, dict):
        raise ConfigError(f"config file {path}", "must hold a mapping at the top level")
    notify = data.get("notify")
    if notify is None:
        return None
    if not isinstance(notify, dict):
        raise ConfigError(f"notify in {path}", "must be a mapping")
    section = notify.get(SERVICE)
    if section is None:
        return None
    if not isinstance(section, dict):
        raise ConfigError(f"{SECTION} in {path}", "must be a mapping")
    unknown = sorted(str(key) for key in section if key not in SETTINGS)
    if unknown:
        raise ConfigError(f"{SECTION}.{unknown[0][:40]} in {path}",
                          f"is not a setting of this plugin (known: {', '.join(SETTINGS)})")
    return section


def is_mentioned(settings: Mapping[str, Any], section: Mapping[str, Any] | None) -> bool:
    """True when the user configured anything for this plugin (so a missing URL is a mistake)."""
    return section is not None or any(
        key.startswith(PREFIX) and value not in (None, "") for key, value in settings.items()
    )


def load_config(settings: Mapping[str, Any], config_file: Path) -> DiscordConfig | None:
    """The checked configuration; None when nothing at all is configured.

    :raises ConfigError: a value is malformed, or other settings are present but the URL is missing.
    """
    known = {setting for setting, _default in SETTINGS.values()}
    # A mistyped name would otherwise be ignored without a word.
    unknown = sorted(key for key, value in settings.items()
                     if key.startswith(PREFIX) and key not in known and value not in (None, ""))
    if unknown:
        raise ConfigError(unknown[0], f"is not a setting of this plugin (known: {', '.join(sorted(known))})")
    section = read_section(config_file)
    values: dict[str, tuple[str, Any]] = {}
    for key, (setting, _default) in SETTINGS.items():
        raw = settings.get(setting)
        if raw not in (None, ""):
            values[key] = (setting, raw)
        elif section is not None and section.get(key) is not None:
            values[key] = (f"{SECTION}.{key} in {config_file}", section[key])
    if "webhook_url" not in values:
        if is_mentioned(settings, section):
            url_setting = SETTINGS["webhook_url"][0]
            raise ConfigError(url_setting, f"is not set (nor {SECTION}.webhook_url in {config_file}), "
                                           "but other Discord settings are")
        return None

    def get(key: str, parse: Any, **limits: Any) -> Any:
        # Defaults go through the same parser, so they obey the same rules.
        name, raw = values.get(key, SETTINGS[key])
        return parse(name, raw, **limits)

    return DiscordConfig(
        webhook_url=parse_url(*values["webhook_url"]),
        events=get("events", parse_events),
        timeout_seconds=get("timeout_seconds", parse_seconds, low=0, high=60),
        queue_size=get("queue_size", parse_int, low=1, high=100_000),
        retries=get("retries", parse_int, low=0, high=10),
        flush_seconds=get("flush_seconds", parse_seconds, low=0, high=30, allow_zero=True),
        username=get("username", parse_username),
    )
