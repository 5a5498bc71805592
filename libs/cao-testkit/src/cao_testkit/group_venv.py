"""A venv of its own for one dependency group of the workspace root, pinned as uv.lock pins it.

For test tools kept out of the workspace's venv (the root ``pyproject.toml`` says why, per group): the
test builds the venv once per module and runs the tool from its ``bin`` folder as a subprocess.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

__all__ = ["group_venv"]


def group_venv(root: Path, group: str, venv: Path) -> Path:
    """Create ``venv`` holding the ``group`` dependency group of the workspace at ``root``; its ``bin``."""
    uv = shutil.which("uv")
    assert uv is not None, "uv is not on PATH (scripts/bootstrap.sh installs it)"

    def run(*args: str, stdin: str | None = None) -> str:
        done = subprocess.run([uv, *args], cwd=root, input=stdin, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, f"uv {' '.join(args)}:\n{done.stdout}{done.stderr}"
        return done.stdout

    pins = run("export", "--only-group", group, "--locked", "--no-hashes", "--no-emit-project", "--quiet")
    run("venv", "--quiet", "--python", sys.executable, str(venv))
    run("pip", "install", "--quiet", "--python", str(venv / "bin" / "python"), "-r", "-", stdin=pins)
    return venv / "bin"
