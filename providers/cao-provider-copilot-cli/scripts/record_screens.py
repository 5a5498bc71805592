"""Copilot CLI's recording scenarios: its screens in every status, from the real CLI.

Record them (from the repository root)::

    uv run --no-sync python -m cao_testkit.record providers/cao-provider-copilot-cli [--version X]

The recording installs ``@github/copilot@X`` (default: the newest tested version) into the live-CLI
cache. Copilot CLI talks to a custom model provider when ``COPILOT_PROVIDER_BASE_URL`` is set ("bring
your own key"); here that is a scripted Anthropic Messages server on 127.0.0.1, with
``COPILOT_OFFLINE=true`` and an unreachable proxy for everything else, so nothing leaves the machine and
no GitHub account is needed. The signed-out screens are recorded with the provider variables emptied,
and the refusals by breaking the setup on purpose.

Each screen is labelled by what the scenario made the CLI do (a held model turn is "processing", a
permission request is "waiting_user_answer"...), never by the detector under test; the recorder only
waits for the screen to settle on the sign it expects. The working folder is the fixed
``<tmp>/cao-screens-copilot-cli/home/project``, so no path of the recording machine ends up in a fixture.
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path

from cao_hookspecs import AgentProfile
from cao_provider_copilot_cli.prompts import read_prompt
from cao_provider_copilot_cli.provider import copilot_cli_provider
from cao_testkit.models import Script, call_tool, fail, reply
from cao_testkit.models.anthropic import FAKE_API_KEY, AnthropicServer
from cao_testkit.models.cli import cache_root
from cao_testkit.recorder import ScreenRecorder, neutral_root
from cao_testkit.recording import Recording, World, at_size, npm
from cao_testkit.steps import (
    CHOSEN,
    LONG_ANSWER,
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

MODEL = "claude-sonnet-4"
# How Copilot renders LONG_ANSWER's Markdown (list bullets become "•").
LONG_ANSWER_SHOWN = LONG_ANSWER.replace("\n- ", "\n• ")
PROVIDER_VARS = ("COPILOT_PROVIDER_BASE_URL", "COPILOT_PROVIDER_TYPE", "COPILOT_PROVIDER_API_KEY",
                 "COPILOT_OFFLINE", "COPILOT_MODEL")
# The CLI unpacks ~240 MB on its first start (even for --version): one shared copy, not one per HOME.
PKG_CACHE = cache_root() / "copilot-pkg"


def copilot_env(world: World) -> dict[str, str]:
    """The environment Copilot runs with: the scripted server as model provider, nothing else reachable.
    (The sandbox already keeps the user's GitHub account and Copilot settings out.) Copilot is marked as
    launched before, the way a user's config is after their first run (no animated banner)."""
    copilot_home = world.home / ".copilot"
    copilot_home.mkdir(parents=True, exist_ok=True)
    (copilot_home / "config.json").write_text(json.dumps({"firstLaunchAt": "2026-01-01T00:00:00.000Z"}),
                                              encoding="utf-8")
    return {
        "CAO_COPILOT_CLI_BIN": str(world.cli.binary),
        "COPILOT_PROVIDER_BASE_URL": world.server.url,
        "COPILOT_PROVIDER_TYPE": "anthropic",
        "COPILOT_PROVIDER_API_KEY": FAKE_API_KEY,
        "COPILOT_MODEL": MODEL,
        "COPILOT_OFFLINE": "true",
        "COPILOT_PKG_CACHE_HOME": str(PKG_CACHE),
        "COPILOT_AUTO_UPDATE": "false",
        "HTTPS_PROXY": "http://127.0.0.1:9",
        "HTTP_PROXY": "http://127.0.0.1:9",
        "NO_PROXY": "127.0.0.1,localhost",
        "TERM": "xterm-256color",
    }


def recorder(world: World, size: tuple[int, int] = (220, 50)) -> ScreenRecorder:
    return world.recorder(size, settle=0.8)


def _footer(screen: str) -> str:
    rows = [row for row in screen.splitlines() if row.strip()]
    return rows[-1] if rows else ""


def _box_ready(screen: str) -> bool:
    rows = [row.rstrip() for row in screen.splitlines() if row.strip()]
    return len(rows) >= 3 and rows[-2].startswith("─") and rows[-3] == "❯" and "/ commands" in rows[-1]


def _busy(screen: str) -> bool:
    return " Working" in _footer(screen)


def record_main(world: World, size: tuple[int, int] = (220, 50), suffix: str = "") -> None:
    """idle, processing, completed (plain and after a tool), error: the default (allow-all) launch."""
    rec = recorder(world, size)
    rec.start(profile=AgentProfile(name="recorder", system_prompt="You answer briefly."))
    rec.save(f"idle{suffix}", rec.wait(_box_ready, "the prompt"), "idle")
    held_turn(rec, busy=_busy, ready=_box_ready, suffix=suffix)
    tool_turn(rec, call_tool("bash", {"command": "ls", "description": "List files"}), ready=_box_ready,
              suffix=suffix, shown=LONG_ANSWER_SHOWN)
    failed_turn(rec, fail(400, "messages: text content blocks must be non-empty"), shows="must be non-empty",
                ready=_box_ready, note="the API answered 400", suffix=suffix)
    rec.stop()


def record_tool_and_cancel(world: World) -> None:
    """processing while a shell command runs, the user cancelling it (idle again), an MCP tool call."""
    rec = recorder(world)
    script = world.server.script
    probe = str(Path(__file__).with_name("probe_mcp.py"))
    mcp = {"probe": {"type": "stdio", "command": sys.executable, "args": [probe]}}
    rec.start(profile=AgentProfile(name="recorder", system_prompt="You answer briefly."), mcp_servers=mcp)
    rec.wait(_box_ready, "the prompt")
    # No answer after the call: a cancelled turn asks the model for nothing more.
    script.add(call_tool("bash", {"command": "sleep 30", "description": "Wait for the build"}))
    rec.type("Wait for the build.")
    screen = rec.wait_sign(lambda s: _busy(s) and "sleep 30" in s, "the running command")
    rec.save("processing_tool", screen, "processing", note="a shell command is running")
    rec.keys("Escape")
    time.sleep(0.2)
    rec.keys("Escape")
    screen = rec.wait(lambda s: "Operation cancelled by user" in s and _box_ready(s), "the cancelled turn")
    rec.save("idle_cancelled", screen, "idle", note="the user pressed Esc twice while a command ran")

    script.add(call_tool("probe-ping", {"text": "hello"}), reply("The probe answered."))
    rec.type("Ping the probe.")
    screen = rec.wait(lambda s: "The probe answered." in s and _box_ready(s), "the answer after the MCP tool")
    rec.save("completed_after_mcp_tool", screen, "completed", last_message="The probe answered.")
    rec.stop()


def record_between_steps(world: World, attempts: int = 8) -> None:
    """processing: a tool has run (or failed) and the model's next step has not started. For a moment the
    footer shows its idle hints; only the tool call as the turn's last item tells the turn is not over."""
    rec = recorder(world)
    script = world.server.script
    rec.start(profile=AgentProfile(name="recorder", system_prompt="You answer briefly."))
    rec.wait(_box_ready, "the prompt")
    cases = (
        ("processing_between_steps", "ls", "List files", "$ Shell List files",
         "the shell command finished; the model's next step not started yet"),
        ("processing_after_failed_tool", "exit 3", "Fail on purpose", "✗ Shell Fail on purpose",
         "the shell command failed; the model's next step not started yet"),
    )
    count = 0
    for name, command, description, row, note in cases:
        for _ in range(attempts):
            count += 1
            asked, done = f"Step {count}, please.", f"Finished step {count}."
            script.add(call_tool("bash", {"command": command, "description": description}), reply(done))
            rec.type(asked)
            screen = rec.catch(lambda s, a=asked, r=row, d=done: a in s and r in s.split(a)[-1]
                               and "/ commands" in _footer(s) and d not in s)
            rec.wait(lambda s, d=done: d in s and _box_ready(s), "the answer after the tool")
            if screen is not None:
                rec.save(name, screen, "processing", note=note)
                break
        else:
            raise SystemExit(f"{name}: the moment between a tool and the next step never showed "
                             f"in {attempts} tries")
    rec.stop()


CAREFUL = AgentProfile(name="careful", system_prompt="You are careful.")
RESTRICTED = ("fs_*", "shell(git:*)")
SHELL_CALL = {"command": "touch recorded.txt", "description": "Create a file"}
QUESTION_CALL = {"message": QUESTION,
                 "requestedSchema": {"properties": {"db": {"type": "string", "title": "Database",
                                                           "enum": ["SQLite", "Postgres"]}},
                                     "required": ["db"]}}


def _trust_asked(screen: str) -> bool:
    return "Do you trust the files in this folder?" in screen


def _permission_asked(screen: str) -> bool:
    return "Do you want to run this command?" in screen


def _question_asked(screen: str) -> bool:
    return QUESTION in screen and "enter accept" in screen


def _forget(world: World) -> None:
    """Copilot's folder as the recording set it up: "remember this folder" and "don't ask again" answers
    of an earlier run are saved in it, and would keep the next run from asking."""
    copilot_home = world.home / ".copilot"
    shutil.rmtree(copilot_home, ignore_errors=True)
    copilot_home.mkdir(parents=True)
    (copilot_home / "config.json").write_text(json.dumps({"firstLaunchAt": "2026-01-01T00:00:00.000Z"}),
                                              encoding="utf-8")


def _restricted(world: World, size: tuple[int, int], *, trusted: bool) -> Callable[[], ScreenRecorder]:
    """A fresh terminal restricted to some tools: at the trust dialog, or past it at the prompt."""

    def start() -> ScreenRecorder:
        _forget(world)
        rec = recorder(world, size)
        rec.start(profile=CAREFUL, allowed_tools=RESTRICTED)
        if trusted:
            rec.wait(_trust_asked, "the trust dialog")
            rec.keys("Enter")
            rec.wait(_box_ready, "the prompt after trusting the folder")
        return rec

    return start


def record_restricted(world: World, size: tuple[int, int] = (220, 50), suffix: str = "") -> None:
    """The trust dialog and a permission prompt: a profile that allows only git among shell commands;
    then each option of both, picked with its keys on a terminal of its own."""
    if not suffix:
        _forget(world)
        rec = recorder(world, size)
        rec.start(profile=CAREFUL, allowed_tools=RESTRICTED)
        rec.wait(_trust_asked, "the trust dialog")
        rec.keys("Enter")
        rec.wait(_box_ready, "the prompt after trusting the folder")
        approval_turn(rec, call_tool("bash", SHELL_CALL), asking=_permission_asked, ready=_box_ready,
                      note="shell permission prompt")
        rec.stop()

    name = f"dialog_trust_folder{suffix}"
    ask_trust = _restricted(world, size, trusted=False)
    rec = ask_trust()
    screen = rec.wait(_trust_asked, "the trust dialog")
    rec.save(name, screen, "waiting_user_answer", dialog="trust folder", prompt=read_prompt(screen),
             note="start-up dialog of an agent restricted to some tools")
    rec.stop()
    trusted = Outcome(_box_ready, "idle")
    answer_each_option(ask_trust, lambda r: r.wait(_trust_asked, "the trust dialog"), read_prompt, name=name,
                       save_prompt=False,
                       outcomes={1: trusted, 2: trusted,
                                 3: Outcome(lambda s: not _trust_asked(s), "unknown",
                                            note="the folder was not trusted: the program exited")})

    done = "Created the file."
    ran = Outcome(lambda s: done in s and _box_ready(s), "completed", last_message=done)
    answer_each_option(
        _restricted(world, size, trusted=True),
        asking(world.server.script, call_tool("bash", SHELL_CALL), _permission_asked, "Create a file.",
               {1: reply(done), 2: reply(done)}),
        read_prompt, name=f"waiting_user_answer{suffix}", note="shell permission prompt",
        outcomes={1: ran, 2: ran,
                  3: Outcome(lambda s: not _permission_asked(s) and _box_ready(s), "idle",
                             note="the call was refused and the turn stopped")},
    )


def record_question(world: World, size: tuple[int, int] = (220, 50), suffix: str = "") -> None:
    """waiting_user_answer: the model asks the user to choose (the ask_user tool), and each answer picked
    with its keys on a terminal of its own."""
    if not suffix:
        rec = recorder(world, size)
        rec.start()
        rec.wait(_box_ready, "the prompt")
        question_turn(rec, call_tool("ask_user", QUESTION_CALL), asking=_question_asked, ready=_box_ready,
                      note="ask_user question")
        rec.stop()

    def start() -> ScreenRecorder:
        rec = recorder(world, size)
        rec.start()
        rec.wait(_box_ready, "the prompt")
        return rec

    postgres, own = "Going with Postgres.", "Going with MySQL."
    ask = asking(world.server.script, call_tool("ask_user", QUESTION_CALL), _question_asked, "Set up storage.",
                 {1: reply(CHOSEN), 2: reply(postgres), 3: reply(own)})
    name = f"waiting_user_answer_question{suffix}"
    field = Outcome(_field_open, "waiting_user_answer",
                    note="its text field opened: the answer is typed there, then Enter")
    outcomes = {1: Outcome(lambda s: CHOSEN in s and _box_ready(s), "completed", last_message=CHOSEN),
                2: Outcome(lambda s: postgres in s and _box_ready(s), "completed", last_message=postgres),
                3: field}
    for number, outcome in outcomes.items():
        rec = start()
        try:
            screen = ask(rec)
            prompt = read_prompt(screen)
            assert prompt is not None, f"{name}: no prompt read"
            if number == 1:
                rec.save(name, screen, "waiting_user_answer", prompt=prompt, note="ask_user question")
            keys = list(prompt.option(number).keys)
            rec.keys(*keys)
            after = rec.wait(outcome.sign, f"the screen after option {number}")
            waiting = {"prompt": read_prompt(after)} if outcome.status == "waiting_user_answer" else {}
            rec.save(f"{name}_answer{number}", after, outcome.status, last_message=outcome.last_message,
                     note=outcome.note, answers={"screen": name, "option": number, "keys": keys}, **waiting)
            if outcome is field:
                # The answer typed into the field, as the kernel types an answer's text.
                rec.type("MySQL")
                after = rec.wait(lambda s: "└ MySQL" in s and own in s and _box_ready(s),
                                 "the answer after the typed one")
                rec.save(f"{name}_answer{number}_text", after, "completed", last_message=own,
                         note="'MySQL' typed into the field, then Enter")
        finally:
            rec.stop()


def _field_open(screen: str) -> bool:
    rows = [row.strip() for row in screen.splitlines() if row.strip()]
    return (QUESTION in screen and "❯ Other (type your answer below)" in rows
            and len(rows) >= 2 and rows[-2] == "❯ Type your answer...")


def record_unreachable(world: World) -> None:
    """processing while Copilot retries a model provider it cannot reach, then the error it ends with."""
    rec = recorder(world)
    rec.start(env={"COPILOT_PROVIDER_BASE_URL": "http://127.0.0.1:9"})
    rec.wait(_box_ready, "the prompt")
    rec.type("Hello?")
    screen = rec.wait_sign(lambda s: "Retrying..." in s and _busy(s), "the retries")
    rec.save("processing_retrying", screen, "processing",
             note="the model provider cannot be reached; retrying")
    screen = rec.wait(lambda s: "Could not connect" in s and _box_ready(s), "the connection error",
                      timeout=90)
    rec.save("error_provider_unreachable", screen, "error", note="nothing listens at the provider's address")
    rec.stop()


def record_refusals(world: World) -> None:
    """error: Copilot CLI refusing to start (it exits at once; the kernel also gets an 'exited' event)."""
    rec = recorder(world)
    rec.start(env={"COPILOT_PROVIDER_BASE_URL": ""})
    screen = rec.wait(lambda s: "Offline mode requires" in s, "the refusal", settle=0.3)
    rec.save("error_offline_without_provider", screen, "error",
             note="COPILOT_OFFLINE=true without COPILOT_PROVIDER_BASE_URL; the program exited")
    rec.stop()
    # An option this release does not know, as an older release shows it for one cao passes.
    rec.start(extra_args=("--no-such-option",))
    screen = rec.wait(lambda s: "unexpected argument" in s, "the option error", settle=0.3)
    rec.save("error_bad_option", screen, "error", note="an unknown command-line option; the program exited")
    rec.stop()


def record_signed_out(world: World) -> None:
    """error: no model provider and no GitHub account (or token) to use Copilot's own models."""
    rec = recorder(world)
    rec.start(env={name: "" for name in PROVIDER_VARS})
    screen = rec.wait(lambda s: "Please use /login" in s and _box_ready(s), "the sign-in request")
    rec.save("error_not_signed_in", screen, "error", note="no GitHub account, token or model provider")
    rec.type("Hello?")
    screen = rec.wait(lambda s: "You must be logged in" in s and _box_ready(s), "the refusal to send")
    rec.save("error_not_signed_in_after_send", screen, "error", note="a message sent while signed out")
    rec.stop()


def record_first_run(world: World) -> None:
    """unknown: the animated banner of the very first start (a config folder Copilot has never used)."""
    rec = recorder(world)
    fresh = world.root / "fresh-copilot-home"
    shutil.rmtree(fresh, ignore_errors=True)
    rec.start(env={"COPILOT_HOME": str(fresh)})
    screen = rec.wait_sign(lambda s: "▀▀▀▀▀▀▀▀" in s, "the first-run banner")
    rec.save("first_run_banner", screen, "unknown", note="animated banner of the very first start")
    rec.stop()


RECORDING = Recording(
    provider=copilot_cli_provider(), package="@github/copilot",
    cli=npm("copilot", env={"COPILOT_PKG_CACHE_HOME": str(PKG_CACHE)}),
    model_server=lambda: AnthropicServer(Script()),
    # A fixed, machine-neutral folder: Copilot prints the working folder's full path.
    root=lambda: neutral_root("cao-screens-copilot-cli"), setup=copilot_env,
    scenarios=(record_main, record_tool_and_cancel, record_between_steps, record_restricted, record_question,
               record_refusals, record_unreachable, record_signed_out, record_first_run,
               at_size(record_main, (100, 30)), at_size(record_restricted, (100, 30)),
               at_size(record_question, (100, 30))),
)
