"""Approvals block a run until answered from the CLI; parallel steps keep to their limits."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tmux, pytest.mark.slow]

APPROVAL = '''
from cao_workflows import approve, emit, run_step

def workflow(inputs):
    draft = run_step("writer", "draft")
    decision = approve(f"Publish {draft}?")
    emit("decision", {"approved": decision.approved, "note": decision.note, "by": decision.by})
    if not decision:
        return "not published"
    return run_step("reviewer", "publish " + draft)
'''

PARALLEL = '''
from cao_workflows import Step, assign_step

def workflow(inputs):
    return assign_step([Step(profile="analyst", prompt=f"part {n}") for n in range(1, 6)], limit=2)
'''


@pytest.mark.parametrize("reject", [False, True])
def test_an_approval_blocks_the_run_until_answered_from_the_cli(cluster, reject):
    cluster.start()
    path = cluster.write("gate.py", APPROVAL)
    run_id = cluster.cao("workflow", "run", str(path), "--detach").stdout.strip()
    waiting = cluster.wait_for(lambda: (s := cluster.json("workflow", "status", run_id))["state"] == "waiting"
                               and s, "the run to ask its question")
    assert waiting["approval"]["question"] == "Publish answer to draft?"
    assert "cao workflow approve" in cluster.cao("workflow", "status", run_id).stdout
    assert cluster.json("workflow", "wait", run_id, "--timeout", "1")["state"] == "waiting"
    assert "publish answer to draft" not in cluster.tasks()

    flag = ["--reject"] if reject else []
    cluster.cao("workflow", "approve", run_id, *flag, "--note", "looks fine")
    done = cluster.json("workflow", "wait", run_id, "--timeout", "60")
    assert done["state"] == "completed", done
    assert done["outputs"]["decision"] == {"approved": not reject, "note": "looks fine", "by": "cli"}
    assert done["result"] == ("not published" if reject else "answer to publish answer to draft")
    again = cluster.cao("workflow", "approve", run_id, check=False)
    assert again.returncode == 1 and "asks no question now" in again.stderr


def test_parallel_steps_return_in_order_and_keep_to_the_run_limit(cluster):
    cluster.start()
    path = cluster.write("fan.py", PARALLEL)
    done = cluster.json("workflow", "run", str(path))
    assert done["state"] == "completed", done
    assert done["result"] == [f"answer to part {n}" for n in range(1, 6)]
    assert cluster.most_at_once() == 2
    assert all(len(pids) == 1 for pids in cluster.tasks().values())
