"""MiniMax Code's recording scenarios: the screens the tests read, recorded from the real CLI.

Not run here: ``@minimax-ai/code`` cannot be installed from this project's registry, so the screens
under ``tests/screens/0.1.2/`` are transcribed (``"source": "documented"``). On a machine where the CLI
is installed and signed in (``npm install -g @minimax-ai/code``, then ``mcode login``)::

    python -m cao_testkit.record providers/cao-provider-mcode --version <mcode --version>

MiniMax Code talks to MiniMax's service only (no address to point at a scripted server), so the turns
are real model turns, asked for in words; each screen is saved when the sign of its state shows.
"""

from __future__ import annotations

import shutil

from cao_hookspecs import AgentProfile
from cao_testkit.recording import Recording, World, at_size, program
from cao_provider_mcode.launch import BINARY
from cao_provider_mcode.prompts import read_prompt
from cao_provider_mcode.provider import provider


def _composer_empty(screen: str) -> bool:
    return any(row.rstrip().rstrip("│").strip() == "│ ›" for row in screen.splitlines())


def _busy(screen: str) -> bool:
    return "Enter queue" in screen


def _asking(screen: str) -> bool:
    return "Approval needed" in screen and read_prompt(screen) is not None


def record_turns(world: World, size: tuple[int, int] = (220, 50), suffix: str = "") -> None:
    """idle, processing (a shell command that takes a while), completed, and a tool's approval."""
    rec = world.recorder(size, timeout=120.0, settle=1.0)
    rec.start(AgentProfile(name="recorder"))
    rec.save(f"idle{suffix}", rec.wait(_composer_empty, "the composer"), "idle")
    rec.type("Run the shell command 'sleep 20', then reply with the single word Done.")
    rec.save(f"processing{suffix}", rec.wait_sign(_busy, "the activity row"), "processing")
    screen = rec.wait(lambda s: "Completed in" in s and _composer_empty(s), "the answer")
    rec.save(f"completed{suffix}", screen, "completed", last_message="Done.")
    rec.type("Create an empty file named notes.txt with the shell command touch.")
    screen = rec.wait(_asking, "the approval question")
    rec.save(f"waiting_user_answer{suffix}", screen, "waiting_user_answer", prompt=read_prompt(screen))
    rec.stop()


RECORDING = Recording(
    provider=provider(), package="@minimax-ai/code",
    cli=program(lambda: [shutil.which(BINARY) or BINARY]),
    scenarios=(record_turns, at_size(record_turns, (100, 30))),
)
