"""Collection rules for a run from the repository root."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent
ISOLATED_TEST = "test_package_passes_its_tests_installed_alone"


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Run a package's own tests once, not twice.

    When a run selects a package's isolated test (tests/test_isolated_packages.py), that test runs every
    one of the package's tests except the live CLI ones inside a fresh venv; running them here as well
    would spend CI's time budget twice on the same assertions. Live CLI tests stay in this run, which is
    the only one that runs them. Runs that do not select the isolated test (a package's folder alone,
    ``-m "not slow"``, ``-k``) keep every test here.
    """
    isolated = {Path(item.callspec.params["package"]) for item in items
                if getattr(item, "originalname", "") == ISOLATED_TEST and hasattr(item, "callspec")}
    if not isolated:
        return
    kept: list[pytest.Item] = []
    covered: list[pytest.Item] = []
    for item in items:
        path = Path(str(item.path))
        inside = any(package in path.parents for package in isolated)
        if inside and item.get_closest_marker("live_cli") is None:
            covered.append(item)
        else:
            kept.append(item)
    if covered:
        config.hook.pytest_deselected(items=covered)
        items[:] = kept
