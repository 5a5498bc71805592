"""Real agent CLIs for live tests: installed from npm once per machine, run in sandboxed homes.

``install_npm_cli(package, version, bin_name)`` installs ``package@version`` with ``npm install
--prefix`` into ``<cache>/<package>@<version>`` (``CAO_LIVE_CLI_CACHE``, else
``$XDG_CACHE_HOME/cao/live-cli``, else ``~/.cache/cao/live-cli``) and returns the program's path. The
install happens at most once per machine: later calls find the folder and only check the program
answers ``--version`` with that version. Concurrent test processes wait for each other on a lock
file, and a half-done install never becomes visible (it is renamed into place when complete).

When npm or the registry cannot be reached, :class:`LiveCliUnavailable` (an ``AssertionError``)
says so: live tests fail loudly rather than skip.

``Sandbox`` is a throw-away HOME (with XDG folders) and an environment that keeps the user's own
agent configuration and credentials out of the test (variables with :data:`LEAKY_PREFIXES` are
dropped; cao's own variables are left to ``cao_kernel.testing``'s fixtures).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import attrs

__all__ = [
    "CACHE_ENV",
    "LEAKY_PREFIXES",
    "InstalledCli",
    "LiveCliUnavailable",
    "Sandbox",
    "cache_root",
    "install_npm_cli",
    "make_sandbox",
]

CACHE_ENV = "CAO_LIVE_CLI_CACHE"
#: Environment variables that would point a CLI at the user's real account or configuration.
LEAKY_PREFIXES = ("ANTHROPIC_", "CLAUDE", "OPENAI_", "CODEX_", "AWS_", "GOOGLE_", "GEMINI_", "XDG_")
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


def _check(binary: Path, version: str, timeout: float = 60.0) -> str:
    """``binary --version`` output; raises LiveCliUnavailable unless it runs and names ``version``."""
    # A throw-away HOME: some CLIs write into their home folder even for --version, and the user's own
    # must never be touched.
    scratch = tempfile.mkdtemp(prefix="cao-cli-version-")
    env = {**os.environ, "HOME": scratch, "CODEX_HOME": os.path.join(scratch, ".codex"),
           "CLAUDE_CONFIG_DIR": os.path.join(scratch, ".claude")}
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


def install_npm_cli(package: str, version: str, bin_name: str, *, cache: Path | None = None,
                    timeout: float = _INSTALL_TIMEOUT) -> InstalledCli:
    """Install ``package@version`` from the npm registry (once per machine) and return its program."""
    if not re.fullmatch(r"(@[a-z0-9][\w.-]*/)?[a-z0-9][\w.-]*", package):
        raise ValueError(f"not an npm package name: {package!r}")
    if not re.fullmatch(r"[0-9A-Za-z][0-9A-Za-z.+-]*", version):
        raise ValueError(f"not an exact package version: {version!r}")
    root = (cache or cache_root()).expanduser()
    folder = root / _folder_name(package, version)
    binary = folder / "node_modules" / ".bin" / bin_name
    with _checked_lock:
        if _checked.get(binary) is not None:
            return InstalledCli(package=package, version=version, prefix=folder, binary=binary,
                                version_output=_checked[binary])
    with _locked(root / f".{folder.name}.lock"):
        if binary.exists():
            try:
                output = _check(binary, version)
            except LiveCliUnavailable:
                shutil.rmtree(folder, ignore_errors=True)  # a broken install is replaced, not reused
            else:
                return _remember(package, version, folder, binary, output)
        _npm_install(package, version, root, folder, timeout)
        output = _check(binary, version)
        return _remember(package, version, folder, binary, output)


def _remember(package: str, version: str, folder: Path, binary: Path, output: str) -> InstalledCli:
    with _checked_lock:
        _checked[binary] = output
    return InstalledCli(package=package, version=version, prefix=folder, binary=binary, version_output=output)


def _npm_install(package: str, version: str, root: Path, folder: Path, timeout: float) -> None:
    npm = shutil.which("npm")
    if npm is None:
        raise LiveCliUnavailable(f"npm is not installed: cannot install {package}@{version} for the live "
                                 "tests (install Node.js and npm)")
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=root))
    try:
        argv = [npm, "install", "--prefix", str(staging), "--no-audit", "--no-fund", "--loglevel=error",
                f"{package}@{version}"]
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False,
                                  stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired as exc:
            raise LiveCliUnavailable(f"npm install {package}@{version} did not finish within {timeout:g} s "
                                     "(is the npm registry reachable?)") from exc
        if done.returncode != 0:
            tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-15:])
            raise LiveCliUnavailable(f"npm install {package}@{version} failed (exit {done.returncode}); "
                                     f"is the npm registry reachable?\n{tail}")
        if folder.exists():
            shutil.rmtree(folder)
        os.rename(staging, folder)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


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
