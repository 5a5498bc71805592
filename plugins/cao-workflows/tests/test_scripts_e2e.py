"""Upstream-style workflow scripts (``from cao_workflow import run_step``) run unchanged: a real server,
real tmux, mock agents; the script runs as a process of its own and its steps are journaled by the
server's run-step route."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tmux, pytest.mark.slow]

THREE_STEPS = '''
from cao_workflow import emit_output, get_inputs, run_step

topic = get_inputs()["topic"]
handles = [
    run_step("mock_cli", "analyst", f"look at {{topic}}"),
    run_step("mock_cli", "writer", "write it{hold}"),
    run_step("mock_cli", "reviewer", "review it"),
]
print("progress: all steps done")
emit_output({{"answers": [h.output for h in handles], "keys": [h.step_id for h in handles],
             "replayed": [h.replayed for h in handles], "status": [h.status for h in handles]}})
'''


def test_an_upstream_script_runs_its_three_steps_and_gives_its_output(cluster):
    cluster.start()
    path = cluster.write("three.py", THREE_STEPS.format(hold=""))
    done = cluster.json("workflow", "run", str(path), "--input", "topic=tides")
    assert done["state"] == "completed", done
    assert done["result"] == {
        "answers": ["answer to look at tides", "answer to write it", "answer to review it"],
        "keys": ["call-1", "call-2", "call-3"], "replayed": [False, False, False],
        "status": ["completed"] * 3}
    assert sorted(cluster.tasks()) == ["look at tides", "review it", "write it"]
    names = [e["name"] for e in cluster.json("workflow", "events", done["run_id"])]
    assert names == ["script", *[f"{kind}:call-{n}" for n in (1, 2, 3) for kind in ("start", "await")]]
    assert not (cluster.home / "workflow-scripts" / done["run_id"]).exists()
    assert cluster.leftovers(done["run_id"]) == []
    # The workers got the run's identity in their environment, as upstream's do.
    assert (cluster.behaviours / "identity.log").read_text().split() == [
        f"{done['run_id']}:call-{n}" for n in (1, 2, 3)]


def test_a_script_killed_with_its_server_starts_again_and_replays_its_finished_steps(cluster):
    cluster.start()
    path = cluster.write("three.py", THREE_STEPS.format(hold=" hold"))
    run_id = cluster.cao("workflow", "run", str(path), "--input", "topic=tides", "--detach").stdout.strip()
    cluster.wait_for(lambda: "write it hold" in cluster.tasks(), "the second step's agent to get its task")
    cluster.kill()

    cluster.start()
    (cluster.behaviours / "release").touch()
    done = cluster.json("workflow", "wait", run_id, "--timeout", "90")
    assert done["state"] == "completed", done
    result = done["result"]
    assert result["answers"] == ["answer to look at tides", "answer to write it hold", "answer to review it"]
    # The new attempt of the script got the first step from the journal and ran the third; the second
    # step's agent was re-attached by recovery, and whether it had answered before the new attempt
    # asked for it (replayed) or after (waited for) depends on timing: either way it ran once.
    assert result["replayed"][0] is True and result["replayed"][2] is False, result
    tasks = cluster.tasks()
    for task, pids in tasks.items():
        assert len(pids) == 1, f"{task!r} went to {len(pids)} agents: {pids}"
    started = [line for line in cluster.starts() if line.endswith(" started")]
    assert len(started) == 3, f"{len(started)} agent programs started for three steps:\n{cluster.starts()}"
    cluster.wait_for(lambda: cluster.leftovers(run_id) == [], "the first attempt of the script to end")
    sessions = cluster.tmux.run("list-sessions", "-F", "#{session_name}", check=False).stdout.split()
    assert not [s for s in sessions if s.startswith("cao-wf-")], sessions


FAILING = '''
import json, sys
from cao_workflow import ShimHTTPError, emit_output, run_step

try:
    run_step("mock_cli", "analyst", "explode now")
except ShimHTTPError as exc:
    detail = json.loads(exc.body)["detail"]
    print(f"status {exc.status} kind {detail['kind']} terminal {len(detail['terminal_id'])}", file=sys.stderr)
    emit_output({"status": exc.status})
    sys.exit(3)
'''


def test_a_worker_that_errors_answers_502_and_the_failing_script_fails_its_run(cluster):
    cluster.start()
    path = cluster.write("failing.py", FAILING)
    import json

    ran = cluster.cao("workflow", "run", str(path), "--json", check=False)
    assert ran.returncode == 1, ran.stderr
    done = json.loads(ran.stdout)
    assert done["state"] == "failed", done
    assert "exited with code 3" in done["error"], done["error"]
    assert "status 502 kind error terminal 8" in done["error"], done["error"]
    assert done["result"] is None
    assert cluster.leftovers(done["run_id"]) == []


# A body naming no workflow step is a handoff, checked by cao-server's run-step route; one whose env_vars
# name a step is checked by the journal here.
@pytest.mark.parametrize(("body", "named"), [
    ({"agent": "analyst", "prompt": "hi"}, "'provider'"),
    ({"provider": "mock_cli", "agent": "analyst"}, "'prompt'"),
    ({"provider": "mock_cli", "agent": "nobody", "prompt": "hi"}, "agent profile 'nobody' not found"),
    ({"provider": "nope", "agent": "analyst", "prompt": "hi"}, "unknown provider 'nope'"),
    ({"provider": "mock_cli", "agent": "analyst", "prompt": "hi", "timeout": -1}, "timeout"),
    ({"provider": "mock_cli", "agent": "analyst", "prompt": "hi", "timeout": -1,
      "env_vars": {"CAO_WORKFLOW_RUN_ID": "r1", "CAO_WORKFLOW_GENERATION": "1"}}, "invalid timeout -1"),
    ({"provider": "mock_cli", "agent": "analyst", "prompt": "hi", "colour": "red"}, "unknown run-step field"),
    ({"provider": "mock_cli", "agent": "analyst", "prompt": "hi", "env_vars": {"PATH": "/x"}},
     "env_vars key 'PATH' is not allowed"),
    ({"provider": "mock_cli", "agent": "analyst", "prompt": "hi",
      "env_vars": {"CAO_WORKFLOW_RUN_ID": "r1"}}, "go together"),
    ({"provider": "mock_cli", "agent": "analyst", "prompt": "hi", "recovery": "maybe"}, "'maybe'"),
    (b"{not json", "JSON"),
])
def test_bad_run_step_bodies_get_a_4xx_naming_the_problem(cluster_once, body, named):
    status, answer = cluster_once.post("/terminals/run-step", body)
    assert 400 <= status < 500, (status, answer)
    assert named in answer["detail"], answer


def test_a_run_step_for_a_run_that_is_not_running_is_refused(cluster_once):
    body = {"provider": "mock_cli", "agent": "analyst", "prompt": "hi", "env_vars": {
        "CAO_WORKFLOW_RUN_ID": "ghost", "CAO_WORKFLOW_GENERATION": "1", "CAO_WORKFLOW_STEP_ID": "call-1"}}
    status, answer = cluster_once.post("/terminals/run-step", body)
    assert status == 404, answer
    assert "no workflow script is running as run 'ghost'" in answer["detail"]
    assert cluster_once.starts() == []


HOLDING = '''
import subprocess
from cao_workflow import emit_output, run_step

subprocess.Popen(["sleep", "300"])  # a child of the script: it must end with the run too
emit_output(run_step("mock_cli", "analyst", "wait here hold").output)
'''


def test_cancelling_a_script_run_ends_its_process_group_and_closes_its_agent(cluster):
    cluster.start()
    path = cluster.write("holding.py", HOLDING)
    run_id = cluster.cao("workflow", "run", str(path), "--detach").stdout.strip()
    cluster.wait_for(lambda: "wait here hold" in cluster.tasks(), "the step's agent to get its task")
    assert len(cluster.leftovers(run_id)) == 2
    cluster.cao("workflow", "cancel", run_id)
    cluster.wait_for(lambda: cluster.leftovers(run_id) == [], "the script and its child to end")
    assert cluster.json("workflow", "status", run_id)["state"] == "cancelled"

    def agents() -> list[str]:
        listed = cluster.tmux.run("list-sessions", "-F", "#{session_name}", check=False).stdout.split()
        return [s for s in listed if s.startswith("cao-wf-")]

    cluster.wait_for(lambda: agents() == [], "the step's agent to be closed")


def test_a_server_stop_ends_the_script_and_the_next_start_finishes_the_run(cluster):
    cluster.start()
    path = cluster.write("holding.py", HOLDING)
    run_id = cluster.cao("workflow", "run", str(path), "--detach").stdout.strip()
    cluster.wait_for(lambda: "wait here hold" in cluster.tasks(), "the step's agent to get its task")
    cluster.stop()
    cluster.wait_for(lambda: cluster.leftovers(run_id) == [], "the script and its child to end", 10)

    cluster.start()
    (cluster.behaviours / "release").touch()
    done = cluster.json("workflow", "wait", run_id, "--timeout", "60")
    assert done["state"] == "completed", done
    assert done["result"] == "answer to wait here hold"
    assert list(cluster.tasks()) == ["wait here hold"] and len(cluster.tasks()["wait here hold"]) == 1
    assert cluster.leftovers(run_id) == []


def test_a_script_past_its_time_limit_fails_and_leaves_nothing_running(cluster):
    import json

    cluster.start(CAO_WORKFLOW_SCRIPT_TIMEOUT="2")
    path = cluster.write("slow.py", "import subprocess, time\nimport cao_workflow\n"
                                    "subprocess.Popen(['sleep', '300'])\nprint('working', flush=True)\n"
                                    "time.sleep(300)\n")
    ran = cluster.cao("workflow", "run", str(path), "--json", check=False)
    done = json.loads(ran.stdout)
    assert done["state"] == "failed" and "ran past its 2 s limit" in done["error"], done
    assert cluster.leftovers(done["run_id"]) == []
