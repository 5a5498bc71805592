"""Every workspace member follows the packaging rules of a cao plugin, or of a cao library.

Members are found from the root ``pyproject.toml`` (``[tool.uv.workspace]`` globs minus excludes), so a
new plugin, provider or library is checked the moment its folder exists. Plugins (``plugins/*``) and
providers (``providers/*``) declare exactly one ``cao`` entry point; libraries (``libs/*``) hold code that
plugins share, and declare none: installing one must not add a plugin.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from functools import cache
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
ENTRY_POINT_GROUP = "cao"
# A plugin's entry-point module is imported by `cao --help`: none of these may load with it.
# The test kit's folder: test-only, so it may depend on the kernel and the plugins its parts drive.
TEST_KIT = "cao-testkit"
HEAVY_MODULES = ("libtmux", "mcp", "starlette", "uvicorn", "httpx", "cattrs", "cao_kernel")


def _load(path: Path) -> dict[str, Any]:
    with path.open("rb") as fh:
        return tomllib.load(fh)


def _members() -> list[Path]:
    workspace = _load(ROOT / "pyproject.toml")["tool"]["uv"]["workspace"]
    excluded = {path.resolve() for pattern in workspace.get("exclude", []) for path in ROOT.glob(pattern)}
    found = {
        path.resolve() for pattern in workspace["members"] for path in ROOT.glob(pattern)
        if path.is_dir() and path.resolve() not in excluded
    }
    return sorted(found)


MEMBERS = _members()
PLUGINS = [m for m in MEMBERS if m.parent.name in ("plugins", "providers")]
LIBS = [m for m in MEMBERS if m.parent.name == "libs"]


def _id(member: Path) -> str:
    return str(member.relative_to(ROOT))


def _requirement_name(requirement: str) -> str:
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    assert match, f"unparsable requirement {requirement!r}"
    return re.sub(r"[-_.]+", "-", match.group(1)).lower()


@cache
def _project(member: Path) -> dict[str, Any]:
    return _load(member / "pyproject.toml")


def _entry_points(member: Path) -> dict[str, str]:
    return dict(_project(member)["project"].get("entry-points", {}).get(ENTRY_POINT_GROUP, {}))


def _package_name(member: Path) -> str:
    return _project(member)["project"]["name"].replace("-", "_")


def test_workspace_has_the_expected_members():
    ids = [_id(m) for m in MEMBERS]
    assert "hookspecs" in ids
    assert PLUGINS, "no plugin or provider found"
    assert LIBS, "no library found under libs/"
    assert not any(i.startswith("providers/_template") for i in ids)


@pytest.mark.parametrize("member", MEMBERS, ids=_id)
def test_member_pyproject_parses_and_names_the_project(member: Path):
    project = _project(member)["project"]
    assert re.fullmatch(r"cao-[a-z0-9]+(-[a-z0-9]+)*", project["name"]), project["name"]
    assert project.get("version") and project.get("description")
    assert project.get("requires-python") == ">=3.11"


@pytest.mark.parametrize("member", MEMBERS, ids=_id)
def test_member_has_readme_and_tests(member: Path):
    assert (member / "README.md").is_file(), f"{_id(member)} has no README.md"
    tests = sorted((member / "tests").glob("test_*.py")) if (member / "tests").is_dir() else []
    assert tests, f"{_id(member)} has no tests/test_*.py"


@pytest.mark.parametrize("member", MEMBERS, ids=_id)
def test_member_depends_on_hookspecs_never_on_the_kernel(member: Path):
    project = _project(member)["project"]
    runtime = {_requirement_name(r) for r in project.get("dependencies", [])}
    extras = project.get("optional-dependencies", {})
    # The `test` extra may name the kernel: its testing kit runs the package's tests. Nothing a user
    # installs to run the plugin may; the test kit itself is installed only to test.
    optional = {_requirement_name(r) for name, extra in extras.items() if name != "test" for r in extra}
    if member.name != TEST_KIT:
        assert "cao-kernel" not in runtime | optional, f"{_id(member)} depends on cao-kernel"
    # Plugins and providers implement the contract. A library may be plain code with no cao dependency
    # at all (cao-toml-core); one that uses the contract declares it like any plugin.
    uses_contract = any("cao_hookspecs" in path.read_text(encoding="utf-8")
                        for path in (member / "src").rglob("*.py"))
    if member.parent.name in ("plugins", "providers") or (member.parent.name == "libs" and uses_contract):
        assert "cao-hookspecs" in runtime, f"{_id(member)} does not depend on cao-hookspecs"


# A second package a distribution ships beside its own: upstream's workflow scripts import
# ``cao_workflow``, so cao-workflows provides it (standard library only, imported by no plugin).
SHIPPED_ALONGSIDE = {"cao-workflows": {"src/cao_workflow"}}


@pytest.mark.parametrize("member", MEMBERS, ids=_id)
def test_member_wheel_holds_only_its_package(member: Path):
    package = _package_name(member)
    hatch = _project(member).get("tool", {}).get("hatch", {})
    packages = hatch.get("build", {}).get("targets", {}).get("wheel", {}).get("packages")
    assert packages[:1] == [f"src/{package}"], f"{_id(member)}: wheel packages {packages}"
    assert set(packages[1:]) <= SHIPPED_ALONGSIDE.get(member.name, set()), f"{_id(member)}: {packages}"
    assert (member / "src" / package / "__init__.py").is_file()


@pytest.mark.parametrize("member", PLUGINS, ids=_id)
def test_plugin_declares_exactly_one_entry_point(member: Path):
    entry_points = _entry_points(member)
    assert len(entry_points) == 1, f"{_id(member)} declares {entry_points or 'no'} entry points in group cao"
    ((name, target),) = entry_points.items()
    assert re.fullmatch(r"[a-z][a-z0-9_]*", name), f"entry-point name {name!r} is not snake_case"
    assert target.split(":")[0].split(".")[0] == _package_name(member), target


def test_entry_point_names_are_unique_across_the_workspace():
    owners: dict[str, list[str]] = {}
    for member in MEMBERS:
        for name in _entry_points(member):
            owners.setdefault(name, []).append(_id(member))
    duplicates = {name: who for name, who in owners.items() if len(who) > 1}
    assert not duplicates, f"entry-point names used twice: {duplicates}"


def test_hookspecs_declare_no_entry_point():
    assert _entry_points(ROOT / "hookspecs") == {}


@pytest.mark.parametrize("member", LIBS, ids=_id)
def test_library_declares_no_entry_point(member: Path):
    entry_points = _entry_points(member)
    assert entry_points == {}, f"{_id(member)} is a library but declares cao entry points {entry_points}"


@pytest.mark.parametrize("member", LIBS, ids=_id)
def test_members_depending_on_a_library_take_it_from_the_workspace(member: Path):
    # Without the source, uv would look the library up on a package index instead of using this folder.
    library = _project(member)["project"]["name"]
    users = [m for m in MEMBERS
             if library in {_requirement_name(r) for r in _project(m)["project"].get("dependencies", [])}]
    for user in users:
        source = _project(user).get("tool", {}).get("uv", {}).get("sources", {}).get(library, {})
        assert source.get("workspace") is True, f"{_id(user)} depends on {library} without a workspace source"


_IMPORT_PROBE = """
import importlib, json, sys
module = importlib.import_module(sys.argv[1])
heavy = json.loads(sys.argv[2])
# A module marked absent (None) was kept out, not loaded.
loaded = [m for m, mod in sys.modules.items() if mod is not None]
print(json.dumps(sorted(m for m in loaded if m.split(".")[0] in heavy)))
"""


@pytest.mark.parametrize("member", PLUGINS, ids=_id)
def test_entry_point_module_imports_without_heavy_libraries(member: Path):
    entry_points = _entry_points(member)
    assert entry_points, f"{_id(member)} has no entry point"
    module = next(iter(entry_points.values())).split(":")[0]
    proc = subprocess.run(
        [sys.executable, "-c", _IMPORT_PROBE, module, json.dumps(HEAVY_MODULES)],
        capture_output=True, text=True, timeout=60, cwd=member,
    )
    assert proc.returncode == 0, f"importing {module} failed:\n{proc.stderr}"
    assert json.loads(proc.stdout) == [], f"importing {module} loads {proc.stdout.strip()}"


def test_root_wheel_holds_only_the_kernel():
    root = _load(ROOT / "pyproject.toml")
    assert root["project"]["name"] == "cao-kernel"
    assert root["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"] == ["cao_kernel"]
    assert "cao-hookspecs" in {_requirement_name(r) for r in root["project"]["dependencies"]}


def test_root_sources_point_at_workspace_members():
    # Every workspace package the root names in [tool.uv.sources] must exist as a member.
    sources = _load(ROOT / "pyproject.toml")["tool"]["uv"].get("sources", {})
    member_names = {_project(m)["project"]["name"] for m in MEMBERS}
    workspace_sources = {name for name, source in sources.items() if source.get("workspace")}
    missing = workspace_sources - member_names
    assert not missing, f"[tool.uv.sources] names packages that are not workspace members: {missing}"


def test_httpx_does_not_bring_its_command_line_tool_into_cao_processes():
    """rich is installed wherever Textual is (cao console), and httpx then imports its own command-line
    tool, rich and pygments with it (about 90 ms), into every process that talks HTTP. cao's contract
    package, which every cao process imports first, keeps that tool out."""
    probe = ("import sys, cao_hookspecs, httpx\n"
             "print(sorted(m for m in ('rich', 'pygments', 'httpx._main') if sys.modules.get(m)))\n"
             "print(httpx.Client is not None)")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:2] == ["[]", "True"], proc.stdout
