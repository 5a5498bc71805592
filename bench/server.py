"""cao-server benchmarks: a real ``cao server`` subprocess on a private tmux server, mock agents, HTTP.

Measures:
- cold start: spawn ``cao server --port 0`` -> first 200 on ``GET /health`` (median of 10; the server
  prints its listening line once the kernel is up, so this includes kernel start-up);
- first sessions, the way a user meets a server: a fresh cao home and tmux socket for every run, spawn
  ``cao-server --port 0`` -> first 200 on ``GET /sessions`` (median of 10);
- idle RSS of the server process (no terminals, after 2 s idle) and with 50 idle terminals;
- ``GET /sessions`` and ``GET /sessions/{name}/terminals`` latency with 50 mock terminals in one session;
- over HTTP: create -> idle (``POST /sessions``, which answers once the agent is ready), input -> completed
  + answer read (``POST input``, long-poll ``GET wait``, ``GET output?mode=last``), and inbox delay
  (receiver becomes ready -> message delivered, both times from the server's clock).

Every server loads the plugins installed in the environment, as a user's would. Prints a table and
writes bench/results/server.json. Run: uv run python bench/server.py [--quick] [--output FILE]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import datetime as dt
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from benchlib import format_table, machine, summarize, write_result

TARGET = {
    "cold_start_s": 0.3,
    "first_sessions_s": 0.3,
    "idle_rss_mb": 60.0,
    "create_to_idle_s": 0.5,
    "input_to_completed_s": 0.15,
    "inbox_ready_to_delivered_s": 0.1,
}
UPSTREAM = {
    "cold_start_s": 1.3,
    "idle_rss_mb": 113.0,
    "create_to_idle_s": 3.8,
    "input_to_completed_s": 0.88,
    "inbox_ready_to_delivered_s": 0.40,
}
READY = re.compile(r"^cao-server listening on (http://\S+)$")


def script(name: str) -> str:
    """The installed script ``name`` (``cao``, ``cao-server``), next to this interpreter or on PATH."""
    path = Path(sys.executable).with_name(name)
    if path.exists():
        return str(path)
    found = shutil.which(name)
    if found is None:
        raise SystemExit(f"the {name} script is not installed (run scripts/bootstrap.sh)")
    return found


class Server:
    """One ``cao server --port 0`` (or ``cao-server --port 0``) process; ``url`` once it printed its
    listening line."""

    def __init__(self, env: dict[str, str], command: str = "cao") -> None:
        argv = [script("cao"), "server"] if command == "cao" else [script(command)]
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            [*argv, "--port", "0", "--log-level", "warning"],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().strip()
        match = READY.match(line)
        if match is None:
            self.proc.kill()
            _, err = self.proc.communicate(timeout=10)
            raise RuntimeError(f"cao server did not start: {line!r}\n{err}")
        self.url = match.group(1)
        # Every route but /health needs the API token the server made in its home before listening.
        token = (Path(env["CAO_HOME_DIR"]) / "api-token").read_text(encoding="ascii").strip()
        self.headers = {"Authorization": f"Bearer {token}"}

    def cpu_s(self) -> float:
        """User + system CPU seconds the server process has used so far."""
        with open(f"/proc/{self.proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def rss_mb(self) -> float:
        with open(f"/proc/{self.proc.pid}/status") as f:
            kb = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
        return kb / 1024

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


def first_answer(server: Server, path: str, http: httpx.Client) -> tuple[float, float]:
    """Wall seconds from the server's spawn to the first 200 on ``GET path``, and its CPU seconds by then
    (CPU time barely moves when other work shares the machine; wall time is what a user waits). The
    server is stopped afterwards. ``http`` is made before the spawn: building a client (its TLS
    context) takes longer than the request and is no part of the server's start."""
    try:
        response = http.get(server.url + path, headers=server.headers)
        elapsed = time.perf_counter() - server.started
        if response.status_code != 200:
            raise RuntimeError(f"{path} answered {response.status_code}: {response.text[:300]}")
        return elapsed, server.cpu_s()
    finally:
        server.stop()


def cold_start(env: dict[str, str], http: httpx.Client) -> tuple[float, float]:
    """Spawn -> first 200 on /health: wall and CPU seconds."""
    return first_answer(Server(env), "/health", http)


def first_sessions(env: dict[str, str], folder: Path, http: httpx.Client) -> float:
    """Wall seconds from spawning ``cao-server --port 0`` on a fresh cao home and tmux socket (in
    ``folder``, removed afterwards) to the first 200 on ``GET /sessions``."""
    socket_path = folder / "tmux.sock"
    fresh = dict(env, CAO_HOME_DIR=str(folder / "home"), CAO_TMUX_SOCKET=str(socket_path))
    try:
        return first_answer(Server(fresh, command="cao-server"), "/sessions", http)[0]
    finally:
        subprocess.run(["tmux", "-S", str(socket_path), "kill-server"], capture_output=True, check=False)
        shutil.rmtree(folder, ignore_errors=True)


def timed(fn: Any, runs: int) -> list[float]:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - started)
    return samples


def ok(response: httpx.Response, status: int = 200) -> Any:
    if response.status_code != status:
        raise RuntimeError(
            f"{response.request.method} {response.request.url.path} answered "
            f"{response.status_code}: {response.text[:300]}"
        )
    return response.json()


def from_iso(value: str) -> float:
    return dt.datetime.fromisoformat(value).timestamp()


def http_measures(server: Server, workdir: str, quick: bool) -> dict[str, Any]:
    results: dict[str, Any] = {}
    with httpx.Client(base_url=server.url, headers=server.headers, trust_env=False, timeout=120) as http:
        # create -> idle
        created: list[str] = []

        def create() -> None:
            body = ok(
                http.post("/sessions", json={"agent_profile": "developer", "working_directory": workdir}), 201
            )
            assert body["status"] == "idle", body
            created.append(body["session_name"])

        results["create_to_idle_s"] = timed(create, 5 if quick else 10)
        for name in created:
            ok(http.delete(f"/sessions/{name}"))

        # input -> completed + answer read
        tid = ok(
            http.post(
                "/sessions",
                json={"agent_profile": "developer", "session_name": "turns", "working_directory": workdir},
            ),
            201,
        )["id"]
        turn = [0]

        def one_turn() -> None:
            turn[0] += 1
            text = f"turn {turn[0]}"
            ok(http.post(f"/terminals/{tid}/input", json={"message": text}))
            ok(http.get(f"/terminals/{tid}/wait", params={"status": "completed", "timeout": 10}))
            answer = ok(http.get(f"/terminals/{tid}/output", params={"mode": "last"}))["output"]
            assert answer == text, answer

        one_turn()  # warm-up
        results["input_to_completed_s"] = timed(one_turn, 10 if quick else 20)

        # inbox: receiver busy when the message is queued; receiver ready -> message delivered
        delays = []
        for i in range(8 if quick else 20):
            ok(http.post(f"/terminals/{tid}/input", json={"message": "__mock_sleep_0.2"}))
            queued = ok(
                http.post(
                    f"/terminals/{tid}/inbox/messages", json={"sender_id": "bench", "message": f"note {i}"}
                )
            )
            ready = ok(http.get(f"/terminals/{tid}/wait", params={"status": "completed,idle", "timeout": 10}))
            deadline = time.monotonic() + 10
            while True:
                rows = ok(
                    http.get(
                        f"/terminals/{tid}/inbox/messages", params={"status": "delivered", "limit": 1000}
                    )
                )
                row = next((r for r in rows if r["id"] == queued["id"]), None)
                if row is not None:
                    break
                if time.monotonic() > deadline:
                    raise RuntimeError("message not delivered within 10 s")
                time.sleep(0.005)
            delays.append(from_iso(row["updated_at"]) - from_iso(ready["since"]))
            ok(http.get(f"/terminals/{tid}/wait", params={"status": "completed", "timeout": 10}))
        results["inbox_ready_to_delivered_s"] = delays
        ok(http.delete("/sessions/turns"))

        # 50 idle terminals in one session: list latency, RSS
        first = ok(
            http.post(
                "/sessions",
                json={"agent_profile": "developer", "session_name": "fifty", "working_directory": workdir},
            ),
            201,
        )
        started = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            list(
                pool.map(
                    lambda _: ok(
                        http.post(
                            "/sessions/fifty/terminals",
                            json={"agent_profile": "developer", "working_directory": workdir},
                        ),
                        201,
                    ),
                    range(49),
                )
            )
        results["create_49_more_s"] = time.perf_counter() - started
        rows = ok(http.get("/sessions/fifty/terminals"))
        assert len(rows) == 50 and rows[0]["id"] == first["id"], len(rows)
        time.sleep(1.0)
        runs = 100 if quick else 200
        results["get_sessions_s"] = timed(lambda: ok(http.get("/sessions")), runs)
        results["get_session_terminals_s"] = timed(lambda: ok(http.get("/sessions/fifty/terminals")), runs)
        results["rss_50_terminals_mb"] = server.rss_mb()
        ok(http.delete("/sessions/fifty"))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer runs")
    parser.add_argument("--output", type=Path, default=None,
                        help="JSON file (default bench/results/server.json)")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="cao-bench-server-"))
    socket_path = folder / "tmux.sock"
    workdir = folder / "project"
    workdir.mkdir()
    # A user's Python writes bytecode on first import; a developer shell that forbids it would make every
    # start compile the sources again.
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("CAO_", "TMUX")) and k != "PYTHONDONTWRITEBYTECODE"
    }
    env.update(
        {
            "CAO_HOME_DIR": str(folder / "home"),
            "CAO_TMUX_SOCKET": str(socket_path),
            "CAO_TMUX_CONFIG": os.devnull,
            "CAO_DEFAULT_PROVIDER": "mock_cli",
        }
    )
    raw: dict[str, Any] = {}
    try:
        with httpx.Client(trust_env=False) as http:
            cold_start(env, http)  # warm the disk cache, write bytecode, create the home once
            runs = [cold_start(env, http) for _ in range(10)]
            raw["first_sessions_s"] = [first_sessions(env, folder / f"fresh-{i}", http) for i in range(10)]
        raw["cold_start_s"] = [wall for wall, _ in runs]
        raw["cold_start_cpu_s"] = [cpu for _, cpu in runs]
        server = Server(env)
        try:
            time.sleep(2.0)
            raw["idle_rss_mb"] = [server.rss_mb()]
            raw.update(http_measures(server, str(workdir), args.quick))
        finally:
            server.stop()
    finally:
        subprocess.run(["tmux", "-S", str(socket_path), "kill-server"], capture_output=True, check=False)
        shutil.rmtree(folder, ignore_errors=True)

    measures: dict[str, Any] = {}
    rows = []
    for key in (
        "cold_start_s",
        "cold_start_cpu_s",
        "first_sessions_s",
        "idle_rss_mb",
        "create_to_idle_s",
        "input_to_completed_s",
        "inbox_ready_to_delivered_s",
        "get_sessions_s",
        "get_session_terminals_s",
    ):
        stats = summarize(raw[key])
        entry: dict[str, Any] = {**stats, "n": len(raw[key])}
        if key in TARGET:
            entry.update(target=TARGET[key], **{"pass": stats["median"] <= TARGET[key]})
        if key in UPSTREAM:
            ratio = round(UPSTREAM[key] / stats["median"], 2)
            entry.update(upstream_2_5_4=UPSTREAM[key], ratio_vs_upstream=ratio)
        measures[key] = entry
        unit = "MB" if key.endswith("_mb") else "ms"
        scale = 1 if unit == "MB" else 1000
        rows.append(
            [
                key,
                f"{stats['median'] * scale:.1f} {unit}",
                f"{stats['p90'] * scale:.1f} {unit}",
                f"{TARGET[key] * scale:.0f} {unit}" if key in TARGET else "-",
                f"{UPSTREAM[key] * scale:.0f} {unit}" if key in UPSTREAM else "-",
                f"{entry['ratio_vs_upstream']:.1f}x" if key in UPSTREAM else "-",
                ("yes" if entry["pass"] else "NO") if key in TARGET else "-",
            ]
        )
    measures["rss_50_terminals_mb"] = round(raw["rss_50_terminals_mb"], 1)
    measures["create_49_more_s"] = round(raw["create_49_more_s"], 3)
    print(format_table(["measure", "median", "p90", "target", "upstream", "vs upstream", "pass"], rows))
    print(
        f"server RSS with 50 idle terminals: {measures['rss_50_terminals_mb']} MB; "
        f"49 terminals added over HTTP (8 at a time) in {measures['create_49_more_s']} s"
    )
    path = write_result(
        "server",
        {
            "benchmark": "server",
            "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "quick": args.quick,
            "machine": machine(),
            "note": "median/p90 in seconds except *_mb; ratio_vs_upstream = upstream / ours (higher: better)",
            "measures": measures,
        },
        args.output,
    )
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
