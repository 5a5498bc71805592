"""The cao home folder: where profiles, logs, the inbox database and runtime files live."""

from __future__ import annotations

import os
from pathlib import Path

import attrs

DEFAULT_HOME = "~/.aws/cli-agent-orchestrator"


class _Folder:
    """A ``CaoHome`` attribute: a folder of that name under the home's root."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __get__(self, home: CaoHome, owner: type | None = None) -> Path:
        return home.root / self._name


@attrs.frozen
class CaoHome:
    """Paths under the cao home (``CAO_HOME_DIR``, default ``~/.aws/cli-agent-orchestrator`` as upstream)."""

    root: Path

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> CaoHome:
        env = os.environ if environ is None else environ
        return cls(Path(env.get("CAO_HOME_DIR") or DEFAULT_HOME).expanduser())

    agent_store = _Folder("agent-store")
    agent_context = _Folder("agent-context")
    logs = _Folder("logs")
    db = _Folder("db")
    runtime = _Folder("runtime")
    skills = _Folder("skills")

    def ensure(self) -> CaoHome:
        """Create the folders (mode 0700: the home holds tokens and message bodies)."""
        for path in (self.root, self.agent_store, self.agent_context, self.logs, self.db, self.runtime):
            path.mkdir(parents=True, exist_ok=True, mode=0o700)
        return self
