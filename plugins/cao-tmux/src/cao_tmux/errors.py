"""Errors of the tmux backend, as subclasses of the contract's errors (``cao_hookspecs.errors``).

Bad input raises ``InvalidInput`` (a ``ValueError``), an unknown terminal ``TerminalNotFound`` (a
``NotFound``/``LookupError``), input to a finished program ``TerminalExited`` (a ``Conflict``), and a
tmux that cannot be run or refuses a command ``TmuxError``.
"""

from __future__ import annotations

from collections.abc import Sequence

from cao_hookspecs.errors import CaoError, Conflict, NotFound


class TmuxError(CaoError, RuntimeError):
    """tmux could not be run, or refused a command.

    ``command`` is the argument list that was run, ``stderr`` tmux's own explanation and ``stdout``
    whatever the commands before the failing one printed.
    """

    def __init__(
        self, message: str, *, command: Sequence[str] = (), stderr: str = "", stdout: str = ""
    ) -> None:
        super().__init__(message)
        self.command = tuple(command)
        self.stderr = stderr
        self.stdout = stdout


class TmuxNotRunning(TmuxError):
    """No tmux server answers on the configured socket."""


class TmuxTargetMissing(TmuxError):
    """The session, window or pane a command named does not exist (any more)."""


class TerminalNotFound(NotFound):
    """No terminal with this id exists on the tmux server."""


class TerminalExited(Conflict):
    """The terminal's program has ended: it takes no more input."""
