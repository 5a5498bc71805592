"""The cao plugin contract.

Plugins import from here only: the ``hookimpl`` marker, the records in ``types`` and the Protocols in
``protocols``. The kernel passes ``ALL_SPEC_MODULES`` to ``PluginManager.add_hookspecs``.
"""

from __future__ import annotations

import sys

from . import delivery, lifecycle, plumbing, providers, status
from .activity import Activity
from .errors import (
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
from .handoff_jobs import HandoffJob
from .markers import ENTRY_POINT_GROUP, PROJECT_NAME, hookimpl
from .prompts import *  # noqa: F403
from .prompts import __all__ as _prompts_all
from .timeline import TIMELINE_STEPS, TimelineEvent
from .protocols import InboxStore, KernelAPI, TerminalBackend
from .types import *  # noqa: F403
from .types import __all__ as _types_all

__version__ = "0.1.0"

ALL_SPEC_MODULES = (providers, status, delivery, lifecycle, plumbing)

__all__ = [
    "ALL_SPEC_MODULES",
    "Activity",
    "AgentFailed",
    "CaoError",
    "Conflict",
    "InvalidInput",
    "NotFound",
    "NotSupported",
    "PluginError",
    "TerminalLimit",
    "HandoffJob",
    "Timeout",
    "Vetoed",
    "ENTRY_POINT_GROUP",
    "PROJECT_NAME",
    "InboxStore",
    "KernelAPI",
    "TerminalBackend",
    "TIMELINE_STEPS",
    "TimelineEvent",
    "hookimpl",
    *_prompts_all,
    *_types_all,
]

# httpx imports its command-line tool, and with it rich and pygments (about 90 ms), whenever rich is
# installed, as it is wherever `cao console` (Textual) is. No cao process runs httpx's tool, and every cao
# process imports this package before httpx, so the tool's module is marked absent: httpx then installs
# its stub `main` and loads nothing more. A process that imported httpx already is left as it is.
sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
