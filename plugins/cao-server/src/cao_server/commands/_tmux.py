"""The few tmux calls the commands make on the user's side: attaching to a session, and asking tmux
which session the caller runs in. Every agent operation goes through the server instead."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping


def base_argv(settings: Mapping[str, str]) -> list[str]:
    """``tmux`` plus the socket the cao tmux backend uses (``CAO_TMUX_SOCKET`` -> ``-S``,
    ``CAO_TMUX_SOCKET_NAME`` -> ``-L``), so the user lands on the server where the agents run."""
    argv = [shutil.which("tmux") or "tmux"]
    if settings.get("CAO_TMUX_SOCKET"):
        argv += ["-S", settings["CAO_TMUX_SOCKET"]]
    elif settings.get("CAO_TMUX_SOCKET_NAME"):
        argv += ["-L", settings["CAO_TMUX_SOCKET_NAME"]]
    return argv


def _inside_same_server(settings: Mapping[str, str], environ: Mapping[str, str]) -> bool:
    """Whether the caller is itself inside a tmux client of the server cao uses."""
    inside = environ.get("TMUX", "")
    if not inside:
        return False
    current_socket = inside.split(",", 1)[0]
    if settings.get("CAO_TMUX_SOCKET"):
        return os.path.realpath(settings["CAO_TMUX_SOCKET"]) == os.path.realpath(current_socket)
    if settings.get("CAO_TMUX_SOCKET_NAME"):
        return os.path.basename(current_socket) == settings["CAO_TMUX_SOCKET_NAME"]
    return os.path.basename(current_socket) == "default"


def attach_argv(
    session: str, settings: Mapping[str, str], environ: Mapping[str, str] | None = None
) -> list[str]:
    """The command that shows ``session`` to the user: switch the current client when already inside
    tmux on the same server (tmux refuses to nest an attach there), else attach."""
    env = os.environ if environ is None else environ
    if _inside_same_server(settings, env):
        return [*base_argv(settings), "switch-client", "-t", session]
    return [*base_argv(settings), "attach-session", "-t", session]


def current_session(environ: Mapping[str, str] | None = None) -> str | None:
    """The tmux session the caller runs in (``display-message -p '#S'``), or None outside tmux."""
    env = os.environ if environ is None else environ
    if not env.get("TMUX"):
        return None
    try:
        done = subprocess.run(["tmux", "display-message", "-p", "#S"], capture_output=True, text=True,
                              timeout=5, check=False, env=dict(env))
    except (OSError, subprocess.TimeoutExpired):
        return None
    name = done.stdout.strip()
    return name if done.returncode == 0 and name else None
