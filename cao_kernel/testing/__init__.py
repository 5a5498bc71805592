"""pytest plugin for cao and for plugin authors: enable with ``-p cao_kernel.testing``.

Fixtures:

- ``cao_home``: a private cao home folder (``CAO_HOME_DIR`` points at it for the test; autouse).
- ``enabled_plugins``: entry-point names the ``kernel`` fixture loads (default: none). Override it
  in a conftest or with ``@pytest.mark.parametrize`` to opt in.
- ``plugin_manager``: a fresh pluggy manager with cao's hookspecs and nothing registered.
- ``kernel``: a fresh ``Kernel`` that loads only ``enabled_plugins``.
- ``register_plugin``: context manager ``with register_plugin(kernel, obj):`` that always unregisters.

``async def`` tests run in a fresh event loop each.

Besides the fixtures, what a plugin author needs with the contract alone: Hypothesis strategies for
every record (``cao_kernel.testing.strategies``), the inbox store contract (``inbox_contract``), and the
provider conformance kit (``conformance``) with the recorded-screen format it reads (``screens``).
Private tmux servers, scripted model servers, the screen recorder and live-CLI helpers are in the
separate ``cao-testkit`` distribution (``-p cao_testkit``).
This module imports nothing heavy: kernel imports happen inside the fixtures.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# Contract suites shipped here should report failures with pytest's assertion detail.
pytest.register_assert_rewrite("cao_kernel.testing.inbox_contract")


@pytest.fixture(autouse=True)
def cao_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private cao home for each test; the user's real one is never touched."""
    home = tmp_path_factory.mktemp("cao-home")
    # No CAO_* setting of the developer's shell (a webhook URL, a socket, a plugin list) leaks into a test.
    import os

    for name in [n for n in os.environ if n.startswith("CAO_")]:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CAO_HOME_DIR", str(home))
    return home


@pytest.fixture
def enabled_plugins() -> tuple[str, ...]:
    """Entry points the ``kernel`` fixture loads. Empty by default: tests opt in."""
    return ()


@pytest.fixture
def plugin_manager() -> Any:
    from cao_kernel.plugins import create_plugin_manager

    return create_plugin_manager()


@pytest.fixture
def kernel(enabled_plugins: tuple[str, ...], cao_home: Path) -> Iterator[Any]:
    from cao_kernel.kernel import Kernel
    from cao_kernel.plugins import LoadPolicy

    yield Kernel(policy=LoadPolicy(only=tuple(enabled_plugins)), home=cao_home)


@contextlib.contextmanager
def _register(kernel: Any, plugin: object, name: str | None = None) -> Iterator[str]:
    registered = kernel.register_plugin(plugin, name=name)
    try:
        yield registered
    finally:
        if kernel.pm.get_plugin(registered) is not None:
            kernel.unregister_plugin(registered)


@pytest.fixture
def register_plugin() -> Any:
    """``with register_plugin(kernel, plugin_obj, name=None) as name:`` registers for the block only."""
    return _register


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """Run ``async def`` tests in a fresh event loop (no extra pytest plugin needed)."""
    if not inspect.iscoroutinefunction(pyfuncitem.obj):
        return None
    argnames = pyfuncitem._fixtureinfo.argnames
    kwargs = {name: pyfuncitem.funcargs[name] for name in argnames}
    asyncio.run(pyfuncitem.obj(**kwargs))
    return True
