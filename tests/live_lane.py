"""The second lane of live CLI tests: the assign example on every real CLI, in a pytest process of its
own, beside the provider packages' live tests in the main run.

In a full run the live tests come last, once the isolated package runs are done, and with one lane the
second core idled through them. The examples run five CLI processes each and spend most of their time
waiting for those CLIs, so two lanes share the machine well. The lane starts when the main run reaches
its first live test (the CLIs are installed by then), and ``tests/test_live_lane.py`` waits for it at the
end, failing with the lane's own report when the lane failed.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LANE_FILE = "tests/test_examples_live.py"
WAITER = "test_the_live_examples_lane_passed"
#: Set in the lane's environment: its own run never starts a lane.
INSIDE = "CAO_LIVE_LANE"
#: The examples have 240 s each at the most (their module's timeout), in a row.
PER_EXAMPLE = 240.0
#: The lane's nice value, the isolated package runs' own: the main run's live tests measure short
#: windows (a turn's end within two seconds of its screen) and must not lose the CPU to the lane.
NICE = 10


def _lower_priority() -> None:
    try:
        os.nice(NICE)
    except OSError:  # pragma: no cover - a niceness limit: the lane runs at the run's own priority
        pass

_LANE = pytest.StashKey["Lane"]()


class Lane:
    """The node ids the lane runs and, once started, its process and report file."""

    def __init__(self, node_ids: list[str]) -> None:
        self.node_ids = node_ids
        self.proc: subprocess.Popen[bytes] | None = None
        self.log: Path | None = None

    def start(self, folder: Path) -> None:
        if self.proc is not None:
            return
        folder.mkdir(parents=True, exist_ok=True)
        self.log = folder / "lane.log"
        with open(self.log, "wb") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rfE",
                 "--basetemp", str(folder / "tmp"), *self.node_ids],
                cwd=ROOT, env={**os.environ, INSIDE: "1"}, stdin=subprocess.DEVNULL, stdout=out,
                stderr=subprocess.STDOUT, preexec_fn=_lower_priority)

    def wait(self, folder: Path) -> tuple[int, str]:
        """The lane's exit code and report (it is started now if it was not yet)."""
        self.start(folder)
        assert self.proc is not None and self.log is not None
        try:
            code = self.proc.wait(timeout=PER_EXAMPLE * len(self.node_ids))
        except subprocess.TimeoutExpired:
            self.stop()
            code = -1
        return code, self.log.read_text(encoding="utf-8", errors="replace")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def split(config: pytest.Config, first: list[pytest.Item], live: list[pytest.Item],
          full_run: bool) -> tuple[list[pytest.Item], list[pytest.Item], list[pytest.Item]]:
    """``(first, live, waiter)``: in a full run (one that selected the isolated package runs) with other
    live tests too, the examples go to the lane and the waiter stays; otherwise the examples stay here and
    the waiter, with nothing to wait for, is deselected."""
    waiter = [item for item in first + live if getattr(item, "originalname", "") == WAITER]
    first = [item for item in first if item not in waiter]
    live = [item for item in live if item not in waiter]
    examples = [item for item in live if Path(str(item.path)).as_posix().endswith(LANE_FILE)]
    kept = [item for item in live if item not in examples]
    if full_run and examples and kept and waiter and not os.environ.get(INSIDE):
        config.hook.pytest_deselected(items=examples)
        config.stash[_LANE] = Lane([item.nodeid for item in examples])
        return first, kept, waiter
    if waiter:
        config.hook.pytest_deselected(items=waiter)
    return first, live, []


def lane(config: pytest.Config) -> Lane | None:
    return config.stash.get(_LANE, None)


def folder(config: pytest.Config) -> Path:
    """The lane's folder, inside this session's temporary one."""
    factory = getattr(config, "_tmp_path_factory", None)
    base = factory.getbasetemp() if factory is not None else Path(tempfile.mkdtemp(prefix="cao-"))
    return base / "live-lane"
