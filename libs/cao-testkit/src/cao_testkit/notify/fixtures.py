"""pytest fixtures for a notifier's tests: a fake webhook on 127.0.0.1 and real kernels running a fresh
instance of the notifier's plugin.

Import them into the ``conftest.py`` next to the tests, and say which notifier they run with a
``notify_target`` fixture::

    from cao_testkit.notify.fixtures import NotifyTarget, config_file, start_plugin, until, webhook

    @pytest.fixture
    def notify_target() -> NotifyTarget:
        return NotifyTarget(plugin=DiscordPlugin, name="notify_discord", webhook=FakeWebhook)

The kernel comes from ``cao_kernel.testing`` (``-p cao_kernel.testing``), whose autouse ``cao_home``
also keeps the developer's own ``CAO_*`` settings (a real webhook URL) away from every test.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..waiting import wait_until
from .webhook import FakeWebhook

if TYPE_CHECKING:
    from cao_notify_core.plugin import NotifierPlugin


@dataclass(frozen=True, kw_only=True)
class NotifyTarget:
    """The notifier under test: its plugin class, the name it registers under, its fake webhook."""

    plugin: type[NotifierPlugin]
    name: str
    webhook: type[FakeWebhook]


@pytest.fixture
def webhook(notify_target: NotifyTarget) -> Iterator[FakeWebhook]:
    with notify_target.webhook() as hook:
        yield hook


@pytest.fixture
def start_plugin(notify_target: NotifyTarget, webhook: FakeWebhook,
                 cao_home: Any) -> Iterator[Callable[..., tuple[Any, NotifierPlugin]]]:
    """``start_plugin(**settings)``: a real Kernel (not started: no tmux) with a fresh plugin registered
    through ``kernel.register_plugin`` and started through ``cao_startup``. Shut down after the test,
    before the fake webhook closes."""
    from cao_kernel.kernel import Kernel

    started: list[tuple[Any, NotifierPlugin, str]] = []

    def start(**settings: Any) -> tuple[Any, NotifierPlugin]:
        kernel = Kernel(load_entrypoints=False, home=cao_home, settings=settings)
        plugin = notify_target.plugin()
        name = kernel.register_plugin(plugin, name=notify_target.name)
        kernel.hooks.startup(kernel)
        started.append((kernel, plugin, name))
        return kernel, plugin

    yield start
    for kernel, plugin, name in started:
        kernel.hooks.shutdown(kernel)
        kernel.unregister_plugin(name)
        assert plugin.notifier is None


@pytest.fixture
def config_file(tmp_path: Path) -> Callable[[str | None], Path]:
    """``config_file(text=None)``: the path of a ``config.yaml`` in the test's own folder, holding
    ``text`` when given (absent otherwise)."""

    def write(text: str | None = None) -> Path:
        path = tmp_path / "config.yaml"
        if text is not None:
            path.write_text(text, encoding="utf-8")
        return path

    return write


@pytest.fixture
def until() -> Callable[..., None]:
    """``until(predicate, timeout=5)``: poll until true, else fail."""
    return wait_until
