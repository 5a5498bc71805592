"""Upstream CAO's own programs, as clients of a cao-server in the compatibility tests.

``install_upstream()`` installs the released ``cli-agent-orchestrator`` package from PyPI once per
machine into the live-CLI cache (:func:`cao_testkit.models.cli.install_pypi_cli`: a virtual environment
of its own, its dependencies resolved as PyPI had them on :data:`RESOLVED_AS_OF`) and returns where its
programs are. Nothing of it is imported into the test process: its ``cao`` and ``cao-mcp-server`` run as
subprocesses, and its route list is read by its own interpreter (:func:`upstream_routes`).

``upstream_env(url, token)`` is the environment those programs need to talk to a cao-server: the
address in ``CAO_API_HOST``/``CAO_API_PORT`` (how every upstream client finds its server) and cao's API
token in ``CAO_AUTH_LOCAL_TOKEN``, which upstream's clients send as ``Authorization: Bearer`` to their
own server's address.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit

import attrs

from .models.cli import install_pypi_cli

PACKAGE = "cli-agent-orchestrator"
VERSION = "2.5.4"
#: Dependencies as PyPI had them when this version was checked: later releases of its unpinned
#: dependencies cannot change what the tests run.
RESOLVED_AS_OF = "2026-11-20"


@attrs.frozen
class Upstream:
    """An installed upstream release: its ``cao`` program, and the folder holding its others."""

    version: str
    cao: Path

    @property
    def bin_dir(self) -> Path:
        return self.cao.parent

    @property
    def mcp_server(self) -> Path:
        return self.bin_dir / "cao-mcp-server"

    @property
    def python(self) -> Path:
        return self.bin_dir / "python"


def install_upstream(version: str = VERSION) -> Upstream:
    """Upstream CAO ``version`` from PyPI, installed once per machine (``LiveCliUnavailable`` when PyPI
    or uv cannot be reached)."""
    installed = install_pypi_cli(PACKAGE, version, "cao", python=">=3.10", exclude_newer=RESOLVED_AS_OF)
    return Upstream(version=version, cao=installed.binary)


def upstream_env(url: str, token: str | None, home: Path, **extra: str) -> dict[str, str]:
    """The environment for an upstream program talking to the cao-server at ``url``: its own home
    (``HOME``, so it writes nothing of the user's), the server's address, and the API token."""
    parts = urlsplit(url)
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("CAO_", "VIRTUAL_ENV", "PYTHON"))}
    env.update(HOME=str(home), CAO_API_HOST=parts.hostname or "127.0.0.1", CAO_API_PORT=str(parts.port),
               NO_COLOR="1", TERM="dumb")
    if token:
        env["CAO_AUTH_LOCAL_TOKEN"] = token
    env.update(extra)
    return env


_ROUTES = """
import json
from cli_agent_orchestrator.api.main import app
pairs = set()
for route in app.routes:
    for method in getattr(route, "methods", None) or ():
        pairs.add((method, route.path))
print(json.dumps(sorted(pairs)))
"""


def upstream_routes(upstream: Upstream, home: Path,
                    env: Mapping[str, str] | None = None) -> set[tuple[str, str]]:
    """Every (method, path) pair upstream's server app answers, read from the installed package by its
    own interpreter (HEAD, which its framework adds to every GET, left out)."""
    run_env = {**(env or os.environ), "HOME": str(home)}
    done = subprocess.run([str(upstream.python), "-c", _ROUTES], capture_output=True, text=True, timeout=120,
                          check=True, env=run_env, stdin=subprocess.DEVNULL)
    return {(method, path) for method, path in json.loads(done.stdout.strip().splitlines()[-1])
            if method != "HEAD"}


__all__ = ["PACKAGE", "RESOLVED_AS_OF", "Upstream", "VERSION", "install_upstream", "upstream_env",
           "upstream_routes"]
