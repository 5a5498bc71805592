"""Small helpers shared by the benchmarks in this folder: timing subprocesses, summary statistics and
result files. Benchmarks run as scripts (``uv run python bench/<name>.py``), so this imports as
``benchlib``."""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"


def summarize(samples: Sequence[float]) -> dict[str, float]:
    """Median, 90th percentile, min and max of ``samples`` (seconds), rounded to microseconds."""
    if not samples:
        raise ValueError("no samples to summarize")
    ordered = sorted(samples)
    # Nearest-rank p90: an observed value, never an interpolation beyond the data.
    p90 = ordered[max(0, -(-len(ordered) * 9 // 10) - 1)]
    return {
        "median": round(statistics.median(ordered), 6),
        "p90": round(p90, 6),
        "min": round(ordered[0], 6),
        "max": round(ordered[-1], 6),
    }


def time_command(argv: Sequence[str], *, runs: int, warmup: int, env: Mapping[str, str] | None = None,
                 cwd: Path | None = None) -> tuple[list[float], list[float]]:
    """Wall-clock and CPU (user + system) seconds of ``runs`` executions of ``argv``, after ``warmup``
    untimed ones. CPU time barely moves when other work shares the machine; wall time is what a user
    waits. Raises ``RuntimeError`` naming the command when an execution fails: a benchmark of a broken
    command measures nothing.
    """
    import resource

    wall: list[float] = []
    cpu: list[float] = []
    for i in range(warmup + runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        proc = subprocess.run(list(argv), env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
        elapsed = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if proc.returncode != 0:
            detail = proc.stderr.decode(errors="replace").strip().splitlines()[-1:] or [""]
            raise RuntimeError(f"{' '.join(argv)} exited {proc.returncode}: {detail[0]}")
        if i >= warmup:
            wall.append(elapsed)
            cpu.append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
    return wall, cpu


def run_in_scratch(run: Callable[[bool, Path], Awaitable[dict[str, Any]]], quick: bool) -> dict[str, Any]:
    """``run(quick, folder)`` on a new event loop, in a scratch folder under /tmp removed afterwards (short
    paths: tmux and UNIX sockets live there)."""
    import asyncio
    import shutil
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="cao-bench-", dir="/tmp"))
    try:
        return asyncio.run(run(quick, folder))
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def machine() -> dict[str, Any]:
    """What the numbers depend on: the interpreter, the machine and how busy it was."""
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    return {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "load_average": [round(x, 2) for x in load] if load else None,
        "executable_prefix": Path(sys.prefix).name,
    }


def write_result(name: str, data: Mapping[str, Any], path: Path | None = None) -> Path:
    """Write ``data`` as JSON to ``bench/results/<name>.json`` (or ``path``); returns the path."""
    target = path or RESULTS / f"{name}.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=False) + "\n", encoding="utf-8")
    tmp.replace(target)
    return target


def format_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A plain text table; the first column left-aligned, the rest right-aligned."""
    cells = [list(map(str, headers))] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]

    def line(row: Sequence[str]) -> str:
        pairs = enumerate(zip(row, widths, strict=True))
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in pairs)

    out = [line(cells[0]), "  ".join("-" * w for w in widths)]
    out += [line(row) for row in cells[1:]]
    return "\n".join(out)
