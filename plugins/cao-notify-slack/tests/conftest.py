"""Fixtures: a fake webhook on 127.0.0.1 and real kernels running a fresh ``SlackPlugin``."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from cao_notify_slack.plugin import SlackPlugin
from cao_notify_slack.testing import FakeWebhook


@pytest.fixture(autouse=True)
def _no_slack_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    # The user's own CAO_SLACK_* must never reach a test kernel (and never a real webhook).
    for name in list(os.environ):
        if name.startswith("CAO_SLACK_"):
            monkeypatch.delenv(name)


@pytest.fixture
def webhook() -> Iterator[FakeWebhook]:
    with FakeWebhook() as hook:
        yield hook


@pytest.fixture
def start_plugin(webhook: FakeWebhook, cao_home: Any) -> Iterator[Callable[..., tuple[Any, SlackPlugin]]]:
    """``start_plugin(**settings)``: a real Kernel (not started: no tmux) with a fresh plugin registered
    through ``kernel.register_plugin`` and started through ``cao_startup``. Shut down after the test,
    before the fake webhook closes."""
    from cao_kernel.kernel import Kernel

    started: list[tuple[Any, SlackPlugin, str]] = []

    def start(**settings: Any) -> tuple[Any, SlackPlugin]:
        kernel = Kernel(load_entrypoints=False, home=cao_home, settings=settings)
        plugin = SlackPlugin()
        name = kernel.register_plugin(plugin, name="notify_slack")
        kernel.hooks.startup(kernel)
        started.append((kernel, plugin, name))
        return kernel, plugin

    yield start
    for kernel, plugin, name in started:
        kernel.hooks.shutdown(kernel)
        kernel.unregister_plugin(name)
        assert plugin.notifier is None


def wait_until(predicate: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.01)


@pytest.fixture
def until() -> Callable[..., None]:
    """``until(predicate, timeout=5)``: poll until true, else fail."""
    return wait_until
