"""Restoring a removed terminal: a new agent with the same profile, provider and working directory, in
the same session when it still exists (else in a new one of the same name), handed the old terminal's
screen log as its first input so it can carry on from where the old one stopped.

Upstream's ``cao terminal restore`` opens a plain shell printing the old scrollback; an agent that reads
the transcript itself is what a person restoring a worker wants, and it needs no shell on the side.
"""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING

from cao_hookspecs import CreateTerminalRequest, Terminal

from .errors import Conflict

if TYPE_CHECKING:
    from .iopool import IoPool
    from .terminal_history import SavedTerminal, TerminalHistory
    from .terminals import Terminals

#: The most of the old screen log typed into the new agent (its latest part); the whole log stays on disk.
MAX_HANDOVER_CHARS = 32 * 1024
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def handover_text(saved: SavedTerminal, transcript: str) -> str:
    """The first input of the restored agent: who it takes over from, then the old screen log."""
    record = saved.record
    text = _CONTROL_RE.sub("", transcript).rstrip()
    cut = len(text) > MAX_HANDOVER_CHARS
    if cut:
        text = text[-MAX_HANDOVER_CHARS:].split("\n", 1)[-1]
    removed = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(saved.removed_at))
    part = (f"its last {len(text)} characters; the whole log is in {saved.log_path}" if cut
            else "the whole log")
    return (
        f"[cao] You take over from terminal {record['id']} ({record['agent_profile']} on "
        f"{record['provider']}), which was removed at {removed}. Below is what its screen showed ({part}). "
        f"Read it, then carry on with its work from where it stopped.\n"
        f"--- screen log of terminal {record['id']} ---\n{text}\n--- end of screen log ---"
    )


async def restore(terminals: Terminals, history: TerminalHistory, io: IoPool, terminal_id: str) -> Terminal:
    """Start the agent that continues removed terminal ``terminal_id`` (a checked id); see the module."""
    if terminals.get(terminal_id) is not None:
        raise Conflict(f"terminal {terminal_id} is still running; only a removed terminal can be restored")
    saved = await io.run(history.load, terminal_id)
    transcript = await io.run(saved.transcript)
    record = saved.record
    request = CreateTerminalRequest(
        agent_profile=record["agent_profile"], provider=record["provider"],
        working_directory=record["working_directory"], session_name=record["session_name"],
    )
    sessions = {info.name for info in await terminals.list_sessions()}
    if record["session_name"] in sessions:
        created = await terminals.create_terminal(request)
    else:
        created = await terminals.create_session(request)
    try:
        await terminals.send_input(created.id, handover_text(saved, transcript))
    except BaseException:
        # Nothing half-made: an agent that never got the log is not a restore.
        if record["session_name"] in sessions:
            await terminals.delete_terminal(created.id)
        else:
            await terminals.delete_session(created.session_name)
        raise
    return await terminals.get_terminal(created.id)
