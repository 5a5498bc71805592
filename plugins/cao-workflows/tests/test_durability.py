"""The journal's promise: a server killed with SIGKILL in the middle of a run resumes it at the step it
was in when it starts again, and no step's agent is started twice (counted by the agents themselves)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tmux, pytest.mark.slow]

FIVE_STEPS = '''
from cao_workflows import run_step

def workflow(inputs):
    answers = []
    for n, profile in enumerate(["analyst", "writer", "reviewer", "analyst", "writer"], 1):
        task = f"step {n}" + (" hold" if n == 3 else "")
        answers.append(run_step(profile, task))
    return answers
'''


def test_a_run_killed_during_step_three_resumes_there_and_starts_each_agent_once(cluster):
    cluster.start()
    path = cluster.write("five.py", FIVE_STEPS)
    run_id = cluster.cao("workflow", "run", str(path), "--detach").stdout.strip()
    cluster.wait_for(lambda: "step 3 hold" in cluster.tasks(), "step 3's agent to get its task")
    cluster.kill()

    cluster.start()
    (cluster.behaviours / "release").touch()
    done = cluster.json("workflow", "wait", run_id, "--timeout", "60")
    assert done["state"] == "completed", done
    assert done["result"] == [f"answer to step {n}" + (" hold" if n == 3 else "") for n in range(1, 6)]

    tasks = cluster.tasks()
    assert sorted(tasks) == ["step 1", "step 2", "step 3 hold", "step 4", "step 5"]
    for task, pids in tasks.items():
        assert len(pids) == 1, f"{task!r} went to {len(pids)} agents: {pids}"
    started = [line for line in cluster.starts() if line.endswith(" started")]
    assert len(started) == 5, f"{len(started)} agent programs started for five steps:\n{cluster.starts()}"
    # Every step's agent was closed when it had answered.
    sessions = cluster.tmux.run("list-sessions", "-F", "#{session_name}", check=False).stdout.split()
    assert not [s for s in sessions if s.startswith("cao-wf-")], sessions
