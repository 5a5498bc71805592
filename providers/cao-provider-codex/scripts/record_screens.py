"""Codex's recording scenarios: real Codex screens for the detector tests.

Record them (from the repository root; needs tmux, npm and the npm registry the first time)::

    uv run --no-sync python -m cao_testkit.record providers/cao-provider-codex [--version X] [--only NAME]

Each scenario starts the real Codex (installed from npm into the live-CLI cache) the way the provider
launches it, at the kernel's window size, in a world of its own (a fresh sandbox HOME, scripted Responses
server and tmux server), drives it into a known state and saves what ``capture-pane`` shows as
``tests/screens/<version>/<scenario>.txt``. ``manifest.json`` there records, per screen, the status the
scenario put Codex in, for finished turns the answer the model gave, and for start-up dialogs the
provider's dialog it shows: the conformance kit (``cao_kernel.testing.conformance``) checks the provider
against all three. Paths are written relative to the sandbox HOME (``~``), so nothing of the recording
machine ends up in the files.
"""

from __future__ import annotations

import itertools
import json
import os
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cao_hookspecs import AgentProfile, TerminalStatus
from cao_provider_codex.codex_home import HOME_DIR
from cao_provider_codex.provider import codex_provider
from cao_testkit.models.cli import InstalledCli
from cao_testkit.models.openai import OpenAIServer
from cao_testkit.models.script import Script, call_tool, fail, reply, think
from cao_testkit.recorder import ScreenRecorder, scratch_root
from cao_testkit.recording import Recording, Retry, Scenario, World, npm, scenario_name
from cao_testkit.steps import Outcome, answer_each_option

KEY_VARIABLE = "CAO_SCRIPTED_OPENAI_KEY"
MODEL = "scripted"
ANSWER = "The answer is 42, from the scripted model."
PARAGRAPHS = "First paragraph of the answer.\n\nSecond paragraph, after a blank line."


def recorder(world: World, size: tuple[int, int] = (220, 50)) -> ScreenRecorder:
    """The scenario's terminals (one after another: a prompt is answered once per fresh terminal), named
    and placed as cao names and places an agent's."""
    runtime_root = world.home / ".aws" / "cli-agent-orchestrator" / "runtime" / "terminals"
    rec = world.recorder(size, ids=itertools.count(0x0123ABCD), terminal_name="coder-0001",
                         session_name="cao-record", runtime_root=runtime_root, runtime_name="{id}",
                         submit_delay=0.2)
    if not getattr(rec, "neutral_paths", False):
        # Every screen read (waited for, read as a prompt, saved) shows the recording's folders from the
        # sandbox HOME, so nothing of the recording machine ends up in a file or an expected prompt.
        capture = rec.screen
        rec.screen = lambda: _neutral(capture(), world)  # type: ignore[method-assign]
        rec.neutral_paths = True  # type: ignore[attr-defined]
    return rec


def _neutral(screen: str, world: World) -> str:
    # The longest path goes first: the home is inside the root.
    return screen.replace(str(world.home), "~").replace(str(world.root), "~/..")


def profile(world: World, **fields: Any) -> AgentProfile:
    codex_config = {"model_provider": "scripted",
                    "model_providers": {"scripted": {"name": "scripted model server",
                                                     "base_url": world.server.base_url,
                                                     "env_key": KEY_VARIABLE, "wire_api": "responses"}}}
    return AgentProfile(name="coder", provider="codex", model=MODEL, codex_config=codex_config, **fields)


def start(rec: ScreenRecorder, world: World, agent: AgentProfile | None = None, **options: Any) -> None:
    agent = agent if agent is not None else profile(world)
    rec.start(agent, model=agent.model, mcp_servers=agent.mcp_servers, **options)


def shown(rec: ScreenRecorder, text: str, timeout: float = 20.0, *, absent: str | None = None) -> str:
    """The first screen showing ``text`` (and not ``absent``)."""
    screen = rec.catch(lambda s: text in s and (absent is None or absent not in s), timeout, poll=0.05)
    if screen is None:
        raise SystemExit(f"{text!r} did not show within {timeout:g} s; screen:\n{rec.screen()}")
    return screen


def ready(rec: ScreenRecorder) -> str:
    # The footer's model line: before it, Codex shows a bare composer for a moment (see _starting).
    return shown(rec, f"{MODEL} default \u00b7")


def started(rec: ScreenRecorder, world: World) -> None:
    start(rec, world)
    ready(rec)


def answered(message: str, sign: str) -> Callable[[ScreenRecorder, World], str]:
    """Codex ready, ``message`` sent, the first screen showing ``sign``."""

    def drive(rec: ScreenRecorder, world: World) -> str:
        started(rec, world)
        rec.type(message)
        return shown(rec, sign)

    return drive


def _no_yolo(argv: list[str]) -> list[str]:
    kept = [a for a in argv if a != "--dangerously-bypass-approvals-and-sandbox"]
    return [*kept, "--ask-for-approval", "on-request"]


def _starting(rec: ScreenRecorder, world: World) -> str:
    start(rec, world)
    return shown(rec, "? for shortcuts", absent="\u00b7")


def _idle(rec: ScreenRecorder, world: World) -> str:
    start(rec, world)
    return ready(rec)


def _two_turns(rec: ScreenRecorder, world: World) -> str:
    started(rec, world)
    rec.type("first question")
    shown(rec, "Worked for")
    rec.type("second question")
    screen = rec.catch(lambda s: s.count("Worked for") >= 2, 20, poll=0.05)
    if screen is None:
        raise SystemExit(f"the second turn did not finish; screen:\n{rec.screen()}")
    return screen


def _answer_before_summary(rec: ScreenRecorder, world: World) -> str:
    # The answer is on screen a moment before the turn summary: catch that moment (it may take tries).
    started(rec, world)
    rec.type("Answer quickly.")
    last = PARAGRAPHS.split("\n")[-1]
    screen = rec.catch(lambda s: "Worked for" in s or last in s, 20)
    if screen is None:
        raise SystemExit(f"the answer did not show; screen:\n{rec.screen()}")
    if "Worked for" in screen:
        raise Retry("the turn finished before a screen without its summary was captured")
    return screen


def _tool_running(rec: ScreenRecorder, world: World) -> str:
    started(rec, world)
    rec.type("Run a slow command.")
    shown(rec, "esc to interrupt")
    time.sleep(2.5)  # well inside the command's 6 s
    return shown(rec, "esc to interrupt")


NOTES_SERVER = '''
from mcp.server.mcpserver import MCPServer

app = MCPServer("notes")


@app.tool()
def add_note(text: str) -> str:
    """Store a note."""
    return f"noted: {text}"


app.run()
'''


def _after_mcp_tool(rec: ScreenRecorder, world: World) -> str:
    server = world.root / "notes_server.py"
    server.write_text(NOTES_SERVER, encoding="utf-8")
    notes = {"notes": {"command": sys.executable, "args": [str(server)]}}
    start(rec, world, profile(world, mcp_servers=notes))
    ready(rec)
    rec.type("Take a note.")
    return shown(rec, "Worked for")


def _interrupted(rec: ScreenRecorder, world: World) -> str:
    started(rec, world)
    rec.type("Think for a long time.")
    shown(rec, "esc to interrupt")
    rec.keys("Escape")
    return shown(rec, "interrupted")


def _typed(rec: ScreenRecorder, world: World) -> str:
    started(rec, world)
    rec.type("half-typed message, not sent", enter=False)
    return shown(rec, "not sent", absent="? for shortcuts")


def _update_start(rec: ScreenRecorder, world: World, **options: Any) -> None:
    # What a Codex that finds a newer release in its version cache shows at start-up. The private config
    # turns the check off; here it is on, and the cache is fresh so Codex does not ask the network.
    config = f"{HOME_DIR}/config.toml"

    def with_update_check(name: str, content: str) -> str:
        if name != config:
            return content
        assert "check_for_update_on_startup = false" in content, content
        return content.replace("check_for_update_on_startup = false", "check_for_update_on_startup = true")

    newer = ".".join([*world.version.split(".")[:-1], "999"])
    cache = json.dumps({"latest_version": newer, "last_checked_at": datetime.now(UTC).isoformat()})
    start(rec, world, edit_file=with_update_check, files={f"{HOME_DIR}/version.json": cache}, **options)


def _update_prompt(rec: ScreenRecorder, world: World) -> str:
    _update_start(rec, world)
    return shown(rec, "Update available")


def _update_skipped(rec: ScreenRecorder, world: World) -> str:
    # After "Skip" Codex still shows a banner about the release above its prompt.
    _update_prompt(rec, world)
    time.sleep(0.5)  # answer once the prompt has settled, as the kernel does
    rec.keys("Down", "Enter")
    ready(rec)
    return shown(rec, "Update available!")


def _login(rec: ScreenRecorder, world: World) -> str:
    start(rec, world, AgentProfile(name="nologin", provider="codex"))
    return shown(rec, "Press enter to continue")


# -- prompts, each option answered on a fresh terminal ------------------------------------------------

CREATED = "Created the marker file."
MARKER_CALL = call_tool("exec_command", {"cmd": "touch marker", "sandbox_permissions": "require_escalated",
                                         "justification": "Create the marker file?"})


def _ready_sign(screen: str) -> bool:
    return f"{MODEL} default \u00b7" in screen and "for shortcuts" in screen


def _answering(name: str, size: tuple[int, int], fresh: Callable[[ScreenRecorder, World], None],
               ask: Callable[[ScreenRecorder, World], str], outcomes: dict[int, Outcome],
               note: str = "", dialog: str | None = None) -> Scenario:
    """``name``: the prompt ``ask`` brings a fresh terminal (started by ``fresh``) to, and for each of its
    options the screen after pressing that option's keys (``<name>_answer<n>``). A start-up ``dialog``'s
    screen is saved here, naming the dialog as well as the prompt (the shared step names no dialog)."""
    read_prompt = codex_provider().read_prompt

    def run(world: World) -> None:
        rec = recorder(world, size)
        saved: list[str] = []

        def started() -> ScreenRecorder:
            fresh(rec, world)
            return rec

        def asked(r: ScreenRecorder) -> str:
            screen = ask(r, world)
            if dialog is not None and not saved:
                r.save(name, screen, TerminalStatus.WAITING_USER_ANSWER.value, dialog=dialog,
                       prompt=read_prompt(screen), note=note)
                saved.append(name)
            return screen

        answer_each_option(started, asked, read_prompt, name=name, outcomes=outcomes, note=note,
                           save_prompt=dialog is None)

    return Scenario(name, run)


def _approval_fresh(rec: ScreenRecorder, world: World) -> None:
    start(rec, world, edit_argv=_no_yolo)
    ready(rec)


def _approval_ask(rec: ScreenRecorder, world: World) -> str:
    world.server.script.add(MARKER_CALL, reply(CREATED))
    rec.type("Create the marker file.")
    return rec.wait(lambda s: "Press enter to confirm" in s, "the approval prompt")


_APPROVED = Outcome(lambda s: CREATED in s and "Worked for" in s, "completed", last_message=CREATED)
APPROVAL_OUTCOMES = {
    1: _APPROVED,
    2: _APPROVED,
    3: Outcome(lambda s: "Press enter to confirm" not in s and _ready_sign(s), "idle",
               note="the command declined: the turn ends, the composer waits for what to do instead"),
}


def _approvals(size: tuple[int, int]) -> Scenario:
    suffix = "" if size == (220, 50) else f"-{size[0]}x{size[1]}"
    return _answering(f"waiting-approval{suffix}", size, _approval_fresh, _approval_ask, APPROVAL_OUTCOMES,
                      note="command approval (asked for on request)")


def _trust_fresh(rec: ScreenRecorder, world: World) -> None:
    repo = world.home / "repo"
    if not repo.exists():
        repo.mkdir()
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
    start(rec, world, cwd=repo)


def _trust_ask(rec: ScreenRecorder, world: World) -> str:
    return rec.wait(lambda s: "Trust this folder?" in s and "esc back" in s, "the trust dialog")


TRUST_OUTCOMES = {
    1: Outcome(_ready_sign, "idle", note="folder trusted: Codex starts"),
    2: Outcome(lambda s: "Agent command center" in s, "unknown",
               note="Codex shows its list of tasks instead of a session: no agent to talk to"),
}


def _trusts(size: tuple[int, int]) -> Scenario:
    suffix = "" if size == (220, 50) else f"-{size[0]}x{size[1]}"
    return _answering(f"waiting-trust-folder{suffix}", size, _trust_fresh, _trust_ask, TRUST_OUTCOMES,
                      dialog="trust-folder")


# "Update now" runs npm: a stand-in on PATH says what it was asked, so the answer neither installs nor
# needs the network.
NPM_STAND_IN = """#!/bin/sh
echo "npm stand-in: npm $*"
"""


def _update_fresh(rec: ScreenRecorder, world: World) -> None:
    folder = world.root / "stand-in-bin"
    npm_program = folder / "npm"
    if not npm_program.exists():
        folder.mkdir()
        npm_program.write_text(NPM_STAND_IN, encoding="utf-8")
        npm_program.chmod(npm_program.stat().st_mode | stat.S_IXUSR)
    _update_start(rec, world, plan_env={"PATH": f"{folder}:{os.environ['PATH']}"})


def _update_ask(rec: ScreenRecorder, world: World) -> str:
    return rec.wait(lambda s: "Update available \u00b7" in s and "esc skip" in s, "the update prompt")


_SKIPPED = Outcome(lambda s: _ready_sign(s) and "Update available \u00b7" not in s, "idle",
                   note="the update skipped: Codex starts")
UPDATE_OUTCOMES = {
    1: Outcome(lambda s: "Update ran successfully" in s, "unknown",
               note="Codex ran the update (npm, a stand-in here) and exited"),
    2: _SKIPPED,
    3: _SKIPPED,
}


QUESTION = "Which database should I use?"
QUESTION_CALL = call_tool("request_user_input", {"questions": [{
    "id": "database", "header": "Database", "question": QUESTION,
    "options": [{"label": "SQLite", "description": "Embedded"},
                {"label": "Postgres", "description": "Server"}]}]})


def _with_questions(name: str, content: str) -> str:
    # Codex asks questions outside plan mode only with this feature on.
    if name != f"{HOME_DIR}/config.toml":
        return content
    assert "shell_snapshot = false" in content, content
    return content.replace("shell_snapshot = false",
                           "shell_snapshot = false\ndefault_mode_request_user_input = true")


NOTED = "Noted the choice."


def _question_fresh(rec: ScreenRecorder, world: World) -> None:
    start(rec, world, edit_file=_with_questions)
    ready(rec)


def _question_ask(rec: ScreenRecorder, world: World) -> str:
    world.server.script.add(QUESTION_CALL, reply(NOTED))
    rec.type("Set up storage.")
    return rec.wait(lambda s: QUESTION in s and "enter to submit answer" in s, "the question")


_CHOSEN = Outcome(lambda s: NOTED in s and "Worked for" in s, "completed", last_message=NOTED)


def _questions(size: tuple[int, int]) -> Scenario:
    suffix = "" if size == (220, 50) else f"-{size[0]}x{size[1]}"
    return _answering(f"waiting-question{suffix}", size, _question_fresh, _question_ask,
                      {1: _CHOSEN, 2: _CHOSEN,
                       3: Outcome(lambda s: "Add notes" in s and "clear notes" in s, "waiting_user_answer",
                                  note="its notes field opened: the answer is typed there, then Enter")},
                      note="request_user_input, turned on outside plan mode by a feature flag")


def scenario(name: str, status: TerminalStatus, answer: str | None, turns: list[Any],
             drive: Callable[[ScreenRecorder, World], str], *, dialog: str | None = None,
             note: str = "") -> Scenario:
    """One screen: the model's ``turns``, ``drive`` bringing Codex to the screen, what it is recorded as."""

    def run(world: World) -> None:
        world.server.script.add(*turns)
        rec = recorder(world)
        # Paths under the recording's folders are shown from the sandbox HOME; the longest goes first.
        screen = _neutral(drive(rec, world), world)
        rec.save(name, screen, status.value, last_message=answer, dialog=dialog, note=note)

    return Scenario(name, run)


SCENARIOS = [
    scenario("unknown-starting", TerminalStatus.UNKNOWN, None, [], _starting),
    scenario("idle-start", TerminalStatus.IDLE, None, [], _idle),
    scenario("completed-reply", TerminalStatus.COMPLETED, ANSWER, [reply(ANSWER)],
             answered("What is the answer?", "Worked for")),
    scenario("completed-second-turn", TerminalStatus.COMPLETED, PARAGRAPHS,
             [reply("First turn."), reply(PARAGRAPHS)], _two_turns),
    scenario("processing-thinking", TerminalStatus.PROCESSING, None, [think(8, "late")],
             answered("Think about it.", "esc to interrupt")),
    scenario("processing-answer-before-summary", TerminalStatus.PROCESSING, None, [reply(PARAGRAPHS)],
             _answer_before_summary),
    scenario("processing-tool", TerminalStatus.PROCESSING, None,
             [call_tool("exec_command", {"cmd": "sleep 6"}), reply("slept")], _tool_running),
    scenario("completed-after-tool", TerminalStatus.COMPLETED, "The folder is empty.",
             [call_tool("exec_command", {"cmd": "ls"}, text="Listing it."), reply("The folder is empty.")],
             answered("List the folder, then answer.", "Worked for")),
    scenario("completed-after-mcp-tool", TerminalStatus.COMPLETED, "Noted it.",
             [call_tool("mcp__notes__add_note", {"text": "buy milk"}), reply("Noted it.")], _after_mcp_tool),
    _approvals((220, 50)),
    _approvals((100, 30)),
    scenario("error-model-refusal", TerminalStatus.ERROR, None,
             [fail(400, "scripted refusal: context too long")],
             answered("Please fail.", "scripted refusal")),
    scenario("idle-interrupted", TerminalStatus.IDLE, None, [think(30, "never seen")], _interrupted),
    scenario("processing-typed-unsent", TerminalStatus.PROCESSING, None, [], _typed),
    _trusts((220, 50)),
    _trusts((100, 30)),
    _answering("waiting-update-prompt", (220, 50), _update_fresh, _update_ask, UPDATE_OUTCOMES,
               dialog="update-prompt",
               note="update check turned on, version cache seeded with a newer release"),
    scenario("idle-update-skipped", TerminalStatus.IDLE, None, [], _update_skipped,
             note="the update prompt answered with its keys (Down, Enter: Skip)"),
    scenario("error-login", TerminalStatus.ERROR, None, [], _login),
    _questions((220, 50)),
    _questions((100, 30)),
]


def version_line(cli: InstalledCli) -> str:
    """The line of the version check's output that names the version (Codex warns about its scratch home
    on stderr, which the check captures too)."""
    lines = cli.version_output.splitlines()
    return next((line.strip() for line in lines if cli.version in line), cli.version_output.strip())


RECORDING = Recording(
    provider=codex_provider(), package="@openai/codex", cli=npm("codex"), cli_on_path=True,
    model_server=lambda: OpenAIServer(Script(side="Scripted title"), models=(MODEL,)),
    # Outside the system temp folder: Codex warns about a home under it, which is not what users see.
    root=lambda: scratch_root("record-", Path.home() / ".cache" / "cao"),
    setup=lambda world: {KEY_VARIABLE: "sk-scripted"},
    # In name order, the order of the manifest.
    scenarios=sorted(SCENARIOS, key=scenario_name), world_per_scenario=True, attempts=20,
    version_output=version_line,
)
