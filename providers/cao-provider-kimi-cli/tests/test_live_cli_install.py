"""The PyPI installer of live CLIs (``cao_testkit.models.cli.install_pypi_cli``) against real PyPI.

A small package with a program that reports its version (pycodestyle) stands in for an agent CLI, so a
fresh install, reuse, repair, the choice of interpreter and the failure messages are all exercised in
a few seconds.
"""

from __future__ import annotations

import os
import sys
import time

import pytest

from cao_testkit.models.cli import LiveCliUnavailable, find_python, install_pypi_cli

pytestmark = [pytest.mark.live_cli, pytest.mark.timeout(180)]

PACKAGE, VERSION, PROGRAM = "pycodestyle", "2.12.1", "pycodestyle"
THIS = f"{sys.version_info.major}.{sys.version_info.minor}"


def _visible(cache):
    return sorted(p.name for p in cache.iterdir() if not p.name.endswith(".lock"))


def test_fresh_install_then_reuse_then_repair(tmp_path):
    cache = tmp_path / "cache"
    cli = install_pypi_cli(PACKAGE, VERSION, PROGRAM, cache=cache)
    folder = f"pypi-pycodestyle@2.12.1-py{THIS}"
    assert cli.binary == cache / folder / "bin" / "pycodestyle"
    assert cli.version_output == VERSION
    # Nothing half-done is left next to it, and the finished folder names no staging folder: it was
    # built relocatable and renamed into place.
    assert _visible(cache) == [folder]
    assert ".pypi-" not in cli.binary.read_text()

    started = time.monotonic()
    assert install_pypi_cli(PACKAGE, VERSION, PROGRAM, cache=cache) == cli
    assert time.monotonic() - started < 1.0  # remembered: no uv, no version check

    # A broken install found by a fresh process (simulated: forget what this one checked) is replaced.
    from cao_testkit.models import cli as module

    module._checked.clear()
    cli.binary.unlink()
    cli.binary.write_text("#!/bin/sh\nexit 3\n")
    cli.binary.chmod(0o755)
    repaired = install_pypi_cli(PACKAGE, VERSION, PROGRAM, cache=cache)
    assert repaired.version_output == VERSION
    assert _visible(cache) == [folder]


def test_a_newer_interpreter_found_on_the_machine_builds_the_environment(tmp_path):
    """Agent CLIs may need a newer Python than the one running the tests (Kimi CLI needs 3.12+): one is
    looked for on the machine, never downloaded."""
    try:
        interpreter, version = find_python(">=3.12")
    except LiveCliUnavailable:
        if os.environ.get("CI"):
            raise
        pytest.skip("this machine has no Python >= 3.12 (CI machines do, and fail here without one)")
    assert version >= (3, 12)
    cli = install_pypi_cli(PACKAGE, VERSION, PROGRAM, python=">=3.12", cache=tmp_path / "cache")
    assert cli.prefix.name == f"pypi-pycodestyle@2.12.1-py{version[0]}.{version[1]}"
    config = (cli.prefix / "pyvenv.cfg").read_text()
    minor = f"{version[0]}.{version[1]}."
    assert f"version_info = {minor}" in config or f"version = {minor}" in config
    assert find_python(interpreter) == (interpreter, version)


def test_no_such_interpreter_is_named(tmp_path):
    with pytest.raises(LiveCliUnavailable, match=r"no Python 3\.99 on this machine .* never downloads one"):
        install_pypi_cli(PACKAGE, VERSION, PROGRAM, python="3.99", cache=tmp_path / "cache")
    with pytest.raises(LiveCliUnavailable, match="is not a Python interpreter that runs here"):
        find_python(tmp_path / "no-python")


def test_a_date_limit_is_applied_to_the_resolution(tmp_path):
    """``exclude_newer`` resolves as PyPI was then: 2.12.1 did not exist at the start of 2024."""
    with pytest.raises(LiveCliUnavailable, match=r"uv pip install pycodestyle==2\.12\.1 failed"):
        install_pypi_cli(PACKAGE, VERSION, PROGRAM, exclude_newer="2024-01-01", cache=tmp_path / "cache")
    assert _visible(tmp_path / "cache") == []


def test_unreachable_index_fails_loudly(tmp_path, monkeypatch):
    for name in ("UV_INDEX", "UV_EXTRA_INDEX_URL", "UV_FIND_LINKS", "UV_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("UV_DEFAULT_INDEX", "http://127.0.0.1:9/simple")
    monkeypatch.setenv("UV_INDEX_URL", "http://127.0.0.1:9/simple")
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uv-cache"))  # nothing cached to fall back on
    monkeypatch.setenv("UV_NO_CONFIG", "1")
    monkeypatch.setenv("UV_HTTP_RETRIES", "0")
    with pytest.raises(LiveCliUnavailable, match=r"uv pip install pycodestyle==2\.12\.1 failed .*PyPI"):
        install_pypi_cli(PACKAGE, VERSION, PROGRAM, cache=tmp_path / "cache")
    assert _visible(tmp_path / "cache") == []


def test_missing_uv_is_named(tmp_path, monkeypatch):
    monkeypatch.delenv("UV", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(LiveCliUnavailable, match="uv is not installed"):
        install_pypi_cli(PACKAGE, VERSION, PROGRAM, cache=tmp_path / "cache")


def test_bad_names_are_refused(tmp_path):
    with pytest.raises(ValueError, match="not a PyPI package name"):
        install_pypi_cli("../evil", VERSION, PROGRAM, cache=tmp_path)
    with pytest.raises(ValueError, match="not an exact package version"):
        install_pypi_cli(PACKAGE, "latest; rm -rf /", PROGRAM, cache=tmp_path)
    with pytest.raises(ValueError, match="not a program name"):
        install_pypi_cli(PACKAGE, VERSION, "../bin/sh", cache=tmp_path)
    with pytest.raises(ValueError, match="exclude_newer must be a date"):
        install_pypi_cli(PACKAGE, VERSION, PROGRAM, exclude_newer="yesterday", cache=tmp_path)
