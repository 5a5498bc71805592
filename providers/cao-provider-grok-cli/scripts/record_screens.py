"""Grok Build's recording scenarios: its screens in every status it shows under cao.

Record them from the repository root::

    python -m cao_testkit.record providers/cao-provider-grok-cli [--version X] [--out DIR]

The CLI is installed from npm (``@xai-official/grok``), started through cao's tmux backend from the
provider's launch plan, in a throw-away HOME, against a scripted Chat Completions server (the API Grok
sends its turns to when ``GROK_MODELS_BASE_URL`` names a server). Each screen is labelled with the
status the scenario drove Grok into, never with what the detector says.

With an API key Grok shows no start-up dialog but one: the folder-trust question, where the working
folder brings Grok configuration of its own (cao leaves it to a person; its "y" is proven here).
No tool approval is recorded: cao starts Grok only in modes that never ask (see ``launch.py``).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable

from cao_hookspecs import AgentProfile
from cao_testkit.models import Script, call_tool, fail
from cao_testkit.models.chat import ChatServer
from cao_testkit.models.cli import cache_root
from cao_testkit.recorder import ScreenRecorder, neutral_root
from cao_testkit.recording import Recording, World, at_size, npm
from cao_testkit.steps import failed_turn, held_turn, tool_turn
from cao_provider_grok_cli.prompts import read_prompt
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


def _trusting(screen: str) -> bool:
    return read_prompt(screen) is not None


def _with_project_config(world: World, record: Callable[[], None]) -> None:
    """``record`` with a ``.grok/config.toml`` in the working folder (a disabled MCP server): Grok then
    asks whether to trust the folder. Removed after, so the other scenarios start at the input box."""
    folder = world.home / "project" / ".grok"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.toml").write_text('[mcp_servers.project-tools]\ncommand = "true"\nenabled = false\n',
                                        encoding="utf-8")
    try:
        record()
    finally:
        shutil.rmtree(folder)


def record_trust(world: World) -> None:
    """The folder-trust question, then "y" (its first option, with the key read off the screen) going on
    to the input box. Its other option, "n", quits Grok and leaves the question drawn as it was: only
    the pane's end tells, which the kernel sees and a screen does not (the live tests prove it)."""
    def record() -> None:
        rec = recorder(world, (220, 50))
        rec.start()
        screen = rec.wait(_trusting, "the folder-trust question")
        prompt = read_prompt(screen)
        name = "waiting_user_answer_trust"
        rec.save(name, screen, "waiting_user_answer", prompt=prompt,
                 note="folder-trust question: the working folder has a .grok/config.toml")
        keys = list(prompt.option(1).keys)
        rec.keys(*keys)
        rec.save(f"{name}_answer1", rec.wait(_ready, "the input box after trusting"), "idle",
                 note="trusted: the input box", answers={"screen": name, "option": 1, "keys": keys})
        rec.stop()

    _with_project_config(world, record)


def record_trust_small(world: World) -> None:
    """The same question at 100x30 (each kind of prompt is recorded at two sizes)."""
    def record() -> None:
        rec = recorder(world, (100, 30))
        rec.start()
        screen = rec.wait(_trusting, "the folder-trust question")
        rec.save("waiting_user_answer_trust-100x30", screen, "waiting_user_answer",
                 prompt=read_prompt(screen),
                 note="folder-trust question: the working folder has a .grok/config.toml")
        rec.stop()

    _with_project_config(world, record)


RECORDING = Recording(
    provider=provider(), package="@xai-official/grok",
    # The package's install script writes into $GROK_HOME (~/.grok by default): keep it in the cache.
    cli=npm("grok", env={"GROK_HOME": str(cache_root() / ".grok-npm-install-home")}),
    model_server=lambda: ChatServer(Script(), models=("scripted",)),
    # Grok prints its working folder's path above the conversation.
    root=lambda: neutral_root("cao-screens-grok"),
    setup=lambda world: {"GROK_MODELS_BASE_URL": world.server.base_url, "XAI_API_KEY": "xai-scripted-key",
                         "TERM": "xterm-256color", "CAO_GROK_CLI_BIN": str(world.cli.binary)},
    scenarios=(record_turns, at_size(record_turns, (100, 30)), record_trust, record_trust_small),
)
