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

    @property
    def agent_store(self) -> Path:
        return self.root / "agent-store"

    @property
    def agent_context(self) -> Path:
        return self.root / "agent-context"

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    @property
    def db(self) -> Path:
        return self.root / "db"

    @property
    def runtime(self) -> Path:
        return self.root / "runtime"

    @property
    def skills(self) -> Path:
        return self.root / "skills"

    @property
    def cache(self) -> Path:
        """Files cao can rebuild at any time (the ``cao`` command table)."""
        return self.root / CACHE_FOLDER

    def ensure(self) -> CaoHome:
        """Create the folders (mode 0700: the home holds tokens and message bodies)."""
        for path in (self.root, self.agent_store, self.agent_context, self.logs, self.db, self.runtime):
            path.mkdir(parents=True, exist_ok=True, mode=0o700)
        return self
