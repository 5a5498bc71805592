"""The kit's hooks around a whole pytest session (``-p cao_testkit`` registers them).

- Live CLIs installed ahead: a conftest lists the real CLIs its live tests run in ``LIVE_CLIS``
  (:class:`~cao_testkit.models.cli.LiveCli` values). Once collection is done, the CLIs of every conftest
  with a selected ``live_cli`` test in its folder start installing in the background, in the order their
  tests will run.
- Nothing left running: when the session ends, a process still running from the session's temporary
  folder or on one of its private tmux servers (:mod:`cao_testkit.leftovers`) is ended, named, and fails
  the run.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from . import leftovers
from .tmux import made_folders


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    from .models.cli import install_ahead

    declared = [(Path(plugin.__file__).parent, plugin.LIVE_CLIS)
                for plugin in session.config.pluginmanager.get_plugins()
                if isinstance(plugin, ModuleType) and getattr(plugin, "LIVE_CLIS", None)
                and getattr(plugin, "__file__", None)]
    if not declared:
        return
    wanted = []
    for item in session.items:
        if item.get_closest_marker("live_cli") is not None:
            path = Path(str(item.path))
            wanted += [cli for folder, clis in declared if folder in path.parents for cli in clis]
    install_ahead(dict.fromkeys(wanted))


_BASETEMP = pytest.StashKey[str]()


@pytest.fixture(scope="session", autouse=True)
def session_temp_folder(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The session's temporary folder, where every test's programs run (kept for the check at the end)."""
    folder = request.config.stash[_BASETEMP] = str(tmp_path_factory.getbasetemp())
    return folder


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    found = leftovers.left_behind([session.config.stash.get(_BASETEMP, ""), *made_folders])
    if not found:
        return
    leftovers.end(found)
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line("")  # the progress line may still be open
        reporter.write_sep("=", f"{len(found)} process(es) left running by the tests, now ended", red=True)
        for left in found:
            reporter.write_line(str(left))
    if session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
