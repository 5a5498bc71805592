"""Cursor CLI's recording scenarios: the screens the tests read, recorded from the real CLI.

Not run here: ``cursor-agent`` comes only from Cursor's installer, which this project cannot reach, so
the screens under ``tests/screens/2026.06.15/`` are transcribed (``"source": "documented"``). On a
machine with the CLI installed (``curl https://cursor.com/install -fsS | bash``) and signed in
(``cursor-agent login``, or ``CURSOR_API_KEY`` in the recording's environment)::

    python -m cao_testkit.record providers/cao-provider-cursor-cli --version <cursor-agent --version>

The CLI talks to Cursor's service only, so the turns are real model turns asked for in words. Besides
the states, record a menu (``/model`` opens one) to write ``read_prompt`` from, and check whether the
user's message is echoed in the transcript (the extractor would then start from it).
"""

from __future__ import annotations

import shutil

from cao_hookspecs import AgentProfile
from cao_testkit.recording import Recording, World, at_size, program
from cao_provider_cursor_cli.launch import BINARY
from cao_provider_cursor_cli.provider import provider


def _placeholder(screen: str, text: str) -> bool:
    return any(row.strip() == f"→ {text}" for row in screen.splitlines())


def record_turns(world: World, size: tuple[int, int] = (220, 50), suffix: str = "") -> None:
    """idle, processing (a slow shell command), completed, and a menu."""
    rec = world.recorder(size, timeout=120.0, settle=1.0)
    rec.start(AgentProfile(name="recorder"))
    screen = rec.wait(lambda s: _placeholder(s, "Plan, search, build anything"), "the input box")
    rec.save(f"idle{suffix}", screen, "idle")
    rec.type("Run the shell command 'sleep 20', then reply with exactly: 1 + 1 = 2")
    rec.save(f"processing{suffix}", rec.wait_sign(lambda s: "ctrl+c to stop" in s, "the interrupt hint"),
             "processing")
    screen = rec.wait(lambda s: _placeholder(s, "Add a follow-up") and "ctrl+c to stop" not in s,
                      "the answer")
    rec.save(f"completed{suffix}", screen, "completed", last_message="1 + 1 = 2")
    rec.type("/model")
    screen = rec.wait(lambda s: "↑/↓ to navigate" in s, "the model menu")
    rec.save(f"waiting_user_answer{suffix}", screen, "waiting_user_answer", prompt=None)
    rec.stop()


RECORDING = Recording(
    provider=provider(), package="Cursor CLI (Cursor's installer)",
    cli=program(lambda: [shutil.which(BINARY) or BINARY]),
    scenarios=(record_turns, at_size(record_turns, (100, 30))),
)
