"""Neither Kiro CLI nor Amazon Q Developer CLI can be installed here, so the end-to-end check is the one
a user without them meets: ``cao launch`` through a real cao server, over a real kernel with the tmux
backend on a private socket, answers with an error naming the program to install and how, and leaves
nothing behind."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.tmux

CAO = str(Path(sys.executable).with_name("cao"))


def path_without(program: str) -> str:
    """The current PATH minus every folder holding ``program`` (so the test means the same on a
    machine where it is installed)."""
    folders = [f for f in os.environ.get("PATH", "").split(os.pathsep) if f and not (Path(f) / program).exists()]
    return os.pathsep.join(folders)


@pytest.fixture
def no_cli(case, tmp_path, monkeypatch):
    """This process (where the in-thread server's kernel runs) without the CLI and with an empty HOME."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("PATH", path_without(case.binary))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv(case.binary_env, raising=False)
    assert shutil.which(case.binary) is None
    return home


@pytest.fixture
def server(case, no_cli, private_tmux, cao_home):
    """A real cao server in a thread over a real kernel: tmux backend on the private socket and the
    provider, no default provider configured (so kiro_cli is the default, as upstream)."""
    from cao_kernel.kernel import Kernel
    from cao_kernel.plugins import LoadPolicy
    from cao_testkit.serve import serve_in_thread

    kernel = Kernel(policy=LoadPolicy(only=("tmux", case.name, "inbox_sqlite")), home=cao_home,
                    settings=dict(private_tmux.settings))
    with serve_in_thread(kernel) as running:
        running.kernel = kernel  # type: ignore[attr-defined]
        yield running


def cao(server, *args: str) -> subprocess.CompletedProcess[str]:
    host, port = server.url.removeprefix("http://").rsplit(":", 1)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAO_") and k not in ("TMUX", "TMUX_PANE")}
    env.update({"CAO_API_HOST": host.strip("[]"), "CAO_API_PORT": port, "CAO_LOAD_PLUGINS": "server"})
    return subprocess.run([CAO, *args], env=env, capture_output=True, text=True, timeout=60, check=False,
                          stdin=subprocess.DEVNULL)


def assert_names_the_missing_cli(case, done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert done.stdout == ""
    message = done.stderr
    assert message.startswith(f"Error: provider '{case.name}' cannot launch profile 'developer': "), message
    for words in case.missing_words:
        assert words in message
    assert case.binary_env in message


def assert_nothing_left(case, private_tmux, home: Path) -> None:
    sessions = private_tmux.run("list-sessions", "-F", "#{session_name}", check=False)
    assert [s for s in sessions.stdout.split() if s.startswith("cao-")] == []
    # Not even the folder above the agent folder (~/.kiro, ~/.aws).
    assert not (home / case.agent_dir[0]).exists()


def test_launch_with_the_cli_missing_names_the_program_to_install(case, server, private_tmux, no_cli, tmp_path):
    done = cao(server, "launch", "--agents", "developer", "--provider", case.name, "--headless",
               "--auto-approve", "--working-directory", str(tmp_path), "--session-name", f"no{case.binary}")
    assert_names_the_missing_cli(case, done)
    assert_nothing_left(case, private_tmux, no_cli)


@pytest.mark.parametrize("case", ["kiro_cli"], indirect=True)
def test_kiro_cli_is_the_default_provider(case, server, private_tmux, no_cli, tmp_path):
    """No --provider, no provider in the profile, no CAO_DEFAULT_PROVIDER: the kernel picks kiro_cli."""
    done = cao(server, "launch", "--agents", "developer", "--headless", "--auto-approve",
               "--working-directory", str(tmp_path))
    assert_names_the_missing_cli(case, done)
    assert_nothing_left(case, private_tmux, no_cli)
