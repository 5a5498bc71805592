"""The security suite: each hole of the trust issue probed as a hostile local user or client would.

Tests that need a second local user run their probe as ``nobody`` through ``setpriv`` when the suite
runs as root; elsewhere they are skipped with the reason, except in CI, where they must run.

Where each hole is held closed (here, or beside the code that closes it):
1. another local user drives cao; code-loading variables: ``test_local_users.py``
2. a forged terminal id on /mcp; deleting another's terminal: ``plugins/cao-mcp/tests/test_http.py``
3. secrets on command lines: ``test_local_users.py``, ``plugins/cao-tmux/tests/test_lifecycle.py``
4. unbounded memory: ``plugins/cao-mcp/tests/test_http_app.py``, ``plugins/cao-server/tests/
   test_server_events.py``, ``tests/test_messaging.py``, ``plugins/cao-inbox-sqlite/tests``
5. a slow download: ``tests/test_profiles_url.py``
6. a working directory read as a tmux format: ``test_paths.py``, ``plugins/cao-tmux/tests/test_text.py``
7. the smaller ones: ``test_hostile_clients.py``, ``tests/test_profiles_install.py``,
   ``tests/test_cli_plugins.py``, ``plugins/cao-server/tests`` (log lines, printed text, OPTIONS, the
   schemathesis run of the OpenAPI document)
8. orphans: ``plugins/cao-tmux/tests/test_lifecycle.py`` (found by the terminal's environment marker),
   and the session-end check of the test kit, which fails a run that leaves any process behind
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

PROFILE = """---
name: worker
description: A mock agent for the security suite
provider: mock_cli
---
Answer every input.
"""
# The same with cao's MCP server among its MCP servers: its terminal gets a secret in that entry.
MCP_PROFILE = """---
name: mcp_worker
description: A mock agent with cao's MCP server
provider: mock_cli
mcpServers:
  cao-mcp-server:
    command: cao-mcp-server
---
Answer every input.
"""
OTHER_UID = 65534  # nobody
SERVER_PLUGINS = ("tmux", "mock_cli", "inbox_sqlite", "server", "mcp")


@pytest.fixture
def as_other_user() -> Callable[[str], Any]:
    """``as_other_user(code, **env) -> result``: run Python ``code`` as another local user (``nobody``)
    with the system's Python and the standard library only, ``env`` added to its environment; ``code``
    ends by printing one JSON value, returned."""
    interpreter = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else shutil.which("python3")
    why = None
    if os.geteuid() != 0:
        why = "the suite does not run as root, so it cannot act as a second local user"
    elif shutil.which("setpriv") is None:
        why = "setpriv (util-linux) is not installed"
    if why is not None:
        if os.environ.get("CI"):
            pytest.fail(f"the security suite must run as a second local user in CI: {why}")
        pytest.skip(why)

    def run(code: str, **env: str) -> Any:
        done = subprocess.run(
            ["setpriv", f"--reuid={OTHER_UID}", f"--regid={OTHER_UID}", "--clear-groups", "--",
             interpreter or sys.executable, "-c", code],
            capture_output=True, text=True, timeout=60, cwd="/", env={"PATH": "/usr/bin:/bin", **env},
        )
        assert done.returncode == 0, f"the other user's probe failed:\n{done.stderr}"
        return json.loads(done.stdout.strip().splitlines()[-1])

    return run


@pytest.fixture
def cao_server(tmp_path: Path) -> Iterator[Any]:
    """A real ``cao server`` on a private home (mode 0700, as a user's) and tmux server, with the
    ``worker`` profile on mock agents."""
    from cao_testkit.server_process import run_cao_server

    home, work = tmp_path / "home", tmp_path / "work"
    (home / "agent-store").mkdir(parents=True)
    home.chmod(0o700)
    work.mkdir()
    (home / "agent-store" / "worker.md").write_text(PROFILE, encoding="utf-8")
    (home / "agent-store" / "mcp_worker.md").write_text(MCP_PROFILE, encoding="utf-8")
    with run_cao_server(home, work, SERVER_PLUGINS) as server:
        server.workdir = work  # type: ignore[attr-defined]
        yield server


def client(server: Any) -> Any:
    """An HTTP client of ``server`` carrying the owner's token."""
    import httpx

    return httpx.Client(base_url=server.url, headers=server.headers, trust_env=False, timeout=30)


def worker(server: Any, **fields: Any) -> dict[str, Any]:
    """The body of a session creation running the ``worker`` profile in the server's project folder."""
    return {"agent_profile": "worker", "working_directory": str(server.workdir), **fields}
