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

import re
from collections.abc import Callable, Mapping

import attrs

from cao_hookspecs import AgentProfile, LaunchContext, LaunchPlan
from cao_provider_gemini_cli.provider import gemini_cli_provider
from cao_testkit.models import Script, call_tool, fail, reply
from cao_testkit.models.gemini import GeminiServer
from cao_testkit.models.script import Conversation, respond
from cao_testkit.recorder import ScreenRecorder, json_edit, neutral_root
from cao_testkit.recording import Recording, World, at_size, npm
from cao_testkit.steps import (
    LONG_ANSWER,
    QUESTION,
    Outcome,
    answer_each_option,
    failed_turn,
    held_turn,
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


def _answering(world: World, size: tuple[int, int], name: str, fresh: Callable[[ScreenRecorder], None],
               ask: Callable[[ScreenRecorder], str], outcomes: Mapping[int, Outcome], *, note: str,
               dialog: str | None = None) -> ScreenRecorder:
    """``name``: the prompt ``ask`` brings a fresh terminal (started by ``fresh``) to, and for each of its
    options the screen after pressing that option's keys (``<name>_answer<n>``). A start-up ``dialog``'s
    screen is saved here, naming the dialog as well as the prompt (the shared step names no dialog)."""
    rec = recorder(world, size)
    read_prompt = gemini_cli_provider().read_prompt
    saved: list[str] = []

    def started() -> ScreenRecorder:
        fresh(rec)
        return rec

    def asked(r: ScreenRecorder) -> str:
        screen = ask(r)
        if dialog is not None and not saved:
            r.save(name, screen, "waiting_user_answer", dialog=dialog, prompt=read_prompt(screen), note=note)
            saved.append(name)
        return screen

    answer_each_option(started, asked, read_prompt, name=name, outcomes=outcomes, note=note,
                       save_prompt=dialog is None)
    return rec


def _again(rec: ScreenRecorder, answered: str, name: str) -> None:
    """The screen saved as ``answered`` saved once more as ``name``, the name it was recorded under before
    each option was answered on a terminal of its own."""
    entry = rec.manifest[answered]
    screen = (rec.out / f"{answered}.txt").read_text(encoding="utf-8").removesuffix("\n")
    rec.save(name, screen, entry["status"], last_message=entry.get("last_message"),
             note=entry.get("note", ""))


CREATED = "Created the file."


def record_permission(world: World, size: tuple[int, int] = (220, 50), suffix: str = "") -> None:
    """waiting_user_answer: a tool approval under the default approval mode, each option answered."""

    def fresh(rec: ScreenRecorder) -> None:
        rec.start(profile=AgentProfile(name="careful", permission_mode="default"))
        rec.wait(_prompt_ready, "the prompt")

    def ask(rec: ScreenRecorder) -> str:
        world.server.script.add(
            call_tool("run_shell_command", {"command": "touch recorded.txt", "description": "Create a file"}),
            reply(CREATED))
        rec.type("Create a file.")
        return rec.wait(lambda s: "Allow execution of" in s and "\u25cf 1. Allow once" in s,
                        "the approval question")

    approved = Outcome(lambda s: CREATED in s and _prompt_ready(s), "completed", last_message=CREATED)
    declined = Outcome(lambda s: "Allow execution of" not in s and _prompt_ready(s), "idle",
                       note="the command declined: the turn ends, the prompt waits for what to do instead")
    name = f"waiting_user_answer{suffix}"
    rec = _answering(world, size, name, fresh, ask, {1: approved, 2: approved, 3: declined},
                     note="shell command approval")
    if not suffix:
        _again(rec, f"{name}_answer1", "completed_after_permission")


def _chosen(conversation: Conversation) -> object:
    result = conversation.last_tool_result
    picked = "Postgres" if result is not None and "Postgres" in result.output else "SQLite"
    return reply(f"Going with {picked}.")


def record_question(world: World, size: tuple[int, int] = (220, 50), suffix: str = "") -> None:
    """waiting_user_answer: the model asks the user a multiple-choice question (ask_user), each option
    answered."""
    question = {"questions": [{
        "question": QUESTION, "header": "Database", "type": "choice",
        "options": [{"label": "SQLite", "description": "Embedded"},
                    {"label": "Postgres", "description": "Server"}],
    }]}

    def fresh(rec: ScreenRecorder) -> None:
        rec.start()
        rec.wait(_prompt_ready, "the prompt")

    def ask(rec: ScreenRecorder) -> str:
        world.server.script.add(call_tool("ask_user", question), respond(_chosen))
        rec.type("Set up storage.")
        return rec.wait(lambda s: QUESTION in s and "SQLite" in s, "the question")

    def chose(answer: str) -> Outcome:
        return Outcome(lambda s: answer in s and _prompt_ready(s), "completed", last_message=answer)

    custom = Outcome(lambda s: "Enter to submit \u00b7 Esc to cancel" in s, "waiting_user_answer",
                     note="its text field opened: the answer is typed there, then Enter")
    name = f"waiting_user_answer_question{suffix}"
    rec = _answering(world, size, name, fresh, ask,
                     {1: chose("Going with SQLite."), 2: chose("Going with Postgres."), 3: custom},
                     note="ask_user choice")
    if not suffix:
        _again(rec, f"{name}_answer1", "completed_after_question")


TRUST_QUESTION = "Do you trust the files in this folder?"


def record_trust(world: World, size: tuple[int, int] = (220, 50), suffix: str = "") -> None:
    """The trust dialog (shown when the launch does not trust the folder), each option answered."""

    def fresh(rec: ScreenRecorder) -> None:
        rec.start(plan_env={"GEMINI_CLI_TRUST_WORKSPACE": None})

    def ask(rec: ScreenRecorder) -> str:
        return rec.wait(lambda s: TRUST_QUESTION in s, "the trust dialog")

    started = Outcome(_prompt_ready, "idle", note="answered: Gemini CLI shows its prompt")
    name = f"dialog_trust_folder{suffix}"
    rec = _answering(world, size, name, fresh, ask, {1: started, 2: started, 3: started},
                     note="start-up dialog", dialog="trust folder")
    dialog = next(d for d in gemini_cli_provider().startup_dialogs if d.name == "trust folder")
    for number in (1, 2, 3):
        answered = f"{name}_answer{number}"
        if re.search(dialog.pattern, (rec.out / f"{answered}.txt").read_text(encoding="utf-8")):
            # The answered dialog stays drawn above the prompt Gemini CLI restarts into, and its pattern
            # still matches there: the manifest says so, as the dialog screen it is too.
            rec.manifest[answered]["dialog"] = dialog.name


def _no_sign_in(settings: dict) -> None:
    settings.get("security", {}).pop("auth", None)


def record_dialogs(world: World) -> None:
    """The sign-in dialogs, shown when the private home names no sign-in, each option answered on a
    terminal of its own (by hand: the screen an option leads to is a dialog of its own)."""
    rec = recorder(world)
    read_prompt = gemini_cli_provider().read_prompt
    menu = "dialog_sign_in_method"

    def to_menu(env: dict[str, str | None] | None = None) -> str:
        rec.start(edit_file=json_edit("settings.json", _no_sign_in), plan_env=env)
        return rec.wait(lambda s: "How would you like to authenticate" in s, "the sign-in dialog")

    def pick(name: str, screen: str, number: int) -> dict[str, object]:
        prompt = read_prompt(screen)
        if prompt is None:
            raise SystemExit(f"{name}: the provider read no prompt on the screen:\n{screen}")
        keys = list(prompt.option(number).keys)
        rec.keys(*keys)
        return {"screen": name, "option": number, "keys": keys}

    screen = to_menu()
    rec.save(menu, screen, "waiting_user_answer", dialog="sign-in method", prompt=read_prompt(screen),
             note="start-up dialog")
    answers = pick(menu, screen, 1)
    after = rec.wait(lambda s: "Restarting Gemini CLI" in s, "the Google sign-in")
    rec.save(f"{menu}_answer1", after, "unknown", answers=answers,
             note="Google sign-in chosen: Gemini CLI restarts to run it")
    rec.stop()

    answers = pick(menu, to_menu(), 2)
    key = rec.wait(lambda s: "Enter Gemini API Key" in s and "Press Enter to submit" in s,
                   "the API key dialog")
    rec.save("dialog_api_key", key, "waiting_user_answer", dialog="API key confirmation",
             prompt=read_prompt(key), answers=answers, note="start-up dialog")
    answers = pick("dialog_api_key", key, 1)
    rec.save("dialog_api_key_answer1", rec.wait(_prompt_ready, "the prompt after the sign-in"), "idle",
             answers=answers, note="the key from the environment kept")
    rec.stop()

    # Without its settings in the environment Gemini CLI refuses Vertex AI and asks again.
    vertex = {"GOOGLE_CLOUD_PROJECT": "cao-recording", "GOOGLE_CLOUD_LOCATION": "global"}
    answers = pick(menu, to_menu(vertex), 3)
    after = rec.wait(lambda s: "How would you like to authenticate" not in s and _prompt_ready(s),
                     "the prompt after Vertex AI")
    rec.save(f"{menu}_answer3", after, "idle", answers=answers,
             note="Vertex AI chosen with its settings in the environment: Gemini CLI starts")
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
    scenarios=(record_main, record_permission, record_question, record_trust, record_dialogs, record_exit,
               at_size(record_main, (100, 30)), at_size(record_permission, (100, 30)),
               at_size(record_question, (100, 30)), at_size(record_trust, (100, 30))),
    # A declined approval leaves the model's answer to it unasked: each scenario gets a server of its own.
    world_per_scenario=True,
)
