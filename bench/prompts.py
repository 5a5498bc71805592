"""Prompt benchmarks on real tmux with the mock agent's real prompts (the ``permission`` behaviour).

Measures:
- drawn -> opened: from the first capture of the pane (its own tmux client, polled every 2 ms) that shows
  the prompt, to the kernel's ``opened`` event (the event stream, the console and the notifiers hear it
  then). The target is the issue's "within a second", by far.
- answer -> gone: a person's ``answer_prompt`` call, from the call to its return (the screen read again,
  the keys pressed, the prompt seen off the screen).
- opened -> answered by policy: a profile rule's answer, from the prompt's opening to its ``answered``
  event (it waits ``AUTO_SETTLE`` first, as some CLIs drop keys sent the moment a prompt is drawn).
Upstream CAO has no typed prompts to compare with. Prints a table, writes bench/results/prompts.json.
Run: uv run python bench/prompts.py [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import threading
import time
from pathlib import Path

from benchlib import format_table, machine, run_in_scratch, summarize, write_result

from cao_hookspecs import AgentProfile, CreateTerminalRequest, TerminalStatus, hookimpl
from cao_kernel.kernel import Kernel
from cao_kernel.plugins import LoadPolicy

TARGET = {"drawn_to_opened_s": 1.0, "answer_to_gone_s": 0.5, "opened_to_policy_answer_s": 0.5}


class Heard:
    """The kernel's prompt events, with when each arrived."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str, float]] = []
        self.changed = asyncio.Event()

    @hookimpl
    def cao_after_prompt(self, event) -> None:
        self.events.append((event.kind.value, event.by, time.perf_counter()))
        self.changed.set()

    async def wait(self, kind: str, count: int) -> float:
        while True:
            found = [at for k, _, at in self.events if k == kind]
            if len(found) >= count:
                return found[count - 1]
            self.changed.clear()
            await asyncio.wait_for(self.changed.wait(), 10)


def watch_pane(socket: str, target: str, needle: str, stop: threading.Event, seen: list[float]) -> None:
    """Capture the pane until it shows ``needle``; record when (its own tmux client, as a viewer would)."""
    while not stop.is_set():
        shown = subprocess.run(["tmux", "-S", socket, "capture-pane", "-p", "-t", target],
                               capture_output=True, text=True, check=False).stdout
        if needle in shown:
            seen.append(time.perf_counter())
            return
        time.sleep(0.002)


async def run(quick: bool, folder: Path) -> dict:
    socket = str(folder / "tmux.sock")
    heard = Heard()
    kernel = Kernel(policy=LoadPolicy(only=("tmux", "mock_cli", "inbox_sqlite")), home=folder / "home",
                    settings={"CAO_TMUX_SOCKET": socket}, plugins=[heard])
    kernel.add_profile(AgentProfile(name="asker", provider="mock_cli", extra={"mockBehaviour": "permission"}))
    kernel.add_profile(AgentProfile(name="ruled", provider="mock_cli", extra={"mockBehaviour": "permission"},
                                    prompt_policy={"rules": [{"allow": "Bash(echo *)"}]}))
    workdir = folder / "work"
    workdir.mkdir()
    rounds = 5 if quick else 20
    drawn, answered, ruled = [], [], []
    async with kernel:
        asker = await kernel.create_session(CreateTerminalRequest(agent_profile="asker", session_name="a",
                                                                  working_directory=str(workdir)))
        target = f"{asker.session_name}:{asker.name}"
        for i in range(rounds):
            needle = f"Allow Bash(echo {i})?"
            stop, seen = threading.Event(), []
            watcher = threading.Thread(target=watch_pane, args=(socket, target, needle, stop, seen))
            watcher.start()
            await kernel.send_input(asker.id, f"run: echo {i}")
            opened_at = await heard.wait("opened", i + 1)
            await asyncio.to_thread(watcher.join, 10)
            stop.set()
            drawn.append(opened_at - seen[0])
            started = time.perf_counter()
            await kernel.answer_prompt(asker.id, option=1)
            answered.append(time.perf_counter() - started)
            await kernel.wait_for_status(asker.id, {TerminalStatus.COMPLETED}, timeout=10)
        ruled_terminal = await kernel.create_session(CreateTerminalRequest(
            agent_profile="ruled", session_name="r", working_directory=str(workdir)))
        before = len([k for k, _, _ in heard.events if k == "answered"])
        for i in range(rounds):
            await kernel.send_input(ruled_terminal.id, f"run: echo ruled {i}")
            opened_at = await heard.wait("opened", rounds + i + 1)
            answered_at = await heard.wait("answered", before + i + 1)
            ruled.append(answered_at - opened_at)
            await kernel.wait_for_status(ruled_terminal.id, {TerminalStatus.COMPLETED}, timeout=10)
        await kernel.delete_session("cao-a")
        await kernel.delete_session("cao-r")
    return {"drawn_to_opened_s": drawn, "answer_to_gone_s": answered, "opened_to_policy_answer_s": ruled}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds")
    args = parser.parse_args()
    raw = run_in_scratch(run, args.quick)
    rows, report = [], {"machine": machine(), "measures": {}}
    for key, samples in raw.items():
        stats = summarize(samples)
        report["measures"][key] = {**stats, "samples": len(samples), "target": TARGET[key]}
        rows.append((key, f"{stats['median'] * 1000:.1f} ms", f"{stats['p90'] * 1000:.1f} ms",
                     f"{TARGET[key] * 1000:.0f} ms", "yes" if stats["p90"] <= TARGET[key] else "NO"))
    print(format_table(("measure", "median", "p90", "target", "pass"), rows))
    print(f"wrote {write_result('prompts', report)}")


if __name__ == "__main__":
    main()
