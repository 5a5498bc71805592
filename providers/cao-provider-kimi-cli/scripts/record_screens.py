"""Kimi CLI's recording scenarios: its screens in every status, from the real CLI.

Record them (from the repository root)::

    uv run --no-sync python -m cao_testkit.record providers/cao-provider-kimi-cli [--version X]

The recording installs ``kimi-cli==X`` (default: the newest tested version) from PyPI into the live-CLI
cache (a virtual environment on a Python >= 3.12 found on the machine, dependencies resolved as of the
day after the release), launched by the provider itself, against a scripted OpenAI Responses server
(Kimi's ``openai_responses`` provider type). The working folder sits in the sandbox's HOME, which Kimi
shows as ``~/project``.

Each screen is labelled by what the scenario made the CLI do (a held model turn is "processing", a
tool call under ``permissionMode: default`` is "waiting_user_answer"...), never by the detector under
test; the recorder only waits for the screen to settle on the sign it expects. The two start-up
gates are shown by seeding the private share folder with the caches Kimi's update check writes,
with the update check switched back on and the CLI in a network namespace of its own (so the check
cannot reach out); each gate is then answered with its key to show that the key gets past it.
"""

from __future__ import annotations

import json
import os

from cao_hookspecs import AgentProfile
from cao_provider_kimi_cli.dialogs import STARTUP_DIALOGS
from cao_provider_kimi_cli.provider import kimi_cli_provider
from cao_testkit.models import Script, call_tool, fail
from cao_testkit.models.openai import OpenAIServer
from cao_testkit.recorder import ScreenRecorder, neutral_root
from cao_testkit.recording import Recording, World, at_size, pypi
from cao_testkit.steps import QUESTION, approval_turn, failed_turn, held_turn, question_turn, tool_turn

#: Dependencies as PyPI had them the day after each tested release (kimi-cli pins few of its own).
EXCLUDE_NEWER = {"1.51.0": "2026-09-22"}
MODEL = "scripted"
LONG_ANSWER = (
    "I listed the folder.\n\n"
    "The build script is missing a clean step, and two tests are slow.\n\n"
    "Next I would add the clean step."
)


def user_config(world: World) -> dict[str, str]:
    """The sandbox user's ``~/.kimi/config.toml``: one model on the scripted server, no telemetry."""
    (world.home / ".kimi").mkdir()
    (world.home / ".kimi" / "config.toml").write_text(
        f'default_model = "{MODEL}"\n'
        "telemetry = false\n\n"
        f"[providers.{MODEL}]\n"
        'type = "openai_responses"\n'
        f'base_url = "{world.server.base_url}"\n'
        f'api_key = "sk-scripted-{os.urandom(4).hex()}"\n\n'
        f"[models.{MODEL}]\n"
        f'provider = "{MODEL}"\n'
        f'model = "{MODEL}"\n'
        "max_context_size = 200000\n", encoding="utf-8")
    return {"CAO_KIMI_CLI_BIN": str(world.cli.binary), "TERM": "xterm-256color"}


def recorder(world: World, size: tuple[int, int] = (220, 50)) -> ScreenRecorder:
    # A fixed runtime folder name: the screen of a refused config prints the config's full path. One
    # counter for both sizes keeps the terminal ids apart.
    return world.recorder(size, settle=0.8, runtime_name="rt-{width}x{height}-{count}", ids=world.ids)


_MOON = "🌑🌒🌓🌔🌕🌖🌗🌘"


def _rows(screen: str) -> list[str]:
    return [row.rstrip() for row in screen.splitlines()]


def _spinning(screen: str) -> bool:
    return any(row[:1] in _MOON or "\u2800" <= row[:1] <= "\u28ff" for row in _rows(screen) if row)


def _prompt_ready(screen: str) -> bool:
    rows = _rows(screen)
    boxed = any(row.startswith("── input ") for row in rows)
    return boxed and "context:" in rows[-1] and not _spinning(screen)


def record_main(world: World, size: tuple[int, int] = (220, 50), suffix: str = "") -> None:
    """idle, processing (model and tool), completed (plain and after a tool), error: the default launch."""
    rec = recorder(world, size)
    rec.start(profile=AgentProfile(name="recorder", system_prompt="You answer briefly."))
    rec.save(f"idle{suffix}", rec.wait(_prompt_ready, "the prompt"), "idle")
    held_turn(rec, busy=lambda s: any(r[:1] in _MOON for r in _rows(s) if r), ready=_prompt_ready,
              suffix=suffix, arrival_timeout=15.0)
    tool_turn(rec, call_tool("Shell", {"command": "sleep 4; ls"}), ready=_prompt_ready, suffix=suffix,
              answer=LONG_ANSWER, running=lambda s: "Using Shell (sleep 4; ls)" in s,
              running_note="a Shell call still running")
    failed_turn(rec, fail(400, "The model `scripted` does not exist", kind="invalid_request_error"),
                shows="LLM provider error", ready=_prompt_ready, note="the API answered 400 (no retry)",
                suffix=suffix)
    rec.stop()


def record_approval(world: World) -> None:
    """waiting_user_answer: an approval prompt under ``permissionMode: default``."""
    rec = recorder(world)
    rec.start(profile=AgentProfile(name="careful", permission_mode="default"))
    rec.wait(_prompt_ready, "the prompt")
    # The pending tool call's spinner keeps turning above the panel: the screen never settles.
    approval_turn(rec, call_tool("Shell", {"command": "touch recorded.txt"}),
                  asking=lambda s: "requesting approval" in s and "confirm" in s, ready=_prompt_ready,
                  note="Shell approval panel", animated=True, approved="completed_after_approval")
    rec.stop()


def record_question(world: World) -> None:
    """waiting_user_answer: the model asks the user a multiple-choice question (AskUserQuestion)."""
    rec = recorder(world)
    question = {"questions": [{
        "question": QUESTION, "header": "Database", "multi_select": False,
        "options": [{"label": "SQLite", "description": "Embedded"},
                    {"label": "Postgres", "description": "Server"}],
    }]}
    rec.start()
    rec.wait(_prompt_ready, "the prompt")
    question_turn(rec, call_tool("AskUserQuestion", question),
                  asking=lambda s: QUESTION in s and "[2] Postgres" in s, ready=_prompt_ready,
                  note="AskUserQuestion panel", animated=True)
    rec.stop()


TIPS = {
    "enabled": True,
    "message": {"en": "kimi-cli is no longer maintained. Please move to Kimi Code."},
    "links": {},
    "migration": {"version": "2.0.0", "min_cli_version": "0.0.0"},
}


def record_gates(world: World) -> None:
    """The two start-up gates, from the caches Kimi's update check writes; each answered by its key."""
    rec = recorder(world)
    dialogs = {dialog.name: dialog for dialog in STARTUP_DIALOGS}
    gates = (
        ("dialog_update_gate", "update gate", {"latest_version.txt": "9.9.9\n"}, "Upgrade now"),
        ("dialog_migration_gate", "migration gate", {"kimi_code_tips.json": json.dumps(TIPS)}, "Migrate now"),
    )
    for name, dialog, seed, sign in gates:
        # A network namespace of its own: the update check that comes with the gates reaches nothing.
        rec.start(files={f"kimi-share/{file}": content for file, content in seed.items()},
                  plan_env={"KIMI_CLI_NO_AUTO_UPDATE": ""}, wrapper=("unshare", "--net", "--"))
        screen = rec.wait(lambda s, sign=sign: sign in s, name)
        rec.save(name, screen, "waiting_user_answer", dialog=dialog,
                 note="start-up gate shown from a seeded update-check cache")
        rec.keys(*dialogs[dialog].keys)
        rec.wait(lambda s: "── input " in s, f"the prompt after the {dialog}", settle=0.3)
        rec.stop()


def record_startup_failure(world: World) -> None:
    """error: Kimi refusing a config whose default model does not exist (it exits at once)."""
    rec = recorder(world)
    profile = AgentProfile(name="broken", extra={"kimiConfig": {"default_model": "missing-model"}})
    rec.start(profile=profile)
    screen = rec.wait(lambda s: "missing-model" in s, "the refusal", settle=0.5)
    rec.save("exited_bad_config", screen, "error",
             note="the program exited; the kernel also gets an 'exited' event")
    rec.stop()


RECORDING = Recording(
    provider=kimi_cli_provider(), package="kimi-cli",
    cli=pypi("kimi", python=">=3.12", exclude_newer=EXCLUDE_NEWER),
    model_server=lambda: OpenAIServer(Script(), models=(MODEL,)),
    # A fixed, machine-neutral folder: a refused config's screen shows its full path.
    root=lambda: neutral_root("cao-kimi-screens"), setup=user_config,
    scenarios=(record_main, record_approval, record_question, record_gates, record_startup_failure,
               at_size(record_main, (100, 30))),
)
