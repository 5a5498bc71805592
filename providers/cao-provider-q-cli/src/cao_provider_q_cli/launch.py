"""The command line that starts ``q chat`` for one terminal, built from the agent profile.

::

    /bin/sh -c <remove the agent file on exit> ~/.aws/amazonq/cli-agents/cao-<profile>-<terminal id>.json \\
        <q> chat --trust-all-tools [--model M] --agent cao-<profile>-<terminal id>

The agent file, the allowed tools and the wrapper that removes the file when the CLI exits are shared
with the Kiro CLI provider (``cao_agent_file_core``): Kiro CLI succeeded Q CLI and reads the same
agent-file format. What is Q's own is here: the program (``q``, or ``CAO_Q_CLI_BIN``), its agent
folder ``~/.aws/amazonq/cli-agents`` (Amazon Q Developer documentation, "Managing custom agents") and
the agent-file key ``useLegacyMcpJson``. ``--trust-all-tools``: an orchestrated agent has nobody to
answer Q's ``[y/n/t]`` questions; the agent file's ``tools`` is the limit.
"""

from __future__ import annotations

from collections.abc import Mapping

from cao_agent_file_core import ChatCli
from cao_agent_file_core.launch import CLEANUP_SCRIPT, chat_plan
from cao_agent_file_core.launch import resolve_binary as _resolve
from cao_hookspecs import LaunchContext, LaunchPlan
from cao_launch_core.environment import environment

__all__ = ["BINARY", "BINARY_ENV", "CLEANUP_SCRIPT", "CLI", "INSTALL_HINT", "RUNTIME_COPY", "launch", "resolve_binary"]

BINARY = "q"
#: Environment variable naming the ``q`` program to run instead of the one on PATH.
BINARY_ENV = "CAO_Q_CLI_BIN"
INSTALL_HINT = (
    "Amazon Q Developer CLI is not published on npm, PyPI or Debian: install it with AWS's installer "
    "(https://docs.aws.amazon.com/amazonq/latest/qdeveloper-ug/command-line-installing.html), then run "
    "'q login'. Its successor is Kiro CLI (cao provider kiro_cli)."
)
#: Name of the copy of the agent file in the terminal's runtime folder (for inspection only).
RUNTIME_COPY = "q-agent.json"
CLI = ChatCli(short="Q", title="Amazon Q Developer CLI", distribution="cao-provider-q-cli", binary=BINARY,
              binary_env=BINARY_ENV, install_hint=INSTALL_HINT, agent_dir=(".aws", "amazonq", "cli-agents"),
              legacy_mcp_json_key="useLegacyMcpJson", runtime_copy=RUNTIME_COPY)


def resolve_binary(env: Mapping[str, str]) -> str:
    """The ``q`` program: ``CAO_Q_CLI_BIN`` when set, else ``q`` on PATH; a clear error otherwise."""
    return _resolve(env, CLI)


def launch(ctx: LaunchContext) -> LaunchPlan:
    """Launch plan for one terminal. Everything is checked before the agent file is written, so a
    refused profile leaves nothing behind."""
    env = environment(ctx)
    return chat_plan(ctx, CLI, resolve_binary(env), env)
