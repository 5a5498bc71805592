"""The three examples end to end, offline, as a user runs them: how long a supervisor and its mock
workers take to finish the job.

For each example (``examples/run_example.py NAME``, a private cao-server and tmux server each run) it
measures the whole command's wall time, and from the run's timeline the supervisor's working time:
from its terminal's creation to its last status change (the report ready). Then the assign example's
team embedded in a program of its own (``examples/embed_team.py``: no cao-server; the kernel serves its
agents' MCP servers itself), the whole command's wall time against the served run's. Runs one at a time.
Prints a table, writes bench/results/examples.json. Run: uv run python bench/examples.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchlib import ROOT, format_table, machine, summarize, write_result

NAMES = ("assign", "handoff", "send_message")


def run_once(name: str, folder: Path) -> tuple[float, float]:
    """(command wall seconds, supervisor creation to its last status change) of one run."""
    timeline = folder / f"{name}.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CAO_", "TMUX"))}
    started = time.perf_counter()
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "run_example.py"), name, "--timeline",
                           str(timeline)], cwd=ROOT, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=300, check=False)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"example {name} failed: {(done.stderr or done.stdout).strip()[-800:]}")
    data = json.loads(timeline.read_text(encoding="utf-8"))
    (supervisor,) = [t for t in data["terminals"] if t["id"] == data["supervisor"]]
    return wall, supervisor["statuses"][-1][1] - supervisor["created"]


def run_embedded() -> float:
    """Wall seconds of one run of examples/embed_team.py."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CAO_", "TMUX"))}
    started = time.perf_counter()
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "embed_team.py")], cwd=ROOT, env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300, check=False)
    wall = time.perf_counter() - started
    if done.returncode != 0 or "DATA ANALYSIS REPORT" not in done.stdout:
        raise RuntimeError(f"embed_team.py failed: {(done.stderr or done.stdout).strip()[-800:]}")
    return wall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="one run of each example instead of three")
    parser.add_argument("--runs", type=int, default=None, help="runs of each example")
    args = parser.parse_args()
    runs = args.runs or (1 if args.quick else 3)
    results: dict[str, dict[str, dict[str, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="cao-bench-examples-") as scratch:
        for name in NAMES:
            walls, working = [], []
            for _ in range(runs):
                wall, work = run_once(name, Path(scratch))
                walls.append(wall)
                working.append(work)
            results[name] = {"command_s": summarize(walls), "supervisor_working_s": summarize(working)}
        embedded = summarize([run_embedded() for _ in range(runs)])
    rows = [(name, f"{r['supervisor_working_s']['median']:.2f} s", f"{r['command_s']['median']:.2f} s")
            for name, r in results.items()]
    served = results["assign"]["command_s"]["median"]
    rows.append(("assign, embedded (no server)", "-",
                 f"{embedded['median']:.2f} s ({embedded['median'] / served:.2f}x the served run)"))
    print(format_table(["example", "supervisor created -> report", "whole command"], rows))
    path = write_result("examples", {"machine": machine(), "runs": runs, "results": results,
                                     "embedded_assign_command_s": embedded,
                                     "embedded_over_served": embedded["median"] / served})
    print(f"\nwrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
