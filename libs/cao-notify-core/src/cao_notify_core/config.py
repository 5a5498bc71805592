"""A notifier's settings, from cao's settings (``CAO_<SERVICE>_*``) or the cao config file.

Every setting has a name in cao's settings (the environment, or ``Kernel(settings=...)``) and a key in
the ``notify.<service>`` section of ``<cao home>/config.yaml``; a non-empty setting wins over the file.
Values are checked once, at start-up: a bad one raises ``ConfigError`` naming the setting, and the
plugin stays off. The webhook URL is a secret: it is kept in a ``Secret`` and never written into an
error message.

The settings every notifier has are here (``COMMON_SETTINGS``); a service adds its own through
``Service.extra_settings`` and a ``NotifyConfig`` subclass holding them.
"""

from __future__ import annotations

import ipaddress
import math
import re
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .events import EVENT_KINDS
from .redact import Secret

if TYPE_CHECKING:
    from .service import Service

#: file key -> default, for the settings of every notifier. The setting's name is the service's
#: prefix plus the key in capitals (``webhook_url`` -> ``CAO_DISCORD_WEBHOOK_URL``).
COMMON_SETTINGS: dict[str, Any] = {
    "webhook_url": None,
    "events": "all",
    "timeout_seconds": 5.0,
    "queue_size": 256,
    "retries": 3,
    "flush_seconds": 2.0,
    "console_url": "",
}

LOOPBACK_NAMES = frozenset({"localhost"})


class ConfigError(ValueError):
    """A setting is present but unusable. ``setting`` names it as the user wrote it."""

    def __init__(self, setting: str, problem: str) -> None:
        self.setting = setting
        super().__init__(f"{setting} {problem}")


@dataclass(frozen=True, kw_only=True)
class NotifyConfig:
    """A checked configuration. Times are seconds. A service with settings of its own subclasses it."""

    webhook_url: Secret
    events: frozenset[str] = field(default_factory=lambda: frozenset(EVENT_KINDS))
    timeout_seconds: float = 5.0
    queue_size: int = 256
    retries: int = 3
    flush_seconds: float = 2.0
    #: The web console's address as the readers reach it; a prompt's post then links to its terminal.
    console_url: str = ""


# -- one value at a time ------------------------------------------------------------------------------


def parse_url(name: str, value: Any, *, example: str = "https://hooks.example.com/<token>") -> Secret:
    """An https URL, or http to a loopback address (a local relay, or a test); ``example`` shows the
    user what a webhook URL of the service looks like."""
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
        raise ConfigError(name, f"must name a host (like {example})")
    scheme = parts.scheme.lower()
    if scheme == "http" and not _is_loopback(host):
        raise ConfigError(name, "must use https (plain http is allowed only for 127.0.0.1, ::1 or localhost)")
    if scheme not in ("http", "https"):
        raise ConfigError(name, "must be an https URL")
    return Secret(text)


def parse_console_url(name: str, value: Any) -> str:
    """The web console's address (http or https, any host: it is a link for people, not a request
    cao makes), or '' for none."""
    if value in (None, ""):
        return ""
    if not isinstance(value, str):
        raise ConfigError(name, "must be a URL string")
    text = value.strip()
    if any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in text):
        raise ConfigError(name, "must be a single URL without spaces or control characters")
    try:
        parts = urllib.parse.urlsplit(text)
        parts.port  # noqa: B018 - raises ValueError for a bad port
    except ValueError:
        raise ConfigError(name, "is not a valid URL") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise ConfigError(name, "must be an http or https URL naming a host (like http://127.0.0.1:9889)")
    return text


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


def read_section(service: Service, path: Path) -> dict[str, Any] | None:
    """The service's ``notify.<service>`` section of the config file, or None when the file or the
    section is absent."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"config file {path}", f"cannot be read ({type(exc).__name__})") from None
    # Only now: with no config file (the usual case) a server's start-up never pays for loading yaml.
    import yaml

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
    section = notify.get(service.key)
    if section is None:
        return None
    if not isinstance(section, dict):
        raise ConfigError(f"{service.section} in {path}", "must be a mapping")
    known = service.settings
    unknown = sorted(str(key) for key in section if key not in known)
    if unknown:
        raise ConfigError(f"{service.section}.{unknown[0][:40]} in {path}",
                          f"is not a setting of this plugin (known: {', '.join(known)})")
    return section


def is_mentioned(service: Service, settings: Mapping[str, Any], section: Mapping[str, Any] | None) -> bool:
    """True when the user configured anything for this service (so a missing URL is a mistake)."""
    return section is not None or any(
        key.startswith(service.prefix) and value not in (None, "") for key, value in settings.items()
    )


def load_config(service: Service, settings: Mapping[str, Any], config_file: Path) -> NotifyConfig | None:
    """The checked configuration of ``service`` (its ``config_class``); None when nothing at all is
    configured.

    :raises ConfigError: a value is malformed, or other settings are present but the URL is missing.
    """
    table = service.settings
    known = {setting for setting, _default in table.values()}
    # A mistyped name would otherwise be ignored without a word.
    unknown = sorted(key for key, value in settings.items()
                     if key.startswith(service.prefix) and key not in known and value not in (None, ""))
    if unknown:
        raise ConfigError(unknown[0], f"is not a setting of this plugin (known: {', '.join(sorted(known))})")
    section = read_section(service, config_file)
    values: dict[str, tuple[str, Any]] = {}
    for key, (setting, _default) in table.items():
        raw = settings.get(setting)
        if raw not in (None, ""):
            values[key] = (setting, raw)
        elif section is not None and section.get(key) is not None:
            values[key] = (f"{service.section}.{key} in {config_file}", section[key])
    if "webhook_url" not in values:
        if is_mentioned(service, settings, section):
            raise ConfigError(table["webhook_url"][0],
                              f"is not set (nor {service.section}.webhook_url in {config_file}), "
                              f"but other {service.title} settings are")
        return None

    def get(key: str, parse: Any, **limits: Any) -> Any:
        # Defaults go through the same parser, so they obey the same rules.
        name, raw = values.get(key, table[key])
        return parse(name, raw, **limits)

    checked: dict[str, Any] = {
        "webhook_url": parse_url(*values["webhook_url"], example=service.url_example),
        "events": get("events", parse_events),
        "timeout_seconds": get("timeout_seconds", parse_seconds, low=0, high=60),
        "queue_size": get("queue_size", parse_int, low=1, high=100_000),
        "retries": get("retries", parse_int, low=0, high=10),
        "flush_seconds": get("flush_seconds", parse_seconds, low=0, high=30, allow_zero=True),
        "console_url": get("console_url", parse_console_url),
    }
    for key, (_default, parse) in service.extra_settings.items():
        checked[key] = get(key, parse)
    return service.config_class(**checked)
