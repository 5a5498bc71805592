"""Claude Code's recording scenarios: its screens in every status, from the real CLI.

Record them (from the repository root)::

    uv run --no-sync python -m cao_testkit.record providers/cao-provider-claude-code [--version X]

The recording installs ``@anthropic-ai/claude-code@X`` (default: the newest tested version) into the
live-CLI cache and drives it with a scripted Anthropic server. The working folder sits in the sandbox's
HOME, which Claude Code shows as ``~/project``; dialogs that print the full path show the fixed
``<tmp>/cao-screens-claude-code/home/project``, so no path of the recording machine ends up in a fixture.

Each screen is labelled by what the scenario made the CLI do (a held model turn is "processing", a
permission request is "waiting_user_answer"...), never by the detector under test; the recorder only
waits for the screen to settle on the sign it expects.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable

from cao_hookspecs import AgentProfile
from cao_provider_claude_code.prompts import read_prompt
from cao_provider_claude_code.provider import claude_code_provider
from cao_testkit.models import Script, call_tool, fail, reply
from cao_testkit.models.anthropic import AnthropicServer
from cao_testkit.recorder import EditFile, ScreenRecorder, json_edit, neutral_root
from cao_testkit.recording import Recording, World, at_size, npm
from cao_testkit.steps import (
    CHOSEN,
    QUESTION,
    Outcome,
    answer_each_option,
    approval_turn,
    asking,
    failed_turn,
    held_turn,
    question_turn,
    tool_turn,
)


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


CAREFUL = AgentProfile(name="careful", permission_mode="default")
BASH_CALL = {"command": "touch recorded.txt", "description": "Create a file"}
QUESTION_CALL = {"questions": [{
    "question": QUESTION, "header": "Database", "multiSelect": False,
    "options": [{"label": "SQLite", "description": "Embedded"},
                {"label": "Postgres", "description": "Server"}],
}]}


def _asking_permission(screen: str) -> bool:
    return "Do you want to" in screen and "Esc to cancel" in screen


def _asking_question(screen: str) -> bool:
    return QUESTION in screen and "Enter to select" in screen


def _fresh(world: World, size: tuple[int, int],
           profile: AgentProfile | None = None) -> Callable[[], ScreenRecorder]:
    """A terminal at its prompt, in a project folder without the rules an earlier answer saved there
    ("always allow" writes the project's settings, which would keep the next run from asking)."""

    def start() -> ScreenRecorder:
        shutil.rmtree(world.home / "project" / ".claude", ignore_errors=True)
        rec = world.recorder(size)
        rec.start(profile=profile)
        rec.wait(_box_ready, "the prompt")
        return rec

    return start


def record_permission(world: World, size: tuple[int, int] = (220, 50), suffix: str = "") -> None:
    """waiting_user_answer: a Bash permission prompt under the default permission mode, and each of its
    options picked by its digit on a terminal of its own."""
    name = f"waiting_user_answer{suffix}"
    if not suffix:
        rec = _fresh(world, size, CAREFUL)()
        approval_turn(rec, call_tool("Bash", BASH_CALL), asking=_asking_permission, ready=_box_ready,
                      note="Bash permission prompt", animated=True)
        rec.stop()
    done = "Created the file."
    ran = Outcome(lambda s: done in s and _box_ready(s), "completed", last_message=done)
    answer_each_option(
        _fresh(world, size, CAREFUL),
        asking(world.server.script, call_tool("Bash", BASH_CALL), _asking_permission, "Create a file.",
               {1: reply(done), 2: reply(done), 3: reply(done)}, animated=True),
        read_prompt, name=name, note="Bash permission prompt",
        outcomes={1: ran, 2: ran, 3: ran,
                  4: Outcome(lambda s: "Interrupted" in s and _box_ready(s), "idle",
                             note="the call was refused; Claude Code waits for the user")},
    )


def record_question(world: World, size: tuple[int, int] = (220, 50), suffix: str = "") -> None:
    """waiting_user_answer: the model asks the user a multiple-choice question (AskUserQuestion), and
    each answer picked by its digit on a terminal of its own."""
    name = f"waiting_user_answer_question{suffix}"
    if not suffix:
        rec = _fresh(world, size)()
        question_turn(rec, call_tool("AskUserQuestion", QUESTION_CALL), asking=_asking_question,
                      ready=_box_ready, note="AskUserQuestion menu", animated=True)
        rec.stop()
    postgres = "Going with Postgres."
    answer_each_option(
        _fresh(world, size),
        asking(world.server.script, call_tool("AskUserQuestion", QUESTION_CALL), _asking_question,
               "Set up storage.", {1: reply(CHOSEN), 2: reply(postgres), 4: reply("What would you like to discuss?")},
               animated=True),
        read_prompt, name=name, note="AskUserQuestion menu",
        outcomes={1: Outcome(lambda s: CHOSEN in s and _box_ready(s), "completed", last_message=CHOSEN),
                  2: Outcome(lambda s: postgres in s and _box_ready(s), "completed", last_message=postgres),
                  3: Outcome(lambda s: "to edit in" in s, "waiting_user_answer",
                             note="the free-text row has the cursor and takes the answer's text"),
                  4: Outcome(lambda s: "What would you like to discuss?" in s and _box_ready(s), "completed",
                             last_message="What would you like to discuss?")},
    )


# Each start-up dialog: the seeded config's answer left out, and what the CLI shows once it is answered.
def _untrusted(config: dict) -> None:
    config.pop("projects", None)


def _key_unknown(config: dict) -> None:
    config["customApiKeyResponses"] = {"approved": [], "rejected": []}


def _bypass_unaccepted(config: dict) -> None:
    config.pop("bypassPermissionsModeAccepted", None)


def _left_dialog(screen: str) -> bool:
    rows = [row for row in screen.splitlines() if row.strip()]
    return bool(rows) and "Enter to confirm" not in rows[-1]


_EXITED = Outcome(_left_dialog, "error", note="the program exited, saying why")
_PROMPT = Outcome(_box_ready, "idle")
DIALOG_SCENES = (
    ("dialog_trust_folder", "trust folder", _untrusted, "one you trust", {1: _EXITED, 2: _PROMPT}),
    ("dialog_api_key", "API key confirmation", _key_unknown, "Do you want to use this API key?",
     {1: _PROMPT,
      2: Outcome(_box_ready, "idle", note="the key was refused; Claude Code starts all the same")}),
    # "No, exit" ends the program without drawing anything more: its screen is the dialog's last frame,
    # which no reading can tell from the open dialog; the recording checks that the program ended.
    ("dialog_bypass_permissions", "bypass permissions confirmation", _bypass_unaccepted,
     "Bypass Permissions mode", {2: _PROMPT}),
)


def record_dialogs(world: World, size: tuple[int, int] = (220, 50), suffix: str = "") -> None:
    """Start-up dialogs, shown when the seeded config lacks the answer (kept to pin their wording), and
    each of their options picked with the keys the kernel would send."""
    rec = world.recorder(size)
    for name, dialog, edit, sign in ((n, d, e, s) for n, d, e, s, _ in DIALOG_SCENES):
        rec.start(edit_file=json_edit(".claude.json", edit))
        # Claude Code drops keys pressed in the first moments after it draws a dialog: wait it out.
        screen = rec.wait(lambda s, sign=sign: sign in s, name, settle=1.0)
        rec.save(f"{name}{suffix}", screen, "waiting_user_answer", dialog=dialog, note="start-up dialog",
                 prompt=read_prompt(screen))
        rec.stop()

    for name, _, edit, sign, outcomes in DIALOG_SCENES:

        def start(edit: EditFile = json_edit(".claude.json", edit)) -> ScreenRecorder:
            rec.start(edit_file=edit)
            return rec

        def ask(r: ScreenRecorder, sign: str = sign) -> str:
            return r.wait(lambda s: sign in s, "the dialog", settle=1.0)

        if len(outcomes) == 2:
            answer_each_option(start, ask, read_prompt, name=f"{name}{suffix}", outcomes=outcomes,
                               save_prompt=False)
            continue
        for number, outcome in outcomes.items():
            _answer_one(start(), ask, name=f"{name}{suffix}", number=number, outcome=outcome)
        _exits(world, start(), ask, number=1)


def _answer_one(rec: ScreenRecorder, ask: Callable[[ScreenRecorder], str], *, name: str, number: int,
                outcome: Outcome) -> None:
    """What answer_each_option does for one option, for a prompt whose other options leave no screen."""
    try:
        prompt = read_prompt(ask(rec))
        assert prompt is not None, f"{name}: no prompt read"
        keys = list(prompt.option(number).keys)
        rec.keys(*keys)
        after = rec.wait(outcome.sign, f"the screen after option {number}")
        rec.save(f"{name}_answer{number}", after, outcome.status, note=outcome.note,
                 answers={"screen": name, "option": number, "keys": keys})
    finally:
        rec.stop()


def _exits(world: World, rec: ScreenRecorder, ask: Callable[[ScreenRecorder], str], *, number: int) -> None:
    """Checks that option ``number``'s keys end the program (no screen to save: it keeps the last frame)."""
    try:
        prompt = read_prompt(ask(rec))
        assert prompt is not None
        rec.keys(*prompt.option(number).keys)
        deadline = time.monotonic() + 10
        while (info := world.backend.info(rec.terminal_id)) is not None and info.alive:
            if time.monotonic() > deadline:
                raise SystemExit(f"option {number} ({prompt.option(number).label}) did not end the program")
            time.sleep(0.1)
        print(f"  option {number} ({prompt.option(number).label}): the program ended")
    finally:
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
    # A name of its own: another CLI's recording may be using the shared one at the same time.
    root=lambda: neutral_root("cao-screens-claude-code"), setup=sandbox_env,
    scenarios=(record_main, record_permission, record_question, record_dialogs, record_exit,
               at_size(record_main, (100, 30)), at_size(record_permission, (100, 30)),
               at_size(record_question, (100, 30)), at_size(record_dialogs, (100, 30))),
)
