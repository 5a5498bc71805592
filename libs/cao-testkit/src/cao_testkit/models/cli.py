"""Real agent CLIs for live tests: installed from npm once per machine, run in sandboxed homes.

``install_npm_cli(package, version, bin_name)`` installs ``package@version`` with ``npm install
--prefix`` into ``<cache>/<package>@<version>`` (``CAO_LIVE_CLI_CACHE``, else
``$XDG_CACHE_HOME/cao/live-cli``, else ``~/.cache/cao/live-cli``) and returns the program's path. The
install happens at most once per machine: later calls find the folder and only check the program
answers ``--version`` with that version. Concurrent test processes wait for each other on a lock
file, and a half-done install never becomes visible (it is renamed into place when complete).

``install_pypi_cli(package, version, bin_name)`` does the same for a CLI published on PyPI: a
virtual environment of its own (made relocatable with ``uv venv --relocatable``, so the finished
folder can be renamed into place) at ``<cache>/pypi-<package>@<version>-py<X.Y>``, built on an
interpreter already on the machine (Pythons are looked for, never downloaded).

``npm_cli(...)`` and ``pypi_cli(...)`` declare such a CLI as a :class:`LiveCli`, whose ``install()``
does the same. A conftest that lists the CLIs its live tests run in ``LIVE_CLIS`` gets them installed
in the background as soon as collection shows that one of those tests will run (:func:`install_ahead`,
called by the kit's plugin), so the downloads overlap with tests that need no CLI; ``install()`` then
waits for that install instead of starting its own.

When npm, uv or the registry cannot be reached, :class:`LiveCliUnavailable` (an ``AssertionError``)
says so: live tests fail loudly rather than skip.

``stand_in(folder, binary, program)`` writes a launcher that runs a Python program as the CLI (a
package's stand-in before the real CLI is wired in).

``Sandbox`` is a throw-away HOME (with XDG folders) and an environment that keeps the user's own
agent configuration and credentials out of the test (variables with :data:`LEAKY_PREFIXES` are
dropped; cao's own variables are left to ``cao_kernel.testing``'s ``cao_home`` fixture).
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import attrs

__all__ = [
    "CACHE_ENV",
    "LEAKY_PREFIXES",
    "InstalledCli",
    "LiveCli",
    "LiveCliUnavailable",
    "Sandbox",
    "cache_root",
    "find_python",
    "install_ahead",
    "install_npm_cli",
    "install_pypi_cli",
    "live_version",
    "make_sandbox",
    "npm_cli",
    "pypi_cli",
    "stand_in",
]

CACHE_ENV = "CAO_LIVE_CLI_CACHE"
#: Environment variables that would point a CLI at the user's real account or configuration.
LEAKY_PREFIXES = ("ANTHROPIC_", "CLAUDE", "OPENAI_", "CODEX_", "AWS_", "GOOGLE_", "GEMINI_", "XDG_", "KIMI_",
                  "MOONSHOT_", "COPILOT_", "GH_", "GITHUB_", "OPENCODE_", "GROK_", "XAI_", "PI_")
_INSTALL_TIMEOUT = 600.0
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")
_checked: dict[Path, str] = {}
_checked_lock = threading.Lock()


class LiveCliUnavailable(AssertionError):
    """The real CLI could not be installed or does not run (the message says what failed)."""


@attrs.frozen(kw_only=True)
class InstalledCli:
    """A CLI installed from npm: ``binary`` is the program to run, ``version`` what it reports."""

    package: str
    version: str
    prefix: Path
    binary: Path
    version_output: str = ""

    @property
    def bin_dir(self) -> Path:
        """The folder holding the program (prepend it to PATH to run it by name)."""
        return self.binary.parent


def live_version(provider: str, tested_versions: Sequence[str]) -> str:
    """The release of a provider's CLI its live tests run: the one ``CAO_LIVE_<PROVIDER>_VERSION`` names
    (a release to try; ``CAO_LIVE_CLAUDE_CODE_VERSION`` for ``claude_code``), else the newest tested one."""
    return os.environ.get(f"CAO_LIVE_{provider.upper()}_VERSION") or tested_versions[-1]


def cache_root() -> Path:
    """Where installed CLIs are kept, one folder per package and version."""
    custom = os.environ.get(CACHE_ENV)
    if custom:
        return Path(custom).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "cao" / "live-cli"


def _folder_name(package: str, version: str) -> str:
    return f"{_SAFE.sub('-', package.lstrip('@')).strip('-')}@{_SAFE.sub('-', version)}"


def _check(binary: Path, version: str, extra: Mapping[str, str], timeout: float = 60.0) -> str:
    """``binary --version`` output (run with ``extra`` in its environment); raises LiveCliUnavailable
    unless it runs and names ``version``."""
    # A throw-away HOME: some CLIs write into their home folder even for --version, and the user's own
    # must never be touched.
    scratch = tempfile.mkdtemp(prefix="cao-cli-version-")
    env = {**os.environ, **extra, "HOME": scratch, "CODEX_HOME": os.path.join(scratch, ".codex"),
           "CLAUDE_CONFIG_DIR": os.path.join(scratch, ".claude"),
           "KIMI_SHARE_DIR": os.path.join(scratch, ".kimi")}
    try:
        done = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=timeout,
                              check=False, stdin=subprocess.DEVNULL, env=env)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise LiveCliUnavailable(f"{binary} does not run: {exc}") from exc
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    output = (done.stdout + done.stderr).strip()
    if done.returncode != 0 or version not in output:
        raise LiveCliUnavailable(f"{binary} --version exited {done.returncode} saying {output[:300]!r}; "
                                 f"expected version {version}")
    return output


def _put_in_place(built: Path, folder: Path) -> None:
    """Make the finished install ``built`` the cached one at ``folder`` (replacing a broken one) in one
    rename, so that no other process ever sees it half done."""
    if folder.exists():
        shutil.rmtree(folder)
    os.rename(built, folder)


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    import fcntl

    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


_NPM_NAME = re.compile(r"(@[a-z0-9][\w.-]*/)?[a-z0-9][\w.-]*")
_NPM_VERSION = re.compile(r"[0-9A-Za-z][0-9A-Za-z.+-]*")


def install_npm_cli(package: str, version: str, bin_name: str, *, cache: Path | None = None,
                    timeout: float = _INSTALL_TIMEOUT, env: Mapping[str, str] | None = None,
                    with_packages: Sequence[str] = ()) -> InstalledCli:
    """Install ``package@version`` from the npm registry (once per machine) and return its program.

    ``env``: variables set for the install and the version check (where a CLI unpacks itself, say).
    ``with_packages``: more exact ``name@version`` packages installed beside it in the same folder, for
    a CLI that runs on a runtime published on npm (a ``#!/usr/bin/env bun`` program needs ``bun``); the
    folder's ``node_modules/.bin`` is first on PATH for the version check, as it must be for the tests.
    """
    if not _NPM_NAME.fullmatch(package):
        raise ValueError(f"not an npm package name: {package!r}")
    if not _NPM_VERSION.fullmatch(version):
        raise ValueError(f"not an exact package version: {version!r}")
    also = [_npm_spec(spec) for spec in with_packages]
    root = (cache or cache_root()).expanduser()
    name = "+".join([_folder_name(package, version), *(_folder_name(*spec) for spec in also)])
    folder = root / name
    binary = folder / "node_modules" / ".bin" / bin_name
    extra = dict(env or {})
    if also:
        extra["PATH"] = os.pathsep.join([str(binary.parent), extra.get("PATH") or os.environ.get("PATH", "")])
    specs = [f"{package}@{version}", *(f"{spec[0]}@{spec[1]}" for spec in also)]
    return _installed(package, version, root, folder, binary, extra,
                      lambda: _npm_install(specs, root, folder, timeout, extra))


def _npm_spec(spec: str) -> tuple[str, str]:
    """``name@version`` (the name may be scoped) as (name, version); ValueError unless both are exact."""
    name, _, version = spec.rpartition("@")
    if not _NPM_NAME.fullmatch(name) or not _NPM_VERSION.fullmatch(version):
        raise ValueError(f"not an exact npm package: {spec!r} (give name@version)")
    return name, version


def _installed(package: str, version: str, root: Path, folder: Path, binary: Path, extra: Mapping[str, str],
               install: Callable[[], None]) -> InstalledCli:
    """The program ``binary`` of ``folder`` once it answers its version check (checked once per process),
    ``install``ed first when it is missing or broken; other processes and threads wait on the folder's
    lock."""

    def known() -> InstalledCli | None:
        with _checked_lock:
            output = _checked.get(binary)
        if output is None:
            return None
        return InstalledCli(package=package, version=version, prefix=folder, binary=binary,
                            version_output=output)

    found = known()
    if found is not None:
        return found
    with _locked(root / f".{folder.name}.lock"):
        found = known()  # checked by the thread this one waited for
        if found is not None:
            return found
        if binary.exists():
            try:
                output = _check(binary, version, extra)
            except LiveCliUnavailable:
                shutil.rmtree(folder, ignore_errors=True)  # a broken install is replaced, not reused
            else:
                return _remember(package, version, folder, binary, output)
        install()
        output = _check(binary, version, extra)
        return _remember(package, version, folder, binary, output)


def _remember(package: str, version: str, folder: Path, binary: Path, output: str) -> InstalledCli:
    with _checked_lock:
        _checked[binary] = output
    return InstalledCli(package=package, version=version, prefix=folder, binary=binary, version_output=output)


def _npm_install(specs: Sequence[str], root: Path, folder: Path, timeout: float,
                 extra: Mapping[str, str]) -> None:
    npm = shutil.which("npm")
    wanted = " ".join(specs)
    if npm is None:
        raise LiveCliUnavailable(f"npm is not installed: cannot install {wanted} for the live "
                                 "tests (install Node.js and npm)")
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=root))
    try:
        argv = [npm, "install", "--prefix", str(staging), "--no-audit", "--no-fund", "--loglevel=error",
                *specs]
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False,
                                  stdin=subprocess.DEVNULL, env={**os.environ, **extra})
        except subprocess.TimeoutExpired as exc:
            raise LiveCliUnavailable(f"npm install {wanted} did not finish within {timeout:g} s "
                                     "(is the npm registry reachable?)") from exc
        if done.returncode != 0:
            tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-15:])
            raise LiveCliUnavailable(f"npm install {wanted} failed (exit {done.returncode}); "
                                     f"is the npm registry reachable?\n{tail}")
        _put_in_place(staging, folder)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


# -- CLIs published on PyPI --------------------------------------------------------------------------

_PYPI_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")
_PROGRAM = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}(?:T[0-9:.]+(?:Z|[+-]\d{2}:\d{2})?)?")
_PYTHON_SPEC = re.compile(r"(?P<minimum>>=)?(?P<major>\d+)\.(?P<minor>\d+)")
_found_pythons: dict[str, tuple[Path, tuple[int, int]]] = {}
_probed: dict[tuple[str, int], tuple[int, int] | None] = {}


def _python_version(binary: Path) -> tuple[int, int] | None:
    """``binary``'s (major, minor), or None when it does not run (a pyenv shim for a version that is not
    selected fails, for one). Remembered per file until it changes: probing starts a program."""
    try:
        key = (str(binary), binary.stat().st_mtime_ns)
    except OSError:
        return None
    if key not in _probed:
        _probed[key] = _probe_python(binary)
    return _probed[key]


def _probe_python(binary: Path) -> tuple[int, int] | None:
    try:
        done = subprocess.run([str(binary), "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                              capture_output=True, text=True, timeout=15, check=False,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = re.fullmatch(r"(\d+)\.(\d+)", done.stdout.strip()) if done.returncode == 0 else None
    return (int(found.group(1)), int(found.group(2))) if found else None


def _python_candidates() -> list[Path]:
    """Interpreters that may be on this machine: ``pythonX.Y`` on PATH, pyenv's versions, the system's."""
    import glob
    import pwd
    import sys

    found: list[Path] = [Path(sys.executable)]
    for minor in range(40, 7, -1):
        on_path = shutil.which(f"python3.{minor}")
        if on_path:
            found.append(Path(on_path))
    homes = {os.environ.get("PYENV_ROOT") or "", str(Path(pwd.getpwuid(os.getuid()).pw_dir) / ".pyenv"),
             os.path.expanduser("~/.pyenv")}
    patterns = [os.path.join(home, "versions", "*", "bin", "python3.*") for home in homes if home]
    patterns += ["/usr/local/bin/python3.*", "/usr/bin/python3.*", "/opt/python*/bin/python3.*"]
    for pattern in patterns:
        found += [Path(p) for p in sorted(glob.glob(pattern)) if re.search(r"python3\.\d+$", p)]
    return list(dict.fromkeys(found))


def find_python(spec: str | os.PathLike[str] | None = None) -> tuple[Path, tuple[int, int]]:
    """An interpreter on this machine and its (major, minor), never a download.

    ``spec`` is None (the interpreter running this code), a version (``"3.13"``), a minimum
    (``">=3.12"``: the newest one found) or a path. Raises :class:`LiveCliUnavailable` naming what was
    looked for when nothing fits.
    """
    import sys

    if spec is None:
        return Path(sys.executable), (sys.version_info.major, sys.version_info.minor)
    text = os.fspath(spec)
    wanted = _PYTHON_SPEC.fullmatch(text.replace(" ", ""))
    if wanted is None:
        binary = Path(text).expanduser()
        version = _python_version(binary) if binary.is_file() else None
        if version is None:
            raise LiveCliUnavailable(f"{text!r} is not a Python interpreter that runs here (give a path, a "
                                     "version such as '3.13' or a minimum such as '>=3.12')")
        return binary, version
    if text in _found_pythons:
        return _found_pythons[text]
    target = (int(wanted.group("major")), int(wanted.group("minor")))
    fits = []
    for candidate in _python_candidates():
        version = _python_version(candidate)
        if version is not None and (version >= target if wanted.group("minimum") else version == target):
            fits.append((version, candidate))
    if not fits:
        raise LiveCliUnavailable(
            f"no Python {text} on this machine (looked on PATH, in pyenv's versions and in /usr/bin, "
            "/usr/local/bin); install one with the system's package manager: this kit never downloads one")
    version, binary = max(fits, key=lambda fit: fit[0])
    _found_pythons[text] = (binary, version)
    return binary, version


def install_pypi_cli(package: str, version: str, bin_name: str, *,
                     python: str | os.PathLike[str] | None = None, exclude_newer: str | None = None,
                     extras: Sequence[str] = (), cache: Path | None = None,
                     timeout: float = _INSTALL_TIMEOUT,
                     env: Mapping[str, str] | None = None) -> InstalledCli:
    """Install ``package[extras]==version`` from PyPI (once per machine) in a virtual environment of its
    own and return its program ``bin_name``.

    ``python`` chooses the interpreter the environment is built on (see :func:`find_python`: None for
    this one, ``"3.13"``, ``">=3.12"`` or a path). ``exclude_newer`` (a date such as ``"2026-09-22"``)
    resolves the package's dependencies as PyPI had them then: a CLI whose own dependencies are not
    pinned keeps installing the way it did when it was tested. ``env``: variables set for the install
    and the version check. ``extras``: the package's optional parts to install with it (a CLI that
    leaves a feature the tests use, such as MCP, to an extra); they get a cache folder of their own.
    """
    if not _PYPI_NAME.fullmatch(package):
        raise ValueError(f"not a PyPI package name: {package!r}")
    if not re.fullmatch(r"[0-9A-Za-z][0-9A-Za-z.+!-]*", version):
        raise ValueError(f"not an exact package version: {version!r}")
    if not _PROGRAM.fullmatch(bin_name):
        raise ValueError(f"not a program name: {bin_name!r}")
    bad = [extra for extra in extras if not _PYPI_NAME.fullmatch(extra)]
    if bad:
        raise ValueError(f"not extra names: {bad!r}")
    if exclude_newer is not None and not _DATE.fullmatch(exclude_newer):
        raise ValueError(f"exclude_newer must be a date (2026-09-22) or an RFC 3339 time, "
                         f"got {exclude_newer!r}")
    interpreter, (major, minor) = find_python(python)
    root = (cache or cache_root()).expanduser()
    wanted = f"{package}[{','.join(sorted(extras))}]" if extras else package
    name = f"pypi-{_folder_name(package, version)}-py{major}.{minor}"
    if extras:
        name += "-" + "-".join(_SAFE.sub("-", extra) for extra in sorted(extras))
    if exclude_newer:
        name += f"-{_SAFE.sub('-', exclude_newer)}"
    folder = root / name
    binary = folder / "bin" / bin_name

    extra = dict(env or {})

    def install() -> None:
        _uv_install(wanted, version, interpreter, exclude_newer, root, folder, timeout, extra)

    return _installed(package, version, root, folder, binary, extra, install)


def _uv_install(package: str, version: str, interpreter: Path, exclude_newer: str | None, root: Path,
                folder: Path, timeout: float, extra: Mapping[str, str]) -> None:
    uv = os.environ.get("UV") or shutil.which("uv")
    if not uv:
        raise LiveCliUnavailable(f"uv is not installed: cannot install {package}=={version} for the live "
                                 "tests (install uv, e.g. `pip install uv`)")
    root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=root))
    venv = staging / "venv"
    # Relocatable: the programs it installs find their interpreter relative to themselves, so the
    # finished environment can be renamed into place.
    steps = [
        [uv, "venv", "--quiet", "--relocatable", "--no-python-downloads", "--python", str(interpreter),
         str(venv)],
        # Compiled now: a first run would otherwise write bytecode into the shared cache (and start slowly).
        [uv, "pip", "install", "--quiet", "--compile-bytecode", "--no-python-downloads",
         "--python", str(venv / "bin" / "python"),
         *(["--exclude-newer", exclude_newer] if exclude_newer else []), f"{package}=={version}"],
    ]
    env = {k: v for k, v in {**os.environ, **extra}.items()
           if k not in ("VIRTUAL_ENV", "UV_PYTHON", "UV_SYSTEM_PYTHON")}
    try:
        for argv in steps:
            what = " ".join(argv[1:3])
            try:
                done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False,
                                      stdin=subprocess.DEVNULL, env=env)
            except subprocess.TimeoutExpired as exc:
                raise LiveCliUnavailable(f"uv {what} for {package}=={version} did not finish within "
                                         f"{timeout:g} s (is PyPI reachable?)") from exc
            if done.returncode != 0:
                tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-15:])
                raise LiveCliUnavailable(f"uv {what} {package}=={version} failed (exit {done.returncode}); "
                                         f"is PyPI reachable, and does the package support the Python "
                                         f"at {interpreter}?\n{tail}")
        _put_in_place(venv, folder)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


# -- CLIs declared by the tests that run them -----------------------------------------------------------


@attrs.frozen(kw_only=True)
class LiveCli:
    """A real CLI some live tests run: ``package`` at ``version`` from npm, or from PyPI when ``python``
    names the interpreter to build its environment on (see :func:`install_pypi_cli`)."""

    package: str
    version: str
    bin_name: str
    python: str | None = None
    exclude_newer: str | None = None
    extras: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    with_packages: tuple[str, ...] = ()

    @property
    def from_pypi(self) -> bool:
        return self.python is not None

    def install(self) -> InstalledCli:
        """The installed CLI: the background install of it when one was started, else installed now."""
        with _ahead_lock:
            pending = _ahead.get(self)
        if pending is not None:
            return pending.result()
        return self._install()

    def _install(self) -> InstalledCli:
        if self.from_pypi:
            return install_pypi_cli(self.package, self.version, self.bin_name, python=self.python,
                                    exclude_newer=self.exclude_newer, extras=self.extras,
                                    env=dict(self.env))
        return install_npm_cli(self.package, self.version, self.bin_name, env=dict(self.env),
                               with_packages=self.with_packages)


def npm_cli(package: str, version: str, bin_name: str, *, env: Mapping[str, str] | None = None,
            with_packages: Sequence[str] = ()) -> LiveCli:
    """A CLI from the npm registry (see :func:`install_npm_cli`)."""
    return LiveCli(package=package, version=version, bin_name=bin_name,
                   env=tuple(sorted((env or {}).items())), with_packages=tuple(with_packages))


def pypi_cli(package: str, version: str, bin_name: str, *, python: str, exclude_newer: str | None = None,
             extras: Sequence[str] = (), env: Mapping[str, str] | None = None) -> LiveCli:
    """A CLI from PyPI in an environment of its own on ``python`` (see :func:`install_pypi_cli`)."""
    return LiveCli(package=package, version=version, bin_name=bin_name, python=python,
                   exclude_newer=exclude_newer, extras=tuple(sorted(extras)),
                   env=tuple(sorted((env or {}).items())))


_ahead: dict[LiveCli, Future[InstalledCli]] = {}
_ahead_lock = threading.Lock()
_ahead_pool: ThreadPoolExecutor | None = None


def install_ahead(clis: Iterable[LiveCli]) -> None:
    """Start installing ``clis``, in that order and two at a time, on threads of their own: they mostly
    wait on the registry, which the tests that do not need them can use meanwhile. A failure is kept for
    ``install()`` to raise, as if it had installed the CLI itself."""
    global _ahead_pool
    with _ahead_lock:
        for cli in clis:
            if cli not in _ahead:
                if _ahead_pool is None:
                    _ahead_pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="live-cli")
                _ahead[cli] = _ahead_pool.submit(cli._install)


@attrs.frozen(kw_only=True)
class Sandbox:
    """A private HOME for one live test and the environment to run the CLI with.

    ``env`` is complete (not added to the caller's): the user's own agent settings, keys and cao
    variables are left out. :meth:`apply` puts it into ``os.environ`` through pytest's monkeypatch, so
    programs the test starts (a tmux server, a kernel) inherit it.
    """

    root: Path
    home: Path
    env: Mapping[str, str]

    def apply(self, monkeypatch: object) -> None:
        for name in list(os.environ):
            if name not in self.env and name.startswith(LEAKY_PREFIXES):
                monkeypatch.delenv(name, raising=False)  # type: ignore[attr-defined]
        for name, value in self.env.items():
            monkeypatch.setenv(name, value)  # type: ignore[attr-defined]


def make_sandbox(root: Path, *, env: Mapping[str, str] | None = None, path: Sequence[Path] = ()) -> Sandbox:
    """A sandbox under ``root``: ``root/home`` with XDG folders, ``path`` folders first on PATH, and
    ``env`` on top (e.g. a scripted model server's address)."""
    home = root / "home"
    xdg = {"XDG_CONFIG_HOME": home / ".config", "XDG_CACHE_HOME": home / ".cache",
           "XDG_DATA_HOME": home / ".local" / "share", "XDG_STATE_HOME": home / ".local" / "state"}
    for folder in (home, *xdg.values()):
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    base = {name: value for name, value in os.environ.items() if not name.startswith(LEAKY_PREFIXES)}
    search = [str(p) for p in path] + [p for p in os.environ.get("PATH", os.defpath).split(os.pathsep) if p]
    full = {**base, "HOME": str(home), **{k: str(v) for k, v in xdg.items()},
            "PATH": os.pathsep.join(dict.fromkeys(search)), **dict(env or {})}
    return Sandbox(root=root, home=home, env=full)


def stand_in(folder: Path, binary: str, program: Path) -> Path:
    """A launcher named ``binary`` in ``folder`` that runs the Python program ``program`` with this
    interpreter: a stand-in for a CLI not installed here (put ``folder`` first on PATH)."""
    folder.mkdir(parents=True, exist_ok=True)
    launcher = folder / binary
    command = f"exec {shlex.quote(sys.executable)} {shlex.quote(str(program))} \"$@\""
    launcher.write_text(f"#!/bin/sh\n{command}\n", encoding="utf-8")
    launcher.chmod(0o755)
    return launcher
