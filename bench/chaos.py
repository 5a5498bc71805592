"""Exactly once across crashes and restarts: the chaos run of the test kit at full size.

A real ``cao server`` with 20 mock agents on a private tmux server; 1,000 messages among them over HTTP;
the server stopped three times at points a seeded generator picks (right after a send, in the middle of
a burst of sends, while everything is idle) and started again on the same port; then the tmux server
itself killed under waiting messages. Once per mode: SIGKILL (crashes; at the end tmux dies with the
server) and SIGTERM (clean stops; at the end tmux dies under the running server).

Counts, for every message the server acknowledged (and those it stored but died before acknowledging,
in brackets): lost (never typed), duplicated (typed twice), uncertain (recorded as such), untruthful
(the server's state disagrees with the receiver's pane); and failed restarts (a start that did not come
up healthy), the drain time (end of the traffic -> every message delivered and every agent idle again),
and each stop's and start's timing, with the messages each stop left in the middle of their delivery.
See cao_testkit.chaos.

Prints a table and writes bench/results/chaos.json.
Run: uv run python bench/chaos.py [--quick] [--seed N] [--output FILE]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path
from typing import Any

from benchlib import format_table, machine, write_result

from cao_testkit.chaos import ChaosPlan, ChaosResult, run_chaos

MODES = {"SIGKILL": ("SIGKILL",) * 3, "SIGTERM": ("SIGTERM",) * 3}


def plan(mode: str, seed: int, quick: bool) -> ChaosPlan:
    return ChaosPlan(seed=seed, agents=20, messages=200 if quick else 1000, kills=MODES[mode], burst=8,
                     tmux_crash=20 if quick else 50, tmux_crash_while_down=mode == "SIGKILL",
                     drain_timeout=120.0)


def row(mode: str, result: ChaosResult) -> list[Any]:
    crash = result.tmux_crash
    restarts = [kill.start_s for kill in result.kills if kill.moment != "tmux_gone"]
    return [
        mode,
        f"{result.acknowledged} ({result.stored_unacknowledged})",
        result.lost,
        result.duplicated,
        result.uncertain,
        result.untruthful,
        result.failed_restarts,
        f"{result.drain_s:.2f} s",
        f"{statistics.median(restarts):.2f} s" if restarts else "-",
        f"{crash.dead}/{crash.acknowledged} dead, {crash.unsettled} open, {len(crash.orphans)} orphans"
        if crash else "-",
        "yes" if result.ok else "NO",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="200 messages instead of 1,000")
    parser.add_argument("--seed", type=int, default=1, help="seed of the run's choices (default 1)")
    parser.add_argument("--output", type=Path, default=None,
                        help="JSON file (default bench/results/chaos.json)")
    args = parser.parse_args()
    results = {mode: run_chaos(plan(mode, args.seed, args.quick)) for mode in MODES}
    headers = ["mode", "acknowledged (+stored)", "lost", "duplicated", "uncertain", "untruthful",
               "failed restarts", "drain", "restart (median)", "tmux killed", "pass"]
    print(format_table(headers, [row(mode, result) for mode, result in results.items()]))
    for mode, result in results.items():
        for kill in result.kills:
            print(f"{mode}: {kill.signal} {kill.moment} after {kill.acknowledged_before} acknowledged: "
                  f"stopped in {kill.stop_s:.3f} s leaving {kill.left_delivering} mid-delivery, healthy "
                  f"again in {kill.start_s:.3f} s ({kill.attempts} start(s))")
        for problem in result.problems[:20]:
            print(f"{mode}: {problem}")
    path = write_result("chaos", {
        "benchmark": "chaos",
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "quick": args.quick,
        "seed": args.seed,
        "machine": machine(),
        "note": "counts are messages; *_s are seconds; see cao_testkit.chaos for what each count means",
        "modes": {mode: result.as_dict() for mode, result in results.items()},
    }, args.output)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
