"""``cao flow`` and ``cao schedule`` against a real server (uvicorn on 127.0.0.1) with the flows plugin
and mock agents, and upstream's ``/flows`` routes driven with its own request bodies."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from cao_testkit.serve import serve_in_thread

pytestmark = pytest.mark.tmux

CAO = str(Path(sys.executable).with_name("cao"))


@pytest.fixture
def served(flows_kernel, cao_home: Path, tmux_socket: str, tmp_path: Path) -> Iterator[Any]:
    with serve_in_thread(flows_kernel()) as running:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("CAO_") and k not in ("TMUX", "TMUX_PANE")}
        env.update(CAO_HOME_DIR=str(cao_home), CAO_API_HOST="127.0.0.1", CAO_API_PORT=str(running.port),
                   CAO_LOAD_PLUGINS="tmux,mock_cli,inbox_sqlite,server,flows")

        def cao(*args: str, code: int = 0) -> subprocess.CompletedProcess[str]:
            done = subprocess.run([CAO, *args], env=env, capture_output=True, text=True, timeout=60,
                                  cwd=str(tmp_path), check=False)
            said = f"cao {' '.join(args)}: {done.returncode}\n{done.stdout}{done.stderr}"
            assert done.returncode == code, said
            return done

        running.cao = cao
        running.http = httpx.Client(base_url=running.url, trust_env=False, timeout=30)
        try:
            yield running
        finally:
            running.http.close()


def test_the_commands_add_list_show_run_and_remove_a_flow(served, flow_file, cao_home):
    path = flow_file(body="Write the daily report.")
    added = served.cao("flow", "add", str(path)).stdout.splitlines()
    assert added[:3] == ["Flow 'daily' added successfully", "  Schedule: * * * * *", "  Agent: developer"]
    assert added[3].startswith("  Next run: ")
    listed = served.cao("schedule", "list").stdout.splitlines()  # upstream's name for the same commands
    assert listed[0].split() == ["Name", "Schedule", "Agent", "Last", "Run", "Next", "Run", "Enabled"]
    assert listed[1].startswith("daily ") and "Never" in listed[1] and listed[1].endswith("Yes")
    shown = served.cao("flow", "show", "daily").stdout
    assert f"file_path: {path}" in shown and "catch_up: once" in shown and shown.rstrip().endswith(
        "Write the daily report.")

    ran = served.cao("flow", "run", "daily").stdout
    assert ran.strip() == "Flow 'daily' executed successfully (session cao-flow-daily)"
    runs = json.loads(served.cao("flow", "runs", "daily", "--json").stdout)
    assert [(r["trigger"], r["session_name"]) for r in runs] == [("manual", "cao-flow-daily")]
    assert runs[0]["state"] in ("started", "completed")

    served.cao("flow", "disable", "daily")
    flows = json.loads(served.cao("flow", "list", "--json").stdout)
    assert flows[0]["enabled"] is False and flows[0]["next_run"] is None
    served.cao("flow", "enable", "daily")
    assert json.loads(served.cao("flow", "list", "--json").stdout)[0]["next_run"] is not None
    assert served.cao("flow", "remove", "daily").stdout.strip() == "Flow 'daily' removed successfully"
    assert served.cao("flow", "list").stdout.strip() == "No flows found"
    assert path.exists()  # the user's own file stays

    history = served.http.get("/events/history", params={"session": "cao-flow-daily"}).json()
    states = [e["data"]["state"] for e in history if e["event"] == "activity" and e["kind"] == "flow.run"]
    assert states[:2] == ["claimed", "started"], states


def test_bad_input_gets_a_clear_error_and_changes_nothing(served, flow_file, tmp_path):
    missing = served.cao("flow", "add", str(tmp_path / "nope.md"), code=1).stderr
    assert "does not exist" in missing and "nope.md" in missing
    bad = tmp_path / "bad.flow.md"
    bad.write_text("---\nname: x\nschedule: every day\nagent_profile: developer\n---\nhi\n", encoding="utf-8")
    assert "invalid schedule 'every day'" in served.cao("flow", "add", str(bad), code=1).stderr
    typo = tmp_path / "typo.flow.md"
    typo.write_text("---\nname: x\nschedule: '* * * * *'\nagent_profle: developer\n---\nhi\n",
                    encoding="utf-8")
    assert "unknown key(s) 'agent_profle'" in served.cao("flow", "add", str(typo), code=1).stderr
    assert "flow 'ghost' not found" in served.cao("flow", "run", "ghost", code=1).stderr
    assert "invalid flow name" in served.cao("flow", "show", "../x", code=2).stderr
    path = flow_file()
    served.cao("flow", "add", str(path))
    assert "already exists" in served.cao("flow", "add", str(path), code=1).stderr
    assert [f["name"] for f in served.http.get("/flows").json()] == ["daily"]


def test_upstreams_routes_and_bodies(served, cao_home):
    http = served.http
    body = {"name": "morning", "schedule": "30 7 * * *", "agent_profile": "developer", "provider": "mock_cli",
            "prompt_template": "Good morning, say one fact."}
    created = http.post("/flows", json=body)
    assert created.status_code == 201, created.text
    flow = created.json()
    written = cao_home / "flows" / "morning.flow.md"
    assert flow["file_path"] == str(written) and written.is_file()
    assert {k: flow[k] for k in ("name", "schedule", "agent_profile", "provider", "enabled")} == {
        "name": "morning", "schedule": "30 7 * * *", "agent_profile": "developer", "provider": "mock_cli",
        "enabled": True}
    assert http.get("/flows/morning").json()["prompt_template"].strip() == "Good morning, say one fact."
    assert http.post("/flows", json=body).status_code == 409
    for wrong, problem in (({**body, "name": "a/b"}, "invalid flow name"),
                           ({**body, "name": "x", "schedule": "* * *"}, "invalid schedule"),
                           ({**body, "name": "y", "prompt_template": ""}, "'prompt_template' must be")):
        refused = http.post("/flows", json=wrong)
        assert refused.status_code == 400 and problem in refused.json()["detail"], refused.text
    assert not (cao_home / "flows" / "x.flow.md").exists()
    assert http.get("/flows/nope").status_code == 404
    assert http.post("/flows/morning/disable").json() == {"success": True}
    assert http.post("/flows/morning/enable").json() == {"success": True}
    ran = http.post("/flows/morning/run").json()
    assert ran["executed"] is True and ran["run"]["session_name"] == "cao-flow-morning"
    assert [r["trigger"] for r in http.get("/flows/morning/runs").json()] == ["manual"]
    assert http.get("/flows/morning/runs", params={"limit": "0"}).status_code == 400
    assert http.delete("/flows/morning").json() == {"success": True}
    assert not written.exists() and http.get("/flows").json() == []


def test_the_example_flow_runs_offline_with_its_gate(served):
    example = Path(__file__).resolve().parents[3] / "examples" / "flows" / "daily-report.flow.md"
    served.cao("flow", "add", str(example))
    assert "executed successfully" in served.cao("flow", "run", "daily-report").stdout
    (run,) = json.loads(served.cao("flow", "runs", "daily-report", "--json").stdout)
    terminal = run["terminal_id"]
    screen = served.http.get(f"/terminals/{terminal}/output", params={"mode": "full"}).json()["output"]
    assert "Write today's status report on cao: 3 items are open." in screen
