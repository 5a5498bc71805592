"""The web console's cost: a real ``cao server`` subprocess (tmux, mock agents, SQLite inbox, MCP, the web
plugin) with 50 mock terminals, and Debian's chromium on the Team page, driven by Playwright.

Measures:
- the server process's CPU (user + system, from ``/proc/<pid>/stat``, as a share of one core) over a
  window while every agent is idle: before any browser opened, with the Team page open, and after it
  closed (the "zero cost when nobody watches" claim: the first and last should match);
- the same while the agents work: every agent gets an input each second (``__mock_sleep_0.3``, so each
  goes processing, then completed), once with no browser and once with the Team page open;
- the Team page's first paint: ``first-contentful-paint`` from the Performance API, and the time from
  navigation until the tree showed all 50 terminals (the page's ``cao-team-rendered`` mark), over
  several loads with the session cookie (the login link is spent once).

Prints a table and writes bench/results/console.json.
Run: uv run python bench/console.py [--quick] [--window SECONDS] [--output FILE]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
from benchlib import format_table, machine, summarize, write_result

from cao_testkit.server_process import run_cao_server

PLUGINS = ("tmux", "mock_cli", "inbox_sqlite", "server", "mcp", "web")
SESSIONS = 5
PER_SESSION = 10  # a supervisor and nine workers under it: 50 terminals
CHROMIUM = "/usr/bin/chromium"
WORK_INPUT = "__mock_sleep_0.3"


def cpu_s(pid: int) -> float:
    """User + system CPU seconds the process has used so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_share(pid: int, seconds: float, during: Any = None) -> float:
    """The process's CPU over ``seconds`` as a percentage of one core; ``during(stop)`` runs meanwhile in
    a thread and must return once ``stop`` is set."""
    stop = threading.Event()
    worker = threading.Thread(target=during, args=(stop,), daemon=True) if during else None
    before, started = cpu_s(pid), time.monotonic()
    if worker:
        worker.start()
    time.sleep(seconds)
    used, elapsed = cpu_s(pid) - before, time.monotonic() - started
    stop.set()
    if worker:
        worker.join(30)
    return round(100 * used / elapsed, 2)


def ok(response: httpx.Response, status: int = 200) -> Any:
    if response.status_code != status:
        raise RuntimeError(f"{response.request.method} {response.request.url.path} answered "
                           f"{response.status_code}: {response.text[:300]}")
    return response.json()


def create_team(http: httpx.Client, workdir: str) -> list[str]:
    """Fifty idle mock agents: per session a supervisor and the workers it started."""
    ids: list[str] = []
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        for n in range(SESSIONS):
            body = {"agent_profile": "developer", "provider": "mock_cli", "working_directory": workdir}
            boss = ok(http.post("/sessions", json={**body, "session_name": f"bench-{n}"}), 201)
            ids.append(boss["id"])
            futures = [pool.submit(http.post, f"/sessions/{boss['session_name']}/terminals",
                                   json={**body, "caller_id": boss["id"]})
                       for _ in range(PER_SESSION - 1)]
            ids += [ok(f.result(), 201)["id"] for f in futures]
    return ids


def keep_working(http: httpx.Client, ids: list[str]) -> Any:
    """A loop that types an input into every agent each second until stopped."""

    def run(stop: threading.Event) -> None:
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            while not stop.is_set():
                started = time.monotonic()
                list(pool.map(lambda t: http.post(f"/terminals/{t}/input", json={"message": WORK_INPUT}),
                              ids))
                stop.wait(max(0.0, 1.0 - (time.monotonic() - started)))

    return run


def settle(http: httpx.Client, ids: list[str]) -> None:
    for terminal_id in ids:
        http.get(f"/terminals/{terminal_id}/wait", params={"status": "idle,completed", "timeout": 30})


def page_loads(page: Any, url: str, count: int, loads: int) -> dict[str, list[float]]:
    """First paint and tree-ready times (seconds from navigation) over ``loads`` fresh loads of the Team
    page."""
    out: dict[str, list[float]] = {"first_contentful_paint_s": [], "tree_ready_s": []}
    for n in range(loads):
        # A new query makes each one a full load (a changed hash alone would not navigate).
        page.goto(f"{url}/?load={n}#/team")
        page.wait_for_function("n => document.querySelectorAll('li.terminal').length >= n", arg=count,
                               timeout=30_000)
        timing = page.evaluate("""() => ({
            fcp: (performance.getEntriesByName('first-contentful-paint')[0] || {}).startTime,
            ready: (performance.getEntriesByName('cao-team-rendered')[0] || {}).startTime})""")
        out["first_contentful_paint_s"].append(timing["fcp"] / 1000)
        out["tree_ready_s"].append(timing["ready"] / 1000)
    return out


def run(server: Any, workdir: str, window: float, loads: int) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    pid = server.proc.pid
    cpu: dict[str, float] = {}
    with httpx.Client(base_url=server.url, headers=server.headers, trust_env=False, timeout=60) as http:
        ids = create_team(http, workdir)
        settle(http, ids)
        time.sleep(2.0)
        cpu["idle, no browser"] = cpu_share(pid, window)
        cpu["working, no browser"] = cpu_share(pid, window, keep_working(http, ids))
        settle(http, ids)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--disable-gpu"])
            page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
            page.goto(ok(http.post("/login-links"), 201)["url"])
            page.wait_for_url(server.url + "/")
            paint = page_loads(page, server.url, len(ids), loads)
            # The page reads the team once, then only events arrive.
            time.sleep(2.0)
            cpu["idle, Team page open"] = cpu_share(pid, window)
            cpu["working, Team page open"] = cpu_share(pid, window, keep_working(http, ids))
            shown = page.evaluate("document.querySelectorAll('li.terminal').length")
            browser.close()
        settle(http, ids)
        time.sleep(2.0)
        cpu["idle, after the browser closed"] = cpu_share(pid, window)
        team = http.get("/team")
        team_bytes = len(team.content)
    return {"terminals": len(ids), "terminals_shown": shown, "window_s": window, "cpu_percent": cpu,
            "page": {key: summarize(values) for key, values in paint.items()},
            "page_loads": loads, "team_snapshot_bytes": team_bytes}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10 s windows and 3 page loads")
    parser.add_argument("--window", type=float, help="seconds per CPU window (default 30, 10 with --quick)")
    parser.add_argument("--output", type=Path)
    args = parser.parse_args()
    if not os.access(CHROMIUM, os.X_OK):
        raise SystemExit("chromium is not installed (bash scripts/bootstrap.sh installs it)")
    window = args.window or (10.0 if args.quick else 30.0)
    loads = 3 if args.quick else 7
    scratch = Path(tempfile.mkdtemp(prefix="cao-bench-console-", dir="/tmp"))
    try:
        home, workdir = scratch / "home", scratch / "project"
        (home / "agent-store").mkdir(parents=True)
        workdir.mkdir()
        with run_cao_server(home, workdir, PLUGINS) as server:
            result = run(server, str(workdir), window, loads)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    print(format_table(["server CPU, 50 mock terminals", "% of one core"],
                       [[case, f"{value:.2f}"] for case, value in result["cpu_percent"].items()]))
    print()
    print(format_table(["Team page, 50 terminals", "median", "p90", "max"],
                       [[key, *(f"{result['page'][key][s] * 1000:.0f} ms" for s in ("median", "p90", "max"))]
                        for key in ("first_contentful_paint_s", "tree_ready_s")]))
    print(f"\n/team snapshot: {result['team_snapshot_bytes']} bytes; page loads: {result['page_loads']}; "
          f"CPU windows: {result['window_s']:g} s")
    path = write_result("console", {"machine": machine(), **result}, args.output)
    print(f"\nwritten to {path}")


if __name__ == "__main__":
    main()
