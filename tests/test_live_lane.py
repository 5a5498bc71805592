"""The outcome of the second live lane (``tests/live_lane.py``): the assign example on every real CLI,
run beside this run's other live tests. Selected only in a run that moved the examples there."""

from __future__ import annotations

import sys

import pytest

pytestmark = [pytest.mark.live_cli]


def test_the_live_examples_lane_passed(request: pytest.FixtureRequest) -> None:
    live_lane = sys.modules["cao_live_lane"]  # loaded by the root conftest.py (tests/ is no package)
    lane = live_lane.lane(request.config)
    assert lane is not None, "selected only when the examples run in the lane"
    code, report = lane.wait(live_lane.folder(request.config))
    assert code == 0, f"the examples' lane failed (exit {code}):\n{report[-20000:]}"
