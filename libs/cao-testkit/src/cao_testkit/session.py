"""The kit's hooks around a whole pytest session (``-p cao_testkit`` registers them).

- Nothing left running: when the session ends, a process still running from the session's temporary
  folder or on one of its private tmux servers (:mod:`cao_testkit.leftovers`) is ended, named, and fails
  the run.
"""

from __future__ import annotations

import pytest

from . import leftovers
from .tmux import made_folders

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
