"""Start-up dialogs Aider may show before its prompt: none once launched by cao.

Aider asks at start whether to add ``.aider*`` to ``.gitignore``, whether to show its release notes,
whether to create a git repository and whether analytics may be collected. ``launch.py`` passes the flags
that keep each question from being asked (``--no-gitignore``, ``--no-show-release-notes``, ``--no-git``
outside a repository, ``--no-analytics``), so there is nothing left for the kernel to answer.
"""

from __future__ import annotations

from cao_hookspecs import StartupDialog

__all__ = ["STARTUP_DIALOGS"]

STARTUP_DIALOGS: tuple[StartupDialog, ...] = ()
