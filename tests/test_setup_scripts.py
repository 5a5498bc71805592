"""The set-up scripts: syntax, the README's two commands, CI's entry point, bootstrap's check mode,
its refusal of bad arguments, and the exit codes of scripts/test.

These run the real scripts as subprocesses. Nothing here installs anything: on a machine where the
suite runs, bootstrap has already installed tmux, uv and the environment, so a full bootstrap run is
a no-op sync. Where a test needs a tool to be missing, it builds a PATH folder without that tool;
apt-get and sudo in it are recorders, so a test fails (rather than installs) if they are called.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]


def _is_shell_script(path: Path) -> bool:
    if not path.is_file():
        return False
    with path.open("rb") as f:
        first = f.readline()
    return first.startswith(b"#!") and re.search(rb"[/ ](ba)?sh\s*$", first) is not None


# scripts/ may also hold helper programs in other languages; every shell script in it is checked.
SCRIPTS = sorted(p for p in (ROOT / "scripts").iterdir() if _is_shell_script(p)) + [ROOT / ".ci" / "run"]
BOOTSTRAP = ROOT / "scripts" / "bootstrap.sh"
RECORDER = '#!/bin/sh\necho "$(basename "$0") $*" >> "{log}"\nexit 100\n'


def run(args: list[str], *, env: dict[str, str] | None = None, cwd: Path = ROOT,
        timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=timeout, check=False)


def readme_commands() -> list[str]:
    """The lines of the README's first fenced block: the two set-up commands."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(r"^```[^\n]*\n(.*?)^```", text, re.DOTALL | re.MULTILINE)
    assert match, "README.md has no fenced block"
    return [line for line in match.group(1).splitlines() if line.strip()]


def path_without(tmp_path: Path, *missing: str) -> tuple[str, Path]:
    """A PATH of one folder linking every program on the current PATH except ``missing``; apt-get and
    sudo are replaced by recorders writing to the returned log."""
    farm = tmp_path / "bin"
    farm.mkdir()
    log = tmp_path / "installer-calls.log"
    for folder in os.environ["PATH"].split(os.pathsep):
        if not folder or not Path(folder).is_dir():
            continue
        for program in Path(folder).iterdir():
            target = farm / program.name
            if program.name in missing or target.exists() or target.is_symlink():
                continue
            if program.is_file() and os.access(program, os.X_OK):
                target.symlink_to(program)
    for name in ("apt-get", "sudo"):
        recorder = farm / name
        if recorder.is_symlink():
            recorder.unlink()
        recorder.write_text(RECORDER.format(log=log))
        recorder.chmod(0o755)
    return str(farm), log


def test_the_setup_scripts_are_all_found():
    names = {str(p.relative_to(ROOT)) for p in SCRIPTS}
    assert {"scripts/bootstrap.sh", "scripts/demo", "scripts/test", ".ci/run"} <= names
    assert not _is_shell_script(Path(__file__))


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_script_parses_and_is_strict(script: Path):
    proc = run(["bash", "-n", str(script)])
    assert proc.returncode == 0, proc.stderr
    lines = script.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "#!/usr/bin/env bash"
    assert "set -euo pipefail" in lines


def test_readme_begins_with_exactly_two_setup_commands():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    before_block = text[: text.index("```")]
    paragraphs = [p for p in re.split(r"\n\s*\n", before_block) if p.strip()]
    assert paragraphs[0].startswith("# ")
    assert len(paragraphs) == 2, "the README starts with its title, one intro paragraph, then the commands"
    commands = readme_commands()
    assert len(commands) == 2, commands
    for command in commands:
        argv = shlex.split(command)
        assert argv[0] == "bash" and len(argv) == 2, command
        assert (ROOT / argv[1]).is_file(), f"{command}: no such script"
    assert commands[1] == "bash scripts/test"


def test_ci_runs_exactly_the_readme_test_command():
    test_command = readme_commands()[1]
    ci_lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()]
    commands = [line for line in ci_lines if line and not line.startswith("#")]
    assert test_command in commands
    assert commands[-1] == test_command, "the test command must be CI's last word (its exit code is CI's)"


def test_bootstrap_check_passes_silently_when_everything_is_installed():
    proc = run(["bash", str(BOOTSTRAP), "--check"])
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")


def test_bootstrap_is_quiet_and_idempotent_when_everything_is_installed():
    for _ in range(2):
        proc = run(["bash", str(BOOTSTRAP)])
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")


def test_bootstrap_check_names_a_missing_tmux_and_installs_nothing(tmp_path: Path):
    path, log = path_without(tmp_path, "tmux")
    proc = run(["bash", str(BOOTSTRAP), "--check"], env=dict(os.environ, PATH=path))
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("bootstrap: missing: tmux"), proc.stderr
    assert not log.exists(), log.read_text()


def test_the_demo_needs_no_chromium(tmp_path: Path):
    # Only the tests drive a browser: a machine without chromium passes the demo's check.
    path, log = path_without(tmp_path, "chromium")
    proc = run(["bash", str(BOOTSTRAP), "--check"], env=dict(os.environ, PATH=path))
    assert (proc.returncode, proc.stderr) == (0, ""), proc.stderr
    assert not log.exists(), log.read_text()


def test_the_test_setup_installs_chromium_with_its_fonts_when_it_is_missing(tmp_path: Path):
    # apt-get updates, then refuses the install: the set-up must say what it could not install.
    path, log = path_without(tmp_path, "chromium")
    apt = Path(path) / "apt-get"
    apt.write_text(f'#!/bin/sh\necho "apt-get $*" >> "{log}"\n[ "$1" = update ] && exit 0\nexit 100\n')
    proc = run(["bash", "-c", f"source {shlex.quote(str(BOOTSTRAP))} && bootstrap_browser"],
               env=dict(os.environ, PATH=path))
    assert proc.returncode == 1
    refused = "bootstrap: chromium is missing and apt-get could not install it"
    # In CI the failed command's own output comes first (here, none: an empty line).
    assert proc.stderr.strip().splitlines()[-1].startswith(refused), proc.stderr
    calls = log.read_text()
    assert "chromium fonts-liberation fonts-dejavu-core" in calls, calls
    assert "bootstrap_browser" in (ROOT / "scripts" / "test").read_text(encoding="utf-8")


def test_bootstrap_check_names_a_missing_uv(tmp_path: Path):
    # A copy of the script makes tmp_path the repository root, so no uv in .tools/ can be found.
    (tmp_path / "scripts").mkdir()
    shutil.copy(BOOTSTRAP, tmp_path / "scripts" / "bootstrap.sh")
    path, log = path_without(tmp_path, "uv")
    env = dict(os.environ, PATH=path, HOME=str(tmp_path), PYTHONUSERBASE=str(tmp_path / "user"))
    proc = run(["bash", str(tmp_path / "scripts" / "bootstrap.sh"), "--check"], env=env)
    assert proc.returncode == 1
    assert proc.stderr.startswith("bootstrap: missing: uv"), proc.stderr
    assert not log.exists()
    assert not (tmp_path / ".tools").exists()


@settings(max_examples=25, deadline=None)
@given(st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=20).filter(
    lambda argument: argument != "--check"))
def test_bootstrap_refuses_unknown_arguments_and_does_nothing(tmp_path_factory, argument: str):
    root = tmp_path_factory.mktemp("bootstrap-copy")
    (root / "scripts").mkdir()
    shutil.copy(BOOTSTRAP, root / "scripts" / "bootstrap.sh")
    proc = run(["bash", str(root / "scripts" / "bootstrap.sh"), argument], cwd=root)
    assert proc.returncode == 2
    assert proc.stderr == f"bootstrap: unknown option '{argument}' (expected nothing or --check)\n"
    assert sorted(p.name for p in root.iterdir()) == ["scripts"]


@pytest.mark.parametrize(
    ("test_file", "expected"),
    [
        (None, 5),  # no tests collected must fail the run
        ("def test_fails():\n    assert False\n", 1),
        ("def test_passes():\n    assert True\n", 0),
    ],
    ids=["no-tests", "failing", "passing"],
)
def test_scripts_test_returns_pytests_exit_code(tmp_path: Path, test_file: str | None, expected: int):
    suite = tmp_path / "suite"
    suite.mkdir()
    if test_file is not None:
        (suite / "test_inner.py").write_text(test_file)
    proc = run(["bash", str(ROOT / "scripts" / "test"), "-p", "no:cacheprovider", str(suite)])
    assert proc.returncode == expected, proc.stdout + proc.stderr


def test_scripts_demo_runs(tmp_path: Path):
    # A private tmux socket folder: whatever the demo starts never reaches the user's tmux server.
    env = dict(os.environ, TMUX_TMPDIR=str(tmp_path))
    env.pop("TMUX", None)
    proc = run(["bash", str(ROOT / "scripts" / "demo")], env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip()
