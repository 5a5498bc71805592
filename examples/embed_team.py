"""The main job inside your own program: a supervisor agent delegates to workers, with no cao-server.

This program embeds the kernel with exactly four plugins, registered explicitly (installed entry points
are ignored): the tmux backend, the offline mock agent, the SQLite inbox and cao's MCP tools. With the
MCP plugin registered and no server around, the kernel serves its agents cao's tools itself, on a
private loopback endpoint it starts and stops. Then it runs the assign example's team: the supervisor
assigns three data analysts, hands off to a report generator for a template, and fills it in as the
analysts' results arrive in its inbox. The program follows the supervisor through an observer plugin
(no polling), prints the final report, and removes everything it started, its tmux server included.

Run it from the repository root with ``uv run python examples/embed_team.py`` (about 10 s).

Output includes::

    DATA ANALYSIS REPORT
    Datasets: A, B, C
    Dataset A: [1, 2, 3, 4, 5]
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import cao_inbox_sqlite.plugin
import cao_mcp.plugin
import cao_provider_mock.plugin
import cao_tmux.plugin
from cao_hookspecs import CreateTerminalRequest, StatusReport, Terminal, TerminalStatus, hookimpl

from cao_kernel.kernel import Kernel

EXAMPLE = Path(__file__).resolve().parent / "assign"
TASK = ("Analyze these three datasets and write a report. Dataset A: [1, 2, 3, 4, 5]. "
        "Dataset B: [10, 20, 30, 40, 50, 60]. Dataset C: [2, 4, 4, 4, 5, 5, 7, 9].")
#: The supervisor's answers before the last one (see examples/assign/behaviours.py).
NOT_YET = ("Assigned ", "Have the results for ")


class Finished:
    """An observer plugin: it hears every status change, on the kernel's event loop, and wakes the
    program when the supervisor has finished a turn."""

    def __init__(self) -> None:
        self.supervisor: str | None = None
        self.turns: asyncio.Queue[None] = asyncio.Queue()

    @hookimpl
    def cao_after_status_changed(self, terminal: Terminal, new: StatusReport) -> None:
        if terminal.id == self.supervisor and new.status == TerminalStatus.COMPLETED:
            self.turns.put_nowait(None)


async def run_team(scratch: Path) -> str:
    finished = Finished()
    kernel = Kernel(
        plugins=[cao_tmux.plugin, cao_provider_mock.plugin, cao_inbox_sqlite.plugin, cao_mcp.plugin,
                 finished],
        load_entrypoints=False,
        home=scratch / "home",
        settings={
            # A tmux server of this program's own, so nothing is left on the user's.
            "CAO_TMUX_SOCKET": os.environ.get("CAO_TMUX_SOCKET") or str(scratch / "tmux.sock"),
            "CAO_DEFAULT_PROVIDER": "mock_cli",
            # The mock agents find the example's scripted behaviours (examples.assign.behaviours) here.
            "CAO_MOCK_BEHAVIOUR_PATH": str(EXAMPLE.parents[1]),
        },
    )
    async with kernel:
        for profile in sorted(EXAMPLE.glob("*.md")):
            if profile.name != "README.md":
                await kernel.install_profile(str(profile))
        work = scratch / "work"
        work.mkdir()
        supervisor = await kernel.create_session(CreateTerminalRequest(
            agent_profile="analysis_supervisor", session_name="embedded-team", working_directory=str(work)))
        finished.supervisor = supervisor.id
        print(f"the team has started (supervisor {supervisor.id}, cao's tools at "
              f"http://127.0.0.1:{kernel.settings['CAO_API_PORT']})", flush=True)
        await kernel.send_input(supervisor.id, TASK)
        try:
            while True:
                await asyncio.wait_for(finished.turns.get(), timeout=60)
                answer = await kernel.get_output(supervisor.id, "last")
                if not answer.startswith(NOT_YET):
                    return answer
        finally:
            await kernel.delete_session(supervisor.session_name)


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="cao-embed-") as folder:
        scratch = Path(folder)
        try:
            report = asyncio.run(run_team(scratch))
        finally:
            if not os.environ.get("CAO_TMUX_SOCKET"):
                subprocess.run(["tmux", "-S", str(scratch / "tmux.sock"), "kill-server"],
                               capture_output=True, check=False)
    print(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
