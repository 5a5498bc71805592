"""The live-CLI installer (``cao_testkit.models.cli``) against the real npm registry.

A small package with a program that reports its version (json5) stands in for an agent CLI, so a
fresh install, reuse, repair and the failure messages are all exercised in a few seconds.
"""

from __future__ import annotations

import os
import shutil
import time

import pytest

from cao_testkit.models.cli import LiveCliUnavailable, install_npm_cli, make_sandbox

pytestmark = [pytest.mark.live_cli, pytest.mark.timeout(120)]

PACKAGE, VERSION, PROGRAM = "json5", "2.2.3", "json5"


def test_fresh_install_then_reuse_then_repair(tmp_path):
    cache = tmp_path / "cache"
    cli = install_npm_cli(PACKAGE, VERSION, PROGRAM, cache=cache)
    assert cli.binary == cache / "json5@2.2.3" / "node_modules" / ".bin" / "json5"
    assert cli.version_output == VERSION
    # Nothing half-done is left next to it.
    assert sorted(p.name for p in cache.iterdir() if not p.name.endswith(".lock")) == ["json5@2.2.3"]

    started = time.monotonic()
    assert install_npm_cli(PACKAGE, VERSION, PROGRAM, cache=cache) == cli
    assert time.monotonic() - started < 1.0  # remembered: no npm, no version check

    # A broken install found by a fresh process (simulated: forget what this one checked) is replaced.
    from cao_testkit.models import cli as module

    module._checked.clear()
    target = cli.binary.resolve()
    target.unlink()
    target.write_text("#!/bin/sh\nexit 3\n")
    target.chmod(0o755)
    repaired = install_npm_cli(PACKAGE, VERSION, PROGRAM, cache=cache)
    assert repaired.version_output == VERSION


def test_unreachable_registry_fails_loudly(tmp_path, monkeypatch):
    monkeypatch.setenv("npm_config_registry", "http://127.0.0.1:9/")
    monkeypatch.setenv("npm_config_fetch_retries", "0")
    monkeypatch.setenv("npm_config_fetch_timeout", "2000")
    monkeypatch.setenv("npm_config_cache", str(tmp_path / "npm-cache"))  # nothing cached to fall back on
    with pytest.raises(LiveCliUnavailable, match=r"npm install json5@2\.2\.3 failed .*registry reachable"):
        install_npm_cli(PACKAGE, VERSION, PROGRAM, cache=tmp_path / "cache")
    assert [p.name for p in (tmp_path / "cache").iterdir() if not p.name.endswith(".lock")] == []


def test_missing_npm_is_named(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(LiveCliUnavailable, match="npm is not installed"):
        install_npm_cli(PACKAGE, VERSION, PROGRAM, cache=tmp_path / "cache")


def test_bad_names_are_refused(tmp_path):
    with pytest.raises(ValueError, match="not an npm package name"):
        install_npm_cli("../evil", VERSION, PROGRAM, cache=tmp_path)
    with pytest.raises(ValueError, match="not an exact package version"):
        install_npm_cli(PACKAGE, "latest; rm -rf /", PROGRAM, cache=tmp_path)


def test_sandbox_keeps_the_users_agent_settings_out(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "users-real-key")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", "/users/own/claude")
    monkeypatch.setenv("OPENAI_API_KEY", "users-openai-key")
    sandbox = make_sandbox(tmp_path / "box", env={"ANTHROPIC_BASE_URL": "http://127.0.0.1:1"},
                           path=[tmp_path / "bin"])
    env = sandbox.env
    assert env["HOME"] == str(tmp_path / "box" / "home") and (tmp_path / "box" / "home" / ".config").is_dir()
    assert "ANTHROPIC_API_KEY" not in env and "CLAUDE_CONFIG_DIR" not in env and "OPENAI_API_KEY" not in env
    assert env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:1"
    assert env["PATH"].split(os.pathsep)[0] == str(tmp_path / "bin")
    sandbox.apply(monkeypatch)
    assert "ANTHROPIC_API_KEY" not in os.environ and os.environ["HOME"] == env["HOME"]
    assert shutil.which("sh") is not None  # the rest of PATH is kept
