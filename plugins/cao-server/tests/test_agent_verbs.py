"""``cao agent`` verbs and durable handoff results against a real ``cao server`` subprocess (private home,
private tmux server, mock agents): a job's answer read back after a real restart, an interrupted job
reported as such, the verbs acting as a terminal, and their errors and exit codes."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest

from cao_server.api_token import read_token

from .conftest import cao_script

pytestmark = pytest.mark.tmux


def agent(server: Any, cao_home: Path, *args: str, terminal: str | None = None,
          script: bool = False) -> Any:
    """``cao agent ARGS`` against ``server`` (None: a dead port): in this process through the ``cao`` root
    (what the script runs, without its start-up time), or with ``script`` as a real subprocess."""
    env = {"CAO_HOME_DIR": str(cao_home), "CAO_API_HOST": "127.0.0.1",
           "CAO_API_PORT": str(server.port if server is not None else 9), "CAO_TERMINAL_ID": terminal}
    if script:
        full = {k: v for k, v in os.environ.items() if not k.startswith("CAO_")}
        full.update({k: v for k, v in env.items() if v is not None})
        return subprocess.run([cao_script(), "agent", *args], env=full, capture_output=True, text=True,
                              timeout=60, stdin=subprocess.DEVNULL)
    from click.testing import CliRunner

    from cao_kernel.cli import cli

    done = CliRunner().invoke(cli, ["agent", *args], env=env, catch_exceptions=False)
    return subprocess.CompletedProcess(args, done.exit_code, done.stdout, done.stderr)


def answer(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    try:
        return json.loads(done.stdout)
    except ValueError:
        raise AssertionError(f"exit {done.returncode}\nstdout: {done.stdout}\nstderr: {done.stderr}"
                             ) from None


def job_of(done: subprocess.CompletedProcess[str]) -> str:
    return next(line.split()[1] for line in done.stderr.splitlines() if line.startswith("job_id: "))


def test_handoff_results_survive_a_restart_and_an_interrupted_job_says_so(spawn_server, cao_home, workdir):
    first = spawn_server("--port", "0")
    first.wait_ready()
    quick = agent(first, cao_home, "handoff", "developer", "summarise the notes", "--json", script=True)
    assert quick.returncode == 0, quick.stderr
    done = answer(quick)
    assert done["success"] is True and done["output"] == "summarise the notes"
    finished = job_of(quick)
    assert done["job_id"] == finished
    # A long one, left running: the command returns once its worker exists.
    started = agent(first, cao_home, "handoff", "developer", "__mock_sleep_60", "--no-wait", "--json")
    assert started.returncode == 0, started.stderr
    left = answer(started)
    assert left["pending"] is True and len(left["terminal_id"]) == 8
    running = agent(first, cao_home, "result", left["job_id"], "--json")
    assert running.returncode == 75 and answer(running)["state"] == "running"
    assert answer(running)["terminal_id"] == left["terminal_id"]
    first.stop()

    second = spawn_server("--port", "0")
    second.wait_ready()
    kept = agent(second, cao_home, "result", finished, "--json")
    assert kept.returncode == 0, kept.stderr
    assert answer(kept) | {"success": True} == {"success": True, "job_id": finished, "state": "completed",
                                                "terminal_id": done["terminal_id"],
                                                "last_message": "summarise the notes", "error_message": None}
    cut = agent(second, cao_home, "result", left["job_id"], "--json")
    assert cut.returncode == 1 and answer(cut)["state"] == "error"
    assert "stopped before this handoff finished" in answer(cut)["error_message"]
    # Upstream's route, behind the same token as every other.
    with httpx.Client(base_url=second.url, trust_env=False, timeout=30) as http:
        assert http.get(f"/handoff-results/{finished}").status_code == 401
        auth = {"Authorization": f"Bearer {read_token(cao_home)}"}
        got = http.get(f"/handoff-results/{finished}", headers=auth)
        assert got.status_code == 200 and got.json()["last_message"] == "summarise the notes"
        missing = http.get(f"/handoff-results/{'0' * 32}", headers=auth)
        assert missing.status_code == 404 and "no handoff result" in missing.json()["detail"]
        assert http.get("/handoff-results/not-a-job", headers=auth).status_code == 422
    assert (cao_home / "db" / "handoff-results.db").stat().st_mode & 0o077 == 0


def test_agent_verbs_act_as_their_terminal_and_fail_clearly(spawn_server, cao_home, workdir):
    server = spawn_server("--port", "0")
    server.wait_ready()
    with httpx.Client(base_url=server.url, trust_env=False, timeout=30,
                      headers={"Authorization": f"Bearer {read_token(cao_home)}"}) as http:
        made = http.post("/sessions", json={"agent_profile": "developer", "working_directory": workdir})
        assert made.status_code == 201, made.text
        supervisor = made.json()["id"]
        other = http.post("/sessions", json={"agent_profile": "developer", "working_directory": workdir})
        stranger = other.json()["id"]

    nobody = agent(server, cao_home, "assign", "developer", "lint it", script=True)
    assert nobody.returncode == 2 and "CAO_TERMINAL_ID is not set" in nobody.stderr
    bad = agent(server, cao_home, "send-message", "hi", "--as", "../etc")
    assert bad.returncode == 2 and "not a terminal id" in bad.stderr
    unknown = agent(server, cao_home, "assign", "developer", "lint it", "--json", terminal="deadbeef")
    assert unknown.returncode == 1 and "deadbeef" in answer(unknown)["error"]
    down = agent(None, cao_home, "status", supervisor, "--json")
    assert down.returncode == 1 and "no cao-server is running" in answer(down)["error"]

    assigned = agent(server, cao_home, "assign", "developer", "lint it", "--json", terminal=supervisor)
    assert assigned.returncode == 0, assigned.stderr
    worker = answer(assigned)["terminal_id"]
    status = answer(agent(server, cao_home, "status", worker, "--json"))
    assert status["success"] is True and status["agent_profile"] == "developer"
    assert status["status"] in ("idle", "processing", "completed", "unknown")
    sent = agent(server, cao_home, "send-message", "more work", "--to", worker, "--json", terminal=supervisor)
    assert sent.returncode == 0 and answer(sent)["receiver_id"] == worker
    reply = agent(server, cao_home, "send-message", "done", "--json", "--as", worker)  # to its caller
    assert reply.returncode == 0 and answer(reply)["receiver_id"] == supervisor
    refused = agent(server, cao_home, "cancel", worker, "--delete", "--json", terminal=stranger)
    assert refused.returncode == 1 and f"started by terminal {supervisor}" in answer(refused)["error"]
    deleted = agent(server, cao_home, "cancel", worker, "--delete", "--json", terminal=supervisor)
    assert deleted.returncode == 0, deleted.stdout
    gone = agent(server, cao_home, "result", worker, "--json")
    assert gone.returncode == 1 and worker in answer(gone)["error"]
    neither = agent(server, cao_home, "result", "xyz")
    assert neither.returncode == 2 and "neither a terminal id" in neither.stderr
    later = agent(server, cao_home, "handoff", "developer", "x", "--engine", "kas")
    assert later.returncode == 2 and "--engine is not supported" in later.stderr
    # --model reaches the kernel, which refuses it for a provider that cannot choose one.
    modelled = agent(server, cao_home, "assign", "developer", "x", "--model", "big", "--json",
                     terminal=supervisor)
    assert modelled.returncode == 1 and "'mock_cli' cannot choose its model" in answer(modelled)["error"]
