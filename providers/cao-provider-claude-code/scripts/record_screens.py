"""Record Claude Code's screens in every status, from the real CLI, as detector test fixtures.

Usage (from the repository root)::

    uv run --no-sync python providers/cao-provider-claude-code/scripts/record_screens.py [--version X]

It installs ``@anthropic-ai/claude-code@X`` (default: the newest tested version) into the live-CLI
cache, runs it in tmux through cao's own tmux backend (so screens are captured exactly as the kernel
captures them), drives it with a scripted Anthropic server through each status, and writes
``tests/screens/<version>/<name>.txt`` plus ``manifest.json`` (the status each screen was recorded in,
and the answer it shows). Nothing is edited after capture. The working folder sits in the sandbox's
HOME, which Claude Code shows as ``~/project``; dialogs that print the full path show the fixed
``<tmp>/cao-screens/home/project``, so no path of the recording machine ends up in a fixture.

Each screen is labelled by what the script made the CLI do (a held model turn is "processing", a
permission request is "waiting_user_answer"...), never by the detector under test; the recorder only
waits for the screen to settle on the sign it expects.
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
from pathlib import Path

from cao_hookspecs import AgentProfile
from cao_testkit.models import Script, call_tool, fail, hold, reply
from cao_testkit.models.anthropic import AnthropicServer
from cao_testkit.models.cli import install_npm_cli, make_sandbox
from cao_testkit.recorder import (
    ScreenRecorder,
    environment,
    json_edit,
    neutral_root,
    recording_arguments,
    tmux_backend,
    write_manifest,
)
from cao_provider_claude_code.provider import NAME, TESTED_VERSIONS, claude_code_provider

PACKAGE = "@anthropic-ai/claude-code"
SCREENS = Path(__file__).resolve().parent.parent / "tests" / "screens"
ANSWER = "The repository has 3 packages; all tests pass."
LONG_ANSWER = (
    "I listed the folder.\n\n"
    "Findings:\n\n"
    "- the build script is missing a clean step\n"
    "- two tests are slow\n\n"
    "Next I would add the clean step."
)


def _box_ready(screen: str) -> bool:
    rows = screen.splitlines()
    return any(row.startswith("❯") for row in rows[-6:]) and "esc to interrupt" not in screen


def record_main(rec: ScreenRecorder, suffix: str = "") -> None:
    """idle, processing, completed (plain and after a tool), error: the default (bypass) launch."""
    script = rec.server.script
    gate = threading.Event()
    rec.start(profile=AgentProfile(name="recorder", system_prompt="You answer briefly."))
    rec.save(f"idle{suffix}", rec.wait(_box_ready, "the prompt"), "idle")

    script.add(hold(gate, reply(ANSWER)))
    served = script.served
    rec.type("Summarise the repository.")
    rec.server.wait_for_arrivals(served + 1)
    screen = rec.wait_sign(lambda s: "esc to interrupt" in s and "…" in s, "the spinner")
    rec.save(f"processing{suffix}", screen, "processing", note="model turn held open by the server")
    gate.set()
    screen = rec.wait(lambda s: ANSWER in s and _box_ready(s), "the answer")
    rec.save(f"completed{suffix}", screen, "completed", last_message=ANSWER)

    script.add(call_tool("Bash", {"command": "ls", "description": "List files"}), reply(LONG_ANSWER))
    rec.type("Look around and report.")
    screen = rec.wait(lambda s: "Next I would add the clean step." in s and _box_ready(s), "the long answer")
    rec.save(f"completed_after_tool{suffix}", screen, "completed", last_message=LONG_ANSWER)

    script.add(fail(529, "Overloaded", kind="overloaded_error"))
    rec.type("Try once more.")
    screen = rec.wait(lambda s: "API Error" in s and _box_ready(s), "the API error")
    rec.save(f"error{suffix}", screen, "error", note="the API answered 529 without a retry hint")
    rec.stop()


def record_permission(rec: ScreenRecorder) -> None:
    """waiting_user_answer: a permission prompt under the default permission mode."""
    script = rec.server.script
    rec.start(profile=AgentProfile(name="careful", permission_mode="default"))
    rec.wait(_box_ready, "the prompt")
    script.add(call_tool("Bash", {"command": "touch recorded.txt", "description": "Create a file"}),
               reply("Created the file."))
    rec.type("Create a file.")
    # The pending tool call's bullet blinks under the prompt: the screen never settles.
    screen = rec.wait_sign(lambda s: "Do you want to proceed?" in s and "Esc to cancel" in s,
                           "the permission prompt")
    rec.save("waiting_user_answer", screen, "waiting_user_answer", note="Bash permission prompt")
    rec.keys("Enter")
    screen = rec.wait(lambda s: "Created the file." in s and _box_ready(s), "the answer after approval")
    rec.save("completed_after_permission", screen, "completed", last_message="Created the file.")
    rec.stop()


def record_question(rec: ScreenRecorder) -> None:
    """waiting_user_answer: the model asks the user a multiple-choice question (AskUserQuestion)."""
    question = {"questions": [{
        "question": "Which database should I use?", "header": "Database", "multiSelect": False,
        "options": [{"label": "SQLite", "description": "Embedded"},
                    {"label": "Postgres", "description": "Server"}],
    }]}
    rec.start()
    rec.wait(_box_ready, "the prompt")
    rec.server.script.add(call_tool("AskUserQuestion", question), reply("Going with SQLite."))
    rec.type("Set up storage.")
    screen = rec.wait_sign(lambda s: "Which database should I use?" in s and "Enter to select" in s,
                           "the question")
    rec.save("waiting_user_answer_question", screen, "waiting_user_answer", note="AskUserQuestion menu")
    rec.keys("Enter")
    screen = rec.wait(lambda s: "Going with SQLite." in s and _box_ready(s), "the answer after the choice")
    rec.save("completed_after_question", screen, "completed", last_message="Going with SQLite.")
    rec.stop()


def record_dialogs(rec: ScreenRecorder) -> None:
    """Start-up dialogs, shown when the seeded config lacks the answer (kept to pin their wording)."""
    def untrusted(config: dict) -> None:
        config.pop("projects", None)

    def key_unknown(config: dict) -> None:
        config["customApiKeyResponses"] = {"approved": [], "rejected": []}

    def bypass_unaccepted(config: dict) -> None:
        config.pop("bypassPermissionsModeAccepted", None)

    for name, dialog, edit, sign in (
        ("dialog_trust_folder", "trust folder", untrusted, "one you trust"),
        ("dialog_api_key", "API key confirmation", key_unknown, "Do you want to use this API key?"),
        ("dialog_bypass_permissions", "bypass permissions confirmation", bypass_unaccepted,
         "Bypass Permissions mode"),
    ):
        rec.start(edit_file=json_edit(".claude.json", edit))
        screen = rec.wait(lambda s, sign=sign: sign in s, name)
        rec.save(name, screen, "waiting_user_answer", dialog=dialog, note="start-up dialog")
        rec.stop()


def record_exit(rec: ScreenRecorder, sandbox_env: dict[str, str]) -> None:
    """error: Claude Code refusing bypass mode as root outside a sandbox (it exits at once)."""
    if os.geteuid() != 0:
        print("  exited_root: skipped (not running as root)")
        return
    env = {"IS_SANDBOX": ""}
    rec.start(yolo=True, env=env)
    screen = rec.wait(lambda s: "root/sudo" in s, "the refusal", settle=0.3)
    rec.save("exited_root", screen, "error",
             note="the program exited; the kernel also gets an 'exited' event")
    rec.stop()
    _ = sandbox_env


def main(argv: list[str] | None = None) -> int:
    args = recording_arguments(__doc__, version=TESTED_VERSIONS[-1], cli="Claude Code").parse_args(argv)
    cli = install_npm_cli(PACKAGE, args.version, "claude")
    out = args.out or SCREENS / args.version
    # A fixed, machine-neutral folder: dialogs print the working folder's full path.
    with neutral_root("cao-screens") as root, AnthropicServer(Script()) as server:
        sandbox = make_sandbox(root, env={
            **server.client_env(), "CAO_CLAUDE_CODE_BIN": str(cli.binary), "IS_SANDBOX": "1",
            "DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "TERM": "xterm-256color",
        })
        with environment(sandbox.env), tmux_backend(root / "cao-home") as backend:
            print(f"recording {PACKAGE}@{args.version} ({cli.version_output}) into {out}")
            if out.exists():
                shutil.rmtree(out)

            def recorder(size: tuple[int, int]) -> ScreenRecorder:
                return ScreenRecorder(backend, claude_code_provider().launch, provider=NAME, server=server,
                                      workdir=sandbox.home / "project", out=out, size=size)

            rec = recorder((220, 50))
            record_main(rec)
            record_permission(rec)
            record_question(rec)
            record_dialogs(rec)
            record_exit(rec, dict(sandbox.env))
            narrow = recorder((100, 30))
            record_main(narrow, suffix="-100x30")
            write_manifest(out, package=PACKAGE, version=args.version, version_output=cli.version_output,
                           recorded_with="providers/cao-provider-claude-code/scripts/record_screens.py",
                           screens={**rec.manifest, **narrow.manifest})
        server.assert_healthy()
        server.script.assert_done()
    return 0


if __name__ == "__main__":
    sys.exit(main())
