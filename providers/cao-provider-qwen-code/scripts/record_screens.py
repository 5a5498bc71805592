"""Qwen Code's recording scenarios: its screens in every status, from the real CLI.

Record them (from the repository root)::

    uv run --no-sync python -m cao_testkit.record providers/cao-provider-qwen-code [--version X]

The recording installs ``@qwen-code/qwen-code@X`` (default: the newest tested version) into the
live-CLI cache and drives it with a scripted Chat Completions server (Qwen Code's OpenAI sign-in, from
the ``OPENAI_*`` variables). The working folder sits in the sandbox's HOME under a fixed root, so a
path Qwen Code prints (its header, with the user's own settings) shows nothing of the recording
machine.

Each screen is labelled by what the scenario made the CLI do (a held model turn is "processing", a
tool waiting for approval is "waiting_user_answer"...), never by the detector under test; the recorder
only waits for the screen to settle on the sign it expects. Prompts: each kind (a tool's approval, a
question the model asks) is recorded at 220x50 and 100x30, and every option of each is pressed on a
fresh terminal with the keys ``read_prompt`` gives it (``answer_each_option``), the screen after it
saved.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable

from cao_hookspecs import AgentProfile
from cao_provider_qwen_code.prompts import read_prompt
from cao_provider_qwen_code.provider import provider
from cao_testkit.models import Script, call_tool, fail, reply
from cao_testkit.models.chat import ChatServer
from cao_testkit.recorder import ScreenRecorder, neutral_root
from cao_testkit.recording import Recording, World, at_size, npm
from cao_testkit.steps import (CHOSEN, QUESTION, Outcome, answer_each_option, asking, failed_turn, held_turn,
                               tool_turn)

#: The model the scripted server serves (Qwen Code names it in its footer).
MODEL = "scripted"
CAREFUL = AgentProfile(name="careful", permission_mode="default")
SHELL_CALL = {"command": "touch recorded.txt", "description": "Create a file"}
# Long enough to be cut on a 100-column terminal.
LONG_SHELL_CALL = {"command": "printf '%s\\n' 'the build script is missing a clean step' "
                              "'two tests are slow' 'next: add the clean step' > findings.txt",
                   "description": "Write the findings"}
QUESTION_CALL = {"questions": [{
    "question": QUESTION, "header": "Database", "multiSelect": False,
    "options": [{"label": "SQLite", "description": "Embedded"},
                {"label": "Postgres", "description": "Server"}],
}]}
DONE = "Created the file."
POSTGRES = "Going with Postgres."


def _box_ready(screen: str) -> bool:
    """The input box is back and no turn runs."""
    rows = [row for row in screen.splitlines() if row.strip()]
    return (any(row.startswith((">   Type your message", "*   Type your message")) for row in rows[-6:])
            and "esc to cancel)" not in screen and "Enter to steer" not in screen)


def _busy(screen: str) -> bool:
    return "esc to cancel)" in screen


def _asking_permission(screen: str) -> bool:
    return "Waiting for user confirmation" in screen and "1. Yes, allow once" in screen


def _asking_question(screen: str) -> bool:
    return "Waiting for user confirmation" in screen and QUESTION in screen


def record_main(world: World, size: tuple[int, int] = (220, 50), suffix: str = "") -> None:
    """idle, processing, completed (plain and after a tool), error: the default (YOLO) launch."""
    rec = world.recorder(size)
    rec.start(profile=AgentProfile(name="recorder", system_prompt="You answer briefly."))
    rec.save(f"idle{suffix}", rec.wait(_box_ready, "the prompt"), "idle")
    held_turn(rec, busy=_busy, ready=_box_ready, suffix=suffix)
    tool_turn(rec, call_tool("run_shell_command", {"command": "ls", "description": "List files"}),
              ready=_box_ready, suffix=suffix,
              # Drawn as Markdown: list items indented by one space.
              shown="I listed the folder.\n\nFindings:\n\n - the build script is missing a clean step\n"
                    " - two tests are slow\n\nNext I would add the clean step.")
    # A 400 is not retried (a 429 or a 5xx is, several times, before the error shows).
    failed_turn(rec, fail(400, "model scripted is not served here", kind="invalid_request_error"),
                shows="API Error", ready=_box_ready, note="the API answered 400", suffix=suffix)
    rec.stop()


def _fresh(world: World, size: tuple[int, int],
           profile: AgentProfile | None = None) -> Callable[[], ScreenRecorder]:
    """A terminal at its prompt, in a project folder without the rules an earlier answer saved there
    ("always allow ... in this project" writes the project's settings, which would keep the next run
    from asking)."""
    def start() -> ScreenRecorder:
        shutil.rmtree(world.home / "project" / ".qwen", ignore_errors=True)
        rec = world.recorder(size)
        rec.start(profile=profile)
        rec.wait(_box_ready, "the prompt")
        return rec

    return start


def record_permission(world: World, size: tuple[int, int] = (220, 50), suffix: str = "") -> None:
    """waiting_user_answer: a shell command waiting for approval under the ``default`` approval mode,
    and each option picked with its keys on a terminal of its own."""
    call = call_tool("run_shell_command", SHELL_CALL if not suffix else LONG_SHELL_CALL)
    ran = Outcome(lambda s: DONE in s and _box_ready(s), "completed", last_message=DONE)
    answer_each_option(
        _fresh(world, size, CAREFUL),
        asking(world.server.script, call, _asking_permission, "Create a file.",
               {1: reply(DONE), 2: reply(DONE), 3: reply(DONE)}, animated=True),
        read_prompt, name=f"waiting_user_answer{suffix}", note="shell command waiting for approval",
        outcomes={1: ran, 2: ran, 3: ran,
                  4: Outcome(lambda s: _box_ready(s) and not _asking_permission(s), "idle",
                             note="the call was refused; Qwen Code waits for the user")},
    )


def record_question(world: World, size: tuple[int, int] = (220, 50), suffix: str = "") -> None:
    """waiting_user_answer: the model asks the user a multiple-choice question (ask_user_question), and
    each answer picked by its digit on a terminal of its own."""
    answer_each_option(
        _fresh(world, size),
        asking(world.server.script, call_tool("ask_user_question", QUESTION_CALL), _asking_question,
               "Set up storage.", {1: reply(CHOSEN), 2: reply(POSTGRES)}, animated=True),
        read_prompt, name=f"waiting_user_answer_question{suffix}", note="ask_user_question menu",
        outcomes={1: Outcome(lambda s: CHOSEN in s and _box_ready(s), "completed", last_message=CHOSEN),
                  2: Outcome(lambda s: POSTGRES in s and _box_ready(s), "completed", last_message=POSTGRES),
                  3: Outcome(lambda s: "Waiting for user confirmation" in s and "3. Type something" not in s,
                             "waiting_user_answer", animated=True,
                             note="the free-text row has the cursor and takes the answer's text")},
    )


def sandbox_env(world: World) -> dict[str, str]:
    return {**world.server.client_env(), "OPENAI_MODEL": MODEL, "CAO_QWEN_CODE_BIN": str(world.cli.binary),
            "TERM": "xterm-256color"}


RECORDING = Recording(
    provider=provider(), package="@qwen-code/qwen-code", cli=npm("qwen"),
    model_server=lambda: ChatServer(Script(), models=(MODEL,)),
    # A fixed, machine-neutral folder: Qwen Code's header (hidden by cao's settings) prints its full path.
    root=lambda: neutral_root("cao-screens-qwen-code"), setup=sandbox_env,
    scenarios=(record_main, record_permission, record_question,
               at_size(record_main, (100, 30)), at_size(record_permission, (100, 30)),
               at_size(record_question, (100, 30))),
)
