"""examples/workflows/analysis.py runs offline with the assign example's mock agents and waits for its
approval; analysis_script.py, the same work as an upstream-style script, runs too."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytestmark = [pytest.mark.tmux, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[3]


def test_the_analysis_example_reports_and_waits_for_approval(cluster):
    for profile in ("data_analyst", "report_generator"):
        shutil.copy(REPO / "examples" / "assign" / f"{profile}.md", cluster.home / "agent-store")
    cluster.behaviours = REPO  # the profiles name examples.assign.behaviours
    cluster.start()
    example = str(REPO / "examples" / "workflows" / "analysis.py")
    assert "profiles: data_analyst, report_generator" in cluster.cao("workflow", "validate", example).stdout
    run_id = cluster.cao("workflow", "run", example, "--detach").stdout.strip()
    status = cluster.wait_for(lambda: (s := cluster.json("workflow", "status", run_id))["state"] == "waiting"
                              and s, "the report's approval question", timeout=90)
    report = status["outputs"]["report"]
    assert "Dataset A: [1, 2, 3, 4, 5]" in report and "sample standard deviation: 1.581" in report
    assert "{" not in report, report
    cluster.cao("workflow", "approve", run_id, "--note", "ship it")
    done = cluster.json("workflow", "wait", run_id, "--timeout", "60")
    assert done["state"] == "completed" and done["result"] == report
    assert cluster.cao("workflow", "result", run_id).stdout.strip() == report.strip()


def test_the_upstream_style_analysis_script_runs_unchanged(cluster):
    for profile in ("data_analyst", "report_generator"):
        shutil.copy(REPO / "examples" / "assign" / f"{profile}.md", cluster.home / "agent-store")
    cluster.behaviours = REPO
    cluster.start()
    example = str(REPO / "examples" / "workflows" / "analysis_script.py")
    assert "profiles: data_analyst, report_generator" in cluster.cao("workflow", "validate", example).stdout
    done = cluster.json("workflow", "run", example)
    assert done["state"] == "completed", done
    report = done["result"]["report"]
    assert "Dataset A: [1, 2, 3, 4, 5]" in report and "sample standard deviation: 1.581" in report
    assert "{" not in report and done["result"]["datasets"] == ["A", "B", "C"]
