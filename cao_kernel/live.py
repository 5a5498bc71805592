"""What the kernel holds for each running terminal."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import attrs

from cao_hookspecs import OpenPrompt, ProviderSpec, Terminal

from .status import StatusTracker

if TYPE_CHECKING:
    pass


@attrs.define(eq=False)
class LiveTerminal:
    """A terminal's record plus its moving parts: provider, status tracker and screen refresh state."""

    record: Terminal
    provider: ProviderSpec | None
    tracker: StatusTracker
    # Screen refresh: output events set `dirty`; one task at a time captures and reads the screen.
    dirty: bool = False
    refresh_task: asyncio.Task[None] | None = None
    # Start-up dialogs already answered (by name), so a dialog still on screen is not answered twice.
    answered_dialogs: set[str] = attrs.field(factory=set)
    starting: bool = True
    # Resolved when start-up ends: None when the agent became ready, or the exception that ended it.
    started: asyncio.Future[None] | None = None
    # What a kernel service stored with the terminal besides its record (a handoff's call, for one);
    # kept in the backend's metadata, so the next kernel reads it back on re-adoption.
    extra: dict[str, str] = attrs.field(factory=dict)
    # The prompt open on screen (the kernel's prompt desk keeps it), shown with the record.
    prompt: OpenPrompt | None = None
    # The check that the latest input left the prompt (``cao_kernel.resubmit``), while it runs.
    submit_check: asyncio.Task[None] | None = None

    @property
    def id(self) -> str:
        return self.record.id

    def terminal(self) -> Terminal:
        """The record with its live status."""
        return attrs.evolve(self.record, status=self.tracker.status, prompt=self.prompt)
