"""What the script-side calls raise. A script catches ``ShimError`` for all of them, or one kind."""

from __future__ import annotations


class ShimError(Exception):
    """Anything a step call refused or could not do (also raised directly for a call the server would
    refuse anyway, so the script learns of it before anything is sent)."""


class ShimIdentityError(ShimError):
    """The script was not started by a workflow run: a variable the runner sets is missing."""


class ShimTransportError(ShimError):
    """The server could not be reached, or the connection broke before it answered."""


class ShimHTTPError(ShimError):
    """The server answered with an error; ``status`` and ``body`` are kept as they came."""

    def __init__(self, status: int, body: str, detail: str = "") -> None:
        self.status = status
        self.body = body
        super().__init__(f"run-step answered HTTP {status}" + (f": {detail}" if detail else ""))
