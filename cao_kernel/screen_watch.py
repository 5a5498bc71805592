"""Reading terminals' screens as the backend pushes their output: one capture-and-detect pass per burst,
and start-up dialogs answered once drawn.

The backend calls from its own thread; everything here then runs on the event loop. Blocking captures and
key presses go to the kernel's I/O pool.
"""

from __future__ import annotations

import asyncio
import logging
import re
from typing import TYPE_CHECKING

from cao_hookspecs import OutputEvent, StartupDialog, StatusReport

from .live import LiveTerminal

if TYPE_CHECKING:
    from cao_hookspecs import TerminalBackend

    from .hooks import Hooks
    from .iopool import IoPool
    from .prompt_desk import PromptDesk
    from .timeline import Timelines

log = logging.getLogger(__name__)

# A burst of output is read once: the first event waits this long for the rest of the burst.
REFRESH_DEBOUNCE = 0.008
DIALOG_SETTLE = 0.5
DIALOG_RETRY = 2.0
DIALOG_ATTEMPTS = 2


class ScreenWatch:
    """Turns a backend's output events into status readings for the terminals in ``live``."""

    def __init__(
        self, live: dict[str, LiveTerminal], backend: TerminalBackend, io: IoPool, hooks: Hooks,
        timelines: Timelines,
    ) -> None:
        self._live = live
        self._timelines = timelines
        self._backend = backend
        self._io = io
        self._hooks = hooks
        self._loop = asyncio.get_running_loop()
        self.prompts: PromptDesk | None = None

    def on_event(self, event: OutputEvent) -> None:
        """The backend's callback (``TerminalBackend.watch``), from the backend's reader thread."""
        loop = self._loop
        if not loop.is_closed():
            loop.call_soon_threadsafe(self._handle, event)

    def _handle(self, event: OutputEvent) -> None:
        live = self._live.get(event.terminal_id)
        if live is None:
            return
        if event.kind == "output":
            self.refresh(live)
        elif event.kind == "exited":
            asyncio.ensure_future(self._final_refresh(live, f"agent exited ({event.detail or 'no status'})"))
        elif event.kind == "lost":
            live.tracker.fail(f"terminal lost: {event.detail or 'gone'}")

    def refresh(self, live: LiveTerminal) -> None:
        """Read the terminal's screen soon (once for a burst of calls)."""
        live.dirty = True
        if live.refresh_task is None:
            live.refresh_task = asyncio.ensure_future(self._refresh_loop(live))

    async def _refresh_loop(self, live: LiveTerminal) -> None:
        try:
            await asyncio.sleep(REFRESH_DEBOUNCE)
            while live.dirty and self._live.get(live.id) is live:
                live.dirty = False
                try:
                    screen = await self._io.run(self._backend.capture, live.id)
                except Exception as exc:  # noqa: BLE001 - the terminal may vanish mid-read
                    log.debug("capture of %s failed: %s", live.id, exc)
                    return
                self._read(live, screen)
        finally:
            live.refresh_task = None

    async def _final_refresh(self, live: LiveTerminal, evidence: str) -> None:
        try:
            screen = await self._io.run(self._backend.capture, live.id)
            live.tracker.screen = screen
        except Exception:  # noqa: BLE001
            pass
        live.tracker.fail(evidence)

    def _read(self, live: LiveTerminal, screen: str) -> None:
        if live.starting and screen.strip():
            self._timelines.record(live.id, "first_screen", once=True)
        self._timelines.screen_read(live.id, screen)
        report: StatusReport | None = None
        if live.provider is not None:
            report = self._hooks.detect_status(live.terminal(), screen, live.provider)
            if self.prompts is not None:
                report = self.prompts.read(live, screen, report)
            if live.starting:
                self._answer_dialogs(live, screen)
        live.tracker.observe(screen, report)

    def _answer_dialogs(self, live: LiveTerminal, screen: str) -> None:
        assert live.provider is not None
        for dialog in live.provider.startup_dialogs:
            if dialog.name in live.answered_dialogs or not re.search(dialog.pattern, screen, re.MULTILINE):
                continue
            live.answered_dialogs.add(dialog.name)
            asyncio.ensure_future(self._answer_dialog(live, dialog))

    async def _answer_dialog(self, live: LiveTerminal, dialog: StartupDialog) -> None:
        """Answer a start-up dialog once it has been drawn for a moment, and again if it stays.

        Some CLIs drop keys that arrive within a fraction of a second of drawing a dialog, so the first
        answer waits DIALOG_SETTLE; a dialog still shown DIALOG_RETRY later is answered once more.
        """
        delay = DIALOG_SETTLE
        for attempt in range(DIALOG_ATTEMPTS):
            await asyncio.sleep(delay)
            if self._live.get(live.id) is not live:
                return
            try:
                screen = await self._io.run(self._backend.capture, live.id)
            except Exception:  # noqa: BLE001 - the terminal may be gone
                return
            if not re.search(dialog.pattern, screen, re.MULTILINE):
                return
            log.info("terminal %s: answering start-up dialog %r (attempt %d)", live.id, dialog.name, attempt + 1)
            await self._io.run(self._backend.send_keys, live.id, list(dialog.keys))
            if self.prompts is not None:
                self.prompts.dialog_answered(live.id, dialog.name, list(dialog.keys))
            delay = DIALOG_RETRY


__all__ = ["ScreenWatch"]
