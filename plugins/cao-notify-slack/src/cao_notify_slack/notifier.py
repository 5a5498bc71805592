"""Start-up and shut-down of the Slack notifier: read the configuration, run the sender.

Loaded by ``cao_startup`` only, so ``cao --help`` never imports it.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .config import SECTION, SETTINGS, ConfigError, SlackConfig, load_config
from .events import describe
from .payload import build_payload
from .sender import WebhookSender

log = logging.getLogger("cao_notify_slack")

NAME = "cao-notify-slack"
CONFIG_FILE = "config.yaml"
# The kernel's default home, for a kernel object that does not say where its home is.
DEFAULT_HOME = "~/.aws/cli-agent-orchestrator"


class Notifier:
    """An active plugin's state: which event kinds it forwards and the sender that posts them."""

    def __init__(self, config: SlackConfig, sender: WebhookSender) -> None:
        self.config = config
        self.sender = sender

    def __repr__(self) -> str:
        return f"<Notifier slack events={len(self.config.events)} {self.sender!r}>"

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
        log.info("%s: stopped; %d notification(s) sent, %d dropped", NAME, stats["sent"], dropped)
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


def render(item: tuple[str, float, dict[str, Any]]) -> dict[str, Any]:
    """The JSON body for one queued event (runs on the sender thread)."""
    kind, at, args = item
    return build_payload(describe(kind, args, at))


def start(kernel: Any) -> Notifier | None:
    """A running notifier for ``kernel``'s configuration, or None (after one log line) when off."""
    settings = kernel_settings(kernel)
    path = config_path(kernel, settings)
    try:
        config = load_config(settings, path)
    except ConfigError as exc:
        log.warning("%s is disabled: %s", NAME, exc)
        return None
    if config is None:
        log.info("%s is installed but not configured (set %s, or %s.webhook_url in %s); it stays off",
                 NAME, SETTINGS["webhook_url"][0], SECTION, path)
        return None
    sender = WebhookSender(
        url=config.webhook_url, render=render, queue_size=config.queue_size,
        timeout=config.timeout_seconds, retries=config.retries, name=NAME,
    )
    sender.start()
    log.info("%s: forwarding %d event kind(s) to a Slack webhook", NAME, len(config.events))
    return Notifier(config, sender)
