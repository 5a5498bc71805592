"""Collection rules for a run from the repository root."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent
ISOLATED_TEST = "test_package_passes_its_tests_installed_alone"


def _isolated_packages(items: Iterable[pytest.Item]) -> list[Path]:
    """The packages whose isolated test (tests/test_isolated_packages.py) is among ``items``."""
    return [Path(item.callspec.params["package"]) for item in items
            if getattr(item, "originalname", "") == ISOLATED_TEST and hasattr(item, "callspec")]


def _load(name: str, path: Path) -> ModuleType:
    """The module at ``path``, imported once under ``name``, the name the test modules read it by."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        sys.modules[name] = module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return sys.modules[name]


def _isolation() -> ModuleType:
    """``scripts/isolated_venv.py``."""
    return _load("cao_isolated_venv", ROOT / "scripts" / "isolated_venv.py")


def _live_lane() -> ModuleType:
    """``tests/live_lane.py``: the assign examples' lane beside this run's other live tests."""
    return _load("cao_live_lane", ROOT / "tests" / "live_lane.py")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Run a package's own tests once, not twice; run the live CLI tests, then the waits for the isolated
    runs, last.

    When a run selects a package's isolated test (tests/test_isolated_packages.py), that test runs every
    one of the package's tests except the live CLI ones inside a fresh venv; running them here as well
    would spend CI's time budget twice on the same assertions. Live CLI tests stay in this run, which is
    the only one that runs them. Runs that do not select the isolated test (a package's folder alone,
    ``-m "not slow"``, ``-k``) keep every test here.

    The order keeps the machine busy: the real CLIs install in the background from the start (the test
    kit's session hooks), so the live tests come after the rest, when nothing is left to wait for; the
    isolated runs start with the session (``isolated_runs_start``), so the tests that wait for their
    outcomes come at the very end instead of holding up this run's own tests. In such a full run the
    assign examples on the real CLIs run in a second lane (``tests/live_lane.py``) beside the other live
    tests, and ``tests/test_live_lane.py`` waits for it.
    """
    isolated = set(_isolated_packages(items))
    first: list[pytest.Item] = []
    live: list[pytest.Item] = []
    waiting: list[pytest.Item] = []
    covered: list[pytest.Item] = []
    for item in items:
        path = Path(str(item.path))
        inside = any(package in path.parents for package in isolated)
        if item.get_closest_marker("live_cli") is not None:
            live.append(item)
        elif inside:
            covered.append(item)
        elif getattr(item, "originalname", "") == ISOLATED_TEST:
            waiting.append(item)
        else:
            first.append(item)
    if covered:
        config.hook.pytest_deselected(items=covered)
    first, live, lane_waiter = _live_lane().split(config, first, live, full_run=bool(isolated))
    items[:] = first + live + lane_waiter + waiting


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Start the examples' lane with this run's first live test: the CLIs are installed by then."""
    lanes = _live_lane()
    lane = lanes.lane(item.config)
    if lane is not None and item.get_closest_marker("live_cli") is not None:
        lane.start(lanes.folder(item.config))


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    """An interrupted run stops its lane before the check for processes left running."""
    lane = _live_lane().lane(session.config)
    if lane is not None:
        lane.stop()


@pytest.fixture(scope="session", autouse=True)
def isolated_runs_start(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Start the selected packages' isolated runs as the session starts (one at a time until the run
    reaches the tests that wait for them), so that their minutes overlap with this run's own tests."""
    packages = _isolated_packages(request.session.items)
    if packages:
        _isolation().package_runs(request.config, tmp_path_factory, packages)
