"""Fixtures for cao-workflows' tests: real ``cao server`` subprocesses on a private home and tmux
server, mock agents whose behaviour module writes down every agent start (``starts.log``: one line
``<pid>`` when the program starts, then ``<pid> <task>`` per task), and helpers to run ``cao workflow``
against a server."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

PLUGINS = ("tmux", "mock_cli", "inbox_sqlite", "server", "mcp", "workflows")

# The behaviour counts starts itself (the agent program, not cao's records) and holds a task that says
# "hold" until the file named after it exists, so a test can kill the server while that step runs; a
# task that says "explode" ends in error; one that says "slow" takes longer than a step's wait slice.
BEHAVIOUR = '''
import os, asyncio
from pathlib import Path
HERE = Path(__file__).parent
with open(HERE / "starts.log", "a") as log:
    log.write(f"{os.getpid()} started\\n")

async def counted(turn):
    with open(HERE / "starts.log", "a") as log:
        log.write(f"{os.getpid()} task {turn.task.strip()}\\n")
    if os.environ.get("CAO_WORKFLOW_STEP_ID"):
        with open(HERE / "identity.log", "a") as log:
            log.write(f"{os.environ['CAO_WORKFLOW_RUN_ID']}:{os.environ['CAO_WORKFLOW_STEP_ID']}\\n")
    if "slow" in turn.task:
        await turn.think(6.5)
    if "explode" in turn.task:
        raise RuntimeError("told to explode")
    if "hold" in turn.task:
        while not (HERE / "release").exists():
            await turn.think(0.2)
    await turn.think(0.3)
    with open(HERE / "starts.log", "a") as log:
        log.write(f"{os.getpid()} done {turn.task.strip()}\\n")
    return "answer to " + turn.task.strip()
'''

PROFILE = """---
name: {name}
description: a mock agent that counts its starts
mockBehaviour: wfcount:counted
---
You answer.
"""


class Cluster:
    """One home and tmux server; servers started and stopped (or killed) on them in turn."""

    def __init__(self, home: Path, workdir: Path, behaviours: Path, tmux: Any) -> None:
        self.home, self.workdir, self.behaviours, self.tmux = home, workdir, behaviours, tmux
        self.server: Any = None

    def start(self, **settings: str) -> Any:
        from cao_testkit.server_process import server_env, start_cao_server

        env = server_env(self.home, self.tmux, PLUGINS)
        env.update(settings)
        env["CAO_MOCK_BEHAVIOUR_PATH"] = str(self.behaviours)
        env["CAO_DEFAULT_PROVIDER"] = "mock_cli"
        self.server = start_cao_server(self.home, self.workdir, env)
        return self.server

    def kill(self) -> None:
        """SIGKILL the server, as a crash would: its agents live on in tmux."""
        self.server.proc.kill()
        self.server.proc.wait(10)
        self.server.close()
        self.server = None

    def stop(self) -> None:
        if self.server is not None:
            self.server.close()
            self.server = None

    def cao(self, *args: str, check: bool = True, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """Run ``cao`` against the current server."""
        port = self.server.url.rsplit(":", 1)[1]
        env = {k: v for k, v in os.environ.items() if not k.startswith("CAO_")}
        env.update({"CAO_HOME_DIR": str(self.home), "CAO_API_HOST": "127.0.0.1", "CAO_API_PORT": port,
                    "CAO_LOAD_PLUGINS": ",".join(PLUGINS)})
        done = subprocess.run([str(Path(sys.executable).parent / "cao"), *args], env=env, cwd=self.workdir,
                              capture_output=True, text=True, timeout=timeout)
        if check and done.returncode != 0:
            raise AssertionError(f"cao {' '.join(args)} exited {done.returncode}:\n"
                                 f"{done.stdout}\n{done.stderr}")
        return done

    def json(self, *args: str) -> Any:
        return json.loads(self.cao(*args, "--json").stdout)

    def starts(self) -> list[str]:
        path = self.behaviours / "starts.log"
        return path.read_text().splitlines() if path.exists() else []

    def tasks(self) -> dict[str, list[str]]:
        """Each task text and the pids of the agents that got it."""
        found: dict[str, list[str]] = {}
        for line in self.starts():
            pid, kind, *rest = line.split(" ", 2)
            if kind == "task":
                found.setdefault(rest[0], []).append(pid)
        return found

    def most_at_once(self) -> int:
        """The most tasks that were in progress at the same time (the log is in time order)."""
        running = most = 0
        for line in self.starts():
            kind = line.split(" ", 2)[1]
            running += {"task": 1, "done": -1}.get(kind, 0)
            most = max(most, running)
        return most

    def wait_for(self, predicate: Any, what: str, timeout: float = 30.0) -> Any:
        from cao_testkit.waiting import wait_until

        try:
            return wait_until(predicate, timeout, what, interval=0.1)
        except AssertionError as exc:  # with what the server said meanwhile
            said = self.server.stderr[-30:] if self.server else []
            raise AssertionError("\n".join([str(exc), *said])) from None

    def post(self, path: str, body: Any) -> tuple[int, Any]:
        """POST ``body`` (JSON, or raw bytes) to the current server with the home's API token."""
        import urllib.error
        import urllib.request

        token = (self.home / "api-token").read_text().strip()
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        request = urllib.request.Request(self.server.url + path, data=data, method="POST", headers={
            "Content-Type": "application/json", "Authorization": f"Bearer {token}"})
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        try:
            with opener.open(request, timeout=120) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())

    def leftovers(self, run_id: str) -> list[int]:
        """Processes still running with the run's identity in their environment: its script and what the
        script started (its steps' agents have it too, and are told apart by their terminal id)."""
        found = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    environ = (entry / "environ").read_bytes()
                except OSError:
                    continue
                ours = f"CAO_WORKFLOW_RUN_ID={run_id}\0".encode() in environ
                if ours and b"CAO_TERMINAL_ID=" not in environ:
                    found.append(int(entry.name))
        return found

    def write(self, name: str, text: str) -> Path:
        path = self.workdir / name
        path.write_text(text, encoding="utf-8")
        return path


@contextlib.contextmanager
def _cluster(root: Path) -> Iterator[Cluster]:
    from cao_testkit.tmux import private_tmux_socket

    home, workdir, behaviours = root / "home", root / "work", root / "behaviours"
    for folder in (home / "agent-store", workdir, behaviours):
        folder.mkdir(parents=True)
    (behaviours / "wfcount.py").write_text(BEHAVIOUR, encoding="utf-8")
    for name in ("analyst", "writer", "reviewer"):
        (home / "agent-store" / f"{name}.md").write_text(PROFILE.format(name=name), encoding="utf-8")
    with private_tmux_socket() as tmux:
        made = Cluster(home, workdir, behaviours, tmux)
        try:
            yield made
        finally:
            made.stop()


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    with _cluster(tmp_path) as made:
        yield made


@pytest.fixture(scope="module")
def cluster_once(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """One started server for a module's tests that start no agent."""
    with _cluster(tmp_path_factory.mktemp("cluster")) as made:
        made.start()
        yield made
