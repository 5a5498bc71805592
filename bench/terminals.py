"""Terminal benchmarks on real tmux with the mock agent.

Measures: create -> idle, input -> completed + answer read, 50 terminals created, and the idle CPU of the
whole process tree (this process, the tmux server and every agent) with 50 idle terminals.
Prints a table, writes bench/results/terminals.json. Run: uv run python bench/terminals.py [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import time
from pathlib import Path

from benchlib import format_table, machine, run_in_scratch, summarize, write_result

from cao_hookspecs import AgentProfile, CreateTerminalRequest, TerminalStatus
from cao_kernel.kernel import Kernel
from cao_kernel.plugins import LoadPolicy

UPSTREAM = {"create_to_idle_s": 3.8, "input_to_completed_s": 0.88, "create_50_s": 190.0, "idle_cpu_pct": 26.0}
TARGET = {"create_to_idle_s": 0.5, "input_to_completed_s": 0.15, "create_50_s": 10.0, "idle_cpu_pct": 1.0}
CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def tree(pids: list[int]) -> set[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    found, todo = set(pids), list(pids)
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def tree_cpu(pids: set[int]) -> float:
    total = 0.0
    for pid in pids:
        try:
            total += cpu_seconds(pid)
        except OSError:
            pass
    return total


async def run(quick: bool, folder: Path) -> dict:
    socket = str(folder / "tmux.sock")
    kernel = Kernel(policy=LoadPolicy(only=("tmux", "mock_cli", "inbox_sqlite")), home=folder / "home",
                    settings={"CAO_TMUX_SOCKET": socket})
    kernel.add_profile(AgentProfile(name="developer", provider="mock_cli"))
    workdir = folder / "work"
    workdir.mkdir()
    results: dict = {}
    async with kernel:
        # create -> idle
        samples = []
        for i in range(5 if quick else 15):
            started = time.perf_counter()
            term = await kernel.create_session(CreateTerminalRequest(
                agent_profile="developer", session_name=f"b{i}", working_directory=str(workdir)))
            samples.append(time.perf_counter() - started)
            assert term.status == TerminalStatus.IDLE
        results["create_to_idle_s"] = samples
        # input -> completed + answer read
        samples = []
        for i in range(10 if quick else 40):
            started = time.perf_counter()
            await kernel.send_input(term.id, f"ping {i}")
            await kernel.wait_for_status(term.id, {TerminalStatus.COMPLETED}, timeout=10)
            answer = await kernel.get_output(term.id, "last")
            samples.append(time.perf_counter() - started)
            assert answer == f"ping {i}", answer
        results["input_to_completed_s"] = samples
        for i in range(5 if quick else 15):
            await kernel.delete_session(f"b{i}")
        # 50 terminals
        started = time.perf_counter()
        first = await kernel.create_session(CreateTerminalRequest(
            agent_profile="developer", session_name="fifty", working_directory=str(workdir)))
        await asyncio.gather(*[
            kernel.create_terminal(CreateTerminalRequest(
                session_name="fifty", agent_profile="developer", working_directory=str(workdir),
            )) for _ in range(49)
        ])
        results["create_50_s"] = [time.perf_counter() - started]
        assert len(await kernel.list_terminals("fifty")) == 50
        # idle CPU of the whole tree: this process, tmux server, the agents
        window = 5.0 if quick else 30.0
        server_pid = int(subprocess.run(["tmux", "-S", socket, "display-message", "-p", "#{pid}"],
                                        capture_output=True, text=True, check=True).stdout)
        await asyncio.sleep(1.0)
        pids = tree([os.getpid(), server_pid])
        before = tree_cpu(pids)
        await asyncio.sleep(window)
        used = tree_cpu(pids) - before
        results["idle_cpu_pct"] = [100.0 * used / window]
        results["idle_processes"] = len(pids)
        await kernel.delete_session(first.session_name)
    subprocess.run(["tmux", "-S", socket, "kill-server"], capture_output=True)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer samples, 5 s CPU window")
    args = parser.parse_args()
    raw = run_in_scratch(run, args.quick)
    report = {"benchmark": "terminals", "machine": machine(), "quick": args.quick, "measures": {},
              "idle_processes": raw["idle_processes"]}
    rows = []
    for key, target in TARGET.items():
        stats = summarize(raw[key])
        median = stats["median"]
        ratio = UPSTREAM[key] / median if median else None
        report["measures"][key] = {**stats, "n": len(raw[key]), "target": target, "upstream_2_5_4": UPSTREAM[key],
                                   "ratio_vs_upstream": ratio, "pass": median <= target}
        rows.append((key, f"{median:.3f}", f"{stats['p90']:.3f}", f"{target:g}", f"{UPSTREAM[key]:g}",
                     f"{ratio:.0f}x" if ratio else "-", "yes" if median <= target else "NO"))
    print(format_table(("measure", "median", "p90", "target", "upstream", "x faster", "pass"), rows))
    print(f"wrote {write_result('terminals', report)}")


if __name__ == "__main__":
    main()
