"""Steps the recording scenarios of many agent CLIs share: the same model turns and the same messages,
told apart only by what each CLI draws (the signs a scenario passes in)."""

from __future__ import annotations

import threading

from .models.script import hold, reply
from .recorder import ScreenRecorder, Sign

__all__ = ["ANSWER", "MESSAGE", "held_turn"]

#: What the user sends in :func:`held_turn`, and the model's answer to it.
MESSAGE = "Summarise the repository."
ANSWER = "The repository has 3 packages; all tests pass."


def held_turn(rec: ScreenRecorder, *, busy: Sign, ready: Sign, suffix: str = "", animated: bool = True,
              arrival_timeout: float = 10.0) -> None:
    """``processing<suffix>`` and ``completed<suffix>``: :data:`MESSAGE` is sent and the model's answer
    held open by the server until the CLI shows it is busy (``busy``; ``animated``: a spinner that never
    lets the screen settle), then let go until the answer is shown with the prompt back (``ready``)."""
    gate = threading.Event()
    script = rec.server.script
    script.add(hold(gate, reply(ANSWER)))
    served = script.served
    rec.type(MESSAGE)
    rec.server.wait_for_arrivals(served + 1, timeout=arrival_timeout)
    screen = (rec.wait_sign if animated else rec.wait)(busy, "the busy screen")
    rec.save(f"processing{suffix}", screen, "processing", note="model turn held open by the server")
    gate.set()
    screen = rec.wait(lambda s: ANSWER in s and ready(s), "the answer")
    rec.save(f"completed{suffix}", screen, "completed", last_message=ANSWER)
