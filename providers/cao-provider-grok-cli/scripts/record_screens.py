"""Grok Build's recording scenarios: its screens in every status it shows under cao.

Record them from the repository root::

    python -m cao_testkit.record providers/cao-provider-grok-cli [--version X] [--out DIR]

The CLI is installed from npm (``@xai-official/grok``), started through cao's tmux backend from the
provider's launch plan, in a throw-away HOME, against a scripted Chat Completions server (the API Grok
sends its turns to when ``GROK_MODELS_BASE_URL`` names a server). Each screen is labelled with the
status the scenario drove Grok into, never with what the detector says.

No prompt is recorded: cao starts Grok only in modes that never ask (see ``launch.py``), and with an
API key Grok shows no start-up dialog.
"""

from __future__ import annotations

from cao_hookspecs import AgentProfile
from cao_testkit.models import Script, call_tool, fail
from cao_testkit.models.chat import ChatServer
from cao_testkit.models.cli import cache_root
from cao_testkit.recorder import ScreenRecorder, neutral_root
from cao_testkit.recording import Recording, World, at_size, npm
from cao_testkit.steps import failed_turn, held_turn, tool_turn
from cao_provider_grok_cli.provider import provider

TOOL_ANSWER = "I listed the folder: it holds nothing yet."


def recorder(world: World, size: tuple[int, int]) -> ScreenRecorder:
    return world.recorder(size, timeout=30.0, settle=0.8)


def _ready(screen: str) -> bool:
    """The input box is empty, and nothing runs."""
    empty_box = any(row.strip().startswith("│ ❯ ") and not row.strip()[3:-1].strip()
                    for row in screen.splitlines())
    return empty_box and "Ctrl+c:cancel" not in screen and "Waiting for response…" not in screen


def _busy(screen: str) -> bool:
    return "Waiting for response…" in screen


def _running(screen: str) -> bool:
    return "Ctrl+c:cancel" in screen and "Waiting for response…" not in screen


def record_turns(world: World, size: tuple[int, int] = (220, 50), suffix: str = "") -> None:
    """idle, processing, completed, a turn with a tool, error: one terminal, one turn after another."""
    rec = recorder(world, size)
    rec.start(AgentProfile(name="recorder", system_prompt="You answer briefly."))
    rec.save(f"idle{suffix}", rec.wait(_ready, "the input box"), "idle")
    held_turn(rec, busy=_busy, ready=_ready, suffix=suffix)
    tool_turn(rec, call_tool("run_terminal_command", {"command": "ls"}), ready=_ready, suffix=suffix,
              answer=TOOL_ANSWER)
    # A 400 is not retried: Grok shows the API's words at once (a 5xx is retried first; some messages,
    # a context too long, Grok words its own way).
    failed_turn(rec, fail(400, "scripted refusal"), shows="Bad request (400)", ready=_ready,
                note="the model API answered 400", suffix=suffix)
    rec.stop()


RECORDING = Recording(
    provider=provider(), package="@xai-official/grok",
    # The package's install script writes into $GROK_HOME (~/.grok by default): keep it in the cache.
    cli=npm("grok", env={"GROK_HOME": str(cache_root() / ".grok-npm-install-home")}),
    model_server=lambda: ChatServer(Script(), models=("scripted",)),
    # Grok prints its working folder's path above the conversation.
    root=lambda: neutral_root("cao-screens-grok"),
    setup=lambda world: {"GROK_MODELS_BASE_URL": world.server.base_url, "XAI_API_KEY": "xai-scripted-key",
                         "TERM": "xterm-256color", "CAO_GROK_CLI_BIN": str(world.cli.binary)},
    scenarios=(record_turns, at_size(record_turns, (100, 30))),
)
