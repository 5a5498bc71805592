"""The command line that starts ``kiro-cli chat`` for one terminal, built from the agent profile.

::

    /bin/sh -c <remove the agent file on exit> <agent file> \\
        <kiro-cli> chat --trust-all-tools [--legacy-ui] [--model M] --agent cao-<profile>-<terminal id>

- ``--trust-all-tools``: an orchestrated agent has nobody to answer Kiro's tool prompts (upstream CAO
  starts Kiro the same way). What the agent may use is limited by the agent file's ``tools`` instead,
  which cao fills from the terminal's allowed tools (``tools.py``). Kiro 2 asks for consent once; the
  kernel answers it (``dialogs.py``).
- ``--legacy-ui`` when ``CAO_KIRO_CLI_LEGACY_UI`` is ``1``: Kiro 2's line-based chat instead of its
  full-screen interface (Kiro 1 has only the former and no such flag). Both are read by the detector.
- ``--model``: the model the terminal was asked for (request, else profile).
- ``--agent``: the agent file cao writes into the user's agent folder (``agent_file.py``).

The small ``sh`` wrapper deletes that file when the CLI exits for any reason short of SIGKILL (its
traps run after ``kiro-cli`` has ended, so the CLI keeps the terminal and its own signal handling).
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Mapping
from pathlib import Path

from cao_hookspecs import LaunchContext, LaunchPlan

from .agent_file import agent_config, agent_folder, agent_name, dumps, write_atomically

__all__ = [
    "BINARY", "BINARY_ENV", "CLEANUP_SCRIPT", "INSTALL_HINT", "LEGACY_UI_ENV", "RUNTIME_COPY", "launch",
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
# $0 is the agent file, "$@" the CLI's argv. Traps with a command (not '') are reset in the child, so
# kiro-cli handles its own signals; HUP and TERM end the shell only after kiro-cli has ended, through
# the EXIT trap.
CLEANUP_SCRIPT = 'trap \'rm -f -- "$0"\' EXIT; trap "exit 129" HUP; trap "exit 143" TERM; trap : INT; "$@"'
_SHELL = "/bin/sh"
_MODEL = re.compile(r"^[A-Za-z0-9._:/][A-Za-z0-9._:/-]{0,127}\Z")


def _environment(ctx: LaunchContext) -> dict[str, str]:
    return {**os.environ, **dict(ctx.env)}


def resolve_binary(env: Mapping[str, str]) -> str:
    """The ``kiro-cli`` program: ``CAO_KIRO_CLI_BIN`` when set, else ``kiro-cli`` on PATH; a clear
    error naming what to install otherwise."""
    chosen = env.get(BINARY_ENV)
    if chosen:
        path = Path(chosen).expanduser()
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise ValueError(f"{BINARY_ENV}={chosen!r} is not an executable file")
        return str(path)
    found = shutil.which(BINARY, path=env.get("PATH"))
    if found is None:
        raise ValueError(f"Kiro CLI ('{BINARY}') is not on PATH, so cao-provider-kiro-cli cannot start it. "
                         f"{INSTALL_HINT} Or set {BINARY_ENV} to the program to run.")
    return found


def launch(ctx: LaunchContext) -> LaunchPlan:
    """Launch plan for one terminal. Everything is checked before the agent file is written, so a
    refused profile leaves nothing behind."""
    env = _environment(ctx)
    program = resolve_binary(env)
    name = agent_name(ctx)
    if ctx.model is not None and not _MODEL.match(ctx.model):
        raise ValueError(f"model {ctx.model!r}: use letters, digits and . _ : / - (at most 128, not starting with -)")
    legacy = env.get(LEGACY_UI_ENV, "").strip()
    if legacy not in ("", "0", "1"):
        raise ValueError(f"{LEGACY_UI_ENV}={legacy!r}: use 1 (line-based chat) or 0 (Kiro's default)")
    content = dumps(agent_config(ctx, name))
    path = agent_folder(env) / f"{name}.json"
    argv = [_SHELL, "-c", CLEANUP_SCRIPT, str(path), program, "chat", "--trust-all-tools"]
    if legacy == "1":
        argv.append("--legacy-ui")
    if ctx.model:
        argv += ["--model", ctx.model]
    argv += ["--agent", name]
    write_atomically(path, content)
    return LaunchPlan(argv=argv, files={RUNTIME_COPY: content})
