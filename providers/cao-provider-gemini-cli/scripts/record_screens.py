"""Gemini CLI's recording scenarios: its screens in every status, from the real CLI.

Record them (from the repository root)::

    uv run --no-sync python -m cao_testkit.record providers/cao-provider-gemini-cli [--version X]

The recording installs ``@google/gemini-cli@X`` (default: the newest tested version) into the live-CLI
cache, launched the way the provider launches it, and drives it with a scripted Gemini API server. The
working folder is ``<tmp>/cao-screens-gemini-cli/home/project``, so no path of the recording machine
ends up in a fixture.

Each screen is labelled by what the scenario made the CLI do (a held model turn is "processing", a tool
approval is "waiting_user_answer"...), never by the detector under test; the recorder only waits for
the screen to settle on the sign it expects.
"""

from __future__ import annotations

import attrs

from cao_hookspecs import AgentProfile, LaunchContext, LaunchPlan
from cao_provider_gemini_cli.provider import gemini_cli_provider
from cao_testkit.models import Script, call_tool, fail, reply
from cao_testkit.models.gemini import GeminiServer
from cao_testkit.recorder import ScreenRecorder, json_edit, neutral_root
from cao_testkit.recording import Recording, World, at_size, npm
from cao_testkit.steps import (
    LONG_ANSWER,
    QUESTION,
    approval_turn,
    failed_turn,
    held_turn,
    question_turn,
    tool_turn,
)

MODEL = "gemini-2.5-pro"
# Gemini CLI renders a Markdown list item with a space before its marker.
LONG_ANSWER_SHOWN = LONG_ANSWER.replace("\n- ", "\n - ")
SPINNER = "esc to cancel"


def recorder(world: World, size: tuple[int, int] = (220, 50)) -> ScreenRecorder:
    # Typed the way the kernel types: with the provider's Enter count and submit delay.
    caps = world.recording.provider.capabilities
    return world.recorder(size, launch=_launch, enter_count=caps.enter_count, submit_delay=caps.submit_delay)


def _launch(ctx: LaunchContext) -> LaunchPlan:
    return gemini_cli_provider().launch(attrs.evolve(ctx, model=MODEL))


def _prompt_ready(screen: str) -> bool:
    """The input area is drawn with its empty-prompt hint, set-up is done (the header, or a turn, is
    above it) and nothing runs."""
    rows = screen.splitlines()
    started = "Gemini CLI v" in screen or any(row.startswith(" > ") for row in rows)
    return started and any("Type your message" in row for row in rows[-8:]) and SPINNER not in screen


def _starting(screen: str) -> bool:
    """The input area is drawn and nothing above it yet (the header comes once set-up is done)."""
    rows = [row for row in screen.splitlines() if row.strip()]
    return bool(rows) and any("Type your message" in row for row in rows) and "Gemini CLI v" not in screen \
        and not any(row.startswith(" > ") for row in rows)


def record_main(world: World, size: tuple[int, int] = (220, 50), suffix: str = "") -> None:
    """idle, processing, completed (plain and after a tool), error: the default (yolo) launch."""
    rec = recorder(world, size)
    script = world.server.script
    rec.start(profile=AgentProfile(name="recorder", system_prompt="You answer briefly."))
    # Transient (under a second): taken the moment it shows, not after it settles.
    rec.save(f"unknown_starting{suffix}", rec.wait(_starting, "the prompt without the header", settle=0.0),
             "unknown", note="prompt drawn before the header: still setting up")
    rec.save(f"idle{suffix}", rec.wait(_prompt_ready, "the prompt"), "idle")
    held_turn(rec, busy=lambda s: SPINNER in s, ready=_prompt_ready, suffix=suffix)
    tool_turn(rec, call_tool("run_shell_command", {"command": "ls", "description": "List files"}),
              ready=_prompt_ready, suffix=suffix, shown=LONG_ANSWER_SHOWN)

    script.add(call_tool("run_shell_command", {"command": "sleep 4", "description": "Wait for the build"}),
               reply("The build finished."))
    rec.type("Wait for the build.")
    screen = rec.wait_sign(lambda s: "sleep 4" in s and SPINNER in s, "the running tool")
    rec.save(f"processing_tool{suffix}", screen, "processing", note="a shell command is running")
    screen = rec.wait(lambda s: "The build finished." in s and _prompt_ready(s), "the answer after the tool")
    rec.save(f"completed_after_running_tool{suffix}", screen, "completed", last_message="The build finished.")

    # A 4xx: Gemini CLI retries 429 and 5xx answers for a long while before it shows them.
    failed_turn(rec, fail(400, "API key not valid. Please pass a valid API key.", kind="INVALID_ARGUMENT"),
                shows="API Error", ready=_prompt_ready, note="the API answered 400 INVALID_ARGUMENT",
                suffix=suffix)
    rec.stop()


def record_permission(world: World) -> None:
    """waiting_user_answer: a tool approval under the default approval mode."""
    rec = recorder(world)
    rec.start(profile=AgentProfile(name="careful", permission_mode="default"))
    rec.wait(_prompt_ready, "the prompt")
    create = call_tool("run_shell_command", {"command": "touch recorded.txt", "description": "Create a file"})
    approval_turn(rec, create, asking=lambda s: "Allow execution of" in s and "● 1. Allow once" in s,
                  ready=_prompt_ready, note="shell command approval")
    rec.stop()


def record_question(world: World) -> None:
    """waiting_user_answer: the model asks the user a multiple-choice question (ask_user)."""
    rec = recorder(world)
    question = {"questions": [{
        "question": QUESTION, "header": "Database", "type": "choice",
        "options": [{"label": "SQLite", "description": "Embedded"},
                    {"label": "Postgres", "description": "Server"}],
    }]}
    rec.start()
    rec.wait(_prompt_ready, "the prompt")
    question_turn(rec, call_tool("ask_user", question), asking=lambda s: QUESTION in s and "SQLite" in s,
                  ready=_prompt_ready, note="ask_user choice")
    rec.stop()


def record_dialogs(world: World) -> None:
    """Start-up dialogs, shown when the private home lacks the answer (kept to pin their wording)."""
    rec = recorder(world)
    rec.start(plan_env={"GEMINI_CLI_TRUST_WORKSPACE": None})
    screen = rec.wait(lambda s: "Do you trust the files in this folder?" in s, "the trust dialog")
    rec.save("dialog_trust_folder", screen, "waiting_user_answer", dialog="trust folder",
             note="start-up dialog")
    rec.stop()

    def no_sign_in(settings: dict) -> None:
        settings.get("security", {}).pop("auth", None)

    rec.start(edit_file=json_edit("settings.json", no_sign_in))
    screen = rec.wait(lambda s: "How would you like to authenticate" in s, "the sign-in dialog")
    rec.save("dialog_sign_in_method", screen, "waiting_user_answer", dialog="sign-in method",
             note="start-up dialog")
    rec.keys("Enter")
    screen = rec.wait(lambda s: "Enter Gemini API Key" in s, "the API key dialog")
    rec.save("dialog_api_key", screen, "waiting_user_answer", dialog="API key confirmation",
             note="start-up dialog")
    rec.keys("Enter")
    rec.wait(_prompt_ready, "the prompt after the sign-in")
    rec.stop()


def record_exit(world: World) -> None:
    """error: Gemini CLI refusing an approval mode it does not know (it prints its usage and exits)."""
    rec = recorder(world)
    rec.start(profile=AgentProfile(name="odd", permission_mode="autopilot"))
    screen = rec.wait(lambda s: "--help" in s, "the refusal", settle=0.5)
    rec.save("exited_bad_approval_mode", screen, "error",
             note="the program exited; the kernel also gets an 'exited' event")
    rec.stop()


RECORDING = Recording(
    provider=gemini_cli_provider(), package="@google/gemini-cli", cli=npm("gemini"),
    model_server=lambda: GeminiServer(Script()),
    # A fixed, machine-neutral folder (the footer shows the working folder's path), this recorder's own:
    # recorders of other CLIs may run at the same time.
    root=lambda: neutral_root("cao-screens-gemini-cli"),
    setup=lambda world: {**world.server.client_env(), "CAO_GEMINI_CLI_BIN": str(world.cli.binary),
                         "TERM": "xterm-256color"},
    scenarios=(record_main, record_permission, record_question, record_dialogs, record_exit,
               at_size(record_main, (100, 30))),
)
