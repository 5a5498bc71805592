"""A live CLI declared by its tests is installed once, in the background, and waited for."""

from __future__ import annotations

import os

from cao_testkit.models.cli import install_ahead, npm_cli

# Stands in for npm: "install --prefix DIR ... PACKAGE@VERSION" leaves a program that prints the version,
# slowly enough that install() comes while it runs, and notes each run in $FAKE_NPM_LOG.
FAKE_NPM = """#!/bin/sh
echo "$*" >> "$FAKE_NPM_LOG"
sleep 0.5
mkdir -p "$3/node_modules/.bin"
printf '#!/bin/sh\\necho 1.2.3\\n' > "$3/node_modules/.bin/fake-agent"
chmod +x "$3/node_modules/.bin/fake-agent"
"""


def test_install_waits_for_the_install_started_ahead(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "npm").write_text(FAKE_NPM, encoding="utf-8")
    (bin_dir / "npm").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("CAO_LIVE_CLI_CACHE", str(tmp_path / "cache"))
    log = tmp_path / "npm.log"
    cli = npm_cli("fake-agent", "1.2.3", "fake-agent", env={"FAKE_NPM_LOG": str(log)})

    install_ahead([cli])
    installed = cli.install()
    assert installed.version_output == "1.2.3"
    assert installed.binary == tmp_path / "cache" / "fake-agent@1.2.3" / "node_modules" / ".bin" / "fake-agent"
    assert cli.install() == installed
    assert len(log.read_text().splitlines()) == 1, log.read_text()


# Stands in for npm installing a program that runs on a runtime installed beside it: the program's
# first line names the runtime, found on PATH only.
FAKE_NPM_WITH_RUNTIME = """#!/bin/sh
echo "$*" >> "$FAKE_NPM_LOG"
mkdir -p "$3/node_modules/.bin"
printf '#!/bin/sh\\necho 4.5.6\\n' > "$3/node_modules/.bin/fake-runtime"
printf '#!/usr/bin/env fake-runtime\\n' > "$3/node_modules/.bin/fake-agent"
chmod +x "$3/node_modules/.bin/fake-runtime" "$3/node_modules/.bin/fake-agent"
"""


def test_a_cli_runs_on_the_runtime_installed_with_it(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "npm").write_text(FAKE_NPM_WITH_RUNTIME, encoding="utf-8")
    (bin_dir / "npm").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("CAO_LIVE_CLI_CACHE", str(tmp_path / "cache"))
    log = tmp_path / "npm.log"
    cli = npm_cli("fake-agent", "4.5.6", "fake-agent", env={"FAKE_NPM_LOG": str(log)},
                  with_packages=["@fake/runtime@1.0.0"])

    installed = cli.install()
    assert installed.version_output == "4.5.6"
    assert installed.prefix.name == "fake-agent@4.5.6+fake-runtime@1.0.0"
    assert log.read_text().split()[-2:] == ["fake-agent@4.5.6", "@fake/runtime@1.0.0"]
