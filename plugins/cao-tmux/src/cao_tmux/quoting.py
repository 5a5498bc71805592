"""How text must be spelled so that tmux (and the shell it starts) reads it back unchanged."""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping, Sequence

_HASHES = re.compile("#+")


def tmux_arg(arg: str) -> str:
    """``arg`` as tmux must receive it on its command line.

    tmux reads any argument that *ends* in ``;`` as a command separator (and drops the ``;``), which
    would split an agent's argv or an environment value; ``\\;`` at the end stands for a literal ``;``.
    """
    return arg[:-1] + "\\;" if arg.endswith(";") else arg


def command_chain(commands: Sequence[Sequence[str]]) -> list[str]:
    """Several commands as one tmux command line (``a ; b ; c``), which tmux runs with nothing else in
    between."""
    chain: list[str] = []
    for index, command in enumerate(commands):
        if index:
            chain.append(";")
        chain += [tmux_arg(arg) for arg in command]
    return chain


def format_literal(text: str) -> str:
    """``text`` for an argument tmux expands as a format (``-c``, ``-n``, ``pipe-pane``, ``run-shell``).

    Unescaped, ``#{...}`` would be substituted and ``#(...)`` would run a shell command. tmux turns
    ``##`` into ``#`` except in a run of ``#`` that ends in ``[`` (a style, copied as it is), so such a run
    is left alone and every other ``#`` is doubled.
    """
    return _HASHES.sub(lambda run: run[0] if text.startswith("[", run.end()) else run[0] * 2, text)


def tmux_double_quoted(text: str) -> str:
    """``text`` as one double-quoted word of tmux's command language (as inside a hook)."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$")
    return f'"{escaped}"'


def pipe_command(fifo: str) -> str:
    """The ``pipe-pane`` command copying pane output into ``fifo``.

    The ``-p`` test keeps ``cat`` from creating a regular file (which nobody would ever read) when the
    FIFO has been removed in the meantime. Opening a FIFO for writing waits for a reader, and tmux never
    signals its pipe's process: had the backend closed its end first (a terminal killed or a backend
    closed just after the pipe was asked for), the shell would wait in ``open`` for ever. So the shell
    first holds the FIFO read-write (which never waits), opens it for ``cat``, and lets go: with no
    reader left, ``cat``'s first write ends it, and it ends anyway when tmux closes the pipe.
    """
    path = shlex.quote(fifo)
    return format_literal(f"[ -p {path} ] && exec 3<>{path} && exec cat >{path} 3<&-")


def died_hook(ctl_fifo: str) -> str:
    """The ``pane-died`` hook command that pokes ``ctl_fifo`` so the reader learns of the exit at once.

    tmux refuses ``pipe-pane`` on a dead pane, so the output pipe stays open after the program ends
    and its end of file cannot tell us; this hook is the push signal instead. Opening the FIFO
    read-write never blocks, even when no backend is reading it, and the command always succeeds so
    tmux never shows an error over the dead pane's last screen.
    """
    path = shlex.quote(ctl_fifo)
    script = f"{{ [ -p {path} ] && printf x 1<>{path}; }} 2>/dev/null; exit 0"
    return "run-shell -b " + tmux_double_quoted(format_literal(script))


def write_env_file(path: str, env: Mapping[str, str]) -> None:
    """Write ``env`` as ``sh`` assignments into a new file only its owner can read (never one that
    exists: a file planted there first, or a link, is refused)."""
    text = "".join(f"{name}={shlex.quote(value)}\n" for name, value in env.items())
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)
