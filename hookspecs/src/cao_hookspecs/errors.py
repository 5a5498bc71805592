"""The errors cao raises. Each carries one HTTP status so the server and its client agree: the server
answers ``http_status`` with ``{"detail": str(err), "error": <class name>}`` and the client raises the
same class again."""

from __future__ import annotations


class CaoError(Exception):
    """Base of every error cao reports to a user. ``str(err)`` is the one-line explanation."""

    http_status = 500


class InvalidInput(CaoError, ValueError):
    """The request itself is wrong: a bad name, id, path, key, size or profile."""

    http_status = 400


class NotFound(CaoError, LookupError):
    """A session, terminal, profile, provider or message that does not exist."""

    http_status = 404


class Conflict(CaoError):
    """The request is valid but the target's state refuses it (already exists, terminal in error...)."""

    http_status = 409


class Vetoed(CaoError):
    """A plugin's before-hook refused the action."""

    http_status = 403


class Timeout(CaoError, TimeoutError):
    """A wait ran out (agent start-up, handoff)."""

    http_status = 504


class AgentFailed(CaoError):
    """An agent CLI exited or reported an error."""

    http_status = 502


class NotSupported(CaoError):
    """What the request needs is not there: the kernel, its backend or its plugins cannot do it."""

    http_status = 501


class TerminalLimit(CaoError):
    """Creating a terminal would pass the cap on live terminals (``CAO_MAX_TERMINALS``); nothing was
    created. Upstream answers this with 429 too, so a scheduler can retry elsewhere or later."""

    http_status = 429


class PluginError(CaoError):
    """A plugin could not be loaded or registered, or two plugins claim the same name."""


ERRORS_BY_NAME: dict[str, type[CaoError]] = {
    cls.__name__: cls
    for cls in (
        CaoError, InvalidInput, NotFound, Conflict, Vetoed, Timeout, AgentFailed, NotSupported, PluginError,
        TerminalLimit,
    )
}
