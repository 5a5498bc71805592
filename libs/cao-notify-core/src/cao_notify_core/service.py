"""``Service``: everything that makes a notifier post to one chat service rather than another.

A notifier package builds one ``Service`` (its names, its extra settings, how it renders a notice, how
its 429s say how long to wait) and hands it to the shared machinery: configuration, the sender thread,
the observer plugin.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from . import ratelimit
from .config import COMMON_SETTINGS, NotifyConfig
from .events import Notice

#: ``parse(setting name, raw value) -> checked value``; raises ``ConfigError`` naming the setting.
Parser = Callable[[str, Any], Any]


@dataclass(frozen=True, kw_only=True)
class Service:
    """One chat service a notifier posts to.

    :param key: lower-case name: the config file section is ``notify.<key>``, the settings are
        ``CAO_<KEY>_*``.
    :param title: the service's own name, for log lines and errors ("Discord").
    :param distribution: the notifier's distribution: it names the log lines, the sender thread and the
        ``User-Agent``; its module name (``-`` as ``_``) is the logger's name.
    :param url_example: what a webhook URL of the service looks like, shown when one names no host.
    :param render: the JSON body to post for a notice; runs on the sender thread.
    :param config_class: the checked configuration; a subclass of ``NotifyConfig`` when the service
        has ``extra_settings``.
    :param extra_settings: file key -> ``(default, parser)`` for the service's own settings; each
        becomes a field of ``config_class``.
    :param retry_after: seconds to wait after a 429, from its headers and body.
    :param pause_after: seconds to hold the next post after a successful one, from its headers; None
        when the service says nothing about it.
    """

    key: str
    title: str
    distribution: str
    url_example: str
    render: Callable[[Any, Notice], dict[str, Any]]
    config_class: type[NotifyConfig] = NotifyConfig
    extra_settings: Mapping[str, tuple[Any, Parser]] = field(default_factory=dict)
    retry_after: Callable[[Mapping[str, str], bytes], float] = ratelimit.retry_after_seconds
    pause_after: Callable[[Mapping[str, str]], float] | None = None

    @property
    def section(self) -> str:
        """The config file section: ``notify.<key>``."""
        return f"notify.{self.key}"

    @property
    def prefix(self) -> str:
        """What the service's setting names start with: ``CAO_<KEY>_``."""
        return f"CAO_{self.key.upper()}_"

    @property
    def logger(self) -> str:
        """The name of the logger the notifier writes to."""
        return self.distribution.replace("-", "_")

    @property
    def settings(self) -> dict[str, tuple[str, Any]]:
        """file key -> (setting name, default), the common settings first."""
        defaults = {**COMMON_SETTINGS, **{key: default for key, (default, _) in self.extra_settings.items()}}
        return {key: (f"{self.prefix}{key.upper()}", default) for key, default in defaults.items()}

    def user_agent(self) -> str:
        """``<distribution>/<installed version>``."""
        from importlib.metadata import PackageNotFoundError, version

        try:
            return f"{self.distribution}/{version(self.distribution)}"
        except PackageNotFoundError:
            return f"{self.distribution}/0"
