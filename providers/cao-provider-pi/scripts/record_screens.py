"""pi's recording scenarios: its screens in every status, from the real CLI.

Record them (from the repository root)::

    uv run --no-sync python -m cao_testkit.record providers/cao-provider-pi [--version X]

The recording installs ``@mariozechner/pi-coding-agent@X`` (default: the newest tested version) into the
live-CLI cache and drives it with a scripted Chat Completions server, named in the sandboxed user's
``~/.pi/agent/models.json`` and made their default provider. The working folder sits in the sandbox's
HOME under a fixed root, so the path pi prints under its input box shows nothing of the recording
machine.

Each screen is labelled by what the scenario made the CLI do (a held model turn is "processing", an
API error is "error", and so is pi exiting on a model it does not know), never by the detector under
test; the recorder only waits for the screen to settle on the sign it expects. pi asks no questions
(it has no approval system and no question tool) and shows no start-up dialog, so there are no waiting
screens to record.
"""

from __future__ import annotations

import json

from cao_hookspecs import AgentProfile
from cao_provider_pi.provider import provider
from cao_testkit.models import Script, call_tool, fail
from cao_testkit.models.chat import ChatServer
from cao_testkit.recorder import neutral_root
from cao_testkit.recording import Recording, World, at_size, npm
from cao_testkit.steps import failed_turn, held_turn, tool_turn

#: The model the scripted server serves, under the provider name the user's models.json gives it.
MODEL = "scripted"


def _footer(screen: str) -> bool:
    """pi's footer (the context use and the model's name) is drawn: the TUI is up."""
    rows = [row.rstrip() for row in screen.splitlines() if row.strip()]
    return bool(rows) and rows[-1].endswith(MODEL)


def _busy(screen: str) -> bool:
    return "Working..." in screen


def _ready(screen: str) -> bool:
    return _footer(screen) and not _busy(screen) and "Retrying" not in screen


def record_main(world: World, size: tuple[int, int] = (220, 50), suffix: str = "") -> None:
    """idle, processing, completed (plain and after a tool), error."""
    rec = world.recorder(size)
    rec.start(profile=AgentProfile(name="recorder", system_prompt="You answer briefly."))
    rec.save(f"idle{suffix}", rec.wait(_ready, "the prompt"), "idle")
    held_turn(rec, busy=_busy, ready=_ready, suffix=suffix)
    tool_turn(rec, call_tool("bash", {"command": "ls"}), ready=_ready, suffix=suffix)
    # A 400 is not retried (a 429 or a 5xx is, three times, before the error shows).
    failed_turn(rec, fail(400, "model scripted is not served here", kind="invalid_request_error"),
                shows="Error:", ready=_ready, note="the API answered 400", suffix=suffix)
    rec.stop()


def record_refused(world: World) -> None:
    """error: pi refuses to start (a model it does not know) and exits, leaving its message."""
    rec = world.recorder((100, 30))
    rec.start(model="nosuch/model")
    screen = rec.wait(lambda s: "not found" in s, "the start-up error")
    rec.save("error_refused_start-100x30", screen, "error", note="pi exited: unknown model")
    rec.stop()


def sandbox_env(world: World) -> dict[str, str]:
    """The sandboxed user's pi: the scripted server as their default provider."""
    agent = world.home / ".pi" / "agent"
    agent.mkdir(parents=True, exist_ok=True)
    models = {"providers": {MODEL: {"baseUrl": world.server.base_url, "api": "openai-completions",
                                    "apiKey": "sk-scripted-key", "models": [{"id": MODEL}]}}}
    (agent / "models.json").write_text(json.dumps(models, indent=2), encoding="utf-8")
    settings = {"defaultProvider": MODEL, "defaultModel": MODEL}
    (agent / "settings.json").write_text(json.dumps(settings, indent=2), encoding="utf-8")
    return {"CAO_PI_BIN": str(world.cli.binary), "TERM": "xterm-256color"}


RECORDING = Recording(
    provider=provider(), package="@mariozechner/pi-coding-agent", cli=npm("pi"),
    model_server=lambda: ChatServer(Script(), models=(MODEL,)),
    # A fixed, machine-neutral folder: pi prints its working folder's path under the input box.
    root=lambda: neutral_root("cao-screens-pi"), setup=sandbox_env,
    scenarios=(record_main, at_size(record_main, (100, 30)), record_refused),
)
