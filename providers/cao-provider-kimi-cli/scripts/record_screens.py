"""Record Kimi CLI's screens in every status, from the real CLI, as detector test fixtures.

Usage (from the repository root)::

    uv run --no-sync python providers/cao-provider-kimi-cli/scripts/record_screens.py [--version X]

It installs ``kimi-cli==X`` (default: the newest tested version) from PyPI into the live-CLI cache (a
virtual environment on a Python >= 3.12 found on the machine, dependencies resolved as of the day
after the release), runs it in tmux through cao's own tmux backend (so screens are captured exactly
as the kernel captures them), launched by the provider itself, against a scripted OpenAI Responses
server (Kimi's ``openai_responses`` provider type), and drives it through each status. It writes
``tests/screens/<version>/<name>.txt`` plus ``manifest.json`` (the status each screen was recorded
in, and the answer it shows). Nothing is edited after capture. The working folder sits in the
sandbox's HOME, which Kimi shows as ``~/project``.

Each screen is labelled by what the script made the CLI do (a held model turn is "processing", a
tool call under ``permissionMode: default`` is "waiting_user_answer"...), never by the detector under
test; the recorder only waits for the screen to settle on the sign it expects. The two start-up
gates are shown by seeding the private share folder with the caches Kimi's update check writes,
with the update check switched back on and the CLI in a network namespace of its own (so the check
cannot reach out); each gate is then answered with its key to show that the key gets past it.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import sys
import threading
import time
from pathlib import Path

from cao_hookspecs import AgentProfile
from cao_testkit.models import Script, call_tool, fail, hold, reply
from cao_testkit.models.cli import install_pypi_cli, make_sandbox
from cao_testkit.models.openai import OpenAIServer
from cao_testkit.recorder import (
    ScreenRecorder,
    environment,
    neutral_root,
    recording_arguments,
    tmux_backend,
    write_manifest,
)
from cao_provider_kimi_cli.dialogs import STARTUP_DIALOGS
from cao_provider_kimi_cli.provider import NAME, TESTED_VERSIONS, kimi_cli_provider

PACKAGE = "kimi-cli"
#: Dependencies as PyPI had them the day after each tested release (kimi-cli pins few of its own).
EXCLUDE_NEWER = {"1.51.0": "2026-09-22"}
PYTHON = ">=3.12"
SCREENS = Path(__file__).resolve().parent.parent / "tests" / "screens"
MODEL = "scripted"
ANSWER = "The repository has 3 packages; all tests pass."
LONG_ANSWER = (
    "I listed the folder.\n\n"
    "The build script is missing a clean step, and two tests are slow.\n\n"
    "Next I would add the clean step."
)


def user_config(base_url: str, api_key: str) -> str:
    """The sandbox user's ``~/.kimi/config.toml``: one model on the scripted server, no telemetry."""
    return (
        f'default_model = "{MODEL}"\n'
        "telemetry = false\n\n"
        f"[providers.{MODEL}]\n"
        'type = "openai_responses"\n'
        f'base_url = "{base_url}"\n'
        f'api_key = "{api_key}"\n\n'
        f"[models.{MODEL}]\n"
        f'provider = "{MODEL}"\n'
        f'model = "{MODEL}"\n'
        "max_context_size = 200000\n"
    )


def arrivals(rec: ScreenRecorder, count: int, timeout: float = 15.0) -> None:
    """Wait until ``count`` scripted turns have been taken (a held one counts once it is asked for)."""
    deadline = time.monotonic() + timeout
    while rec.server.script.served < count:
        if time.monotonic() > deadline:
            raise SystemExit(f"{rec.server.script.served} of {count} model turns asked for within "
                             f"{timeout:g} s; screen:\n{rec.screen()}")
        time.sleep(0.05)


_MOON = "🌑🌒🌓🌔🌕🌖🌗🌘"


def _rows(screen: str) -> list[str]:
    return [row.rstrip() for row in screen.splitlines()]


def _spinning(screen: str) -> bool:
    return any(row[:1] in _MOON or "\u2800" <= row[:1] <= "\u28ff" for row in _rows(screen) if row)


def _prompt_ready(screen: str) -> bool:
    rows = _rows(screen)
    boxed = any(row.startswith("── input ") for row in rows)
    return boxed and "context:" in rows[-1] and not _spinning(screen)


def record_main(rec: ScreenRecorder, suffix: str = "") -> None:
    """idle, processing (model and tool), completed (plain and after a tool), error: the default launch."""
    script = rec.server.script
    gate = threading.Event()
    rec.start(profile=AgentProfile(name="recorder", system_prompt="You answer briefly."))
    rec.save(f"idle{suffix}", rec.wait(_prompt_ready, "the prompt"), "idle")

    script.add(hold(gate, reply(ANSWER)))
    served = script.served
    rec.type("Summarise the repository.")
    arrivals(rec, served + 1)
    screen = rec.wait_sign(lambda s: any(r[:1] in _MOON for r in _rows(s) if r), "the moon spinner")
    rec.save(f"processing{suffix}", screen, "processing", note="model turn held open by the server")
    gate.set()
    screen = rec.wait(lambda s: ANSWER in s and _prompt_ready(s), "the answer")
    rec.save(f"completed{suffix}", screen, "completed", last_message=ANSWER)

    script.add(call_tool("Shell", {"command": "sleep 4; ls"}), reply(LONG_ANSWER))
    rec.type("Look around and report.")
    screen = rec.wait_sign(lambda s: "Using Shell (sleep 4; ls)" in s, "the running tool")
    rec.save(f"processing_tool{suffix}", screen, "processing", note="a Shell call still running")
    screen = rec.wait(lambda s: "Next I would add the clean step." in s and _prompt_ready(s),
                      "the long answer")
    rec.save(f"completed_after_tool{suffix}", screen, "completed", last_message=LONG_ANSWER)

    script.add(fail(400, "The model `scripted` does not exist", kind="invalid_request_error"))
    rec.type("Try once more.")
    screen = rec.wait(lambda s: "LLM provider error" in s and _prompt_ready(s), "the API error")
    rec.save(f"error{suffix}", screen, "error", note="the API answered 400 (no retry)")
    rec.stop()


def record_approval(rec: ScreenRecorder) -> None:
    """waiting_user_answer: an approval prompt under ``permissionMode: default``."""
    script = rec.server.script
    rec.start(profile=AgentProfile(name="careful", permission_mode="default"))
    rec.wait(_prompt_ready, "the prompt")
    script.add(call_tool("Shell", {"command": "touch recorded.txt"}), reply("Created the file."))
    rec.type("Create a file.")
    # The pending tool call's spinner keeps turning above the panel: the screen never settles.
    screen = rec.wait_sign(lambda s: "requesting approval" in s and "confirm" in s, "the approval panel")
    rec.save("waiting_user_answer", screen, "waiting_user_answer", note="Shell approval panel")
    rec.keys("Enter")
    screen = rec.wait(lambda s: "Created the file." in s and _prompt_ready(s), "the answer after approval")
    rec.save("completed_after_approval", screen, "completed", last_message="Created the file.")
    rec.stop()


def record_question(rec: ScreenRecorder) -> None:
    """waiting_user_answer: the model asks the user a multiple-choice question (AskUserQuestion)."""
    question = {"questions": [{
        "question": "Which database should I use?", "header": "Database", "multi_select": False,
        "options": [{"label": "SQLite", "description": "Embedded"},
                    {"label": "Postgres", "description": "Server"}],
    }]}
    rec.start()
    rec.wait(_prompt_ready, "the prompt")
    rec.server.script.add(call_tool("AskUserQuestion", question), reply("Going with SQLite."))
    rec.type("Set up storage.")
    screen = rec.wait_sign(lambda s: "Which database should I use?" in s and "[2] Postgres" in s,
                           "the question")
    rec.save("waiting_user_answer_question", screen, "waiting_user_answer", note="AskUserQuestion panel")
    rec.keys("Enter")
    screen = rec.wait(lambda s: "Going with SQLite." in s and _prompt_ready(s), "the answer after the choice")
    rec.save("completed_after_question", screen, "completed", last_message="Going with SQLite.")
    rec.stop()


TIPS = {
    "enabled": True,
    "message": {"en": "kimi-cli is no longer maintained. Please move to Kimi Code."},
    "links": {},
    "migration": {"version": "2.0.0", "min_cli_version": "0.0.0"},
}


def record_gates(rec: ScreenRecorder) -> None:
    """The two start-up gates, from the caches Kimi's update check writes; each answered by its key."""
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


def record_startup_failure(rec: ScreenRecorder) -> None:
    """error: Kimi refusing a config whose default model does not exist (it exits at once)."""
    profile = AgentProfile(name="broken", extra={"kimiConfig": {"default_model": "missing-model"}})
    rec.start(profile=profile)
    screen = rec.wait(lambda s: "missing-model" in s, "the refusal", settle=0.5)
    rec.save("exited_bad_config", screen, "error",
             note="the program exited; the kernel also gets an 'exited' event")
    rec.stop()


def main(argv: list[str] | None = None) -> int:
    args = recording_arguments(__doc__, version=TESTED_VERSIONS[-1], cli="kimi-cli").parse_args(argv)
    cli = install_pypi_cli(PACKAGE, args.version, "kimi", python=PYTHON,
                           exclude_newer=EXCLUDE_NEWER.get(args.version))
    out = args.out or SCREENS / args.version
    # A fixed, machine-neutral folder: a refused config's screen shows its full path.
    with neutral_root("cao-kimi-screens") as root, OpenAIServer(Script(), models=(MODEL,)) as server:
        sandbox = make_sandbox(root, env={"CAO_KIMI_CLI_BIN": str(cli.binary), "TERM": "xterm-256color"})
        (sandbox.home / ".kimi").mkdir()
        (sandbox.home / ".kimi" / "config.toml").write_text(
            user_config(server.base_url, "sk-scripted-" + os.urandom(4).hex()), encoding="utf-8")
        with environment(sandbox.env), tmux_backend(root / "cao-home") as backend:
            print(f"recording {PACKAGE}=={args.version} ({cli.version_output}) into {out}")
            if out.exists():
                shutil.rmtree(out)
            ids = itertools.count(1)

            def recorder(size: tuple[int, int]) -> ScreenRecorder:
                # A fixed runtime folder name: the screen of a refused config prints the config's full path.
                return ScreenRecorder(backend, kimi_cli_provider().launch, provider=NAME, server=server,
                                      workdir=sandbox.home / "project", out=out, size=size, settle=0.8,
                                      runtime_name="rt-{width}x{height}-{count}", ids=ids)

            rec = recorder((220, 50))
            record_main(rec)
            record_approval(rec)
            record_question(rec)
            record_gates(rec)
            record_startup_failure(rec)
            narrow = recorder((100, 30))
            record_main(narrow, suffix="-100x30")
        write_manifest(out, package=PACKAGE, version=args.version, version_output=cli.version_output,
                       recorded_with="providers/cao-provider-kimi-cli/scripts/record_screens.py",
                       screens={**rec.manifest, **narrow.manifest})
        server.assert_healthy()
        server.script.assert_done()
    return 0


if __name__ == "__main__":
    sys.exit(main())
