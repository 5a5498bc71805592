"""The layers hold, and every workspace member declares what it imports.

- ``lint-imports`` keeps every contract in ``[tool.importlinter]`` (the contract imports nothing of ours,
  the kernel no plugin, plugins and providers neither the kernel nor each other), and the contracts name
  every package of the workspace, so a new plugin is held to them from its first commit.
- Every member's ``dependencies`` list what its runtime code imports, directly. The shared venv holds
  every member, so an import of something a member does not declare works here and breaks for a user
  who installs that member alone. Runtime code is the member's package without its test
helpers (modules and packages named ``testing``, whose needs the ``test`` extra declares) and without
imports made only for type checkers (under ``if TYPE_CHECKING:``). An optional extra other than ``test``
declares what only its feature imports.
"""

from __future__ import annotations

import ast
import importlib.metadata
import os
import re
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement_name(text: str) -> str:
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", text)
    assert match is not None, text
    return _normalize(match.group(1))


def _members() -> list[Path]:
    settings = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["uv"]["workspace"]
    excluded = {p.resolve() for pattern in settings.get("exclude", []) for p in ROOT.glob(pattern)}
    found = {p.resolve() for pattern in settings["members"] for p in ROOT.glob(pattern)
             if (p / "pyproject.toml").is_file() and p.resolve() not in excluded}
    return [ROOT, *sorted(found)]


def _packages(member: Path) -> list[Path]:
    """The import packages a member's wheel ships."""
    pyproject = tomllib.loads((member / "pyproject.toml").read_text(encoding="utf-8"))
    packages = pyproject["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"]
    return [member / package for package in packages]


# -- the import contracts --------------------------------------------------------------------------


def _contract(contract_id: str) -> dict:
    settings = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    if contract_id == "root":
        return settings
    return next(c for c in settings["contracts"] if c["id"] == contract_id)


@pytest.fixture(scope="module")
def lint_imports(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``lint-imports`` in a venv of its own, holding the root's ``lint`` group as uv.lock pins it."""
    from cao_testkit.group_venv import group_venv

    return group_venv(ROOT, "lint", tmp_path_factory.mktemp("lint") / "venv") / "lint-imports"


def test_lint_imports_keeps_every_contract(lint_imports: Path):
    # The contracts read the sources, never import them: the package folders on the path are enough.
    folders = [ROOT, *(package.parent for member in _members()[1:] for package in _packages(member))]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(str(folder) for folder in dict.fromkeys(folders))}
    done = subprocess.run([str(lint_imports), "--no-cache"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Contracts: " in done.stdout and " broken" in done.stdout, done.stdout


def test_the_contracts_name_every_package():
    kinds: dict[str, set[str]] = {}
    for member in _members()[1:]:
        kind = member.relative_to(ROOT).parts[0]
        kinds.setdefault(kind, set()).update(package.name for package in _packages(member))
    everything = kinds["libs"] | kinds["plugins"] | kinds["providers"]
    assert set(_contract("root")["root_packages"]) == everything | {"cao_hookspecs", "cao_kernel"}
    assert set(_contract("contract")["forbidden_modules"]) == everything | {"cao_kernel"}
    assert set(_contract("kernel")["forbidden_modules"]) == everything
    assert set(_contract("plugins")["source_modules"]) == everything - {"cao_testkit"}
    assert set(_contract("independence")["modules"]) == kinds["plugins"] | kinds["providers"]


# -- declared dependencies -------------------------------------------------------------------------


def _runtime_sources(package: Path) -> Iterator[Path]:
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package).parts
        if "testing" in parts or path.stem == "testing" or path.is_symlink() or "{{" in str(path):
            continue
        if any(part.startswith("{{") or (package / part).is_symlink() for part in parts):
            continue
        yield path


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST) -> Iterator[tuple[str, int]]:
    """Top-level module names imported at run time, with their line numbers."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            yield from (item for child in node.orelse for item in _imports(ast.Module(body=[child])))
            continue
        if isinstance(node, ast.Import):
            yield from ((alias.name.split(".")[0], node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module.split(".")[0], node.lineno
        else:
            yield from _imports(node)


@cache
def _distributions_of_modules() -> dict[str, list[str]]:
    # Editable installs of workspace members do not show in the metadata's module table: add them.
    found = dict(importlib.metadata.packages_distributions())
    for member in _members():
        name = tomllib.loads((member / "pyproject.toml").read_text(encoding="utf-8"))["project"]["name"]
        for package in _packages(member):
            found[package.name] = [name]
    return found


def _distribution(module: str) -> str | None:
    if module in sys.stdlib_module_names or module == "__future__":
        return None
    found = _distributions_of_modules().get(module)
    assert found, f"no installed distribution provides the module {module!r}"
    return _normalize(found[0])


def _undeclared(member: Path) -> list[str]:
    project = tomllib.loads((member / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    own = _normalize(project["name"])
    # An optional feature's extra (not the test one) declares what only that feature imports.
    extras = [text for name, texts in project.get("optional-dependencies", {}).items() if name != "test"
              for text in texts]
    declared = {own, *(_requirement_name(text) for text in (*project.get("dependencies", ()), *extras))}
    problems = []
    for package in _packages(member):
        for source in _runtime_sources(package):
            tree = ast.parse(source.read_text(encoding="utf-8"), str(source))
            for module, line in _imports(tree):
                dist = _distribution(module)
                if dist is not None and dist not in declared:
                    problems.append(f"{source.relative_to(ROOT)}:{line} imports {module} ({dist})")
    return problems


@pytest.mark.parametrize("member", _members(), ids=lambda p: str(p.relative_to(ROOT)) or "cao-kernel")
def test_runtime_imports_are_declared_dependencies(member: Path):
    problems = _undeclared(member)
    assert not problems, (f"{member.name}: runtime imports not in [project] dependencies:\n"
                          + "\n".join(problems))


def test_the_check_sees_imports_at_any_depth_but_not_for_type_checkers():
    tree = ast.parse(
        "import os\n"
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    import httpx\n"
        "else:\n"
        "    import attrs\n"
        "def f():\n"
        "    import click\n"
        "    from . import sibling\n"
        "class C:\n"
        "    def m(self):\n"
        "        try:\n"
        "            import yaml\n"
        "        except ImportError:\n"
        "            pass\n"
    )
    assert sorted(name for name, _ in _imports(tree)) == ["attrs", "click", "os", "typing", "yaml"]
