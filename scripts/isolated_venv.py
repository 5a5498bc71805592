"""Run a package's tests in a fresh virtual environment that holds only what the package declares.

    uv run --no-sync python scripts/isolated_venv.py providers/cao-provider-codex [FOLDER...] [-- PYTEST ARGS]

For each folder: a venv is created on this Python with uv (never downloading an interpreter), the
package is installed from its wheel with its ``test`` extra, and its ``tests/`` run with that venv's
pytest under the repository's pytest settings (plus pytest-timeout, which those settings use).
Workspace packages are not on PyPI: each one the package needs is built into a wheel once and
installed from it (through uv overrides, so a workspace package the package does not declare is never
installed); everything else comes from PyPI. A package that imports something it does not declare
fails here with pip's or pytest's own message.

``tests/test_isolated_packages.py`` runs every provider and plugin this way (:func:`package_runs`
starts them all when the test session starts); ``tests/test_provider_template.py`` uses the same wheels
to install a package rendered from the provider template.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
# The test runner's own plugins (the root dev group's), added to every venv without their dependencies:
# they serve the repository's pytest settings (``timeout``), and a package that forgot pytest itself
# must still fail for it.
RUNNER_PLUGINS = ("pytest-timeout>=2.3",)
INSTALL_TIMEOUT = 600.0
_REQUIREMENT = re.compile(r"\s*(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[(?P<extras>[^\]]*)\])?")


class IsolationError(AssertionError):
    """A step of building, installing or testing failed; the message carries the tool's own output."""


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement(text: str) -> tuple[str, tuple[str, ...]]:
    match = _REQUIREMENT.match(text)
    if match is None:
        raise IsolationError(f"unparsable requirement {text!r}")
    extras = tuple(normalize(e) for e in (match.group("extras") or "").split(",") if e.strip())
    return normalize(match.group("name")), extras


def _tail(text: str, lines: int = 80) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def _uv() -> str:
    uv = shutil.which("uv")
    if uv is None:
        raise IsolationError("uv is not on PATH (scripts/bootstrap.sh installs it)")
    return uv


# Taken once, when this module loads: runs happen in threads while pytest fixtures change os.environ.
_BASE_ENVIRONMENT = dict(os.environ)


def _environment(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment without any virtualenv: PATH entries inside one are dropped, so a
    test that runs ``cao`` or ``mock_cli`` by name gets the isolated venv's, never the workspace's."""
    dropped = ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "UV_PROJECT_ENVIRONMENT")
    env = {k: v for k, v in _BASE_ENVIRONMENT.items() if k not in dropped and not k.startswith("CAO_")}
    paths = [p for p in env.get("PATH", os.defpath).split(os.pathsep)
             if p and not (Path(p).parent / "pyvenv.cfg").exists()]
    env["PATH"] = os.pathsep.join(paths)
    env["UV_PYTHON_DOWNLOADS"] = "never"
    env.update(extra or {})
    return env


@dataclass(frozen=True)
class Member:
    """A package of the workspace: its distribution name, folder and declared requirements."""

    name: str
    folder: Path
    dependencies: tuple[str, ...]
    extras: Mapping[str, tuple[str, ...]]

    def requirements(self, extras: Sequence[str]) -> list[str]:
        """What installing the member with ``extras`` (those of them it declares) asks for."""
        return [*self.dependencies, *(text for extra in extras for text in self.extras.get(extra, ()))]


def read_member(folder: Path) -> Member:
    path = folder / "pyproject.toml"
    try:
        project = tomllib.loads(path.read_text(encoding="utf-8"))["project"]
    except (OSError, KeyError, ValueError) as exc:
        raise IsolationError(f"{folder}: cannot read the [project] table of {path.name}: {exc}") from exc
    extras = {normalize(k): tuple(v) for k, v in project.get("optional-dependencies", {}).items()}
    return Member(normalize(project["name"]), folder, tuple(project.get("dependencies", ())), extras)


def _root_settings() -> dict[str, Any]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]


def workspace_folders() -> list[Path]:
    """The root (cao-kernel) and every member folder the root ``[tool.uv.workspace]`` names that holds a
    pyproject.toml (a folder still being written has none, and is left out)."""
    workspace = _root_settings()["uv"]["workspace"]
    excluded = {p.resolve() for pattern in workspace.get("exclude", []) for p in ROOT.glob(pattern)}
    found = {p.resolve() for pattern in workspace["members"] for p in ROOT.glob(pattern)
             if p.is_dir() and p.resolve() not in excluded and (p / "pyproject.toml").is_file()}
    return [ROOT, *sorted(found)]


def package_folders() -> list[Path]:
    """Every provider and plugin folder (the template excepted), whether or not it is complete yet."""
    return sorted(p for pattern in ("providers/*", "plugins/*") for p in ROOT.glob(pattern)
                  if p.is_dir() and not p.name.startswith(("_", ".")))


class WheelHouse:
    """Wheels of workspace packages, each built once (on demand, two at a time) into ``folder``."""

    def __init__(self, folder: Path, workers: int = 2) -> None:
        self.folder = folder
        self.members: dict[str, Member] = {}
        for path in workspace_folders():
            try:
                member = read_member(path)
            except IsolationError:
                continue
            self.members[member.name] = member
        self._builds: dict[Path, Future[Path]] = {}
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="wheel")

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)

    def _build(self, folder: Path) -> Path:
        self.folder.mkdir(parents=True, exist_ok=True)
        out = Path(tempfile.mkdtemp(prefix=f"{folder.name}-", dir=self.folder))
        # --no-sources: build the folder alone, without resolving the whole workspace (a member that is
        # half written must not break every other package's build).
        argv = [_uv(), "build", "--wheel", "--no-sources", "-q", "-o", str(out), str(folder)]
        done = subprocess.run(argv, capture_output=True, text=True, env=_environment(), cwd=ROOT,
                              timeout=INSTALL_TIMEOUT, check=False)
        wheels = sorted(out.glob("*.whl"))
        if done.returncode != 0 or len(wheels) != 1:
            raise IsolationError(f"building the wheel of {folder} failed (exit {done.returncode}):\n"
                                 f"{_tail(done.stdout + done.stderr)}")
        return wheels[0]

    def _submit(self, folder: Path) -> Future[Path]:
        folder = folder.resolve()
        with self._lock:
            if folder not in self._builds:
                self._builds[folder] = self._pool.submit(self._build, folder)
            return self._builds[folder]

    def submit(self, names: Iterable[str]) -> None:
        """Start building the wheels of ``names`` (workspace distributions) in the background."""
        for name in names:
            self._submit(self.members[name].folder)

    def wheel(self, name: str) -> Path:
        """The wheel of the workspace distribution ``name``."""
        return self._submit(self.members[name].folder).result()

    def wheel_of(self, folder: Path) -> Path:
        """The wheel of the package in ``folder`` (a workspace member or not)."""
        return self._submit(folder).result()

    def closure(self, requirements: Iterable[str]) -> list[str]:
        """The workspace distributions that ``requirements`` need, directly or through each other."""
        needed: set[str] = set()
        seen: set[tuple[str, str]] = set()
        pending = [_requirement(text) for text in requirements]
        while pending:
            name, extras = pending.pop()
            member = self.members.get(name)
            if member is None:
                continue
            texts: list[str] = []
            for extra in ("", *extras):
                if (name, extra) not in seen:
                    seen.add((name, extra))
                    texts += member.extras.get(extra, ()) if extra else member.dependencies
            needed.add(name)
            pending += [_requirement(text) for text in texts]
        return sorted(needed)


@dataclass
class IsolatedVenv:
    """A fresh venv under ``folder``, on this Python."""

    folder: Path

    @property
    def python(self) -> Path:
        return self.folder / "bin" / "python"

    @property
    def bin(self) -> Path:
        return self.folder / "bin"

    def create(self) -> IsolatedVenv:
        argv = [_uv(), "venv", "-q", "--python", sys.executable, str(self.folder)]
        done = subprocess.run(argv, capture_output=True, text=True, env=_environment(), timeout=120,
                              check=False)
        if done.returncode != 0:
            raise IsolationError(f"uv venv failed:\n{_tail(done.stdout + done.stderr)}")
        return self

    def install(self, member: Member, source: str, house: WheelHouse,
                extras: Sequence[str] = ("test",)) -> str:
        """Install ``member`` from ``source`` (a wheel or folder URL) with ``extras`` it declares, taking
        every workspace package it needs from ``house``; return uv's output."""
        wanted = [extra for extra in extras if extra in member.extras]
        needed = [name for name in house.closure(member.requirements(wanted)) if name != member.name]
        house.submit(needed)
        overrides = self.folder / "workspace-overrides.txt"
        overrides.write_text("".join(f"{name} @ {house.wheel(name).as_uri()}\n" for name in needed),
                             encoding="utf-8")
        requirement = f"{member.name}{'[' + ','.join(wanted) + ']' if wanted else ''} @ {source}"
        # Compiled now, not by the first of many short `cao` processes a test starts against a deadline.
        output = self._pip("install", "--compile-bytecode", "--override", str(overrides), requirement)
        self._pip("install", "--no-deps", *RUNNER_PLUGINS)
        return output

    def _pip(self, *args: str) -> str:
        argv = [_uv(), "pip", args[0], "--python", str(self.python), *args[1:]]
        done = subprocess.run(argv, capture_output=True, text=True, env=_environment(),
                              timeout=INSTALL_TIMEOUT, check=False)
        if done.returncode != 0:
            raise IsolationError(f"uv pip {' '.join(args)} failed (exit {done.returncode}):\n"
                                 f"{_tail(done.stdout + done.stderr)}")
        return done.stdout + done.stderr

    def run(self, argv: Sequence[str], *, cwd: Path, timeout: float = 600.0,
            env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        """Run a program of this venv (``argv[0]`` is looked up in its bin folder first)."""
        program = self.bin / argv[0]
        full = [str(program) if program.exists() else argv[0], *argv[1:]]
        extra = {"VIRTUAL_ENV": str(self.folder),
                 "PATH": os.pathsep.join([str(self.bin), _environment()["PATH"]]),
                 "HYPOTHESIS_STORAGE_DIRECTORY": str(self.folder / ".hypothesis"), **(env or {})}
        return subprocess.run(full, capture_output=True, text=True, cwd=cwd, env=_environment(extra),
                              timeout=timeout, check=False, stdin=subprocess.DEVNULL)


_PER_RUN_KEYS: dict[str, Any] = {}


def _once_per_run(config: Any, name: str, make: Callable[[], Any]) -> Any:
    """What ``make()`` returns, made on the first call in a pytest run (``config``) and closed with it."""
    import pytest

    key = _PER_RUN_KEYS.setdefault(name, pytest.StashKey[Any]())
    made = config.stash.get(key, None)
    if made is None:
        made = config.stash[key] = make()
        config.add_cleanup(made.close)
    return made


def shared_wheelhouse(config: Any, tmp_path_factory: Any) -> WheelHouse:
    """One :class:`WheelHouse` per pytest run (``config`` and ``tmp_path_factory`` are pytest's), in the
    run's temporary folder: every test module that installs workspace packages shares its wheels."""
    return _once_per_run(config, "wheels", lambda: WheelHouse(tmp_path_factory.mktemp("wheels")))


def _plugin_options(args: list[str], absent: Iterable[str]) -> list[str]:
    """``args`` without the ``-p <module>`` pairs whose module belongs to a distribution in ``absent``
    (distribution ``cao-testkit`` holds module ``cao_testkit``)."""
    gone = set(absent)
    kept: list[str] = []
    pairs = iter(args)
    for arg in pairs:
        if arg == "-p":
            module = next(pairs)
            if normalize(module.split(".")[0]) not in gone:
                kept += [arg, module]
        else:
            kept.append(arg)
    return kept


def pytest_ini(folder: Path, absent: Iterable[str] = ()) -> Path:
    """A pytest.ini with the repository's settings, minus the test paths and the root-relative ignore.

    ``absent``: workspace distributions the venv does not hold; the repository's ``-p`` plugins from them
    are left out (a package whose tests use no part of cao-testkit does not install it).
    """
    options = _root_settings()["pytest"]["ini_options"]
    lines = ["[pytest]"]
    for key, value in options.items():
        if key == "testpaths":
            continue
        if key == "addopts":
            args = [arg for arg in value.split() if not arg.startswith("--ignore=")]
            value = " ".join(_plugin_options(args, absent))
        if isinstance(value, list):
            lines.append(f"{key} =" + "".join(f"\n    {item}" for item in value))
        else:
            lines.append(f"{key} = {str(value).lower() if isinstance(value, bool) else value}")
    path = folder / "pytest.ini"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@dataclass
class Outcome:
    """How one package's isolated run went; ``report`` holds the failing tool's output."""

    package: Path
    ok: bool
    report: str
    seconds: float = 0.0


def run_package_tests(package: Path, house: WheelHouse, workdir: Path,
                      pytest_args: Sequence[str] = ("-m", "not live_cli")) -> Outcome:
    """Install ``package`` alone (with its test extra) into a fresh venv under ``workdir``, run its tests."""
    started = time.monotonic()
    try:
        member = read_member(package)
        if not (package / "tests").is_dir():
            raise IsolationError(f"{package} has no tests/ folder")
        venv = IsolatedVenv(workdir / "venv").create()
        venv.install(member, house.wheel_of(package).as_uri(), house)
        installed = {member.name, *house.closure(member.requirements(["test"]))}
        ini = pytest_ini(workdir, absent=set(house.members) - installed)
        done = venv.run(["python", "-m", "pytest", "-c", str(ini), "--rootdir", str(package),
                         "-p", "no:cacheprovider", "-q", *pytest_args, "tests"], cwd=package)
    except IsolationError as exc:
        return Outcome(package, False, str(exc), time.monotonic() - started)
    except subprocess.TimeoutExpired as exc:
        output = (exc.stdout or b"").decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        command = " ".join(map(str, exc.cmd))
        return Outcome(package, False, f"{command} did not finish within {exc.timeout:g} s:\n{_tail(output)}",
                       time.monotonic() - started)
    report = f"pytest exit {done.returncode}:\n{_tail(done.stdout + done.stderr)}"
    return Outcome(package, done.returncode == 0, report, time.monotonic() - started)


def lower_priority() -> None:
    """Give the calling thread, and every program it starts from now on, the nice value 10.

    On Linux the nice value belongs to a thread and a child inherits its parent thread's, so the
    programs this thread runs yield the CPU to the rest of the process and its other children.
    """
    with contextlib.suppress(OSError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)


class Slots:
    """How many package runs may go at once, handed out in the order they are asked for; the limit can
    be raised while runs wait."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._busy = 0
        self._waiting: collections.deque[object] = collections.deque()
        self._changed = threading.Condition()

    def widen(self, limit: int) -> None:
        with self._changed:
            self._limit = max(self._limit, limit)
            self._changed.notify_all()

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        turn = object()
        with self._changed:
            self._waiting.append(turn)
            self._changed.wait_for(lambda: self._waiting[0] is turn and self._busy < self._limit)
            self._waiting.popleft()
            self._busy += 1
            self._changed.notify_all()
        try:
            yield
        finally:
            with self._changed:
                self._busy -= 1
                self._changed.notify_all()


def _test_source_size(package: Path) -> int:
    return sum(path.stat().st_size for path in (package / "tests").rglob("*.py"))


class PackageRuns:
    """The isolated runs of ``packages``, all queued at once, the biggest test suites first (so the
    slowest package does not start last); ``futures`` maps each package to its :class:`Outcome`.

    ``workers`` runs go at once, but only ``first`` until :meth:`widen` is called, and at a low CPU
    priority: the test run that starts them still has tests of its own on the same cores, and those
    decide when it ends.
    """

    def __init__(self, packages: Iterable[Path], house: WheelHouse, workdir: Callable[[Path], Path],
                 workers: int, first: int) -> None:
        self.workers = max(1, workers)
        self.slots = Slots(max(1, min(first, self.workers)))
        self._pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="isolated",
                                        initializer=lower_priority)
        self.futures: dict[Path, Future[Outcome]] = {}
        for package in sorted(packages, key=_test_source_size, reverse=True):
            self.futures[package] = self._pool.submit(self._run, package, house, workdir(package))

    def _run(self, package: Path, house: WheelHouse, workdir: Path) -> Outcome:
        with self.slots.held():
            return run_package_tests(package, house, workdir)

    def widen(self) -> None:
        """Let every worker run from now on."""
        self.slots.widen(self.workers)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


def package_runs(config: Any, tmp_path_factory: Any, packages: Iterable[Path] = ()) -> PackageRuns:
    """The one :class:`PackageRuns` of a pytest run (``config`` and ``tmp_path_factory`` are pytest's),
    started by the first call with ``packages``, one at a time until widened. ``CAO_ISOLATED_WORKERS``
    (default 2) caps how many go at once after that."""
    house = shared_wheelhouse(config, tmp_path_factory)
    workers = int(os.environ.get("CAO_ISOLATED_WORKERS") or 2)

    def start() -> PackageRuns:
        return PackageRuns(packages, house, lambda package: tmp_path_factory.mktemp(package.name), workers,
                           first=1)

    return _once_per_run(config, "package runs", start)


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    pytest_args = args[args.index("--") + 1:] if "--" in args else ["-m", "not live_cli"]
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="*", type=Path,
                        help="package folders (default: every provider and plugin)")
    options = parser.parse_args(args[: args.index("--")] if "--" in args else args)
    folders = [f.resolve() for f in options.folders] or package_folders()
    failed = 0
    with tempfile.TemporaryDirectory(prefix="cao-isolated-") as tmp:
        house = WheelHouse(Path(tmp) / "wheels")
        try:
            for folder in folders:
                outcome = run_package_tests(folder, house, Path(tempfile.mkdtemp(dir=tmp)), pytest_args)
                failed += not outcome.ok
                shown = folder.relative_to(ROOT) if folder.is_relative_to(ROOT) else folder
                print(f"{'ok  ' if outcome.ok else 'FAIL'} {shown} ({outcome.seconds:.1f} s)", flush=True)
                if not outcome.ok:
                    print(outcome.report)
        finally:
            house.close()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
