"""How fast is cao's MCP server for an agent?

1. Start -> initialized: the time from spawning ``cao-mcp-server`` (the workspace venv's script, every
   entry-point plugin installed, the environment an agent CLI gives it) to the answer of its
   ``initialize`` request, then to the answer of ``tools/list`` (when the agent can use the tools), over
   raw JSON-RPC pipes so no client library is timed. Four situations:

   - relay, warm: cao-server knows the terminal and has served ``/mcp`` before (the usual case);
   - relay, first agent: a server that just started creates its first terminal and the MCP server is
     spawned at once, as an agent CLI does (the server loads the MCP SDK in the background from the
     terminal's creation on, so part of that load is still under way);
   - relay, cold: the server has just restarted and re-adopted the terminal; its first ``/mcp`` request
     loads the MCP SDK (the worst case);
   - local (SDK) fallback: no server answers, so the process serves the tools itself with the MCP SDK.

   Also timed on the same interpreter, as floors: ``python -c pass`` and importing the MCP SDK's server.
2. Handoff round trip: a real ``cao server --port 0`` (private home and tmux socket, mock_cli agents), a
   supervisor terminal, and the MCP SDK's stdio client on ``cao-mcp-server`` (relaying) calling
   ``handoff`` to a mock ``developer`` worker: from the tool call to its result (worker started, its own
   cao-mcp-server connected and reported in, task typed, answer read, worker removed). The first call is
   reported apart.

Targets: start -> initialized median <= 0.5 s for the relay with a warm server (upstream CAO 2.5.4: 1.6 s);
handoff median <= 0.8 s (upstream: 5.6 s). Wall times inflate when other work shares the machine; CPU
medians are steadier.

Usage::

    uv run python bench/mcp.py [--runs 10] [--cold-runs 5] [--handoffs 10] [--check]

Results go to ``bench/results/mcp.json``; ``--check`` exits 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from benchlib import ROOT, format_table, machine, summarize, time_command, write_result
from cao_hookspecs import CreateTerminalRequest

# This script is named like the MCP SDK's package: once benchlib is loaded, its folder must leave the
# import path or `import mcp` would find this file.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or os.curdir).resolve() != _HERE]

BIN = Path(sys.executable).parent
MCP_SERVER = BIN / "cao-mcp-server"
CAO = BIN / "cao"
TARGET_START_S = 0.5
TARGET_HANDOFF_S = 0.8
UPSTREAM = {"start_to_initialized": 1.6, "handoff": 5.6}
READY_LINE = re.compile(r"cao-server listening on (http://\S+):(\d+)")
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "cao-bench", "version": "0"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
LIST_TOOLS = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
NO_GATE = {"CAO_MCP_CONNECT_TIMEOUT": "0"}


# cao's MCP entry gives the terminal the secret a timed MCP server must present for it. The mock's own
# MCP client waits past the benchmark, so only the timed servers talk to /mcp; the start benchmarks turn
# the readiness gate off, or creating the terminal would wait for that client.
PLAIN_PROFILE = """---
name: plain
description: A mock agent (the terminals whose ids and secrets the timed MCP servers use)
provider: mock_cli
mock_mcp_delay_ms: 3600000
mcpServers:
  cao-mcp-server:
    type: stdio
    command: cao-mcp-server
---

You answer.
"""


def agent_env(home: str, **extra: str) -> dict[str, str]:
    """What an agent CLI gives cao's MCP server: its MCP entry's env plus a minimal base."""
    return {"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", ""), "CAO_HOME_DIR": home,
            "CAO_TERMINAL_ID": "0badc0de", "CAO_API_HOST": "127.0.0.1", "CAO_API_PORT": "9", **extra}


def _reply(proc: subprocess.Popen[bytes], wanted: int) -> dict[str, Any]:
    assert proc.stdout is not None
    while True:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError(f"cao-mcp-server closed stdout before answering request {wanted}")
        message = json.loads(line)
        if message.get("id") == wanted:
            return message


def start_once(env: dict[str, str]) -> tuple[float, float, float]:
    """Spawn -> initialize answered, spawn -> tools/list answered, and the process's CPU seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.Popen([str(MCP_SERVER)], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    assert proc.stdin is not None
    try:
        proc.stdin.write((json.dumps(INITIALIZE) + "\n").encode())
        proc.stdin.flush()
        _reply(proc, 1)
        initialized = time.perf_counter() - started
        proc.stdin.write((json.dumps(INITIALIZED) + "\n" + json.dumps(LIST_TOOLS) + "\n").encode())
        proc.stdin.flush()
        tools = _reply(proc, 2)["result"]["tools"]
        listed = time.perf_counter() - started
        if not any(tool["name"] == "handoff" for tool in tools):
            raise RuntimeError("cao-mcp-server listed no handoff tool")
    finally:
        proc.stdin.close()
        proc.wait(30)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return initialized, listed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def summary(samples: list[tuple[float, float, float]]) -> dict[str, Any]:
    return {
        "initialized": summarize([s[0] for s in samples]),
        "tools_listed": summarize([s[1] for s in samples]),
        "process_cpu_median": summarize([s[2] for s in samples])["median"],
    }


# -- a private server ------------------------------------------------------------------------------


class Server:
    """``cao server --port 0`` on a private home and tmux socket, mock_cli agents."""

    def __init__(self, home: str, workdir: str, tmux: Any, **settings: str) -> None:
        self.home, self.workdir, self.tmux, self.settings = home, workdir, tmux, settings
        self.proc: subprocess.Popen[str] | None = None
        self.port = 0

    def start(self) -> Server:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("CAO_") and k not in ("TMUX", "TMUX_PANE")}
        env.update({"CAO_HOME_DIR": self.home, "CAO_DEFAULT_PROVIDER": "mock_cli",
                    "TMUX_TMPDIR": self.tmux.tmpdir, **self.tmux.settings, **self.settings})
        proc = subprocess.Popen([str(CAO), "server", "--port", "0", "--log-level", "warning"], env=env,
                                cwd=self.workdir, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, text=True, start_new_session=True)
        assert proc.stdout is not None
        deadline = time.monotonic() + 30
        for line in proc.stdout:
            found = READY_LINE.match(line)
            if found:
                self.proc, self.port = proc, int(found.group(2))
                return self
            if time.monotonic() > deadline:
                break
        proc.kill()
        raise RuntimeError("cao server did not start")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(15)
            self.proc = None

    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def terminal(self, profile: str = "plain") -> str:
        """A new session's terminal id (the call returns once its agent is ready)."""
        from cao_server.api_token import read_token
        from cao_server.client import HttpKernel

        async def create() -> str:
            async with HttpKernel(self.url(), token=read_token(self.home)) as api:
                return (await api.create_session(CreateTerminalRequest(
                    agent_profile=profile, working_directory=self.workdir))).id

        return asyncio.run(create())

    def env(self, terminal_id: str) -> dict[str, str]:
        """The env of the terminal's own entry for cao's MCP server, as its agent CLI was given it."""
        config = Path(self.home) / "runtime" / "terminals" / terminal_id / "mcp.json"
        entries = json.loads(config.read_text(encoding="utf-8"))["mcpServers"].values()
        secret = next(e["env"]["CAO_TERMINAL_SECRET"] for e in entries
                      if "CAO_TERMINAL_SECRET" in e.get("env", {}))
        return agent_env(self.home, CAO_TERMINAL_ID=terminal_id, CAO_API_PORT=str(self.port),
                         CAO_TERMINAL_SECRET=secret)


@contextlib.contextmanager
def private_folders() -> Iterator[tuple[str, str, Any]]:
    """A home (with the ``plain`` profile), a project folder and a private tmux server."""
    from cao_testkit.tmux import private_tmux_socket

    with tempfile.TemporaryDirectory(prefix="cao-bench-home-") as home, \
            tempfile.TemporaryDirectory(prefix="cao-bench-work-") as workdir, \
            private_tmux_socket() as tmux:
        store = Path(home) / "agent-store"
        store.mkdir()
        (store / "plain.md").write_text(PLAIN_PROFILE, encoding="utf-8")
        yield home, workdir, tmux


# -- start -> initialized --------------------------------------------------------------------------


def bench_relay_warm(runs: int, warmup: int) -> dict[str, Any]:
    with private_folders() as (home, workdir, tmux):
        server = Server(home, workdir, tmux, **NO_GATE).start()
        try:
            env = server.env(server.terminal())
            samples = [start_once(env) for _ in range(max(1, warmup) + runs)][max(1, warmup):]
        finally:
            server.stop()
    return summary(samples)


def bench_relay_first_agent(runs: int) -> dict[str, Any]:
    samples = []
    with private_folders() as (home, workdir, tmux):
        for _ in range(runs):
            server = Server(home, workdir, tmux, **NO_GATE).start()
            try:
                samples.append(start_once(server.env(server.terminal())))
            finally:
                server.stop()
    return summary(samples)


def bench_relay_cold(runs: int) -> dict[str, Any]:
    samples = []
    with private_folders() as (home, workdir, tmux):
        server = Server(home, workdir, tmux, **NO_GATE).start()
        terminal = server.terminal()
        server.stop()  # the terminal keeps running; each start below re-adopts it
        for _ in range(runs):
            server.start()
            try:
                samples.append(start_once(server.env(terminal)))
            finally:
                server.stop()
    return summary(samples)


def bench_fallback(runs: int, warmup: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="cao-bench-home-") as home:
        env = agent_env(home)
        samples = [start_once(env) for _ in range(warmup + runs)][warmup:]
        python = str(BIN / "python")
        floors = {}
        for label, code in (("python -c pass", "pass"),
                            ("import mcp.server.mcpserver", "import mcp.server.mcpserver")):
            wall, cpu = time_command([python, "-c", code], runs=runs, warmup=1, env=env)
            floors[label] = {**summarize(wall), "cpu_median": summarize(cpu)["median"]}
    return {**summary(samples), "floors": floors}


# -- handoff ---------------------------------------------------------------------------------------


async def handoffs(server: Server, count: int) -> tuple[float, list[float]]:
    from mcp import Client, StdioServerParameters

    from cao_server.api_token import read_token
    from cao_server.client import HttpKernel

    async with HttpKernel(server.url(), token=read_token(server.home)) as api:
        supervisor = await api.create_session(CreateTerminalRequest(
            agent_profile="developer", working_directory=server.workdir))
        params = StdioServerParameters(command=str(MCP_SERVER), env=server.env(supervisor.id))
        times = []
        async with Client(params) as client:
            for n in range(count + 1):
                task = f"benchmark handoff {n}"
                started = time.perf_counter()
                result = await client.call_tool("handoff", {"agent_profile": "developer", "message": task})
                elapsed = time.perf_counter() - started
                data = json.loads(result.content[0].text)
                if result.is_error or data.get("output") != task:
                    raise RuntimeError(f"handoff {n} failed: {result.content[0].text}")
                times.append(elapsed)
        await api.delete_session(supervisor.session_name)
    return times[0], times[1:]


def bench_handoff(count: int) -> dict[str, Any]:
    with private_folders() as (home, workdir, tmux):
        server = Server(home, workdir, tmux).start()
        try:
            first, rest = asyncio.run(handoffs(server, count))
        finally:
            server.stop()
    return {"first_call": round(first, 6), **summarize(rest)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="timed starts per warm situation (default 10)")
    parser.add_argument("--warmup", type=int, default=2, help="untimed starts first (default 2)")
    parser.add_argument("--cold-runs", type=int, default=5,
                        help="timed starts per situation that needs a fresh server (default 5)")
    parser.add_argument("--handoffs", type=int, default=10,
                        help="timed handoffs after the first (default 10)")
    parser.add_argument("--output", type=Path, default=None,
                        help="JSON file (default bench/results/mcp.json)")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args(argv)
    if args.runs < 1 or args.cold_runs < 1 or args.warmup < 0 or args.handoffs < 1:
        parser.error("--runs, --cold-runs and --handoffs must be at least 1, --warmup at least 0")
    if not os.access(MCP_SERVER, os.X_OK):
        parser.error(f"{MCP_SERVER} is not installed; run: uv sync --all-packages")

    start = {
        "relay_warm": bench_relay_warm(args.runs, args.warmup),
        "relay_first_agent": bench_relay_first_agent(args.cold_runs),
        "relay_cold": bench_relay_cold(args.cold_runs),
        "sdk_fallback": bench_fallback(args.runs, args.warmup),
    }
    handoff = bench_handoff(args.handoffs)
    start_pass = start["relay_warm"]["initialized"]["median"] <= TARGET_START_S
    handoff_pass = handoff["median"] <= TARGET_HANDOFF_S

    def ms(value: float) -> str:
        return f"{value * 1000:.0f}"

    def rows_of(label: str, key: str, target: bool = False) -> list[tuple[str, ...]]:
        result = start[key]
        first = result["initialized"]
        listed = result["tools_listed"]
        verdict = ("PASS" if start_pass else "FAIL") if target else ""
        return [
            (f"start -> initialized, {label}", ms(first["median"]), ms(first["p90"]), ms(first["min"]),
             ms(TARGET_START_S) if target else "-", ms(UPSTREAM["start_to_initialized"]) if target else "-",
             verdict),
            (f"start -> tools listed, {label}", ms(listed["median"]), ms(listed["p90"]), ms(listed["min"]),
             "-", "-", ""),
        ]

    rows = [
        *rows_of("relay, warm server", "relay_warm", target=True),
        *rows_of("relay, server's first agent", "relay_first_agent"),
        *rows_of("relay, restarted server (cold /mcp)", "relay_cold"),
        *rows_of("local SDK fallback, no server", "sdk_fallback"),
        *((f"  floor: {label}", ms(r["median"]), ms(r["p90"]), ms(r["min"]), "-", "-", "")
          for label, r in start["sdk_fallback"]["floors"].items()),
        ("handoff round trip (stdio, relay)", ms(handoff["median"]), ms(handoff["p90"]), ms(handoff["min"]),
         ms(TARGET_HANDOFF_S), ms(UPSTREAM["handoff"]), "PASS" if handoff_pass else "FAIL"),
        ("  first handoff", ms(handoff["first_call"]), "-", "-", "-", "-", ""),
    ]
    print(f"{args.runs} warm starts after {args.warmup} warm-up ones, {args.cold_runs} starts per "
          f"fresh-server situation, {args.handoffs} handoffs after the first; times in ms")
    print(format_table(("measure", "median", "p90", "min", "target", "upstream", ""), rows))
    print("CPU per MCP server process (to initialized, listed and exit), median: "
          + ", ".join(f"{key} {start[key]['process_cpu_median'] * 1000:.0f} ms" for key in start))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    if load > (os.cpu_count() or 1):
        print(f"note: the machine was busy (load {load:.1f} on {os.cpu_count()} CPUs); wall times are "
              f"inflated")

    path = write_result("mcp", {
        "benchmark": "mcp",
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "unit": "seconds",
        "runs": args.runs,
        "warmup": args.warmup,
        "cold_runs": args.cold_runs,
        "handoffs": args.handoffs,
        "start": start,
        "handoff": handoff,
        "targets": {
            "start_to_initialized": {"median_max_s": TARGET_START_S, "measured_on": "relay_warm",
                                     "pass": start_pass},
            "handoff": {"median_max_s": TARGET_HANDOFF_S, "pass": handoff_pass},
        },
        "upstream_2_5_4": UPSTREAM,
        "machine": machine(),
    }, args.output)
    print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
    return 1 if args.check and not (start_pass and handoff_pass) else 0


if __name__ == "__main__":
    sys.exit(main())
