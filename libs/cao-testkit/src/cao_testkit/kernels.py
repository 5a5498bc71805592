"""Kernels that run real agents on a test's private tmux server, and the folder they work in.

Fixtures of the ``cao_testkit`` plugin:

- ``make_kernel(*plugins, agents=(), **settings)``: a kernel, not started, on the test's private tmux
  server (the ``tmux_socket`` fixture) and home (``cao_home``), loading only ``plugins``: by default tmux,
  the ``kernel_provider`` and the SQLite inbox. That provider is the kernel's default one, and ``agents``
  name profiles of it the kernel has.
- ``kernel_provider``: the provider those kernels run: a provider package's own (the entry point its
  ``pyproject.toml`` declares) in its tests, ``mock_cli`` elsewhere, unless a ``conftest.py`` overrides
  the fixture.
- ``workdir``: a fresh ``project`` folder for the agents of one test to work in.

:func:`build_kernel` builds the same kernel where a test has no fixture to ask (a server fixture of its
own); :class:`LiveKernels` is the world of one live test (a scripted model server, kernels running the
provider) that a provider's live fixture yields, subclassed with the provider's profiles.
"""

from __future__ import annotations

import functools
import tomllib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import pytest

if TYPE_CHECKING:
    from cao_hookspecs import AgentProfile, Terminal

__all__ = ["LiveKernels", "build_kernel", "kernel_provider", "make_kernel", "workdir"]


def build_kernel(home: Path | str, tmux_socket: str, *plugins: str, provider: str = "mock_cli",
                 agents: Iterable[str] = (), **settings: str) -> Any:
    """A kernel on the tmux server at ``tmux_socket``, loading only ``plugins`` (default: tmux,
    ``provider`` and the SQLite inbox), with ``provider`` as its default provider and ``settings`` on top;
    ``agents`` name profiles of that provider it gets (no instructions of their own)."""
    from cao_hookspecs import AgentProfile
    from cao_kernel.kernel import Kernel
    from cao_kernel.plugins import LoadPolicy

    kernel = Kernel(
        policy=LoadPolicy(only=plugins or ("tmux", provider, "inbox_sqlite")),
        home=home,
        settings={"CAO_TMUX_SOCKET": tmux_socket, "CAO_DEFAULT_PROVIDER": provider, **settings},
    )
    for name in agents:
        kernel.add_profile(AgentProfile(name=name, provider=provider))
    return kernel


class LiveKernels:
    """One live test's world: the scripted model server (``script`` takes the turns), the sandbox the CLI
    runs in, and kernels that run ``provider`` on the test's private tmux server. A subclass names the
    ``provider``, and ``plugins`` when the kernels load others than :func:`build_kernel`'s default, and
    says what its :meth:`profile` holds."""

    provider: ClassVar[str]
    plugins: ClassVar[tuple[str, ...]] = ()

    def __init__(self, server: Any, tmux_socket: str, cao_home: Path, sandbox: Any = None) -> None:
        self.server = server
        self.script = server.script
        self.tmux_socket = tmux_socket
        self.cao_home = cao_home
        self.sandbox = sandbox

    def kernel(self, *plugins: str, **settings: str) -> Any:
        """A kernel (not started) loading ``plugins`` (default: the class's), with ``settings`` on top."""
        plugins = plugins or self.plugins
        return build_kernel(self.cao_home, self.tmux_socket, *plugins, provider=self.provider, **settings)

    def profile(self, name: str = "coder", **fields: Any) -> AgentProfile:
        """A profile of the provider, with ``fields`` (the subclass's defaults under them)."""
        raise NotImplementedError(f"{type(self).__name__} says what its profiles hold")

    async def start_session(self, kernel: Any, workdir: str, **fields: Any) -> Terminal:
        """A session of ``profile(**fields)`` on ``kernel``, which gets that profile first."""
        from cao_hookspecs import CreateTerminalRequest

        profile = self.profile(**fields)
        kernel.add_profile(profile)
        return await kernel.create_session(CreateTerminalRequest(agent_profile=profile.name,
                                                                 working_directory=workdir))


@pytest.fixture
def kernel_provider(request: pytest.FixtureRequest) -> str:
    """The provider ``make_kernel``'s kernels run: in a provider package's tests the one the package
    registers (its entry point in group ``cao``), elsewhere ``mock_cli``; a ``conftest.py`` may name
    another."""
    return _package_provider(Path(request.path).parent) or "mock_cli"


@functools.cache
def _package_provider(folder: Path) -> str | None:
    """The provider that the package holding ``folder`` registers, None when it is no provider package
    (named ``cao-provider-*``, with one entry point in group ``cao``)."""
    for parent in (folder, *folder.parents):
        pyproject = parent / "pyproject.toml"
        if pyproject.is_file():
            project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
            registered = project.get("entry-points", {}).get("cao", {})
            if str(project.get("name", "")).startswith("cao-provider-") and len(registered) == 1:
                return next(iter(registered))
            return None
    return None


@pytest.fixture
def make_kernel(tmux_socket: str, cao_home: Path, kernel_provider: str) -> Callable[..., Any]:
    """``make_kernel(*plugins, agents=(), **settings)``: see :func:`build_kernel`."""
    return functools.partial(build_kernel, cao_home, tmux_socket, provider=kernel_provider)


@pytest.fixture
def workdir(tmp_path: Path) -> str:
    """A fresh, empty ``project`` folder for the test's agents to work in."""
    folder = tmp_path / "project"
    folder.mkdir()
    return str(folder)
