"""``/terminals/{terminal_id}/ws``: a terminal's screen and keys over a WebSocket, in upstream CAO's frames,
so upstream's clients work unchanged.

- Server to client: binary frames of what the terminal draws, raw bytes, at most 64 KiB each.
- Client to server: text frames of JSON, ``{"type": "input", "data": str}`` (typed as it is) or
  ``{"type": "resize", "rows": R, "cols": C}``. Anything else (binary frames, broken JSON, other types,
  wrong fields) is ignored; sizes above :data:`MAX_ROWS` x :data:`MAX_COLS` are cut down to them. A text
  frame over :data:`MAX_FRAME` characters closes the socket (1009): no client types that much at once.

The server's Host, Origin and credential checks run before this handler. The socket is accepted first,
so every refusal can carry its reason in the close frame: an invalid id closes with 4003, a terminal
that does not exist or cannot be shown with 4004 (upstream's codes).

The viewer is the program the terminal backend names (``KernelAPI.attach_command``), run under a PTY of
24 x 80 until the client sends its size (:mod:`cao_web.viewer`). Unlike upstream, the first end wins:
the client leaving ends the viewer (the agent keeps running), and the viewer ending (its terminal was
removed, or its tmux server went) closes the socket with a close frame saying why, never a dropped
connection. Nothing runs for a socket once it is closed: no task, no process, no descriptor.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
from typing import TYPE_CHECKING, Any

from cao_hookspecs.errors import CaoError, InvalidInput, NotFound

if TYPE_CHECKING:
    from starlette.websockets import WebSocket

    from .viewer import Viewer

log = logging.getLogger(__name__)

MAX_FRAME = 64 * 1024
MAX_ROWS = 1000
MAX_COLS = 1000
FIRST_SIZE = (24, 80)
#: How long the viewer's last output may take to arrive once it has exited.
DRAIN = 1.0
#: How a relay ended when nobody overstepped: the client left, or the viewer ended.
LEFT, ENDED = "left", "ended"
#: The longest close reason a close frame can carry (bytes of UTF-8).
REASON_BYTES = 123


@dataclasses.dataclass(frozen=True)
class Input:
    data: bytes


@dataclasses.dataclass(frozen=True)
class Resize:
    rows: int
    cols: int


def parse_frame(text: str) -> Input | Resize | None:
    """A client's text frame as what it asks for, or None when it asks for nothing cao does."""
    try:
        frame = json.loads(text)
    except (ValueError, RecursionError):  # not JSON, numbers past Python's digit limit, deep nesting
        return None
    if not isinstance(frame, dict):
        return None
    kind = frame.get("type")
    if kind == "input":
        data = frame.get("data")
        if isinstance(data, str) and data:
            # JSON may spell lone surrogates, which no terminal can take: they become '?'.
            return Input(data.encode("utf-8", "replace"))
    elif kind == "resize":
        rows, cols = frame.get("rows"), frame.get("cols")
        if _count(rows) and _count(cols):
            return Resize(min(rows, MAX_ROWS), min(cols, MAX_COLS))
    return None


def _count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


async def serve(websocket: WebSocket, kernel: Any) -> None:
    """The route's handler: relay between the client and the terminal's viewer until either ends."""
    from .viewer import Viewer

    terminal_id = str(websocket.path_params.get("terminal_id", ""))
    await websocket.accept()
    try:
        argv = await kernel.attach_command(terminal_id)
    except CaoError as exc:
        await _close(websocket, 4003 if isinstance(exc, InvalidInput) else 4004, str(exc))
        return
    try:
        viewer = Viewer.start(argv, *FIRST_SIZE)
    except OSError as exc:
        await _close(websocket, 4004, f"cannot start a viewer for terminal {terminal_id}: {exc}")
        return
    outcome: tuple[int, str] | str = LEFT
    try:
        outcome = await _relay(websocket, viewer)
    finally:
        try:
            status = await viewer.end()
        except TimeoutError:
            log.warning("the viewer of terminal %s (pid %d) outlived SIGKILL", terminal_id, viewer.proc.pid)
            status = None
    if isinstance(outcome, tuple):
        await _close(websocket, *outcome)
    elif outcome == ENDED and status is not None:
        await _close(websocket, *await _ending(kernel, terminal_id, status))


async def _relay(websocket: WebSocket, viewer: Viewer) -> tuple[int, str] | str:
    """Run both directions until the first end: :data:`LEFT` (the client), :data:`ENDED` (the viewer), or
    the (code, reason) of a client's frame refused."""
    output = asyncio.ensure_future(_pump_output(websocket, viewer))
    intake = asyncio.ensure_future(_take_input(websocket, viewer))
    exited = asyncio.ensure_future(viewer.wait())
    try:
        done, _ = await asyncio.wait({output, intake, exited}, return_when=asyncio.FIRST_COMPLETED)
        if intake in done:
            return LEFT if intake.exception() else intake.result()
        if output in done and output.exception() is not None:
            return LEFT  # the client could not be written to: it is gone
        # The viewer ended: what it drew last goes out first.
        if not output.done():
            await asyncio.wait({output}, timeout=DRAIN)
        return ENDED
    finally:
        for task in (output, intake, exited):
            task.cancel()
        await asyncio.gather(output, intake, exited, return_exceptions=True)


async def _pump_output(websocket: WebSocket, viewer: Viewer) -> None:
    while data := await viewer.read():
        await websocket.send_bytes(data)


async def _take_input(websocket: WebSocket, viewer: Viewer) -> tuple[int, str] | str:
    """Apply the client's frames; :data:`LEFT` when it left, a (code, reason) when it overstepped."""
    while True:
        message = await websocket.receive()
        if message["type"] == "websocket.disconnect":
            return LEFT
        text = message.get("text")
        if text is None:
            continue  # a binary frame: upstream's clients send none
        if len(text) > MAX_FRAME:
            return 1009, f"a frame of {len(text)} characters is over the {MAX_FRAME} this socket takes"
        frame = parse_frame(text)
        if isinstance(frame, Input):
            await viewer.write(frame.data)
        elif isinstance(frame, Resize):
            viewer.resize(frame.rows, frame.cols)


async def _ending(kernel: Any, terminal_id: str, status: int) -> tuple[int, str]:
    """The close frame for a viewer that ended by itself: a normal closure, whatever its exit status (a
    tmux client whose server goes with the terminal's last session ends with 1)."""
    try:
        await kernel.get_terminal(terminal_id)
    except NotFound:
        return 1000, f"terminal {terminal_id} was removed"
    except CaoError:
        pass
    return 1000, f"the viewer of terminal {terminal_id} ended" + (f" (exit status {status})" if status else "")


async def _close(websocket: WebSocket, code: int, reason: str) -> None:
    reason = reason.encode()[:REASON_BYTES].decode("utf-8", "ignore")
    with contextlib.suppress(Exception):  # the client may be gone already: nothing to tell it then
        await websocket.close(code=code, reason=reason)
