"""Each provider and plugin package passes its own tests installed alone into a fresh venv that holds only
what it declares: its dependencies and its ``test`` extra.

Packages are found by globbing ``providers/*`` and ``plugins/*`` (the template excepted), so a new one is
covered as soon as its folder exists. Workspace packages come from wheels built once per run, the rest
from PyPI (``scripts/isolated_venv.py`` does the work and can be run by hand). Tests of real agent CLIs
(``live_cli``) are left to the main run. The runs start with the test session and go on while the main
run's other tests do, one at a time so that those keep a core; these tests come last, and once the run
reaches them two packages go at a time (``CAO_ISOLATED_WORKERS``): most of their time goes to waiting on
tmux and subprocesses, not to the CPU.
"""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
TEST_NAME = "test_package_passes_its_tests_installed_alone"

# The first isolated run waits for wheel builds and for the runs queued before it.
SLOW = [pytest.mark.slow, pytest.mark.timeout(900)]


def load_isolation() -> Any:
    """``scripts/isolated_venv.py`` as a module, loaded once per process (both test modules share it)."""
    name = "cao_isolated_venv"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / "isolated_venv.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


isolation = load_isolation()
PACKAGES = isolation.package_folders()


def _id(folder: Path) -> str:
    return str(folder.relative_to(ROOT))


@pytest.fixture(scope="session")
def isolated_runs(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Every selected package's isolated run (the root conftest starts them with the session, and moves
    these tests to its end): from the first of these tests on, this run only waits, so every worker may
    go."""
    selected = [item.callspec.params["package"] for item in request.session.items
                if getattr(item, "originalname", "") == TEST_NAME and hasattr(item, "callspec")]
    runs = isolation.package_runs(request.config, tmp_path_factory, selected)
    runs.widen()
    return runs.futures


@pytest.mark.parametrize("package", [pytest.param(p, marks=SLOW) for p in PACKAGES], ids=_id)
def test_package_passes_its_tests_installed_alone(package: Path,
                                                  isolated_runs: dict[Path, Future[Any]]) -> None:
    outcome = isolated_runs[package].result()
    assert outcome.ok, f"{_id(package)} installed alone (with its [test] extra):\n{outcome.report}"


def test_every_provider_and_plugin_is_covered():
    names = {_id(p) for p in PACKAGES}
    assert {"providers/cao-provider-mock", "providers/cao-provider-claude-code",
            "providers/cao-provider-codex", "plugins/cao-tmux", "plugins/cao-server"} <= names
    assert not any(name.startswith("providers/_") for name in names)


def test_closure_follows_extras_and_dependencies():
    house = isolation.WheelHouse(Path("unused"))
    try:
        # cao-mcp needs cao-server at run time, the mock cao-launch-core and cao-screen-core; its mcp extra
        # brings no workspace package.
        assert house.closure(["cao-mcp", "cao-provider-mock[mcp]"]) == [
            "cao-hookspecs", "cao-launch-core", "cao-mcp", "cao-provider-mock", "cao-screen-core", "cao-server"]
        kernel = house.closure(["cao-kernel[tmux]"])
        assert kernel == ["cao-hookspecs", "cao-kernel", "cao-tmux"]
    finally:
        house.close()


def _fake_package(folder: Path, test_extra: list[str] | None) -> Path:
    """A provider-shaped package whose test imports cao_tmux."""
    package = folder / "cao-provider-undeclared"
    (package / "src" / "cao_provider_undeclared").mkdir(parents=True)
    (package / "tests").mkdir()
    extra = "" if test_extra is None else (
        "[project.optional-dependencies]\ntest = [" + ", ".join(f'"{r}"' for r in test_extra) + "]\n")
    (package / "pyproject.toml").write_text(textwrap.dedent("""\
        [project]
        name = "cao-provider-undeclared"
        version = "0.1.0"
        requires-python = ">=3.11"
        dependencies = ["cao-hookspecs"]
        """) + extra + textwrap.dedent("""\
        [build-system]
        requires = ["hatchling"]
        build-backend = "hatchling.build"

        [tool.hatch.build.targets.wheel]
        packages = ["src/cao_provider_undeclared"]
        """), encoding="utf-8")
    (package / "src" / "cao_provider_undeclared" / "__init__.py").write_text("", encoding="utf-8")
    (package / "tests" / "test_it.py").write_text(
        "import cao_tmux\n\n\ndef test_backend_is_there():\n    assert cao_tmux\n", encoding="utf-8")
    return package


@pytest.mark.slow
@pytest.mark.parametrize(("extra", "message"), [
    (["cao-kernel", "pytest>=8"], "No module named 'cao_tmux'"),
    (["cao-kernel", "cao-tmux", "pytest>=8"], None),
    (None, "No module named pytest"),
], ids=["test-import-undeclared", "declared", "no-test-extra"])
def test_an_undeclared_import_fails_with_the_tools_message(request, tmp_path_factory, tmp_path, extra,
                                                           message):
    """The harness itself: a package that imports what it does not declare fails, saying what is missing."""
    package = _fake_package(tmp_path, extra)
    (tmp_path / "run").mkdir()
    house = isolation.shared_wheelhouse(request.config, tmp_path_factory)
    outcome = isolation.run_package_tests(package, house, tmp_path / "run")
    if message is None:
        assert outcome.ok, outcome.report
        assert "1 passed" in outcome.report
    else:
        assert not outcome.ok
        assert message in outcome.report, outcome.report
