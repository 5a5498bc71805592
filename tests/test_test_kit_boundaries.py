"""The line between run time and test time: the kernel imports neither the plugins it would otherwise
depend on at test time (cao-server, cao-tmux, providers) nor the test kit, and no package a user installs
to run cao imports the test kit. Every import counts, those inside functions too."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# The kernel ships the provider template's files (cookiecutter placeholders, not Python) through a link.
TEMPLATE_LINK = ROOT / "cao_kernel" / "provider_template"
KERNEL_MUST_NOT_IMPORT = ("cao_server", "cao_tmux", "cao_testkit", "cao_provider_")


def imported(path: Path) -> set[str]:
    """The absolute module names ``path`` imports."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


def _top(name: str) -> str:
    return name.split(".")[0]


def kernel_sources() -> list[Path]:
    return sorted(p for p in (ROOT / "cao_kernel").rglob("*.py") if TEMPLATE_LINK not in p.parents)


def runtime_packages() -> list[Path]:
    folders = [ROOT / "hookspecs", *(ROOT / "libs").iterdir(), *(ROOT / "plugins").iterdir(),
               *(p for p in (ROOT / "providers").iterdir() if not p.name.startswith("_"))]
    return sorted(f / "src" for f in folders if (f / "src").is_dir() and f.name != "cao-testkit")


def test_the_kernel_imports_no_plugin_it_would_name_and_no_test_kit():
    found = {f"{path.relative_to(ROOT)}: {name}" for path in kernel_sources() for name in imported(path)
             if _top(name).startswith(KERNEL_MUST_NOT_IMPORT)}
    assert not found, sorted(found)


@pytest.mark.parametrize("src", runtime_packages(), ids=lambda src: src.parent.name)
def test_nothing_installed_to_run_cao_imports_the_test_kit(src: Path):
    found = {str(path.relative_to(ROOT)) for path in src.rglob("*.py")
             if "cao_testkit" in map(_top, imported(path))}
    assert not found, sorted(found)
