"""cao's errors. They live in the contract (``cao_hookspecs.errors``) so plugins, the HTTP client and the
kernel raise and catch the same classes; re-exported here for kernel code."""

from cao_hookspecs.errors import (
    AgentFailed,
    CaoError,
    Conflict,
    InvalidInput,
    NotFound,
    NotSupported,
    PluginError,
    TerminalLimit,
    Timeout,
    Vetoed,
)

__all__ = [
    "AgentFailed", "CaoError", "Conflict", "InvalidInput", "NotFound", "NotSupported", "PluginError", "TerminalLimit",
    "Timeout", "Vetoed",
]
