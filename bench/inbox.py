"""Inbox and orchestration benchmarks on real tmux with the mock agent.

Measures: receiver ready -> message typed into it (p50/p90), 1,000 messages among 20 terminals with random
senders (lost and duplicated counts, throughput), and an in-process handoff round trip to a mock worker.
Prints a table, writes bench/results/inbox.json. Run: uv run python bench/inbox.py [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import subprocess
import time
from collections import Counter
from pathlib import Path

from benchlib import format_table, machine, run_in_scratch, summarize, write_result

from cao_hookspecs import AgentProfile, CreateTerminalRequest, MessageState, TerminalStatus, hookimpl
from cao_kernel.kernel import Kernel
from cao_kernel.plugins import LoadPolicy

UPSTREAM = {"ready_to_read_s": 0.40, "handoff_s": 5.6}
TARGET = {"ready_to_read_s": 0.1, "handoff_s": 0.8}


class Clock:
    """Observer plugin: when each terminal became ready, when each message was delivered."""

    def __init__(self) -> None:
        self.ready_at: dict[str, float] = {}
        self.delivered: Counter[int] = Counter()
        self.latencies: list[float] = []

    @hookimpl
    def cao_after_status_changed(self, terminal, new):
        if new.status in (TerminalStatus.IDLE, TerminalStatus.COMPLETED):
            self.ready_at[terminal.id] = time.time()

    @hookimpl
    def cao_after_message_delivered(self, message, receipt):
        self.delivered[message.id] += 1
        ready = self.ready_at.get(message.receiver_id)
        if ready is not None:
            self.latencies.append(receipt.delivered_at - ready)


async def run(quick: bool, folder: Path) -> dict:
    socket = str(folder / "tmux.sock")
    clock = Clock()
    kernel = Kernel(policy=LoadPolicy(only=("tmux", "mock_cli", "inbox_sqlite")), home=folder / "home",
                    settings={"CAO_TMUX_SOCKET": socket}, plugins=[clock])
    for name in ("supervisor", "developer"):
        kernel.add_profile(AgentProfile(name=name, provider="mock_cli", extra={"mock_delay_ms": 20}))
    workdir = str(folder / "work")
    os.mkdir(workdir)
    results: dict = {}
    async with kernel:
        # ready -> read: the receiver is busy when the message is queued; measure from its ready event.
        sup = await kernel.create_session(CreateTerminalRequest(
            agent_profile="supervisor", session_name="lat", working_directory=workdir))
        rcv = await kernel.create_terminal(CreateTerminalRequest(
            session_name="lat", agent_profile="developer", working_directory=workdir))
        for i in range(10 if quick else 30):
            clock.latencies.clear()
            await kernel.send_input(rcv.id, "__mock_sleep_0.2")
            message = await kernel.send_message(sup.id, rcv.id, f"note {i}")
            while not clock.delivered[message.id]:
                await asyncio.sleep(0.005)
            results.setdefault("ready_to_read_s", []).extend(clock.latencies[:1])
            await kernel.wait_for_status(rcv.id, {TerminalStatus.COMPLETED}, timeout=10)
        await kernel.delete_session("lat")

        # 1,000 messages among 20 terminals
        count = 200 if quick else 1000
        first = await kernel.create_session(CreateTerminalRequest(
            agent_profile="developer", session_name="mesh", working_directory=workdir))
        rest = await asyncio.gather(*[
            kernel.create_terminal(CreateTerminalRequest(
                session_name="mesh", agent_profile="developer", working_directory=workdir)) for _ in range(19)
        ])
        ids = [first.id, *[t.id for t in rest]]
        rng = random.Random(7)
        clock.delivered.clear()
        started = time.perf_counter()
        sent = []
        for i in range(count):
            sender, receiver = rng.sample(ids, 2)
            sent.append((await kernel.send_message(sender, receiver, f"mesh-{i}")).id)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and sum(1 for m in sent if clock.delivered[m]) < count:
            await asyncio.sleep(0.05)
        elapsed = time.perf_counter() - started
        states = Counter()
        for tid in ids:
            for m in await kernel.list_messages(tid, limit=1000):
                states[m.state.value] += 1
        results["mesh"] = {
            "messages": count, "seconds": elapsed, "per_second": count / elapsed,
            "lost": sum(1 for m in sent if not clock.delivered[m]),
            "duplicated": sum(1 for m in sent if clock.delivered[m] > 1),
            "states": dict(states),
            "delivered_state": states.get(MessageState.DELIVERED.value, 0),
        }
        await kernel.delete_session("mesh")

        # handoff round trip, in process
        sup = await kernel.create_session(CreateTerminalRequest(
            agent_profile="supervisor", session_name="hand", working_directory=workdir))
        samples = []
        for i in range(5 if quick else 15):
            started = time.perf_counter()
            result = await kernel.handoff(sup.id, "developer", f"task {i}", timeout=60)
            samples.append(time.perf_counter() - started)
            assert result.success and result.output == f"task {i}", result
        results["handoff_s"] = samples
        await kernel.delete_session("hand")
    subprocess.run(["tmux", "-S", socket, "kill-server"], capture_output=True)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    raw = run_in_scratch(run, args.quick)
    report = {"benchmark": "inbox", "machine": machine(), "quick": args.quick, "measures": {}, "mesh": raw["mesh"]}
    rows = []
    for key, target in TARGET.items():
        stats = summarize(raw[key])
        p50 = stats["median"]
        report["measures"][key] = {**stats, "n": len(raw[key]), "target": target, "upstream_2_5_4": UPSTREAM[key],
                                   "ratio_vs_upstream": UPSTREAM[key] / p50, "pass": p50 <= target}
        rows.append((key, f"{p50:.3f}", f"{stats['p90']:.3f}", f"{target:g}", f"{UPSTREAM[key]:g}",
                     f"{UPSTREAM[key] / p50:.0f}x", "yes" if p50 <= target else "NO"))
    print(format_table(("measure", "p50", "p90", "target", "upstream", "x faster", "pass"), rows))
    mesh = raw["mesh"]
    print(f"mesh: {mesh['messages']} messages among 20 terminals in {mesh['seconds']:.1f} s "
          f"({mesh['per_second']:.0f}/s), lost {mesh['lost']}, duplicated {mesh['duplicated']}, states {mesh['states']}")
    print(f"wrote {write_result('inbox', report)}")


if __name__ == "__main__":
    main()
