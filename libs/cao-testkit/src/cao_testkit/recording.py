"""A provider's screen recording, declared: what its ``scripts/record_screens.py`` holds.

The file defines ``RECORDING``, a :class:`Recording`: where the CLI comes from, the model server it
talks to, what its sandboxed user has set up, and its scenarios. ``python -m cao_testkit.record``
(:mod:`cao_testkit.record`) does the rest the same way for every provider::

    RECORDING = Recording(
        provider=acme_provider(), package="@acme/cli", cli=npm("acme"),
        model_server=lambda: AnthropicServer(Script()), root=lambda: neutral_root("cao-screens-acme"),
        setup=lambda world: {**world.server.client_env(), "CAO_ACME_BIN": str(world.cli.binary)},
        scenarios=(record_turns, record_dialogs),
    )

    def record_turns(world: World) -> None:
        rec = world.recorder((220, 50))
        rec.start()
        rec.save("idle", rec.wait(prompt_shown, "the prompt"), "idle")
        ...

A scenario gets a :class:`World`: a root folder, the model server, a sandboxed HOME whose environment
the CLI runs with, and a tmux backend on a private tmux server; ``world.recorder(size, **options)``
gives a :class:`~cao_testkit.recorder.ScreenRecorder` on it. Scenarios run one after another in one
world, unless ``world_per_scenario`` gives each a world of its own (and ``attempts`` tries of it, for a
scenario that raises :class:`Retry` when it misses a short-lived screen).

Where the CLI comes from: :func:`npm` and :func:`pypi` (a release, installed once per machine),
:func:`program` (a program already installed, such as the mock agent) and :func:`stand_in` (a Python
program run as the CLI, the provider template's).
"""

from __future__ import annotations

import contextlib
import itertools
import re
import subprocess
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from .models.cli import InstalledCli, Sandbox, install_npm_cli, install_pypi_cli, make_sandbox
from .models.cli import stand_in as stand_in_launcher
from .recorder import ScreenRecorder, environment, scratch_root, tmux_backend

if TYPE_CHECKING:
    from cao_hookspecs import ProviderSpec, TerminalBackend

    from .models.script import ScriptedServer

__all__ = [
    "CliSource",
    "Recording",
    "Retry",
    "Scenario",
    "World",
    "at_size",
    "npm",
    "program",
    "pypi",
    "scenario_name",
    "stand_in",
    "world",
]

_VERSION = re.compile(r"\d+\.\d+\.\d+\S*")


class Retry(Exception):
    """A scenario missed a short-lived screen; in a world of its own, trying again may catch it."""


#: ``(recording, version, scratch) -> InstalledCli``: the CLI at ``version``; ``scratch`` is a folder that
#: lives as long as the recording.
CliSource = Callable[["Recording", str, Path], InstalledCli]


@attrs.frozen
class Scenario:
    """A scenario under a name of its own (a plain function is known by its ``__name__``)."""

    name: str
    run: Callable[[World], None]

    def __call__(self, world: World) -> None:
        self.run(world)


def scenario_name(scenario: Callable[[World], None]) -> str:
    return scenario.name if isinstance(scenario, Scenario) else scenario.__name__


def at_size(scenario: Callable[[World, tuple[int, int], str], None], size: tuple[int, int]) -> Scenario:
    """``scenario`` (which takes the world, a terminal size and a suffix for its screens' names) again on
    terminals of ``size``, as ``<its name>-<width>x<height>`` with that suffix on every screen."""
    suffix = f"-{size[0]}x{size[1]}"
    return Scenario(scenario.__name__ + suffix, lambda world: scenario(world, size, suffix))


def _no_setup(world: World) -> None:
    return None


def _as_reported(cli: InstalledCli) -> str:
    return cli.version_output


@attrs.frozen(kw_only=True)
class Recording:
    """How to record one provider's screens.

    ``provider`` gives the launch, the name terminals are registered under and the tested versions (the
    newest is recorded unless asked otherwise); ``package`` is the npm or PyPI package the CLI comes
    from, as the manifest names it, and ``cli`` how to get it. ``model_server`` makes the scripted
    server (started as a context manager) or is None for a CLI that needs none. ``root`` makes each
    world's root folder (default: a fresh temporary one; :func:`~cao_testkit.recorder.neutral_root` for
    a CLI that prints its working folder's path). ``setup(world)`` prepares the sandboxed user's files
    and returns the variables the CLI runs with on top of the sandbox's; ``cli_on_path`` puts the CLI's
    folder first on the sandbox's PATH. ``version_output`` is the manifest's reading of what the CLI's
    version command printed.
    """

    provider: ProviderSpec
    package: str
    cli: CliSource
    scenarios: Sequence[Callable[[World], None]]
    model_server: Callable[[], ScriptedServer] | None = None
    root: Callable[[], AbstractContextManager[Path]] = scratch_root
    setup: Callable[[World], Mapping[str, str] | None] = _no_setup
    cli_on_path: bool = False
    world_per_scenario: bool = False
    attempts: int = 1
    version_output: Callable[[InstalledCli], str] = _as_reported


@attrs.define(kw_only=True)
class World:
    """What a scenario runs in: ``root``, the ``server`` (None without one), a ``sandbox`` whose HOME and
    environment the CLI gets, and a recorder per terminal size (:meth:`recorder`)."""

    recording: Recording
    root: Path
    cli: InstalledCli
    server: Any
    sandbox: Sandbox
    out: Path
    #: One counter for recorders that must keep their terminal ids apart (pass ``ids=world.ids``).
    ids: Iterator[int] = attrs.field(factory=lambda: itertools.count(1))
    backend: TerminalBackend | None = None
    _recorders: dict[tuple[int, int], tuple[ScreenRecorder, dict[str, Any]]] = attrs.field(
        factory=dict, init=False)

    @property
    def home(self) -> Path:
        return self.sandbox.home

    @property
    def version(self) -> str:
        return self.cli.version

    @property
    def screens(self) -> dict[str, dict[str, Any]]:
        """The manifest entries of every screen saved in this world, recorder by recorder."""
        return {name: entry for rec, _ in self._recorders.values() for name, entry in rec.manifest.items()}

    def recorder(self, size: tuple[int, int] = (220, 50), **options: Any) -> ScreenRecorder:
        """The world's recorder of terminals at ``size``, working in ``~/project`` and saving into the
        output folder. It is made on first use with ``options`` (:class:`~cao_testkit.recorder.
        ScreenRecorder`'s; ``launch`` replaces the provider's own); later calls for that size get the
        same recorder, so scenarios run one after another go on numbering its terminals."""
        if self.backend is None:
            raise RuntimeError("the world's tmux backend is not started yet (make recorders in scenarios)")
        made = self._recorders.get(size)
        if made is not None:
            if made[1] != options:
                raise ValueError(f"the recorder at {size[0]}x{size[1]} was made with other options")
            return made[0]
        provider = self.recording.provider
        settings = {"workdir": self.home / "project", **options}
        rec = ScreenRecorder(self.backend, settings.pop("launch", provider.launch), provider=provider.name,
                             server=self.server, out=self.out, size=size, **settings)
        self._recorders[size] = (rec, options)
        return rec


@contextlib.contextmanager
def world(recording: Recording, cli: InstalledCli, out: Path) -> Iterator[World]:
    """A world for the recording's scenarios; the server, the tmux server and the root go after it.

    When the block ends normally in a world shared by every scenario, the model server must have been
    asked nothing unexpected and the script must be used up (a world per scenario may end mid-turn).
    """
    with recording.root() as root:
        serving = recording.model_server() if recording.model_server else contextlib.nullcontext()
        with serving as server:
            sandbox = make_sandbox(root, path=[cli.bin_dir] if recording.cli_on_path else ())
            made = World(recording=recording, root=root, cli=cli, server=server, sandbox=sandbox, out=out)
            env = {**sandbox.env, **(recording.setup(made) or {})}
            with environment(env), tmux_backend(root / "cao-home") as backend:
                made.backend = backend
                yield made
            if server is not None and not recording.world_per_scenario:
                server.assert_healthy()
                server.script.assert_done()


# -- where the CLI comes from -----------------------------------------------------------------------


def npm(binary: str, *, env: Mapping[str, str] | None = None) -> CliSource:
    """The recording's package from npm, its program ``binary``; ``env`` is set while it installs (and
    answers its version check)."""

    def install(recording: Recording, version: str, scratch: Path) -> InstalledCli:
        with environment(env or {}, clear=False):
            return install_npm_cli(recording.package, version, binary)

    return install


def pypi(binary: str, *, python: str, exclude_newer: Mapping[str, str] | None = None) -> CliSource:
    """The recording's package from PyPI in a virtual environment on a ``python`` of the machine;
    ``exclude_newer`` maps a version to the date its dependencies are resolved as of."""

    def install(recording: Recording, version: str, scratch: Path) -> InstalledCli:
        return install_pypi_cli(recording.package, version, binary, python=python,
                                exclude_newer=(exclude_newer or {}).get(version))

    return install


def program(command: Callable[[], Sequence[str]]) -> CliSource:
    """A program already installed: ``command()`` runs it; its version is what it answers to the
    provider's version arguments, and must be the version recorded."""

    def find(recording: Recording, version: str, scratch: Path) -> InstalledCli:
        argv = list(command())
        return _asked(recording, version, Path(argv[0]), argv)

    return find


def stand_in(script: Path, binary: str) -> CliSource:
    """The Python program ``script`` run as the CLI's program ``binary`` (put ``cli_on_path``)."""

    def write(recording: Recording, version: str, scratch: Path) -> InstalledCli:
        launcher = stand_in_launcher(scratch / "bin", binary, script)
        return _asked(recording, version, launcher, [str(launcher)])

    return write


def _asked(recording: Recording, version: str, binary: Path, argv: list[str]) -> InstalledCli:
    done = subprocess.run([*argv, *recording.provider.version_args], capture_output=True, text=True,
                          timeout=60, check=True, stdin=subprocess.DEVNULL)
    output = done.stdout.strip() or done.stderr.strip()
    found = _VERSION.search(output)
    if found is None:
        raise SystemExit(f"no version number in {output!r} ({' '.join(argv)})")
    if found.group(0) != version:
        raise SystemExit(f"{' '.join(argv)} is version {found.group(0)}, not {version}: it cannot be "
                         "recorded as another version")
    return InstalledCli(package=recording.package, version=version, prefix=binary.parent, binary=binary,
                        version_output=output)
