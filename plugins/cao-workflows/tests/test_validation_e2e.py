"""The same refusals through a real server and the ``cao workflow`` commands, and a server that never
runs a workflow never starts the engine."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tmux, pytest.mark.slow]


def test_bad_input_is_refused_naming_the_problem(cluster):
    cluster.start()
    cases = [
        (("validate", "missing.py"), "does not exist"),
        (("validate", str(cluster.write("broken.py", "def workflow(inputs):\n  return (\n"))),
         "syntax error at line 2"),
        (("validate", str(cluster.write("ghost.py", "from cao_workflows import run_step\ndef workflow(i):\n"
                                                   "    return run_step('nobody', 'hi')\n"))),
         "line 3: unknown agent profile 'nobody'"),
        (("run", str(cluster.write("ok.py", "def workflow(i):\n    return 1\n")), "--input", "1bad=x"),
         "invalid input key '1bad'"),
        (("status", "../etc"), "invalid run id"),
        (("status", "no-such-run"), "no workflow run"),
        (("approve", "no-such-run"), "no workflow run"),
    ]
    for args, problem in cases:
        done = cluster.cao("workflow", *args, check=False)
        assert done.returncode == 1, (args, done.stdout, done.stderr)
        assert problem in done.stderr, (args, done.stderr)
    assert not (cluster.home / "db" / "workflows.sqlite").exists()
    assert cluster.cao("workflow", "runs").stdout.strip() == "No workflow runs."
    fine = cluster.write("fine.py", "from cao_workflows import run_step\n"
                                    "def workflow(i):\n    return run_step('writer', 'x')\n")
    ok = cluster.cao("workflow", "validate", str(fine))
    assert ok.stdout.strip() == "fine: valid (profiles: writer)"
    assert not (cluster.home / "db" / "workflows.sqlite").exists(), "validating started the engine"


def test_a_failing_workflow_fails_its_run_with_the_error(cluster):
    cluster.start()
    path = cluster.write("oops.py",
                         "def workflow(inputs):\n    raise ValueError('no data for ' + inputs['x'])\n")
    done = cluster.cao("workflow", "run", str(path), "--input", "x=today", "--json", check=False)
    assert done.returncode == 1
    assert '"state": "failed"' in done.stdout and "ValueError: no data for today" in done.stdout
