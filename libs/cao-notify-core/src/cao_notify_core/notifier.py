"""Start-up and shut-down of a notifier: read the configuration, run the sender.

Loaded by ``cao_startup`` only, so ``cao --help`` never imports it.
"""

from __future__ import annotations

import functools
import logging
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .config import ConfigError, NotifyConfig, load_config
from .events import describe
from .sender import WebhookSender
from .service import Service

CONFIG_FILE = "config.yaml"
# The kernel's default home, for a kernel object that does not say where its home is.
DEFAULT_HOME = "~/.aws/cli-agent-orchestrator"


class Notifier:
    """An active plugin's state: which event kinds it forwards and the sender that posts them."""

    def __init__(self, service: Service, config: NotifyConfig, sender: WebhookSender) -> None:
        self.service = service
        self.config = config
        self.sender = sender

    def __repr__(self) -> str:
        return f"<Notifier {self.service.key} events={len(self.config.events)} {self.sender!r}>"

    def submit(self, kind: str, args: dict[str, Any]) -> None:
        """Called on the event path: queue the event if its kind is wanted. Never blocks."""
        if kind in self.config.events:
            self.sender.submit((kind, time.time(), args))

    def stats(self) -> dict[str, int]:
        return self.sender.stats()

    def close(self) -> dict[str, int]:
        """Flush within ``flush_seconds`` and stop; logs a summary line."""
        stats = self.sender.close(self.config.flush_seconds)
        dropped = sum(v for k, v in stats.items() if k.startswith("dropped_"))
        logging.getLogger(self.service.logger).info("%s: stopped; %d notification(s) sent, %d dropped",
                                                    self.service.distribution, stats["sent"], dropped)
        return stats


def kernel_settings(kernel: Any) -> Mapping[str, Any]:
    """The kernel's ``CAO_*`` settings (environment plus overrides); the environment if it has none."""
    settings = getattr(kernel, "settings", None)
    if isinstance(settings, Mapping):
        return settings
    return {k: v for k, v in os.environ.items() if k.startswith("CAO_")}


def config_path(kernel: Any, settings: Mapping[str, Any]) -> Path:
    """``<cao home>/config.yaml``: the kernel's home, else ``CAO_HOME_DIR``, else the default."""
    root = getattr(getattr(kernel, "home", None), "root", None)
    if root is None:
        root = settings.get("CAO_HOME_DIR") or DEFAULT_HOME
    return Path(str(root)).expanduser() / CONFIG_FILE


def render(service: Service, config: NotifyConfig, item: tuple[str, float, dict[str, Any]]) -> dict[str, Any]:
    """The JSON body for one queued event (runs on the sender thread)."""
    kind, at, args = item
    return service.render(config, describe(kind, args, at, console_url=config.console_url))


def start(service: Service, kernel: Any) -> Notifier | None:
    """A running notifier for ``kernel``'s configuration, or None (after one log line) when off."""
    log = logging.getLogger(service.logger)
    settings = kernel_settings(kernel)
    path = config_path(kernel, settings)
    try:
        config = load_config(service, settings, path)
    except ConfigError as exc:
        log.warning("%s is disabled: %s", service.distribution, exc)
        return None
    if config is None:
        log.info("%s is installed but not configured (set %s, or %s.webhook_url in %s); it stays off",
                 service.distribution, service.settings["webhook_url"][0], service.section, path)
        return None
    sender = WebhookSender(
        url=config.webhook_url, render=functools.partial(render, service, config),
        queue_size=config.queue_size, timeout=config.timeout_seconds, retries=config.retries, service=service,
    )
    sender.start()
    log.info("%s: forwarding %d event kind(s) to a %s webhook", service.distribution, len(config.events),
             service.title)
    return Notifier(service, config, sender)
