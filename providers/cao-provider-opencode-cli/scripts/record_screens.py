"""OpenCode's recording scenarios: its screens in every status, from the real CLI.

Record them (from the repository root)::

    uv run --no-sync python -m cao_testkit.record providers/cao-provider-opencode-cli [--version X]

The recording installs ``opencode-ai@X`` (default: the newest tested version) into the live-CLI cache
and drives it with a scripted Anthropic server (OpenCode's ``anthropic`` provider pointed at it by the
sandbox's global config). The working folder sits in the sandbox's HOME under the fixed
``<tmp>/cao-screens``, so no path of the recording machine ends up in a fixture.

Each screen is labelled by what the scenario made the CLI do (a held model turn is "processing", a
permission request is "waiting_user_answer"...), never by the detector under test; the recorder only
waits for the screen to settle on the sign it expects.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable

from cao_hookspecs import AgentProfile
from cao_provider_opencode_cli.prompts import read_prompt
from cao_provider_opencode_cli.provider import PACKAGE, opencode_provider
from cao_testkit.models import Script, call_tool, fail, hold, reply
from cao_testkit.models.anthropic import FAKE_API_KEY, AnthropicServer
from cao_testkit.recorder import ScreenRecorder, Sign, neutral_root
from cao_testkit.recording import Recording, World, at_size, npm
from cao_testkit.steps import CHOSEN, QUESTION, Outcome, answer_each_option, failed_turn, held_turn, tool_turn

MODEL = "anthropic/claude-sonnet-4-5"
PROFILE = AgentProfile(name="recorder", system_prompt="You answer briefly.")
QUESTION_CALL = {"questions": [{
    "question": QUESTION, "header": "Database",
    "options": [{"label": "SQLite", "description": "Embedded"},
                {"label": "Postgres", "description": "Server"}],
}]}
_FINISHED = re.compile(r"^▣ .+ · .+ · \d[\dhms. ]*$", re.MULTILINE)


def recorder(world: World, size: tuple[int, int] = (220, 50)) -> ScreenRecorder:
    return world.recorder(size, profile=PROFILE, timeout=60.0, settle=0.8, pause=0.4, runtime_root=world.root)


def global_config(server_url: str, **extra: object) -> dict:
    """The sandbox user's own OpenCode config: the ``anthropic`` provider at the scripted server."""
    return {
        "$schema": "https://opencode.ai/config.json",
        "model": MODEL,
        "provider": {"anthropic": {"options": {"baseURL": server_url + "/v1", "apiKey": FAKE_API_KEY}}},
        **extra,
    }


def user_config(rec: ScreenRecorder, **extra: object) -> None:
    """Write the sandbox user's OpenCode config (``extra``: more top-level settings)."""
    folder = rec.workdir.parent / ".config" / "opencode"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "opencode.json").write_text(json.dumps(global_config(rec.server.url, **extra), indent=2),
                                          encoding="utf-8")


def _ready(screen: str) -> bool:
    rows = [row for row in screen.splitlines() if row.strip()]
    return bool(rows) and rows[-1].rstrip().endswith("ctrl+p cmd") and "interrupt" not in rows[-1]


def _turn_over(screen: str) -> bool:
    """The prompt is back under the turn's summary row (agent, model, duration)."""
    return _ready(screen) and bool(_FINISHED.search(screen))


def record_main(world: World, size: tuple[int, int] = (220, 50), suffix: str = "") -> None:
    """idle, processing (model and tool), completed (plain and after a tool), error, interrupted."""
    rec = recorder(world, size)
    script = world.server.script
    user_config(rec)
    rec.start()
    rec.save(f"idle{suffix}", rec.wait(lambda s: _ready(s) and "Ask anything" in s, "the prompt"), "idle")
    rec.type("Fix the flaky test", enter=False)
    screen = rec.wait(lambda s: "Fix the flaky test" in s, "the typed text")
    rec.save(f"processing_typed_unsent{suffix}", screen, "processing",
             note="text typed into the prompt, Enter not pressed yet")
    rec.keys("C-u")
    rec.wait(lambda s: _ready(s) and "Fix the flaky test" not in s, "the cleared prompt")

    held_turn(rec, busy=lambda s: "esc interrupt" in s, ready=_turn_over, suffix=suffix, arrival_timeout=40.0)
    # Markdown is rendered, and list items keep their dash: the answer shows as written.
    tool_turn(rec, call_tool("bash", {"command": "sleep 4; ls", "description": "List files slowly"}),
              ready=_turn_over, suffix=suffix, running=lambda s: "sleep 4; ls" in s and "esc interrupt" in s,
              running_note="a bash tool call still running")
    failed_turn(rec, fail(401, "invalid x-api-key", kind="authentication_error"), shows="invalid x-api-key",
                ready=_ready, note="the API answered 401 (not retried)", suffix=suffix)

    gate = threading.Event()
    script.add(hold(gate, reply("Never shown.")))
    served = script.served
    rec.type("Start something long.")
    world.server.wait_for_arrivals(served + 1, timeout=40)
    rec.wait_sign(lambda s: "esc interrupt" in s, "the spinner")
    rec.keys("Escape")
    rec.wait_sign(lambda s: "again to interrupt" in s, "the interrupt hint")
    rec.keys("Escape")
    screen = rec.wait(lambda s: _ready(s) and "Aborted" in s, "the interrupted turn")
    rec.save(f"idle_interrupted{suffix}", screen, "idle", note="the user pressed Esc twice")
    gate.set()
    rec.stop()


def _asking(s: str) -> bool:
    return "Permission required" in s and "Allow once" in s and "esc reject" in s


def _prompt_proofs(world: World, size: tuple[int, int], suffix: str) -> None:
    """Each option of the permission prompt, of its two second stages and of the question, pressed with
    the keys ``read_prompt`` gives it on a fresh terminal (the first run also saves the prompt)."""
    rec = recorder(world, size)
    script = world.server.script
    # Whether each run's tool call reaches the model again (a run left on a prompt never does).
    follow_ups: list[bool] = []

    def start(profile: AgentProfile | None = None) -> ScreenRecorder:
        rec.start(profile=profile)
        rec.wait(_ready, "the prompt")
        return rec

    def careful() -> ScreenRecorder:
        user_config(rec, permission={"bash": "ask"})
        return start(AgentProfile(name="careful", permission_mode="default"))

    def ask_permission(r: ScreenRecorder) -> str:
        script.add(call_tool("bash", {"command": "touch recorded.txt", "description": "Create a file"}))
        if follow_ups.pop(0):
            script.add(reply("Created the file."))
        r.type("Create a file.")
        return r.wait_sign(_asking, "the permission prompt")

    def then(keys: tuple[str, ...], sign: Sign) -> Callable[[ScreenRecorder], str]:
        def ask(r: ScreenRecorder) -> str:
            ask_permission(r)
            r.keys(*keys)
            return r.wait(sign, f"the screen after {keys}")
        return ask

    always = lambda s: "Always allow" in s and "esc cancel" in s  # noqa: E731
    rejecting = lambda s: "Reject permission" in s and "esc cancel" in s  # noqa: E731
    done = Outcome(lambda s: "Created the file." in s and _turn_over(s), "completed",
                   last_message="Created the file.")
    name = f"waiting_user_answer{suffix}"
    follow_ups.extend([True, False, False])
    answer_each_option(careful, ask_permission, read_prompt, name=name, note="bash permission prompt",
                       outcomes={
        1: done,
        2: Outcome(always, "waiting_user_answer", note="Allow always asks to confirm the patterns"),
        3: Outcome(rejecting, "waiting_user_answer", note="Reject opens a field for telling the model why"),
    })
    follow_ups.append(True)
    answer_each_option(careful, then(("Right", "Enter"), always), read_prompt, name=f"{name}_answer2",
                       save_prompt=False, outcomes={1: done})
    follow_ups.append(False)
    _reject_with_reason(careful(), then(("Escape",), rejecting), f"{name}_answer3")

    def plain() -> ScreenRecorder:
        user_config(rec)
        return start()

    def ask_question(r: ScreenRecorder) -> str:
        script.add(call_tool("question", QUESTION_CALL))
        if follow_ups.pop(0):
            script.add(reply(CHOSEN))
        r.type("Set up storage.")
        return r.wait_sign(lambda s: QUESTION in s and "enter submit" in s, "the question")

    chosen = Outcome(lambda s: CHOSEN in s and _turn_over(s), "completed", last_message=CHOSEN)
    follow_ups.extend([True, True, False])
    answer_each_option(plain, ask_question, read_prompt, name=f"waiting_user_answer_question{suffix}",
                       note="question tool", outcomes={
                           1: chosen, 2: chosen,
                           3: Outcome(lambda s: QUESTION in s and "enter save" in s, "waiting_user_answer",
                                      note="a field for the user's own answer"),
                       })
    rec.stop()


def _reject_with_reason(rec: ScreenRecorder, ask: Callable[[ScreenRecorder], str], name: str) -> None:
    """The reject stage's one option pressed (as ``answer_each_option`` does). OpenCode ends the turn
    without asking the model again, but its footer sometimes keeps saying ``esc interrupt`` for a long
    while after the turn's ``▣`` row: the screen is saved in the status its footer shows then."""
    try:
        prompt = read_prompt(ask(rec))
        if prompt is None:
            raise SystemExit(f"{name}: the provider read no prompt on the reject stage")
        keys = list(prompt.option(1).keys)
        rec.keys(*keys)
        screen = rec.wait_sign(lambda s: "▣ " in s and "Reject permission" not in s, "the rejected turn")
        try:
            screen, status, note = rec.wait(_turn_over, "the prompt back", timeout=90), "completed", \
                "the user rejected the command; OpenCode ended the turn"
        except SystemExit:
            screen, status, note = rec.screen(), "processing", \
                "the user rejected the command; the turn ended but OpenCode still shows esc interrupt"
        rec.save(f"{name}_answer1", screen, status, note=note,
                 answers={"screen": name, "option": 1, "keys": keys})
    finally:
        rec.stop()


def record_prompts(world: World, size: tuple[int, int] = (220, 50), suffix: str = "") -> None:
    """waiting_user_answer: a permission prompt (OpenCode's own rules, bash set to ask) and a question, each
    option answered; the question answered with its first option (completed_after_question)."""
    _prompt_proofs(world, size, suffix)
    if suffix:
        return
    # The screens after the first options under the names every provider's manifest uses for them.
    rec = recorder(world, size)
    script = world.server.script
    user_config(rec, permission={"bash": "ask"})
    rec.start(profile=AgentProfile(name="careful", permission_mode="default"))
    rec.wait(_ready, "the prompt")
    script.add(call_tool("bash", {"command": "touch recorded.txt", "description": "Create a file"}),
               reply("Created the file."))
    rec.type("Create a file.")
    rec.wait_sign(_asking, "the permission prompt")
    rec.keys("Enter")
    screen = rec.wait(lambda s: "Created the file." in s and _turn_over(s), "the answer after approval")
    rec.save("completed_after_permission", screen, "completed", last_message="Created the file.")
    rec.stop()
    user_config(rec)
    rec.start()
    rec.wait(_ready, "the prompt")
    script.add(call_tool("question", QUESTION_CALL), reply(CHOSEN))
    rec.type("Set up storage.")
    rec.wait_sign(lambda s: QUESTION in s and "enter submit" in s, "the question")
    rec.keys("1")
    screen = rec.wait(lambda s: CHOSEN in s and _turn_over(s), "the answer after the choice")
    rec.save("completed_after_question", screen, "completed", last_message=CHOSEN)
    rec.stop()


def record_failures(world: World) -> None:
    """error: OpenCode stopping at start-up (a broken user config), and a turn without any model provider."""
    rec = recorder(world)
    folder = rec.workdir.parent / ".config" / "opencode"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "opencode.json").write_text('{"model": "anthropic/claude-sonnet-4-5",\n', encoding="utf-8")
    rec.start()
    screen = rec.wait(lambda s: "is not valid JSON" in s, "the config error", settle=0.3)
    rec.save("exited_bad_config", screen, "error",
             note="the program exited; the kernel also gets an 'exited' event")
    rec.stop()

    user_config(rec)
    # What OpenCode shows for an option it does not know (as a release without --mini would): its usage.
    rec.start(extra_args=("--no-such-option",))
    screen = rec.wait(lambda s: "Options:" in s and "--mini" in s, "the usage text", settle=0.3)
    rec.save("exited_unknown_option", screen, "error",
             note="started with an option OpenCode does not know; it printed its usage and exited")
    rec.stop()

    (folder / "opencode.json").write_text(json.dumps({"disabled_providers": ["opencode"]}), encoding="utf-8")
    rec.start()
    rec.wait(_ready, "the prompt")
    rec.type("Hello?")
    screen = rec.wait(lambda s: "No providers are available" in s and _ready(s), "the provider error")
    rec.save("error_no_provider", screen, "error",
             note="no model provider is configured: the first message fails with a stack trace")
    rec.stop()
    user_config(rec)


def sandbox_env(world: World) -> dict[str, str]:
    """What every recording runs OpenCode with, besides the sandboxed HOME."""
    return {
        "CAO_OPENCODE_CLI_BIN": str(world.cli.binary),
        # models.dev is out of reach offline; OpenCode's bundled model list is enough.
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
        "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
        "TERM": "xterm-256color",
    }


RECORDING = Recording(
    provider=opencode_provider(), package=PACKAGE, cli=npm("opencode"),
    model_server=lambda: AnthropicServer(Script()),
    # A fixed, machine-neutral folder: OpenCode prints the working folder's path.
    root=lambda: neutral_root("cao-screens"), setup=sandbox_env,
    scenarios=(record_main, record_prompts, record_failures, at_size(record_main, (100, 30)),
               at_size(record_prompts, (100, 30))),
)
