"""How fast is cao's MCP server for an agent?

1. Start -> initialized: the time from spawning ``cao-mcp-server`` (the workspace venv's script, every
   entry-point plugin installed, the environment an agent CLI gives it) to the answer of its
   ``initialize`` request, then to the answer of ``tools/list`` (when the agent can use the tools),
   over raw JSON-RPC pipes so no client library is timed. Also timed on the same interpreter, as floors
   no MCP server in Python can beat: ``python -c pass`` and importing the MCP SDK's server alone.
2. Handoff round trip: a real ``cao server --port 0`` (private home and tmux socket, mock_cli agents),
   a supervisor terminal, and the MCP SDK's stdio client on ``cao-mcp-server`` calling ``handoff`` to a
   mock ``developer`` worker: from the tool call to its result (worker started, task typed, answer read,
   worker removed). The first call also connects the MCP server's HTTP client and is reported apart.

Targets: start -> initialized median <= 0.5 s (upstream CAO 2.5.4: 1.6 s); handoff median <= 0.8 s
(upstream: 5.6 s). Wall times inflate when other work shares the machine; CPU medians are steadier.

Usage::

    uv run python bench/mcp.py [--runs 10] [--handoffs 10] [--check]

Results go to ``bench/results/mcp.json``; ``--check`` exits 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchlib import ROOT, format_table, machine, summarize, time_command, write_result

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


def bench_start(runs: int, warmup: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="cao-bench-home-") as home:
        env = agent_env(home)
        samples = [start_once(env) for _ in range(warmup + runs)][warmup:]
        python = str(BIN / "python")
        floors = {}
        for label, code in (("python -c pass", "pass"),
                            ("import mcp.server.mcpserver", "import mcp.server.mcpserver")):
            wall, cpu = time_command([python, "-c", code], runs=runs, warmup=1, env=env)
            floors[label] = {**summarize(wall), "cpu_median": summarize(cpu)["median"]}
    return {
        "initialized": summarize([s[0] for s in samples]),
        "tools_listed": summarize([s[1] for s in samples]),
        "process_cpu_median": summarize([s[2] for s in samples])["median"],
        "floors": floors,
    }


# -- handoff ---------------------------------------------------------------------------------------


def start_server(home: str, workdir: str, tmux: Any) -> tuple[subprocess.Popen[str], int]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAO_") and k not in ("TMUX", "TMUX_PANE")}
    env.update({"CAO_HOME_DIR": home, "CAO_DEFAULT_PROVIDER": "mock_cli", "TMUX_TMPDIR": tmux.tmpdir,
                **tmux.settings})
    proc = subprocess.Popen([str(CAO), "server", "--port", "0", "--log-level", "warning"], env=env,
                            cwd=workdir, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, start_new_session=True)
    assert proc.stdout is not None
    deadline = time.monotonic() + 30
    for line in proc.stdout:
        found = READY_LINE.match(line)
        if found:
            return proc, int(found.group(2))
        if time.monotonic() > deadline:
            break
    proc.kill()
    raise RuntimeError("cao server did not start")


async def handoffs(port: int, home: str, workdir: str, count: int) -> tuple[float, list[float]]:
    from mcp import Client, StdioServerParameters

    from cao_server.client import HttpKernel

    async with HttpKernel(f"http://127.0.0.1:{port}") as api:
        supervisor = await api.create_session("developer", working_directory=workdir)
        params = StdioServerParameters(command=str(MCP_SERVER),
                                       env=agent_env(home, CAO_TERMINAL_ID=supervisor.id,
                                                     CAO_API_PORT=str(port)))
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
    from cao_kernel.testing.tmux import private_tmux_socket

    with tempfile.TemporaryDirectory(prefix="cao-bench-home-") as home, \
            tempfile.TemporaryDirectory(prefix="cao-bench-work-") as workdir, \
            private_tmux_socket() as tmux:
        server, port = start_server(home, workdir, tmux)
        try:
            first, rest = asyncio.run(handoffs(port, home, workdir, count))
        finally:
            server.terminate()
            server.wait(15)
    return {"first_call": round(first, 6), **summarize(rest)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="timed server starts (default 10)")
    parser.add_argument("--warmup", type=int, default=2, help="untimed starts first (default 2)")
    parser.add_argument("--handoffs", type=int, default=10,
                        help="timed handoffs after the first (default 10)")
    parser.add_argument("--output", type=Path, default=None,
                        help="JSON file (default bench/results/mcp.json)")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args(argv)
    if args.runs < 1 or args.warmup < 0 or args.handoffs < 1:
        parser.error("--runs and --handoffs must be at least 1, --warmup at least 0")
    if not os.access(MCP_SERVER, os.X_OK):
        parser.error(f"{MCP_SERVER} is not installed; run: uv sync --all-packages")

    start = bench_start(args.runs, args.warmup)
    handoff = bench_handoff(args.handoffs)
    start_pass = start["initialized"]["median"] <= TARGET_START_S
    handoff_pass = handoff["median"] <= TARGET_HANDOFF_S

    def ms(value: float) -> str:
        return f"{value * 1000:.0f}"

    rows = [
        ("start -> initialized", ms(start["initialized"]["median"]), ms(start["initialized"]["p90"]),
         ms(start["initialized"]["min"]), ms(TARGET_START_S), ms(UPSTREAM["start_to_initialized"]),
         "PASS" if start_pass else "FAIL"),
        ("start -> tools listed", ms(start["tools_listed"]["median"]), ms(start["tools_listed"]["p90"]),
         ms(start["tools_listed"]["min"]), "-", "-", ""),
        *((f"  floor: {label}", ms(r["median"]), ms(r["p90"]), ms(r["min"]), "-", "-", "")
          for label, r in start["floors"].items()),
        ("handoff round trip", ms(handoff["median"]), ms(handoff["p90"]), ms(handoff["min"]),
         ms(TARGET_HANDOFF_S), ms(UPSTREAM["handoff"]), "PASS" if handoff_pass else "FAIL"),
        ("  first handoff (connects)", ms(handoff["first_call"]), "-", "-", "-", "-", ""),
    ]
    print(f"{args.runs} starts after {args.warmup} warm-up ones, {args.handoffs} handoffs after the first; "
          f"times in ms")
    print(format_table(("measure", "median", "p90", "min", "target", "upstream", ""), rows))
    print(f"CPU per server start (to initialized, listed and exit), median: "
          f"{start['process_cpu_median'] * 1000:.0f} ms")
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
        "handoffs": args.handoffs,
        "start": start,
        "handoff": handoff,
        "targets": {
            "start_to_initialized": {"median_max_s": TARGET_START_S, "pass": start_pass},
            "handoff": {"median_max_s": TARGET_HANDOFF_S, "pass": handoff_pass},
        },
        "upstream_2_5_4": UPSTREAM,
        "machine": machine(),
    }, args.output)
    print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
    return 1 if args.check and not (start_pass and handoff_pass) else 0


if __name__ == "__main__":
    sys.exit(main())
