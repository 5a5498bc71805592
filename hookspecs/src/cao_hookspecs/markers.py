"""The one project name, ``cao``, shared by markers, plugin manager and entry-point group."""

from __future__ import annotations

import pluggy

PROJECT_NAME = "cao"
ENTRY_POINT_GROUP = "cao"

hookimpl = pluggy.HookimplMarker(PROJECT_NAME)
# Plugins implement hooks; only the contract declares them, so the spec marker stays private.
_hookspec = pluggy.HookspecMarker(PROJECT_NAME)
