"""Viewer sessions: how a program outside cao (a browser's terminal, a person's tmux client) shows one
terminal and takes its keys without moving anybody else's view.

``attach-session -t cao-x:window`` would switch the session's current window for every client attached
to it. A viewer gets a session of its own instead, grouped with the terminal's session (``new-session -t``:
the same windows, its own current window), created detached, pointed at the terminal's window, and only
then attached, so no other window is ever shown to it (a window shown to a client takes that client's
size). Its name, ``cao_view_<terminal id>_<random>``, never starts with ``cao-``, so it is never listed as
a cao session, and the backend's listings name a grouped session's windows by their group, the cao session
(:data:`cao_tmux.listing.SESSION_FIELD`). It is ``destroy-unattached`` from before the client attaches:
whether the client leaves, is killed or never gets attached, tmux removes the session.

A client's size sticks to the window after the client leaves, and a narrow browser would leave the agent
drawing in a narrow window that cao's screen parsers then read. So the viewer is a small ``sh`` that runs
the tmux client and, once it ended, puts the window back to the size it was launched with, unless another
client shows it. A tmux hook cannot do this: tmux 3.3a runs a ``client-detached`` hook from whichever
session it finds best once the client's own is gone, another viewer's or the user's.
"""

from __future__ import annotations

import secrets
import shlex
from collections.abc import Iterable, Sequence

from .quoting import command_chain

PREFIX = "cao_view_"
# The shell that runs the client: a signal for the viewer (sent to its process group) ends the client, and
# the shell, whose trap only lets it wait, tidies up after it.
_SCRIPT = 'trap : HUP INT TERM; "$@"; status=$?; {restore} >/dev/null 2>&1; exit $status'


def new_name(terminal_id: str) -> str:
    """A fresh viewer session name for a terminal (terminal ids are checked: no quoting needed)."""
    return f"{PREFIX}{terminal_id}_{secrets.token_hex(4)}"


def of_terminals(session_names: Iterable[str], terminal_ids: Iterable[str]) -> list[str]:
    """The viewer sessions among ``session_names`` that show one of ``terminal_ids``."""
    prefixes = tuple(f"{PREFIX}{tid}_" for tid in terminal_ids)
    return [name for name in session_names if prefixes and name.startswith(prefixes)]


def attach_commands(viewer: str, session: str, window: str) -> list[list[str]]:
    """The tmux commands, run by the viewer's own client in one invocation, that create the viewer
    session ``viewer`` grouped with ``session``, show ``window`` (a ``@N`` id) and attach to it."""
    target = f"={viewer}:"
    return [
        ["new-session", "-d", "-s", viewer, "-t", f"={session}"],
        # Set before the attach: tmux looks only once the whole line ran, and a refused attach leaves
        # nothing. The user's configuration could say otherwise about the other two.
        ["set-option", "-t", target, "destroy-unattached", "on"],
        ["set-option", "-t", target, "detach-on-destroy", "on"],
        # The agent's screen, row for row: no status line taking one of the client's rows.
        ["set-option", "-t", target, "status", "off"],
        ["select-window", "-t", f"={viewer}:{window}"],
        ["attach-session", "-t", f"={viewer}"],
    ]


def restore_command(window: str, width: int, height: int) -> list[str]:
    """The tmux command that gives ``window`` its launch size back when no client shows it, and lets it
    follow the clients that show it later."""
    restore = f"resize-window -t {window} -x {width} -y {height} ; set-option -w -u -t {window} window-size"
    return ["if-shell", "-F", "-t", window, "#{==:#{window_active_clients},0}", restore]


def program(tmux: Sequence[str], viewer: str, session: str, window: str, width: int,
            height: int) -> list[str]:
    """The viewer's command line: ``tmux`` (the client's argv up to its commands) attaching ``viewer`` to
    ``window`` of ``session``, then the window's launch size ``width`` x ``height`` restored."""
    restore = shlex.join([*tmux, *restore_command(window, width, height)])
    attach = [*tmux, *command_chain(attach_commands(viewer, session, window))]
    return ["sh", "-c", _SCRIPT.format(restore=restore), "cao-viewer", *attach]
