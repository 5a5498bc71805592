"""Hermes Agent's recording scenarios: its screens in every status, from the real CLI.

Record them (from the repository root)::

    uv run --no-sync python -m cao_testkit.record providers/cao-provider-hermes [--version X]

The recording installs ``hermes-agent[mcp]==X`` (default: the newest tested version) from PyPI into the
live-CLI cache (a virtual environment on this machine's Python), launched by the provider itself (a
private ``HERMES_HOME`` in the terminal's runtime folder), against a scripted Chat Completions server
named as a custom provider in the sandbox user's ``~/.hermes/config.yaml``. The working folder is a
fixed one (Hermes's banner prints it).

Each screen is labelled by what the scenario made Hermes do (a held model turn is "processing", a
``clarify`` call is "waiting_user_answer", a 401 from the model API is "error"), never by the detector
under test; the recorder only waits for the screen to show the sign it expects. Hermes's status bar
counts seconds, so its screens never settle: every wait is for a sign.
"""

from __future__ import annotations

import threading
from pathlib import Path

from cao_hookspecs import AgentProfile
from cao_provider_hermes.prompts import read_prompt
from cao_provider_hermes.provider import provider
from cao_testkit.models import Script, call_tool, fail, hold, reply
from cao_testkit.models.chat import ChatServer
from cao_testkit.models.cli import InstalledCli, install_pypi_cli
from cao_testkit.recorder import ScreenRecorder, neutral_root
from cao_testkit.recording import Recording, World, at_size
from cao_testkit.steps import Outcome, answer_each_option, asking, failed_turn, held_turn, tool_turn

MODEL = "scripted"
#: The rows Hermes draws the answer with (its markdown rendered: emphasis and code marks dropped).
LONG_ANSWER = ("I listed the folder.\n\nThe build script has no **clean** step, and two tests are slow.\n\n"
               "- add `make clean`\n- mark the slow tests")
LONG_SHOWN = ("I listed the folder.\n\nThe build script has no clean step, and two tests are slow.\n\n"
              "- add make clean\n- mark the slow tests")
QUESTION = "Which database should I use?"
CHOICES = ["PostgreSQL", "SQLite", "MySQL"]


def hermes(recording: Recording, version: str, scratch: Path) -> InstalledCli:
    """hermes-agent with its ``mcp`` extra (MCP servers are ignored without it) from PyPI."""
    return install_pypi_cli(recording.package, version, "hermes", python=">=3.11", extras=("mcp",))


def user_config(world: World) -> dict[str, str]:
    """The sandbox user's ``~/.hermes/config.yaml``: one custom provider, the scripted server."""
    home = world.home / ".hermes"
    home.mkdir()
    (home / "config.yaml").write_text(
        f"model:\n  provider: custom\n  default: {MODEL}\n  base_url: {world.server.base_url}\n"
        "  api_key: sk-scripted\n", encoding="utf-8")
    return {"CAO_HERMES_BIN": str(world.cli.binary), "TERM": "xterm-256color"}


def recorder(world: World, size: tuple[int, int] = (220, 50)) -> ScreenRecorder:
    return world.recorder(size, timeout=40.0, ids=world.ids)


def _rows(screen: str) -> list[str]:
    return [row.rstrip() for row in screen.rstrip().splitlines()]


def ready(screen: str) -> bool:
    """The prompt is back: an empty ``❯`` between the input area's rules."""
    rows = _rows(screen)
    return len(rows) >= 3 and rows[-2] == "❯" and rows[-1].startswith("────")


def busy(screen: str) -> bool:
    rows = _rows(screen)
    return len(rows) >= 2 and "msg=interrupt" in rows[-2]


def asked(screen: str) -> bool:
    rows = _rows(screen)
    return len(rows) >= 2 and rows[-2] == "? ❯" and "Hermes needs your input" in screen


def record_turns(world: World, size: tuple[int, int] = (220, 50), suffix: str = "") -> None:
    """idle, processing (model and tool), completed (plain and after a tool), error (a 401: Hermes does
    not retry it)."""
    rec = recorder(world, size)
    rec.start(profile=AgentProfile(name="recorder", system_prompt="You answer briefly."))
    rec.save(f"idle{suffix}", rec.wait_sign(ready, "the prompt"), "idle")
    held_turn(rec, busy=busy, ready=ready, suffix=suffix, arrival_timeout=20.0)
    tool_turn(rec, call_tool("terminal", {"command": "sleep 4; ls"}), ready=ready, suffix=suffix,
              answer=LONG_ANSWER, shown=LONG_SHOWN, running=lambda s: busy(s) and "sleep 4" in s,
              running_note="a terminal call still running")
    failed_turn(rec, fail(401, "Invalid API key", kind="invalid_api_key"), shows="Non-retryable", ready=ready,
                note="the API answered 401 (no retry)", suffix=suffix)
    rec.stop()


def record_question(world: World, size: tuple[int, int] = (220, 50), suffix: str = "") -> None:
    """waiting_user_answer: a ``clarify`` call, each option pressed with the keys ``read_prompt`` gives
    it on a fresh terminal; the last, Other, opens a text field (a prompt of its own)."""
    rec = recorder(world, size)

    def start() -> ScreenRecorder:
        rec.start()
        rec.wait_sign(ready, "the prompt")
        return rec

    call = call_tool("clarify", {"question": QUESTION, "choices": CHOICES})
    chosen = {n: reply(f"Going with {label}.") for n, label in enumerate(CHOICES, 1)}
    ask = asking(world.server.script, call, asked, "Set up storage.", chosen, animated=True)
    outcomes = {n: Outcome(lambda s, n=n: f"Going with {CHOICES[n - 1]}." in s and ready(s), "completed",
                           animated=True, last_message=f"Going with {CHOICES[n - 1]}.")
                for n in range(1, len(CHOICES) + 1)}
    outcomes[len(CHOICES) + 1] = Outcome(
        lambda s: "✎ ❯" in s, "waiting_user_answer", animated=True,
        note="Other turned the prompt row into a field for the user's own answer")
    answer_each_option(start, ask, read_prompt, name=f"waiting_user_answer{suffix}", outcomes=outcomes,
                       note="clarify box")


def record_queued(world: World) -> None:
    """processing: a message typed while a turn runs, queued by Hermes (cao's private config asks for
    that), then the queued turn's answer."""
    rec = recorder(world)
    rec.start()
    rec.wait_sign(ready, "the prompt")
    gate = threading.Event()
    world.server.script.add(hold(gate, reply("First answer.")), reply("Second answer."))
    rec.type("First question.")
    rec.wait_sign(busy, "the busy prompt")
    rec.type("Second question.")
    screen = rec.wait_sign(lambda s: "Queued for the next turn: Second question." in s, "the queued message")
    rec.save("processing_queued", screen, "processing", note="a message typed during a turn, queued")
    gate.set()
    screen = rec.wait_sign(lambda s: "Second answer." in s and ready(s), "the queued turn's answer")
    rec.save("completed_after_queued", screen, "completed", last_message="Second answer.")
    rec.stop()


def record_exit(world: World) -> None:
    """error: the screens Hermes leaves when it ends: after its exit command, and refusing a command line
    (a profile's model that reads as an option)."""
    rec = recorder(world)
    rec.start()
    rec.wait_sign(ready, "the prompt")
    rec.type("/exit")
    screen = rec.wait(lambda s: "Goodbye!" in s, "the farewell")
    rec.save("exited", screen, "error", note="the program exited; the kernel also gets an 'exited' event")
    rec.stop()
    rec.start(profile=AgentProfile(name="broken", model="--bad"))
    screen = rec.wait(lambda s: "expected one argument" in s, "the refusal")
    rec.save("exited_bad_option", screen, "error", note="the program refused its command line and exited")
    rec.stop()


RECORDING = Recording(
    provider=provider(), package="hermes-agent", cli=hermes,
    model_server=lambda: ChatServer(Script(), models=(MODEL,)),
    # A fixed, machine-neutral folder: Hermes's banner prints the working folder.
    root=lambda: neutral_root("cao-hermes-screens"), setup=user_config,
    # `hermes --version` goes on with where it is installed: the first line is the version.
    version_output=lambda cli: cli.version_output.splitlines()[0],
    scenarios=(record_turns, record_question, record_queued, record_exit, at_size(record_turns, (100, 30)),
               at_size(record_question, (100, 30))),
)
