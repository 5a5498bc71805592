"""What a provider's launch tests start from: a user's machine with the CLI on it, and a launch context.

- :func:`user_machine`: this test's environment made a user's: HOME, the CLI's override variable naming a
  program, none of the user's own variables for that CLI.
- :func:`noop_program`: a CLI that the launch tests name but never run.
- :func:`launch_context`: the ``LaunchContext`` of a terminal of the provider, in fresh folders.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pytest
    from cao_hookspecs import AgentProfile, LaunchContext

__all__ = ["launch_context", "noop_program", "user_machine"]


def noop_program(path: Path) -> Path:
    """An executable at ``path`` (its folder made) that does nothing and succeeds."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(0o755)
    return path


def user_machine(monkeypatch: pytest.MonkeyPatch, home: Path, *, binary_env: str, program: Path,
                 leaky: tuple[str, ...] = ()) -> None:
    """HOME is ``home``, ``binary_env`` names ``program``, and no variable starting with one of ``leaky``
    (the developer's own keys and settings for the CLI) is set."""
    for name in list(os.environ):
        if name.startswith(leaky):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv(binary_env, str(program))


def launch_context(tmp_path: Path, provider: str, profile: AgentProfile | None = None,
                   **fields: Any) -> LaunchContext:
    """The launch context of terminal ``0123abcd`` of ``provider``, for ``profile`` (its agent profile
    ``dev`` without one), working in ``tmp_path/work`` with its runtime folder ``tmp_path/runtime``;
    ``fields`` (model, MCP servers, environment...) on top."""
    from cao_hookspecs import LaunchContext, Terminal

    terminal = Terminal(id="0123abcd", name="dev-1a2b", session_name="cao-x", provider=provider,
                        agent_profile=profile.name if profile else "dev")
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return LaunchContext(terminal=terminal, profile=profile, working_directory=str(work),
                         runtime_dir=str(tmp_path / "runtime"), **fields)
