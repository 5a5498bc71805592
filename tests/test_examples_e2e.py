"""The three examples, end to end and offline: a real cao-server, real tmux, mock agents whose scripted
behaviours call cao's MCP tools through a real MCP client.

Each example runs as a user would run it (``python examples/run_example.py NAME``); the runner's
``--timeline`` file records every status change (with the server's timestamps) and every inbox
message, which is what the checks below read. The three run at the same time to keep the suite fast.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.tmux, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[1]
RUNNER = ROOT / "examples" / "run_example.py"
NAMES = ("assign", "handoff", "send_message")

#: The assign example's final answer, which its live run must give as well.
ASSIGN_REPORT = (ROOT / "tests/fixtures/examples/assign_report.txt").read_text(encoding="utf-8").rstrip("\n")

RELEASE_NOTES = """\
# Release 2.1

## New features
- Export reports as CSV.
- A --json flag for every command.

## Bug fixes
- Fixed: crash when the config file is empty.
- Fixed: wrong totals when a dataset has one value.

## Documentation
- A tutorial for first-time users."""

DEAL = """\
Deal: bought the used bike for 305.
Rounds:
1. buyer offered 250, seller countered 325
2. buyer offered 280, seller countered 305
3. buyer accepted 305
The seller confirmed the sale at 305."""


def _env() -> dict[str, str]:
    # The runner makes its own private home and tmux server; nothing of the test's may leak in.
    return {k: v for k, v in os.environ.items() if not k.startswith(("CAO_", "TMUX"))}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Run every example once (concurrently); name -> (completed process, timeline)."""
    folder = tmp_path_factory.mktemp("examples")
    procs = {}
    for name in NAMES:
        timeline = folder / f"{name}.json"
        procs[name] = (subprocess.Popen(
            [sys.executable, str(RUNNER), name, "--timeline", str(timeline)], cwd=ROOT, env=_env(),
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        ), timeline)
    results = {}
    for name, (proc, timeline) in procs.items():
        try:
            out, err = proc.communicate(timeout=240)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
        done = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
        data = json.loads(timeline.read_text()) if timeline.exists() else {}
        results[name] = (done, data)
    return results


def _ok(runs, name):
    done, timeline = runs[name]
    assert done.returncode == 0, f"{name} failed:\n{done.stdout}\n{done.stderr}"
    assert "Traceback" not in done.stderr, done.stderr
    return done.stdout, timeline


def _by_profile(timeline, profile):
    return [t for t in timeline["terminals"] if t["profile"] == profile]


def _busy(track, status="processing"):
    """The first interval the terminal spent in ``status``: (start, end); end is the next change, or its
    removal."""
    statuses = track["statuses"]
    for index, (name, since) in enumerate(statuses):
        if name == status:
            end = statuses[index + 1][1] if index + 1 < len(statuses) else track["removed"]
            assert end is not None, f"{track['name']} never left {status}"
            return since, end
    raise AssertionError(f"{track['name']} was never {status}: {statuses}")


def _body(message):
    """A message's own text, without the protocol line cao appended."""
    return re.split(r"\n\n\[(?:Message from|Assigned by) terminal ", message["body"])[0]


def test_assign_three_analysts_in_parallel_and_the_filled_report(runs):
    out, timeline = _ok(runs, "assign")
    assert timeline["final_answer"] == ASSIGN_REPORT
    assert ASSIGN_REPORT in out  # printed for the user too
    analysts = _by_profile(timeline, "data_analyst")
    (generator,) = _by_profile(timeline, "report_generator")
    (supervisor,) = _by_profile(timeline, "analysis_supervisor")
    assert len(analysts) == 3
    sup = supervisor["id"]
    assert all(t["caller_id"] == sup for t in [*analysts, generator])

    # The analysts worked at the same time, while the supervisor was blocked in its handoff to the
    # report generator: there is a moment when all four workers were busy.
    intervals = [_busy(t) for t in analysts] + [_busy(generator)]
    assert max(start for start, _ in intervals) < min(end for _, end in intervals), intervals
    sup_start, sup_end = _busy(supervisor)
    gen_start, gen_end = _busy(generator)
    assert sup_start < gen_start and gen_end <= sup_end, (supervisor["statuses"], generator["statuses"])
    # The handoff removed its worker; the supervisor deleted each analyst once it had its result.
    assert generator["removed"] is not None and all(t["removed"] is not None for t in analysts)

    messages = timeline["messages"]
    tasks = [m for m in messages if m["kind"] == "assign"]
    assert sorted(m["receiver_id"] for m in tasks) == sorted(t["id"] for t in analysts)
    assert all(m["sender_id"] == sup and m["body"].endswith(
        f"[Assigned by terminal {sup}. When done, send results back to terminal {sup} using send_message]")
        for m in tasks)
    results = [m for m in messages if m["kind"] == "send_message"]
    assert sorted(m["sender_id"] for m in results) == sorted(t["id"] for t in analysts)
    assert all(m["receiver_id"] == sup and m["states"][-1][0] == "delivered" for m in results)
    # Results were held until the supervisor's turn ended: none was typed while it was busy.
    for message in results:
        delivered = message["states"][-1][1]
        assert not sup_start < delivered < sup_end, (message, supervisor["statuses"])
    assert {_body(m).splitlines()[0] for m in results} == {f"Result for dataset {n}" for n in "ABC"}


def test_handoff_runs_the_planner_then_the_writer(runs):
    _, timeline = _ok(runs, "handoff")
    assert timeline["final_answer"] == RELEASE_NOTES
    (supervisor,) = _by_profile(timeline, "release_manager")
    (planner,) = _by_profile(timeline, "planner")
    (writer,) = _by_profile(timeline, "writer")
    plan_start, plan_end = _busy(planner)
    write_start, write_end = _busy(writer)
    sup_start, sup_end = _busy(supervisor)
    # Sequential: the writer started only after the planner had finished, both inside the supervisor's
    # one blocking turn.
    assert plan_end <= write_start, (planner["statuses"], writer["statuses"])
    assert writer["created"] >= plan_end
    assert sup_start < plan_start and write_end <= sup_end
    assert planner["removed"] is not None and writer["removed"] is not None
    assert timeline["messages"] == []  # handoff types the task directly; the inbox is not involved


def test_send_message_negotiation_alternates_between_the_two_agents(runs):
    _, timeline = _ok(runs, "send_message")
    assert timeline["final_answer"] == DEAL
    (buyer,) = _by_profile(timeline, "buyer")
    (seller,) = _by_profile(timeline, "seller")
    conversation = [m for m in timeline["messages"] if m["kind"] == "send_message"]
    assert [_body(m) for m in conversation] == [
        "Offer: 250", "Counter: 325", "Offer: 280", "Counter: 305", "Accept: 305", "Sold: 305"]
    pairs = [(m["sender_id"], m["receiver_id"]) for m in conversation]
    assert pairs == [(buyer["id"], seller["id"]), (seller["id"], buyer["id"])] * 3
    assert all(m["body"].endswith(f"[Message from terminal {m['sender_id']}. Use send_message MCP tool for "
                                  "any follow-up work.]") for m in conversation)
    assert all(m["states"][-1][0] == "delivered" for m in timeline["messages"])
    (task,) = [m for m in timeline["messages"] if m["kind"] == "assign"]
    assert (task["sender_id"], task["receiver_id"]) == (buyer["id"], seller["id"])
    assert seller["removed"] is not None  # the buyer deleted the seller once the deal was done


def test_a_failed_run_explains_itself_and_leaves_nothing_behind(tmp_path):
    timeline = tmp_path / "failed.json"
    done = subprocess.run(
        [sys.executable, str(RUNNER), "handoff", "--provider", "no_such_cli", "--timeline", str(timeline)],
        cwd=ROOT, env=_env(), stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120, check=False,
    )
    assert done.returncode == 1
    assert "run_example: handoff failed: cao launch failed:" in done.stderr
    assert "no_such_cli" in done.stderr
    home = re.search(r"private home (\S+),", done.stdout)
    assert home is not None, done.stdout
    assert not Path(home.group(1)).exists()  # the private folders (home, tmux socket) are gone
    assert json.loads(timeline.read_text())["error"].startswith("cao launch failed:")


def test_the_demo_prints_its_console_link(runs):
    done, _ = runs["assign"]
    links = re.findall(r"web console: (http://\S+/login\?code=\S+) \(works once\)", done.stdout)
    assert len(links) == 1, done.stdout


def test_an_example_runs_on_a_server_someone_already_runs(tmp_path):
    """``--server URL``: the team runs on that server (whose console then shows it); the example's session
    is removed at the end, the server and its other sessions stay."""
    import httpx
    from cao_testkit.server_process import run_cao_server

    home = tmp_path / "home"
    home.mkdir()
    plugins = ("tmux", "mock_cli", "inbox_sqlite", "server", "mcp", "web")
    with run_cao_server(home, tmp_path, plugins) as server:
        http = httpx.Client(base_url=server.url, headers=server.headers, timeout=30)
        other = http.post("/sessions", json={"agent_profile": "developer", "session_name": "keep",
                                             "provider": "mock_cli", "working_directory": str(tmp_path)})
        assert other.status_code == 201, other.text
        done = subprocess.run(
            [sys.executable, str(RUNNER), "assign", "--server", server.url, "--timeout", "120"], cwd=ROOT,
            env={**_env(), "CAO_HOME_DIR": str(home)}, stdin=subprocess.DEVNULL, capture_output=True,
            text=True, timeout=240, check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert ASSIGN_REPORT in done.stdout
        assert f"the cao-server at {server.url} keeps running" in done.stdout
        assert [s["name"] for s in http.get("/sessions").json()] == ["cao-keep"]
        history = http.get("/events/history", params={"session": "example-assign"}).json()
        assert {e["event"] for e in history} >= {"assign_started", "handoff_finished", "terminal_removed"}
        http.close()


def _steps(track):
    """A terminal's timeline as the runner wrote it: step name -> times (in the kernel's order)."""
    steps = {}
    for event in track["timeline"]:
        steps.setdefault(event["name"], []).append(event["at"])
    times = [e["at"] for e in track["timeline"]]
    assert times == sorted(times), track["timeline"]
    return steps


def test_a_handoff_workers_timeline_has_every_step_in_order(runs):
    """The kernel's timeline of a handoff's worker (mock agent, its real MCP relay, real tmux), read after
    the worker is gone: every step from the request to the removal, each once, in the order they happen."""
    _, timeline = _ok(runs, "handoff")
    (supervisor,) = _by_profile(timeline, "release_manager")
    for worker in (*_by_profile(timeline, "planner"), *_by_profile(timeline, "writer")):
        steps = _steps(worker)
        # Up to the answer's return, each step once. After it the worker is asked to exit (an input of its
        # own, which its CLI may still answer with a screen change) and removed.
        returned = steps["handoff_returned"][0]
        working = _steps({"timeline": [e for e in worker["timeline"] if e["at"] <= returned]})
        once = ("requested", "terminal_created", "process_started", "first_screen", "cli_ready",
                "mcp_started", "mcp_asked", "mcp_initialized", "tools_listed", "gate_open", "task_typed",
                "first_output", "answer_ready", "answer_read", "handoff_returned")
        assert all(len(working.get(name, ())) == 1 for name in once), (worker["profile"], working)
        assert len(steps["terminal_gone"]) == 1, steps
        task, leave = [e for e in worker["timeline"] if e["name"] == "task_typed"]
        assert "input" not in task["detail"] and leave["detail"] == {"input": "exit command"}, worker
        assert leave["at"] >= returned
        at = {name: times[0] for name, times in steps.items()}
        start = ["requested", "terminal_created", "process_started", "first_screen", "cli_ready"]
        mcp = ["process_started", "mcp_started", "mcp_asked", "mcp_initialized", "tools_listed",
               "gate_open"]
        work = ["task_typed", "first_output", "answer_ready", "answer_read", "handoff_returned",
                "terminal_gone"]
        for order in (start, mcp, work):
            assert [at[name] for name in order] == sorted(at[name] for name in order), (order, at)
        # The task goes in only once the CLI is ready and cao's tools are there: the gate.
        assert at["task_typed"] >= max(at["cli_ready"], at["gate_open"]), at
        requested = [e for e in worker["timeline"] if e["name"] == "requested"][0]
        assert requested["detail"] == {"kind": "handoff", "caller": supervisor["id"]}
        # The runner's own record of the worker agrees with the kernel's.
        assert abs(at["terminal_created"] - worker["created"]) < 0.01, (at, worker["created"])
    # The supervisor's own timeline (read while it still ran): launched by a person, so no request.
    steps = _steps(supervisor)
    assert "requested" not in steps and "terminal_gone" not in steps
    assert len(steps["task_typed"]) >= 1 and steps["cli_ready"][0] <= steps["task_typed"][0], steps
