"""Oh My Pi's recording scenarios: its screens in every status, from the real CLI.

Record them (from the repository root)::

    uv run --no-sync python -m cao_testkit.record providers/cao-provider-omp [--version X]

The recording installs ``@oh-my-pi/pi-coding-agent@X`` (default: the newest tested version) with
``bun`` beside it (Oh My Pi is a Bun program) into the live-CLI cache, and drives it with a scripted
Chat Completions server, declared as a provider in the sandboxed user's ``~/.omp/agent/models.yml``.
The working folder sits in the sandbox's HOME under a fixed root, so the path Oh My Pi prints in its
status line shows nothing of the recording machine.

Each screen is labelled by what the scenario made the CLI do (a held model turn is "processing", a
tool waiting for approval is "waiting_user_answer"...), never by the detector under test; the recorder
only waits for the screen to settle on the sign it expects. The tool approval is recorded at 220x50
and 100x30, and each of its options is pressed on a fresh terminal with the keys ``read_prompt`` gives
it (``answer_each_option``), the screen after it saved. The setup wizard, which cao's settings keep
away, is recorded by taking ``setupVersion`` out of them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cao_hookspecs import AgentProfile
from cao_provider_omp.prompts import read_prompt
from cao_provider_omp.provider import provider
from cao_testkit.models import Script, call_tool, fail, reply
from cao_testkit.models.chat import ChatServer
from cao_testkit.models.cli import InstalledCli, install_npm_cli
from cao_testkit.recorder import json_edit, neutral_root
from cao_testkit.recording import Recording, World, at_size
from cao_testkit.steps import Outcome, answer_each_option, asking, failed_turn, held_turn, tool_turn

PACKAGE = "@oh-my-pi/pi-coding-agent"
#: The runtime Oh My Pi runs on, installed beside it.
BUN = "bun@1.4.5"
#: The provider and model the scripted server is declared as (``--model``).
MODEL = "scripted/scripted-model"
CAREFUL = AgentProfile(name="careful", permission_mode="always-ask", system_prompt="You answer briefly.")
SHELL_CALL = {"command": "touch recorded.txt"}
LONG_SHELL_CALL = {"command": "printf '%s\\n' 'the build script is missing a clean step' "
                              "'two tests are slow' 'next: add the clean step' > findings.txt"}
DONE = "Created the file."
REFUSED = "Understood: I will not run it."
#: The setup wizard's steps (Oh My Pi 18.2): Escape skips each.
WIZARD_STEPS = 5


def with_bun(recording: Recording, version: str, scratch: Path) -> InstalledCli:
    """The recording's CLI source: the package from npm with Bun beside it."""
    return install_npm_cli(recording.package, version, "omp", with_packages=[BUN])


def models_yml(base_url: str) -> str:
    """The sandboxed user's ``models.yml``: the scripted server as provider ``scripted``."""
    return ("providers:\n  scripted:\n"
            f"    baseUrl: {base_url}\n    api: openai-completions\n    apiKey: sk-scripted\n"
            "    models:\n      - id: scripted-model\n        name: Scripted Model\n")


def _rows(screen: str) -> list[str]:
    return [row for row in screen.splitlines() if row.strip()]


def _ready(screen: str) -> bool:
    """The status line and the composer are back and no turn runs."""
    rows = _rows(screen)
    return (len(rows) >= 2 and rows[-1].startswith("╰─") and rows[-2].lstrip().startswith("π >")
            and "Working…" not in screen and "Allow tool" not in screen)


def _busy(screen: str) -> bool:
    return "Working…" in screen


def _asking_permission(screen: str) -> bool:
    return "Allow tool" in screen


def record_main(world: World, size: tuple[int, int] = (220, 50), suffix: str = "") -> None:
    """idle, processing, completed (plain and after a tool), error: the default (yolo) launch."""
    rec = world.recorder(size)
    rec.start(profile=AgentProfile(name="recorder", system_prompt="You answer briefly."), model=MODEL)
    rec.save(f"idle{suffix}", rec.wait(_ready, "the prompt"), "idle")
    held_turn(rec, busy=_busy, ready=_ready, suffix=suffix)
    tool_turn(rec, call_tool("bash", {"command": "ls"}), ready=_ready, suffix=suffix)
    # A 400 is not retried (a 429 or a 5xx is, before the error shows).
    failed_turn(rec, fail(400, "model scripted-model is not served here", kind="invalid_request_error"),
                shows="not served here", ready=_ready, note="the API answered 400", suffix=suffix)
    rec.stop()


def record_permission(world: World, size: tuple[int, int] = (220, 50), suffix: str = "") -> None:
    """waiting_user_answer: a shell command waiting for approval under the ``always-ask`` approval mode,
    and each option picked with its keys on a terminal of its own."""
    call = call_tool("bash", SHELL_CALL if not suffix else LONG_SHELL_CALL)
    ran = Outcome(lambda s: DONE in s and _ready(s), "completed", last_message=DONE)

    def start():
        rec = world.recorder(size)
        rec.start(profile=CAREFUL, model=MODEL)
        # Oh My Pi draws its prompt a moment before it takes an Enter (the kernel presses Enter again
        # when a message stays in the composer; the recording waits instead).
        rec.wait(_ready, "the prompt", settle=2.0)
        return rec

    answer_each_option(
        # A denied call goes back to the model, which answers.
        start, asking(world.server.script, call, _asking_permission, "Create a file.",
                      {1: reply(DONE), 2: reply(REFUSED)}),
        read_prompt, name=f"waiting_user_answer{suffix}", note="shell command waiting for approval",
        outcomes={1: ran, 2: Outcome(lambda s: REFUSED in s and _ready(s), "completed", last_message=REFUSED,
                                     note="the call was denied; the model is told and answers")},
    )


def _unset_up(document: dict[str, Any]) -> None:
    document.pop("setupVersion", None)
    document.get("startup", {}).pop("setupWizard", None)


def record_wizard(world: World, size: tuple[int, int] = (220, 50), suffix: str = "") -> None:
    """The setup wizard, each step and the Escape that skips it: what Oh My Pi shows when cao's
    settings are not in force."""
    rec = world.recorder(size)
    rec.start(model=MODEL, edit_file=json_edit("config.yml", _unset_up))
    for step in range(1, WIZARD_STEPS + 1):
        screen = rec.wait(lambda s, n=step: f"Setup step {n} of {WIZARD_STEPS}" in s, f"setup step {step}")
        # The kernel answers start-up dialogs itself: the reader gives none of them to a policy.
        rec.save(f"dialog_setup_step{step}{suffix}", screen, "waiting_user_answer",
                 dialog=f"setup wizard step {step}", prompt=read_prompt(screen))
        rec.keys("Escape")
    rec.save(f"idle_after_setup{suffix}", rec.wait(_ready, "the prompt after the wizard"), "idle")
    rec.stop()


def sandbox_env(world: World) -> dict[str, str]:
    agent = world.home / ".omp" / "agent"
    agent.mkdir(parents=True, exist_ok=True)
    (agent / "models.yml").write_text(models_yml(world.server.base_url), encoding="utf-8")
    return {"TERM": "xterm-256color"}


RECORDING = Recording(
    provider=provider(), package=PACKAGE, cli=with_bun,
    model_server=lambda: ChatServer(Script(), models=("scripted-model",)),
    root=lambda: neutral_root("cao-screens-omp"), setup=sandbox_env, cli_on_path=True,
    scenarios=(record_main, record_permission, record_wizard,
               at_size(record_main, (100, 30)), at_size(record_permission, (100, 30))),
)
