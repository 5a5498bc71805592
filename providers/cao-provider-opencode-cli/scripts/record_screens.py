"""OpenCode's recording scenarios: its screens in every status, from the real CLI.

Record them (from the repository root)::

    uv run --no-sync python -m cao_testkit.record providers/cao-provider-opencode-cli [--version X]

The recording installs ``opencode-ai@X`` (default: the newest tested version) into the live-CLI cache
and drives it with a scripted Anthropic server (OpenCode's ``anthropic`` provider pointed at it by the
sandbox's global config). The working folder sits in the sandbox's HOME under the fixed
``<tmp>/cao-screens``, so no path of the recording machine ends up in a fixture.

Each screen is labelled by what the scenario made the CLI do (a held model turn is "processing", a
permission request is "waiting_user_answer"...), never by the detector under test; the recorder only
waits for the screen to settle on the sign it expects.
"""

from __future__ import annotations

import json
import re
import threading
import time

from cao_hookspecs import AgentProfile
from cao_provider_opencode_cli.provider import PACKAGE, opencode_provider
from cao_testkit.models import Script, call_tool, fail, hold, reply
from cao_testkit.models.anthropic import FAKE_API_KEY, AnthropicServer
from cao_testkit.recorder import ScreenRecorder, neutral_root
from cao_testkit.recording import Recording, World, at_size, npm
from cao_testkit.steps import CHOSEN, QUESTION, approval_turn, failed_turn, held_turn, tool_turn

MODEL = "anthropic/claude-sonnet-4-5"
PROFILE = AgentProfile(name="recorder", system_prompt="You answer briefly.")
_FINISHED = re.compile(r"^▣ .+ · .+ · \d[\dhms. ]*$", re.MULTILINE)


def recorder(world: World, size: tuple[int, int] = (220, 50)) -> ScreenRecorder:
    return world.recorder(size, profile=PROFILE, timeout=60.0, settle=0.8, pause=0.4, runtime_root=world.root)


def global_config(server_url: str, **extra: object) -> dict:
    """The sandbox user's own OpenCode config: the ``anthropic`` provider at the scripted server."""
    return {
        "$schema": "https://opencode.ai/config.json",
        "model": MODEL,
        "provider": {"anthropic": {"options": {"baseURL": server_url + "/v1", "apiKey": FAKE_API_KEY}}},
        **extra,
    }


def user_config(rec: ScreenRecorder, **extra: object) -> None:
    """Write the sandbox user's OpenCode config (``extra``: more top-level settings)."""
    folder = rec.workdir.parent / ".config" / "opencode"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "opencode.json").write_text(json.dumps(global_config(rec.server.url, **extra), indent=2),
                                          encoding="utf-8")


def _ready(screen: str) -> bool:
    rows = [row for row in screen.splitlines() if row.strip()]
    return bool(rows) and rows[-1].rstrip().endswith("ctrl+p cmd") and "interrupt" not in rows[-1]


def _turn_over(screen: str) -> bool:
    """The prompt is back under the turn's summary row (agent, model, duration)."""
    return _ready(screen) and bool(_FINISHED.search(screen))


def record_main(world: World, size: tuple[int, int] = (220, 50), suffix: str = "") -> None:
    """idle, processing (model and tool), completed (plain and after a tool), error, interrupted."""
    rec = recorder(world, size)
    script = world.server.script
    user_config(rec)
    rec.start()
    rec.save(f"idle{suffix}", rec.wait(lambda s: _ready(s) and "Ask anything" in s, "the prompt"), "idle")
    rec.type("Fix the flaky test", enter=False)
    screen = rec.wait(lambda s: "Fix the flaky test" in s, "the typed text")
    rec.save(f"processing_typed_unsent{suffix}", screen, "processing",
             note="text typed into the prompt, Enter not pressed yet")
    rec.keys("C-u")
    rec.wait(lambda s: _ready(s) and "Fix the flaky test" not in s, "the cleared prompt")

    held_turn(rec, busy=lambda s: "esc interrupt" in s, ready=_turn_over, suffix=suffix, arrival_timeout=40.0)
    # Markdown is rendered, and list items keep their dash: the answer shows as written.
    tool_turn(rec, call_tool("bash", {"command": "sleep 4; ls", "description": "List files slowly"}),
              ready=_turn_over, suffix=suffix, running=lambda s: "sleep 4; ls" in s and "esc interrupt" in s,
              running_note="a bash tool call still running")
    failed_turn(rec, fail(401, "invalid x-api-key", kind="authentication_error"), shows="invalid x-api-key",
                ready=_ready, note="the API answered 401 (not retried)", suffix=suffix)

    gate = threading.Event()
    script.add(hold(gate, reply("Never shown.")))
    served = script.served
    rec.type("Start something long.")
    world.server.wait_for_arrivals(served + 1, timeout=40)
    rec.wait_sign(lambda s: "esc interrupt" in s, "the spinner")
    rec.keys("Escape")
    rec.wait_sign(lambda s: "again to interrupt" in s, "the interrupt hint")
    rec.keys("Escape")
    screen = rec.wait(lambda s: _ready(s) and "Aborted" in s, "the interrupted turn")
    rec.save(f"idle_interrupted{suffix}", screen, "idle", note="the user pressed Esc twice")
    gate.set()
    rec.stop()


def record_prompts(world: World) -> None:
    """waiting_user_answer: a permission prompt (OpenCode's own rules, bash set to ask) and a question."""
    rec = recorder(world)
    script = world.server.script
    user_config(rec, permission={"bash": "ask"})
    rec.start(profile=AgentProfile(name="careful", permission_mode="default"))
    rec.wait(_ready, "the prompt")
    approval_turn(rec, call_tool("bash", {"command": "touch recorded.txt", "description": "Create a file"}),
                  asking=lambda s: "Permission required" in s and "Allow once" in s, ready=_turn_over,
                  note="bash permission prompt", animated=True)
    rec.stop()

    question = {"questions": [{
        "question": QUESTION, "header": "Database",
        "options": [{"label": "SQLite", "description": "Embedded"},
                    {"label": "Postgres", "description": "Server"}],
    }]}
    user_config(rec)
    rec.start()
    rec.wait(_ready, "the prompt")
    script.add(call_tool("question", question), reply(CHOSEN))
    rec.type("Set up storage.")
    screen = rec.wait_sign(lambda s: QUESTION in s and "enter submit" in s, "the question")
    rec.save("waiting_user_answer_question", screen, "waiting_user_answer", note="question tool")
    rec.keys("Enter")
    deadline = time.monotonic() + 3
    while "enter submit" in rec.screen() and time.monotonic() < deadline:
        time.sleep(0.05)
    if "enter submit" in rec.screen():
        # The choice was taken but still needs confirming.
        rec.keys("Enter")
    screen = rec.wait(lambda s: CHOSEN in s and _turn_over(s), "the answer after the choice")
    rec.save("completed_after_question", screen, "completed", last_message=CHOSEN)
    rec.stop()


def record_failures(world: World) -> None:
    """error: OpenCode stopping at start-up (a broken user config), and a turn without any model provider."""
    rec = recorder(world)
    folder = rec.workdir.parent / ".config" / "opencode"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "opencode.json").write_text('{"model": "anthropic/claude-sonnet-4-5",\n', encoding="utf-8")
    rec.start()
    screen = rec.wait(lambda s: "is not valid JSON" in s, "the config error", settle=0.3)
    rec.save("exited_bad_config", screen, "error",
             note="the program exited; the kernel also gets an 'exited' event")
    rec.stop()

    user_config(rec)
    # What OpenCode shows for an option it does not know (as a release without --mini would): its usage.
    rec.start(extra_args=("--no-such-option",))
    screen = rec.wait(lambda s: "Options:" in s and "--mini" in s, "the usage text", settle=0.3)
    rec.save("exited_unknown_option", screen, "error",
             note="started with an option OpenCode does not know; it printed its usage and exited")
    rec.stop()

    (folder / "opencode.json").write_text(json.dumps({"disabled_providers": ["opencode"]}), encoding="utf-8")
    rec.start()
    rec.wait(_ready, "the prompt")
    rec.type("Hello?")
    screen = rec.wait(lambda s: "No providers are available" in s and _ready(s), "the provider error")
    rec.save("error_no_provider", screen, "error",
             note="no model provider is configured: the first message fails with a stack trace")
    rec.stop()
    user_config(rec)


def sandbox_env(world: World) -> dict[str, str]:
    """What every recording runs OpenCode with, besides the sandboxed HOME."""
    return {
        "CAO_OPENCODE_CLI_BIN": str(world.cli.binary),
        # models.dev is out of reach offline; OpenCode's bundled model list is enough.
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
        "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
        "TERM": "xterm-256color",
    }


RECORDING = Recording(
    provider=opencode_provider(), package=PACKAGE, cli=npm("opencode"),
    model_server=lambda: AnthropicServer(Script()),
    # A fixed, machine-neutral folder: OpenCode prints the working folder's path.
    root=lambda: neutral_root("cao-screens"), setup=sandbox_env,
    scenarios=(record_main, record_prompts, record_failures, at_size(record_main, (100, 30))),
)
