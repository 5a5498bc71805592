"""Claude Code's recording scenarios: its screens in every status, from the real CLI.

Record them (from the repository root)::

    uv run --no-sync python -m cao_testkit.record providers/cao-provider-claude-code [--version X]

The recording installs ``@anthropic-ai/claude-code@X`` (default: the newest tested version) into the
live-CLI cache and drives it with a scripted Anthropic server. The working folder sits in the sandbox's
HOME, which Claude Code shows as ``~/project``; dialogs that print the full path show the fixed
``<tmp>/cao-screens/home/project``, so no path of the recording machine ends up in a fixture.

Each screen is labelled by what the scenario made the CLI do (a held model turn is "processing", a
permission request is "waiting_user_answer"...), never by the detector under test; the recorder only
waits for the screen to settle on the sign it expects.
"""

from __future__ import annotations

import os

from cao_hookspecs import AgentProfile
from cao_provider_claude_code.provider import claude_code_provider
from cao_testkit.models import Script, call_tool, fail
from cao_testkit.models.anthropic import AnthropicServer
from cao_testkit.recorder import json_edit, neutral_root
from cao_testkit.recording import Recording, World, at_size, npm
from cao_testkit.steps import QUESTION, approval_turn, failed_turn, held_turn, question_turn, tool_turn


def _box_ready(screen: str) -> bool:
    rows = screen.splitlines()
    return any(row.startswith("❯") for row in rows[-6:]) and "esc to interrupt" not in screen


def record_main(world: World, size: tuple[int, int] = (220, 50), suffix: str = "") -> None:
    """idle, processing, completed (plain and after a tool), error: the default (bypass) launch."""
    rec = world.recorder(size)
    rec.start(profile=AgentProfile(name="recorder", system_prompt="You answer briefly."))
    rec.save(f"idle{suffix}", rec.wait(_box_ready, "the prompt"), "idle")
    held_turn(rec, busy=lambda s: "esc to interrupt" in s and "…" in s, ready=_box_ready, suffix=suffix)
    tool_turn(rec, call_tool("Bash", {"command": "ls", "description": "List files"}), ready=_box_ready,
              suffix=suffix)
    failed_turn(rec, fail(529, "Overloaded", kind="overloaded_error"), shows="API Error", ready=_box_ready,
                note="the API answered 529 without a retry hint", suffix=suffix)
    rec.stop()


def record_permission(world: World) -> None:
    """waiting_user_answer: a permission prompt under the default permission mode."""
    rec = world.recorder()
    rec.start(profile=AgentProfile(name="careful", permission_mode="default"))
    rec.wait(_box_ready, "the prompt")
    # The pending tool call's bullet blinks under the prompt: the screen never settles.
    approval_turn(rec, call_tool("Bash", {"command": "touch recorded.txt", "description": "Create a file"}),
                  asking=lambda s: "Do you want to proceed?" in s and "Esc to cancel" in s, ready=_box_ready,
                  note="Bash permission prompt", animated=True)
    rec.stop()


def record_question(world: World) -> None:
    """waiting_user_answer: the model asks the user a multiple-choice question (AskUserQuestion)."""
    question = {"questions": [{
        "question": QUESTION, "header": "Database", "multiSelect": False,
        "options": [{"label": "SQLite", "description": "Embedded"},
                    {"label": "Postgres", "description": "Server"}],
    }]}
    rec = world.recorder()
    rec.start()
    rec.wait(_box_ready, "the prompt")
    question_turn(rec, call_tool("AskUserQuestion", question),
                  asking=lambda s: QUESTION in s and "Enter to select" in s, ready=_box_ready,
                  note="AskUserQuestion menu", animated=True)
    rec.stop()


def record_dialogs(world: World) -> None:
    """Start-up dialogs, shown when the seeded config lacks the answer (kept to pin their wording)."""
    rec = world.recorder()

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


def record_exit(world: World) -> None:
    """error: Claude Code refusing bypass mode as root outside a sandbox (it exits at once)."""
    rec = world.recorder()
    if os.geteuid() != 0:
        print("  exited_root: skipped (not running as root)")
        return
    env = {"IS_SANDBOX": ""}
    rec.start(yolo=True, env=env)
    screen = rec.wait(lambda s: "root/sudo" in s, "the refusal", settle=0.3)
    rec.save("exited_root", screen, "error",
             note="the program exited; the kernel also gets an 'exited' event")
    rec.stop()


def sandbox_env(world: World) -> dict[str, str]:
    return {**world.server.client_env(), "CAO_CLAUDE_CODE_BIN": str(world.cli.binary), "IS_SANDBOX": "1",
            "DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "TERM": "xterm-256color"}


RECORDING = Recording(
    provider=claude_code_provider(), package="@anthropic-ai/claude-code", cli=npm("claude"),
    model_server=lambda: AnthropicServer(Script()),
    # A fixed, machine-neutral folder: dialogs print the working folder's full path.
    root=lambda: neutral_root("cao-screens"), setup=sandbox_env,
    scenarios=(record_main, record_permission, record_question, record_dialogs, record_exit,
               at_size(record_main, (100, 30))),
)
