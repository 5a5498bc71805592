"""Aider's recording scenarios: its screens in every status, from the real CLI.

Record them (from the repository root)::

    uv run --no-sync python -m cao_testkit.record providers/cao-provider-aider [--version X]

The recording installs ``aider-chat==X`` (default: the newest tested version) from PyPI into the live-CLI
cache (a virtual environment on Python 3.11: Aider supports 3.10 to 3.12), launched by the provider itself,
against a scripted Chat Completions server (``OPENAI_API_BASE``), in a folder outside any git repository.

Each screen is labelled by what the scenario made Aider do (a held model turn is "processing", a shell
command in the answer makes Aider ask before running it: "waiting_user_answer", a 400 from the model API
is "error"), never by the detector under test. Aider's spinner moves while it waits, so the busy screen is
waited for by its sign.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from cao_hookspecs import AgentProfile
from cao_provider_aider.prompts import read_prompt
from cao_provider_aider.provider import provider
from cao_testkit.models import Script, fail, reply
from cao_testkit.models.chat import ChatServer
from cao_testkit.recorder import ScreenRecorder, neutral_root
from cao_testkit.recording import Recording, World, at_size, pypi
from cao_testkit.steps import Outcome, answer_each_option, failed_turn, held_turn

MODEL = "openai/scripted"
LONG_ANSWER = ("Findings:\n\n- the build script has no clean step\n- two tests are slow\n\n"
               "Add the clean step first.")
# Aider renders the markdown it gets: list items become bullets.
LONG_SHOWN = ("Findings:\n\n • the build script has no clean step\n • two tests are slow\n\n"
              "Add the clean step first.")
SHELL_ANSWER = "Run this to create it:\n\n```bash\ntouch notes.txt\n```"
# ... and draws a fenced block without its fences.
SHELL_SHOWN = "Run this to create it:\n\n\ntouch notes.txt"
PROFILE = AgentProfile(name="recorder", model=MODEL, system_prompt="You answer briefly.")


def recorder(world: World, size: tuple[int, int] = (220, 50)) -> ScreenRecorder:
    return world.recorder(size, timeout=40.0)


def _rows(screen: str) -> list[str]:
    return [row.rstrip() for row in screen.rstrip().splitlines()]


def ready(screen: str) -> bool:
    """The prompt is back: an empty ``>`` (``diff>`` in another edit format) under a full-width rule
    (and the read-only files' row)."""
    rows = _rows(screen)
    return (len(rows) >= 2 and re.fullmatch(r"[a-z-]*>", rows[-1]) is not None
            and any(row.startswith("────") for row in rows[-5:-1]))


def busy(screen: str) -> bool:
    return "Waiting for " in screen and not ready(screen)


def asking(screen: str) -> bool:
    rows = _rows(screen)
    return bool(rows) and rows[-1].endswith("[Yes]:")


def record_turns(world: World, size: tuple[int, int] = (220, 50), suffix: str = "") -> None:
    """idle, processing, completed, a multi-line answer, error: one terminal, one turn after another."""
    rec = recorder(world, size)
    rec.start(PROFILE, model=MODEL)
    rec.save(f"idle{suffix}", rec.wait(ready, "the prompt"), "idle")
    held_turn(rec, busy=busy, ready=ready, suffix=suffix)
    if not suffix:
        rec.server.script.add(reply(LONG_ANSWER))
        rec.type("Review the build.")
        screen = rec.wait(lambda s: "Add the clean step first." in s and ready(s), "the long answer")
        rec.save("completed_multiline", screen, "completed", last_message=LONG_SHOWN)
    # A 400 is not retried (a 5xx would be, for a minute): the turn ends at once with litellm's error.
    failed_turn(rec, fail(400, "scripted bad request"), shows="BadRequestError", ready=ready,
                note="the model API answered 400", suffix=suffix)
    rec.stop()


def _fresh_terminal(world: World, size: tuple[int, int]) -> Callable[[], ScreenRecorder]:
    """A new terminal at its empty prompt (each option is pressed on a terminal of its own)."""
    def start() -> ScreenRecorder:
        rec = recorder(world, size)
        # Aider looks for shell commands in the search/replace format's answers; with an unknown model it
        # uses the whole-file format, where a fenced block is a file.
        rec.start(PROFILE, model=MODEL, extra_args=["--edit-format", "diff"])
        rec.wait(ready, "the prompt")
        return rec

    return start


def _ask_to_run(rec: ScreenRecorder) -> str:
    """The model answers with a shell command: Aider asks before running it; the question's screen."""
    rec.server.script.add(reply(SHELL_ANSWER))
    rec.type("Create a notes file.")
    return rec.wait(asking, "the shell command question")


def record_question(world: World) -> None:
    """``waiting_user_answer``: Aider asks before it runs a shell command from the answer; each option
    pressed with its keys (``waiting_user_answer_answer<n>``). Yes runs it (a command that prints
    something would be followed by a question whether to add its output); No and Don't ask again leave
    the answer at the prompt."""
    answer_each_option(
        _fresh_terminal(world, (220, 50)), _ask_to_run, read_prompt,
        name="waiting_user_answer", note="question before running a shell command from the answer",
        outcomes={1: Outcome(ready, "completed", note="ran it (it printed nothing to add to the chat)",
                             last_message=SHELL_SHOWN),
                  2: Outcome(ready, "completed", note="declined", last_message=SHELL_SHOWN),
                  3: Outcome(ready, "completed", note="declined, not asked again",
                             last_message=SHELL_SHOWN)})


def record_question_small(world: World) -> None:
    """The same question at 100x30 (each kind of prompt at two sizes; its keys are proven once)."""
    rec = _fresh_terminal(world, (100, 30))()
    screen = _ask_to_run(rec)
    rec.save("waiting_user_answer-100x30", screen, "waiting_user_answer", prompt=read_prompt(screen),
             note="question before running a shell command from the answer")
    rec.stop()


RECORDING = Recording(
    provider=provider(), package="aider-chat", cli=pypi("aider", python="3.11"),
    # Aider offers the model no tools: every request it sends is a turn of the conversation.
    model_server=lambda: ChatServer(Script(), models=("scripted",), is_turn=lambda conversation: True),
    root=lambda: neutral_root("cao-screens-aider"),
    setup=lambda world: {"OPENAI_API_BASE": world.server.base_url, "OPENAI_API_KEY": "sk-scripted",
                         "CAO_AIDER_BIN": str(world.cli.binary), "TERM": "xterm-256color"},
    scenarios=(record_turns, at_size(record_turns, (100, 30)), record_question, record_question_small),
)
