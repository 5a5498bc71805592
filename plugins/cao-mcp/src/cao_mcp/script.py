"""The ``cao-mcp-server`` script, owned by this plugin so it can take its fast path first.

An agent CLI starts one of these per terminal, and waits for it before the agent can act. When the
caller names its terminal and a cao-server that knows it answers, the script relays stdio to the server's
``/mcp`` straight away, with only the standard library loaded. Anything else (options, no terminal id, no
server) goes through ``cao mcp-server``, which loads the plugins and explains every problem.
"""

from __future__ import annotations

import os
import sys
import time


def main() -> None:
    # Before anything else is imported: the relay reports it as the start of the agent's MCP connection.
    started = time.time()
    terminal_id = os.environ.get("CAO_TERMINAL_ID", "").strip()
    if terminal_id and len(sys.argv) == 1:
        from .relay import find_server, run

        target = find_server(os.environ, terminal_id)
        if target is not None:
            status = run(target, started=started)
            # Threads may still wait on abandoned requests: leave without joining or finalizing them.
            sys.stderr.flush()
            os._exit(status)
    # stdout carries the MCP protocol: anything a plugin prints while loading goes to stderr instead.
    # The mcp-server command restores the real stdout before it serves.
    sys.stdout = sys.stderr
    from cao_hookspecs.cli import run_cao

    run_cao(["mcp-server", *sys.argv[1:]], prog_name="cao-mcp-server")
