"""A workflow run end to end: a real server, real tmux, mock agents, the ``cao workflow`` commands."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tmux, pytest.mark.slow]

TWO_STEPS = '''
from cao_workflows import emit, run_step

def workflow(inputs):
    first = run_step("analyst", f"look at {inputs['topic']}")
    emit("first", first)
    return run_step("writer", "write about " + first)
'''


def test_a_two_step_run_returns_the_last_answer_and_its_outputs(cluster):
    cluster.start()
    path = cluster.write("two.py", TWO_STEPS)
    done = cluster.json("workflow", "run", str(path), "--input", "topic=tides")
    assert done["state"] == "completed", done
    assert done["result"] == "answer to write about answer to look at tides"
    assert done["outputs"] == {"first": "answer to look at tides"}
    assert sorted(cluster.tasks()) == ["look at tides", "write about answer to look at tides"]
    listed = cluster.json("workflow", "runs")
    assert [r["run_id"] for r in listed] == [done["run_id"]]
    names = [e["name"] for e in cluster.json("workflow", "events", done["run_id"])]
    assert names == ["start:analyst", "await:analyst", "DBOS.setEvent", "start:writer", "await:writer"]


def test_a_step_longer_than_the_engines_wait_slice_still_gets_its_answer(cluster):
    # The engine waits for an agent in slices of a few seconds; a slice's end must not read as an error.
    cluster.start()
    path = cluster.write("slow.py", "from cao_workflows import run_step\n\n"
                                    "def workflow(inputs):\n    return run_step('analyst', 'slow one')\n")
    done = cluster.json("workflow", "run", str(path), "--timeout", "60")
    assert done["state"] == "completed", done
    assert done["result"] == "answer to slow one"
