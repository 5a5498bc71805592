"""Smaller holes of the trust issue, probed as a hostile client would: a Host header carrying user info,
racing creations of one session, a relay fed a line nested past the interpreter's stack, and an
environment too large to start a program."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cao_hookspecs import CreateTerminalRequest
from cao_kernel.errors import Conflict

from .conftest import client as _client
from .conftest import worker as _worker


@pytest.mark.parametrize("host", ["127.0.0.1:1@evil.example", "evil.example", "localhost@evil.example:80",
                                  "127.0.0.1:80:80", "127.0.0.1/x", "[::1]x", ""])
def test_a_host_header_that_is_not_a_plain_allowed_host_is_refused(cao_server, host):
    with _client(cao_server) as http:
        assert http.get("/sessions", headers={"Host": host}).status_code == 400
        assert http.get("/sessions", headers={"Host": "127.0.0.1:9"}).status_code == 200


async def test_racing_creations_of_one_session_name_make_one_session(make_kernel, workdir):
    request = CreateTerminalRequest(agent_profile="developer", session_name="once", working_directory=workdir)
    async with make_kernel(agents=("developer",)) as kernel:
        results = await asyncio.gather(*(kernel.create_session(request) for _ in range(8)),
                                       return_exceptions=True)
        made = [r for r in results if not isinstance(r, BaseException)]
        refused = [r for r in results if isinstance(r, Conflict)]
        assert len(made) == 1 and len(refused) == 7, results
        assert [t.id for t in await kernel.list_terminals("cao-once")] == [made[0].id]


def test_the_relay_survives_a_line_nested_past_the_stack(cao_server):
    """The relay (cao-mcp-server in front of a server that knows the terminal) answers a parse error and
    goes on."""
    with _client(cao_server) as http:
        made = http.post("/sessions", json=_worker(cao_server, agent_profile="mcp_worker"))
        assert made.status_code == 201, made.text
    tid = made.json()["id"]
    port = cao_server.url.rsplit(":", 1)[1]
    # What cao put in the terminal's entry for its MCP server, the secret included.
    entry = json.loads((cao_server.home / "runtime" / "terminals" / tid / "mcp.json").read_text())
    env = {**entry["mcpServers"]["cao-mcp-server"]["env"], "PATH": os.environ["PATH"], "CAO_API_PORT": port}
    nested = b"[" * 200_000 + b"]" * 200_000
    ping = b'{"jsonrpc": "2.0", "id": 7, "method": "ping"}'
    relay = subprocess.Popen([str(Path(sys.executable).parent / "cao-mcp-server")], env=env,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        relay.stdin.write(nested + b"\n" + ping + b"\n")
        relay.stdin.flush()
        first, second = relay.stdout.readline().decode(), relay.stdout.readline().decode()
    finally:
        relay.stdin.close()
        relay.wait(30)
        relay.stdout.close()
        relay.stderr.close()
    assert relay.returncode == 0
    assert '"code":-32700' in first and "nested too deeply" in first, first
    assert '"id":7' in second and '"result":{}' in second, second


def test_an_environment_too_large_is_refused_before_anything_is_made(cao_server):
    with _client(cao_server) as http:
        huge = {f"VAR_{n}": "x" * 2000 for n in range(3000)}  # about 6 MB
        refused = http.post("/sessions", json=_worker(cao_server, env_vars=huge))
        assert refused.status_code in (400, 413), refused.text
        assert http.get("/sessions").json() == []
    runtime = cao_server.home / "runtime" / "terminals"
    assert not runtime.exists() or list(runtime.iterdir()) == []
