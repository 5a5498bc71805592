"""The assign example on the real Claude Code, Codex and Gemini CLI, each against a scripted model server:
how long a delegation takes, phase by phase.

Each run is what tests/test_examples_live.py runs (``examples/run_example.py assign --provider P
--timeline FILE``, through cao_testkit.live_example), except that the models take time as real ones
do: each data analyst thinks 3 s before its first answer, the report generator 2 s. The CLIs take
turns run by run, so a change in the machine's load falls on all of them. From each run's timeline come the
phases of ``cao_testkit.live_example.PHASES``: the supervisor's launch until it is ready, the report
generator's handoff and its parts, the whole example (launch to the final report). Most of them need
the kernel's per-terminal timeline in the runner's JSON; without it they show ``-`` and the phases the
runner's own records give are still measured. Also per run: the runner's wall time and how many model
requests met cao's MCP server still connecting (``requests_before_cao_tools``).

Prints the median and p90 of every phase per CLI, writes bench/results/live.json with every run's
numbers. A CLI that cannot be installed (no npm, no registry) is skipped with the reason, and with
none left the bench exits 0 having written why. A failed run is kept with its error and the bench
exits 1.

``--env NAME=VALUE`` (repeatable) gives the runner's server and agents a setting, ``--label`` names the
column its numbers go in (say ``--env CAO_POOLS=report_generator=1 --label pool`` for a warm report
generator). Columns measured earlier under other labels stay in the JSON and the table, so a run
without a label and one with ``--label pool`` end side by side (remove the JSON to start over).

Run: uv run python bench/live.py [--runs 5] [--cli claude_code] [--env NAME=VALUE --label NAME]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Collection
from pathlib import Path
from typing import Any

from benchlib import ROOT, format_table, machine, summarize, write_result

from cao_testkit.live_example import CLIS, PHASES, AssignModels, expected_report, phases, run_assign

#: Model time per role, as the issue measured the example with (the mock's analysts think 1 s).
ANALYST_THINK = 3.0
REPORT_THINK = 2.0
COMMAND = "whole command (runner)"
STILL_CONNECTING = "requests before cao's tools"


def run_once(cli_name: str, env: dict[str, str]) -> dict[str, Any]:
    """One run of the example on ``cli_name``: its phases, or its error. Raises ``LiveCliUnavailable``
    when the CLI cannot be installed."""
    models = AssignModels(ROOT, analyst_think=ANALYST_THINK, report_think=REPORT_THINK)
    folder = Path(tempfile.mkdtemp(prefix="cao-bench-live-", dir="/tmp"))  # short: tmux sockets live there
    load = os.getloadavg()[0]
    try:
        cli = CLIS[cli_name](folder, models.roles())
        try:
            run = run_assign(ROOT, cli_name, cli, folder, env=env)
            error = _problem(run, cli_name, cli.server.problems)
            timeline = run.timeline if error is None else {}
        except subprocess.TimeoutExpired as exc:
            error, timeline = f"the runner did not end: {exc}", {}
        finally:
            cli.server.close()
        record: dict[str, Any] = {
            "ok": error is None, "version": cli.version, "load_1m_before": round(load, 2),
            "command_s": round(run.wall, 3) if error is None else None,
            "phases_s": {k: _round(v) for k, v in phases(timeline).items()} if error is None else {},
            "kernel_timeline": any("timeline" in t for t in timeline.get("terminals", [])),
            "requests_before_cao_tools": len(models.still_connecting),
            "still_connecting": list(models.still_connecting),
            "model_requests": len(cli.server.turns()),
            "terminals": _seen(timeline),
        }
        if error is not None:
            record["error"] = error
        return record
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _problem(run: Any, cli_name: str, problems: list[str]) -> str | None:
    if run.done.returncode != 0:
        return f"the runner exited {run.done.returncode}: {(run.done.stderr or run.done.stdout)[-1500:]}"
    answer = run.timeline.get("final_answer")
    if answer != expected_report(ROOT, cli_name):
        return f"the final report is not the expected one: {str(answer)[:500]!r}"
    if problems:
        return "the model server saw problems: " + "; ".join(p[:300] for p in problems)
    return None


def _seen(timeline: dict[str, Any]) -> list[dict[str, Any]]:
    """Each terminal's creation, statuses, removal and kernel timeline steps in seconds from the launch:
    where a phase the table does not name went."""
    terminals = timeline.get("terminals", [])
    launch = next((t["created"] for t in terminals if t["id"] == timeline.get("supervisor")), None)
    if launch is None:
        return []

    def at(value: float | None) -> float | None:
        return None if value is None else round(value - launch, 3)

    return [{"profile": t["profile"], "created": at(t["created"]), "removed": at(t["removed"]),
             "statuses": [[status, at(since)] for status, since in t["statuses"]],
             "steps": [[step["name"], at(step["at"])] for step in t.get("timeline") or ()]}
            for t in terminals]


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Per phase: median, p90, min and max over the runs that finished (None when none measured it)."""
    ok = [r for r in runs if r["ok"]]
    out: dict[str, Any] = {"runs_ok": len(ok), "runs_failed": len(runs) - len(ok)}
    if not ok:
        return out
    out["version"] = ok[0]["version"]
    out["phases_s"] = {}
    for phase in PHASES:
        values = [r["phases_s"][phase] for r in ok if r["phases_s"].get(phase) is not None]
        out["phases_s"][phase] = summarize(values) if values else None
    out["command_s"] = summarize([r["command_s"] for r in ok])
    out["requests_before_cao_tools"] = summarize([float(r["requests_before_cao_tools"]) for r in ok])
    return out


def table(results: dict[str, dict[str, Any]]) -> str:
    """Phases down, one median and one p90 column per CLI and label."""
    columns = [(cli, label, found) for cli, by_label in results.items() for label, found in by_label.items()
               if found.get("phases_s")]
    headers = ["phase"]
    for cli, label, found in columns:
        name = cli if label == "default" else f"{cli} [{label}]"
        headers += [f"{name} {found['version']} median", "p90"]
    rows = []
    for phase in (*PHASES, COMMAND, STILL_CONNECTING):
        row: list[str] = [phase]
        for _, _, found in columns:
            stats = (found["command_s"] if phase == COMMAND
                     else found["requests_before_cao_tools"] if phase == STILL_CONNECTING
                     else found["phases_s"][phase])
            unit = "" if phase == STILL_CONNECTING else " s"
            row += ["-", "-"] if stats is None else [f"{stats[k]:.2f}{unit}" for k in ("median", "p90")]
        rows.append(row)
    return format_table(headers, rows)


def _earlier_results(label: str, measured: Collection[str]) -> dict[str, dict[str, Any]]:
    """Results of earlier runs, from bench/results/live.json ({} when none), but those this run replaces:
    ``label``'s column of the CLIs in ``measured``."""
    import json

    try:
        earlier = json.loads((ROOT / "bench" / "results" / "live.json").read_text(encoding="utf-8"))
        kept = {cli: {other: found for other, found in by_label.items()
                      if other != label or cli not in measured}
                for cli, by_label in dict(earlier.get("results") or {}).items()}
    except (OSError, ValueError, AttributeError):
        return {}
    return {cli: by_label for cli, by_label in kept.items() if by_label}


def _env_pair(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    return name, value


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="runs per CLI (default 5)")
    parser.add_argument("--cli", action="append", choices=sorted(CLIS), help="a CLI to run (default: all)")
    parser.add_argument("--env", action="append", default=[], type=_env_pair, metavar="NAME=VALUE",
                        help="a setting for the runner's server and agents (repeat for more)")
    parser.add_argument("--label", default="default", help="the name of these settings' column")
    args = parser.parse_args()
    from cao_testkit.models.cli import LiveCliUnavailable

    clis = args.cli or sorted(CLIS)
    env = dict(args.env)
    runs: dict[str, list[dict[str, Any]]] = {cli: [] for cli in clis}
    skipped: dict[str, str] = {}
    for i in range(args.runs):
        for cli in clis:
            if cli in skipped:
                continue
            try:
                record = run_once(cli, env)
            except LiveCliUnavailable as exc:
                skipped[cli] = str(exc).strip().splitlines()[0]
                print(f"{cli}: skipped, the CLI cannot be installed: {skipped[cli]}")
                continue
            runs[cli].append(record)
            phase = record["phases_s"].get("whole example")
            shown = f"whole example {phase:.2f} s" if phase is not None else record.get("error", "")[:300]
            print(f"{cli} run {i + 1}/{args.runs}: {shown}; "
                  f"requests before cao's tools: {record['requests_before_cao_tools']}", flush=True)

    results = {cli: {args.label: {**summary(found), "env": env, "runs": found}} for cli, found in runs.items()
               if cli not in skipped}
    data: dict[str, Any] = {
        "machine": machine(), "runs": args.runs, "label": args.label, "env": env,
        "model_think_s": {"data_analyst": ANALYST_THINK, "report_generator": REPORT_THINK},
        "kernel_timeline": any(r["kernel_timeline"] for found in runs.values() for r in found),
        "skipped": not results, "skipped_clis": skipped, "results": results,
    }
    if not results:
        data["reason"] = "no CLI could be installed: " + "; ".join(f"{c}: {r}" for c, r in skipped.items())
        path = write_result("live", data)
        print(f"skipped: no CLI could be installed; wrote {path.relative_to(ROOT)}")
        return 0
    print()
    for cli, by_label in results.items():
        found = by_label[args.label]
        print(f"{cli}: {found['runs_ok']} runs finished, {found['runs_failed']} failed")
    # Columns measured earlier under other labels stay, side by side with these (with and without a pool).
    data["results"] = merged = _earlier_results(args.label, results)
    for cli, by_label in results.items():
        merged.setdefault(cli, {}).update(by_label)
    print()
    print(table(merged))
    if not data["kernel_timeline"]:
        print("\n'-': the runner's timeline holds no per-terminal kernel timeline yet")
    path = write_result("live", data)
    print(f"\nwrote {path.relative_to(ROOT)}")
    return 1 if any(r[args.label]["runs_failed"] for r in results.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
