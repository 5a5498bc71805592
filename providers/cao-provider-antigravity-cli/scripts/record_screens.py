"""Antigravity CLI's recording scenarios: the screens the tests read, recorded from the real CLI.

Not run here: ``agy`` comes only from Google's installer, which this project cannot reach, so the
screens under ``tests/screens/1.0.10/`` are transcribed (``"source": "documented"``). On a machine with
``agy`` installed (``curl -fsSL https://antigravity.google/cli/install.sh | bash``) and signed in (run
``agy`` once: Google sign-in, colour scheme, terms)::

    python -m cao_testkit.record providers/cao-provider-antigravity-cli --version <agy --version>

Antigravity CLI talks to Google's service only, so the turns are real model turns asked for in words.
The trust question shows in a folder never trusted before (each recording world's project folder is
new); the survey shows only now and then, so it is saved when it appears.
"""

from __future__ import annotations

import shutil

from cao_hookspecs import AgentProfile
from cao_testkit.recording import Recording, World, at_size, program
from cao_provider_antigravity_cli.launch import BINARY
from cao_provider_antigravity_cli.prompts import read_prompt
from cao_provider_antigravity_cli.provider import provider


def _ready(screen: str) -> bool:
    rows = [row for row in screen.splitlines() if row.strip()]
    return len(rows) > 2 and rows[-1].lstrip().startswith("? for shortcuts") and rows[-3].startswith(">")


def _trust(screen: str) -> bool:
    return "Yes, I trust this folder" in screen


def record_turns(world: World, size: tuple[int, int] = (220, 50), suffix: str = "") -> None:
    """The trust question, idle, processing (a slow shell command), completed."""
    rec = world.recorder(size, timeout=120.0, settle=1.0)
    rec.start(AgentProfile(name="recorder"))
    screen = rec.wait(lambda s: _trust(s) or _ready(s), "the trust question or the prompt")
    if _trust(screen):
        rec.save(f"dialog_trust_folder{suffix}", screen, "waiting_user_answer", dialog="trust folder",
                 prompt=read_prompt(screen))
        rec.keys(*read_prompt(screen).option(1).keys)
        screen = rec.wait(_ready, "the prompt")
    rec.save(f"idle{suffix}", screen, "idle")
    rec.type("Run the shell command 'sleep 20', then reply with exactly one word: PONG")
    rec.save(f"processing{suffix}", rec.wait_sign(lambda s: "esc to cancel" in s, "the busy footer"),
             "processing")
    screen = rec.wait(lambda s: _ready(s) and "PONG" in s.split("sleep 20")[-1], "the answer")
    rec.save(f"completed{suffix}", screen, "completed", last_message="PONG")
    rec.stop()


RECORDING = Recording(
    provider=provider(), package="Antigravity CLI (Google's installer)",
    cli=program(lambda: [shutil.which(BINARY) or BINARY]),
    scenarios=(record_turns, at_size(record_turns, (100, 30))),
)
