"""The cao home folder: where profiles, logs, the inbox database and runtime files live."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

DEFAULT_HOME = "~/.aws/cli-agent-orchestrator"
CACHE_FOLDER = "cache"


def home_root(environ: Mapping[str, str] | None = None) -> str:
    """The cao home folder: ``CAO_HOME_DIR``, default ``~/.aws/cli-agent-orchestrator`` as upstream.

    A plain string, so `cao --help` can find its command table without importing pathlib.
    """
    env = os.environ if environ is None else environ
    return os.path.expanduser(env.get("CAO_HOME_DIR") or DEFAULT_HOME)


class _Folder:
    """A ``CaoHome`` attribute: a folder of that name under the home's root."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __get__(self, home: CaoHome, owner: type | None = None) -> Path:
        return home.root / self._name


# A dataclass rather than attrs, and pathlib imported when a home is made: `cao --help` imports this
# module before anything heavy loads.
@dataclasses.dataclass(frozen=True, slots=True)
class CaoHome:
    """Paths under the cao home (see ``home_root``)."""

    root: Path

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> CaoHome:
        from pathlib import Path

        return cls(Path(home_root(environ)))

    agent_store = _Folder("agent-store")
    agent_context = _Folder("agent-context")
    logs = _Folder("logs")
    db = _Folder("db")
    runtime = _Folder("runtime")
    skills = _Folder("skills")
    #: Files cao can rebuild at any time (the ``cao`` command table).
    cache = _Folder(CACHE_FOLDER)

    def ensure(self) -> CaoHome:
        """Create the folders (mode 0700: the home holds tokens and message bodies)."""
        for path in (self.root, self.agent_store, self.agent_context, self.logs, self.db, self.runtime):
            path.mkdir(parents=True, exist_ok=True, mode=0o700)
        return self
