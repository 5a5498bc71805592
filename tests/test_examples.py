"""Every example in examples/ runs as a real program and prints what its docstring promises.

Each top-level ``examples/*.py`` lists, in its module docstring under a line ``Output includes::``,
indented lines that must appear in its standard output. The example runs with this environment's
Python (the workspace venv), a private cao home (the autouse ``cao_home`` fixture) and a private tmux
socket folder, so an example that starts tmux never touches the user's server.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
MARKER = "Output includes::"


def promised_lines(source: str) -> list[str]:
    """The indented lines that follow ``Output includes::`` in a module's docstring."""
    lines = (ast.get_docstring(ast.parse(source)) or "").splitlines()
    stripped = [line.strip() for line in lines]
    if MARKER not in stripped:
        return []
    promised: list[str] = []
    for line in lines[stripped.index(MARKER) + 1:]:
        if not line.strip():
            if promised:
                break
            continue
        if not line.startswith(" "):
            break
        promised.append(line.strip())
    return promised


def test_the_embedding_example_exists():
    assert ROOT / "examples" / "embed_kernel.py" in EXAMPLES


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_example_runs_and_prints_what_it_promises(example: Path, tmp_path: Path):
    promised = promised_lines(example.read_text(encoding="utf-8"))
    assert promised, f"{example.name}: list lines its output includes under {MARKER!r} in its docstring"
    env = dict(os.environ, TMUX_TMPDIR=str(tmp_path))
    env.pop("TMUX", None)
    proc = subprocess.run(
        [sys.executable, str(example)], cwd=tmp_path, env=env, stdin=subprocess.DEVNULL,
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    output = proc.stdout.splitlines()
    missing = [line for line in promised if line not in (o.strip() for o in output)]
    assert not missing, f"{example.name} did not print {missing}; it printed:\n{proc.stdout}"


def test_promised_lines_parser_reads_only_the_indented_block():
    source = '"""Title.\n\nOutput includes::\n\n    first line\n      indented second\n\nAfter.\n"""\n'
    assert promised_lines(source) == ["first line", "indented second"]
    assert promised_lines('"""No promise here."""') == []
    assert promised_lines("x = 1") == []
