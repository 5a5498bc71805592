"""The command line that starts ``kiro-cli chat`` for one terminal, built from the agent profile.

::

    /bin/sh -c <remove the agent file on exit> ~/.kiro/agents/cao-<profile>-<terminal id>.json \\
        <kiro-cli> chat --trust-all-tools [--legacy-ui] [--model M] --agent cao-<profile>-<terminal id>

The agent file, the allowed tools and the wrapper that removes the file when the CLI exits are shared
with the Q CLI provider (``cao_agent_file_core``); what is Kiro's own is here:

- the program (``kiro-cli``, or ``CAO_KIRO_CLI_BIN``), its agent folder ``~/.kiro/agents`` (Kiro
  documentation, "Agent configuration reference", file locations) and the agent-file key
  ``includeMcpJson`` (upstream's ``useLegacyMcpJson``);
- ``--legacy-ui`` when ``CAO_KIRO_CLI_LEGACY_UI`` is ``1``: Kiro 2's line-based chat instead of its
  full-screen interface (Kiro 1 has only the former and no such flag). Both are read by the detector.
  Kiro 2 asks for consent to ``--trust-all-tools`` once; the kernel answers it (``dialogs.py``).
"""

from __future__ import annotations

from collections.abc import Mapping

from cao_agent_file_core import ChatCli
from cao_agent_file_core.launch import CLEANUP_SCRIPT, chat_plan
from cao_agent_file_core.launch import resolve_binary as _resolve
from cao_hookspecs import LaunchContext, LaunchPlan
from cao_launch_core.environment import environment

__all__ = [
    "BINARY", "BINARY_ENV", "CLEANUP_SCRIPT", "CLI", "INSTALL_HINT", "LEGACY_UI_ENV", "RUNTIME_COPY", "launch",
    "resolve_binary",
]

BINARY = "kiro-cli"
#: Environment variable naming the ``kiro-cli`` program to run instead of the one on PATH.
BINARY_ENV = "CAO_KIRO_CLI_BIN"
#: ``1`` starts Kiro 2 with its line-based chat (``--legacy-ui``).
LEGACY_UI_ENV = "CAO_KIRO_CLI_LEGACY_UI"
INSTALL_HINT = (
    "Kiro CLI is not published on npm, PyPI (the PyPI project named 'kiro-cli' is an unrelated tool) or "
    "Debian: install it with 'curl -fsSL https://cli.kiro.dev/install | bash' (Kiro CLI documentation, "
    "https://kiro.dev/docs/cli), then run 'kiro-cli login'."
)
#: Name of the copy of the agent file in the terminal's runtime folder (for inspection only).
RUNTIME_COPY = "kiro-agent.json"
CLI = ChatCli(short="Kiro", title="Kiro CLI", distribution="cao-provider-kiro-cli", binary=BINARY,
              binary_env=BINARY_ENV, install_hint=INSTALL_HINT, agent_dir=(".kiro", "agents"),
              legacy_mcp_json_key="includeMcpJson", runtime_copy=RUNTIME_COPY)


def resolve_binary(env: Mapping[str, str]) -> str:
    """The ``kiro-cli`` program: ``CAO_KIRO_CLI_BIN`` when set, else ``kiro-cli`` on PATH; a clear
    error naming what to install otherwise."""
    return _resolve(env, CLI)


def launch(ctx: LaunchContext) -> LaunchPlan:
    """Launch plan for one terminal. Everything is checked before the agent file is written, so a
    refused profile leaves nothing behind."""
    env = environment(ctx)
    program = resolve_binary(env)
    legacy = env.get(LEGACY_UI_ENV, "").strip()
    if legacy not in ("", "0", "1"):
        raise ValueError(f"{LEGACY_UI_ENV}={legacy!r}: use 1 (line-based chat) or 0 (Kiro's default)")
    return chat_plan(ctx, CLI, program, env, ("--legacy-ui",) if legacy == "1" else ())
