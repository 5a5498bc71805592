"""Server memory under clients that send too much or read too little: a real ``cao server`` subprocess
(tmux, mock agents, SQLite inbox, MCP), measured from ``/proc/<pid>/status``.

- events: a supervisor queues ``--messages`` messages of about 1 MiB for a busy worker while one
  ``GET /events`` subscriber never reads (4 KiB receive buffer), and again with no subscriber. The
  server's RSS after the messages, minus its RSS before them. The inbox caps are turned off here, so
  the number of messages is the one asked for.
- mcp: one ``POST /mcp`` naming a terminal, its chunked body running to ``--mcp-mb`` MB or until the
  server answers. What was sent before the answer, the answer, and the server's peak RSS (VmHWM) over
  its RSS before the request.

Each case gets a server of its own. Run: uv run python bench/memory.py [--messages N] [--mcp-mb N]
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import tempfile
import time
from pathlib import Path
from typing import Any

from benchlib import format_table, machine, write_result

from cao_hookspecs import CreateTerminalRequest, TerminalStatus
from cao_testkit.server_process import run_cao_server

PLUGINS = ("tmux", "mock_cli", "inbox_sqlite", "server", "mcp")
UNCAPPED = ("CAO_INBOX_MAX_PENDING", "CAO_INBOX_MAX_PENDING_BYTES")
PROFILE = "---\nname: {name}\ndescription: bench\nprovider: mock_cli\n---\n\nYou help.\n"
MIB = 1024 * 1024


def rss_mb(pid: int, field: str = "VmRSS") -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field} for process {pid}")


def raw_connection(url: str, head: str, *, rcvbuf: int | None = None) -> socket.socket:
    host, port = url.removeprefix("http://").rsplit(":", 1)
    conn = socket.socket()
    if rcvbuf:
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    conn.connect((host, int(port)))
    conn.sendall(head.encode("latin-1"))
    return conn


def auth_lines(headers: dict[str, str]) -> str:
    return "".join(f"{key}: {value}\r\n" for key, value in headers.items())


async def events_case(
    server: Any, home: Path, workdir: Path, messages: int, subscribe: bool
) -> dict[str, Any]:
    pid = server.proc.pid
    async with server.client() as api:
        sender = await api.create_session(CreateTerminalRequest(
            agent_profile="bench_supervisor", session_name="mem", working_directory=str(workdir)))
        receiver = await api.create_terminal(CreateTerminalRequest(
            session_name="cao-mem", agent_profile="bench_worker", working_directory=str(workdir)))
        await api.send_input(receiver.id, "__mock_sleep_600")
        await api.wait_for_status(receiver.id, [TerminalStatus.PROCESSING], timeout=10)
        stuck = None
        if subscribe:
            stuck = raw_connection(server.url, f"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                               f"{auth_lines(server.headers)}\r\n", rcvbuf=4096)
        await asyncio.sleep(1.0)
        before = rss_mb(pid)
        body = "x" * (MIB - 256)  # room for the sender line cao appends
        for _ in range(messages):
            await api.send_message(sender.id, receiver.id, body)
        await asyncio.sleep(2.0)
        after, peak = rss_mb(pid), rss_mb(pid, "VmHWM")
        if stuck is not None:
            stuck.close()
    return {"subscriber": "never reads" if subscribe else "none", "messages": messages,
            "rss_before_mb": round(before, 1), "rss_after_mb": round(after, 1),
            "growth_mb": round(after - before, 1), "peak_mb": round(peak, 1)}


def mcp_case(server: Any, size_mb: int) -> dict[str, Any]:
    pid = server.proc.pid
    head = ("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            "Accept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\n"
            f"X-CAO-Terminal-Id: 0badc0de\r\n{auth_lines(server.headers)}\r\n")
    import httpx

    # The MCP app starts on its first request: start it first, so the figure is the body's alone.
    warm = httpx.post(f"{server.url}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, timeout=30,
                      headers={**server.headers, "accept": "application/json, text/event-stream"})
    warm.raise_for_status()
    time.sleep(1.0)
    before = rss_mb(pid)
    conn = raw_connection(server.url, head)
    conn.setblocking(False)
    chunk = b"x" * MIB
    frame = b"%x\r\n%s\r\n" % (len(chunk), chunk)
    sent, answer, started = 0, b"", time.perf_counter()
    try:
        while sent < size_mb * MIB and not answer:
            view = memoryview(frame)
            while view and not answer:
                try:
                    view = view[conn.send(view):]
                except BlockingIOError:
                    time.sleep(0.001)
                except (BrokenPipeError, ConnectionResetError):
                    break
                try:
                    answer = conn.recv(4096)
                except BlockingIOError:
                    pass
            sent += len(chunk)
        if not answer:
            conn.setblocking(True)
            conn.settimeout(60)
            conn.sendall(b"0\r\n\r\n")
            answer = conn.recv(4096)
    except (BrokenPipeError, ConnectionResetError):
        pass
    finally:
        conn.close()
    status = answer.split(b"\r\n", 1)[0].decode("latin-1", "replace")
    return {"body_sent_mb": round(sent / MIB), "answer": status,
            "seconds": round(time.perf_counter() - started, 2),
            "rss_before_mb": round(before, 1), "peak_mb": round(rss_mb(pid, "VmHWM"), 1),
            "peak_growth_mb": round(rss_mb(pid, "VmHWM") - before, 1)}


def with_server(run: Any) -> Any:
    with tempfile.TemporaryDirectory(prefix="cao-bench-memory-") as scratch:
        home, workdir = Path(scratch) / "home", Path(scratch) / "project"
        (home / "agent-store").mkdir(parents=True)
        workdir.mkdir()
        for name in ("bench_supervisor", "bench_worker"):
            (home / "agent-store" / f"{name}.md").write_text(PROFILE.format(name=name), encoding="utf-8")
        with run_cao_server(home, workdir, PLUGINS, keep_env=UNCAPPED) as server:
            return run(server, home, workdir)


def main() -> None:
    import os

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=200)
    parser.add_argument("--mcp-mb", type=int, default=200)
    parser.add_argument("--output", type=Path)
    args = parser.parse_args()
    for name in UNCAPPED:
        os.environ[name] = "0"
    events = [with_server(lambda s, h, w, sub=sub: asyncio.run(events_case(s, h, w, args.messages, sub)))
              for sub in (False, True)]
    mcp = with_server(lambda s, h, w: mcp_case(s, args.mcp_mb))
    print(format_table(["/events subscriber", "messages", "RSS before MB", "RSS after MB", "growth MB"],
                       [[e["subscriber"], e["messages"], e["rss_before_mb"], e["rss_after_mb"],
                         e["growth_mb"]] for e in events]))
    print()
    print(format_table(["POST /mcp, chunked", "sent MB", "answer", "RSS before MB", "peak MB"],
                       [["naming a terminal", mcp["body_sent_mb"], mcp["answer"], mcp["rss_before_mb"],
                         mcp["peak_mb"]]]))
    path = write_result("memory", {"machine": machine(), "events": events, "mcp": mcp}, args.output)
    print(f"\nwritten to {path}")


if __name__ == "__main__":
    main()
