"""Kimi CLI's recording scenarios: its screens in every status, from the real CLI.

Record them (from the repository root)::

    uv run --no-sync python -m cao_testkit.record providers/cao-provider-kimi-cli [--version X]

The recording installs ``kimi-cli==X`` (default: the newest tested version) from PyPI into the live-CLI
cache (a virtual environment on a Python >= 3.12 found on the machine, dependencies resolved as of the
day after the release), launched by the provider itself, against a scripted OpenAI Responses server
(Kimi's ``openai_responses`` provider type). The working folder sits in the sandbox's HOME, which Kimi
shows as ``~/project``.

Each screen is labelled by what the scenario made the CLI do (a held model turn is "processing", a
tool call under ``permissionMode: default`` is "waiting_user_answer"...), never by the detector under
test; the recorder only waits for the screen to settle on the sign it expects. The two start-up
gates are shown by seeding the private share folder with the caches Kimi's update check writes,
with the update check switched back on and the CLI in a network namespace of its own (so the check
cannot reach out); each gate is then answered with its key to show that the key gets past it.
"""

from __future__ import annotations

import json
import os
from typing import Any

from cao_hookspecs import AgentProfile
from cao_provider_kimi_cli.prompts import read_prompt
from cao_provider_kimi_cli.provider import kimi_cli_provider
from cao_testkit.models import Script, call_tool, fail, reply
from cao_testkit.models.openai import OpenAIServer
from cao_testkit.recorder import ScreenRecorder, Sign, neutral_root
from cao_testkit.recording import Recording, World, at_size, pypi
from cao_testkit.steps import CHOSEN, QUESTION, Outcome, answer_each_option, failed_turn, held_turn, tool_turn

#: Dependencies as PyPI had them the day after each tested release (kimi-cli pins few of its own).
EXCLUDE_NEWER = {"1.51.0": "2026-09-22"}
MODEL = "scripted"
LONG_ANSWER = (
    "I listed the folder.\n\n"
    "The build script is missing a clean step, and two tests are slow.\n\n"
    "Next I would add the clean step."
)


def user_config(world: World) -> dict[str, str]:
    """The sandbox user's ``~/.kimi/config.toml``: one model on the scripted server, no telemetry."""
    (world.home / ".kimi").mkdir()
    (world.home / ".kimi" / "config.toml").write_text(
        f'default_model = "{MODEL}"\n'
        "telemetry = false\n\n"
        f"[providers.{MODEL}]\n"
        'type = "openai_responses"\n'
        f'base_url = "{world.server.base_url}"\n'
        f'api_key = "sk-scripted-{os.urandom(4).hex()}"\n\n'
        f"[models.{MODEL}]\n"
        f'provider = "{MODEL}"\n'
        f'model = "{MODEL}"\n'
        "max_context_size = 200000\n", encoding="utf-8")
    return {"CAO_KIMI_CLI_BIN": str(world.cli.binary), "TERM": "xterm-256color"}


def recorder(world: World, size: tuple[int, int] = (220, 50)) -> ScreenRecorder:
    # A fixed runtime folder name: the screen of a refused config prints the config's full path. One
    # counter for both sizes keeps the terminal ids apart.
    return world.recorder(size, settle=0.8, runtime_name="rt-{width}x{height}-{count}", ids=world.ids)


_MOON = "🌑🌒🌓🌔🌕🌖🌗🌘"


def _rows(screen: str) -> list[str]:
    return [row.rstrip() for row in screen.splitlines()]


def _spinning(screen: str) -> bool:
    return any(row[:1] in _MOON or "\u2800" <= row[:1] <= "\u28ff" for row in _rows(screen) if row)


def _prompt_ready(screen: str) -> bool:
    rows = _rows(screen)
    boxed = any(row.startswith("── input ") for row in rows)
    return boxed and "context:" in rows[-1] and not _spinning(screen)


def record_main(world: World, size: tuple[int, int] = (220, 50), suffix: str = "") -> None:
    """idle, processing (model and tool), completed (plain and after a tool), error: the default launch."""
    rec = recorder(world, size)
    rec.start(profile=AgentProfile(name="recorder", system_prompt="You answer briefly."))
    rec.save(f"idle{suffix}", rec.wait(_prompt_ready, "the prompt"), "idle")
    held_turn(rec, busy=lambda s: any(r[:1] in _MOON for r in _rows(s) if r), ready=_prompt_ready,
              suffix=suffix, arrival_timeout=15.0)
    tool_turn(rec, call_tool("Shell", {"command": "sleep 4; ls"}), ready=_prompt_ready, suffix=suffix,
              answer=LONG_ANSWER, running=lambda s: "Using Shell (sleep 4; ls)" in s,
              running_note="a Shell call still running")
    failed_turn(rec, fail(400, "The model `scripted` does not exist", kind="invalid_request_error"),
                shows="LLM provider error", ready=_prompt_ready, note="the API answered 400 (no retry)",
                suffix=suffix)
    rec.stop()


def _asking(screen: str) -> bool:
    return "requesting approval" in screen and "confirm" in screen


def _asked(screen: str) -> bool:
    return QUESTION in screen and "[2] Postgres" in screen


def _answered(text: str | None) -> Outcome:
    if text is None:
        return Outcome(lambda s: _prompt_ready(s) and "── input " in s and "Rejected" in s, "completed",
                       note="the user rejected the call; the turn ends without asking the model again")
    return Outcome(lambda s, text=text: text in s and _prompt_ready(s), "completed", last_message=text)


def record_prompts(world: World, size: tuple[int, int] = (220, 50), suffix: str = "") -> None:
    """waiting_user_answer: an approval panel under ``permissionMode: default`` and a question
    (AskUserQuestion), each option pressed with the keys ``read_prompt`` gives it on a fresh terminal, and
    the text fields two of them open; then the first options under the names every manifest uses."""
    rec = recorder(world, size)
    script = world.server.script
    # Whether each run's tool call reaches the model again (a run left on a prompt never does).
    follow_ups: list[str | None] = []

    def careful() -> ScreenRecorder:
        rec.start(profile=AgentProfile(name="careful", permission_mode="default"))
        rec.wait(_prompt_ready, "the prompt")
        return rec

    def plain() -> ScreenRecorder:
        rec.start()
        rec.wait(_prompt_ready, "the prompt")
        return rec

    def asker(call: Any, sign: Sign, keys: tuple[str, ...] = (), then: Sign | None = None) -> Any:
        def ask(r: ScreenRecorder) -> str:
            script.add(call)
            follow = follow_ups.pop(0)
            if follow is not None:
                script.add(reply(follow))
            r.type("Do it.")
            # The pending tool call's spinner keeps turning above the panel: the screen never settles.
            screen = r.wait_sign(sign, "the prompt")
            if keys:
                r.keys(*keys)
                screen = r.wait_sign(then or sign, f"the screen after {keys}")
            return screen
        return ask

    shell = call_tool("Shell", {"command": "touch recorded.txt"})
    field = lambda s: "Reject: " in s and "Type your feedback" in s  # noqa: E731
    name = f"waiting_user_answer{suffix}"
    follow_ups.extend(["Created the file.", "Created the file.", None, None])
    answer_each_option(careful, asker(shell, _asking), read_prompt, name=name, note="Shell approval panel",
                       outcomes={1: _answered("Created the file."), 2: _answered("Created the file."),
                                 3: _answered(None),
                                 4: Outcome(field, "waiting_user_answer", animated=True,
                                            note="the option's row turned into a field for the feedback")})
    follow_ups.append(None)
    answer_each_option(careful, asker(shell, _asking, ("4",), field), read_prompt, name=f"{name}_answer4",
                       save_prompt=False, outcomes={1: _answered(None)})

    question = call_tool("AskUserQuestion", {"questions": [{
        "question": QUESTION, "header": "Database", "multi_select": False,
        "options": [{"label": "SQLite", "description": "Embedded"},
                    {"label": "Postgres", "description": "Server"}],
    }]})
    other = lambda s: "Other: " in s  # noqa: E731
    qname = f"waiting_user_answer_question{suffix}"
    follow_ups.extend([CHOSEN, CHOSEN, None])
    answer_each_option(plain, asker(question, _asked), read_prompt, name=qname, note="AskUserQuestion panel",
                       outcomes={1: _answered(CHOSEN), 2: _answered(CHOSEN),
                                 3: Outcome(other, "waiting_user_answer", animated=True,
                                            note="Other turned into a field for the user's own answer")})
    follow_ups.append("Skipped.")
    answer_each_option(plain, asker(question, _asked, ("3",), other), read_prompt, name=f"{qname}_answer3",
                       save_prompt=False, outcomes={1: _answered("Skipped.")})
    if not suffix:
        # The first options' after-screens under the names every provider's manifest uses.
        careful()
        script.add(shell, reply("Created the file."))
        rec.type("Create a file.")
        rec.wait_sign(_asking, "the approval panel")
        rec.keys("1")
        screen = rec.wait(lambda s: "Created the file." in s and _prompt_ready(s), "the answer")
        rec.save("completed_after_approval", screen, "completed", last_message="Created the file.")
        rec.stop()
        plain()
        script.add(question, reply(CHOSEN))
        rec.type("Set up storage.")
        rec.wait_sign(_asked, "the question")
        rec.keys("1")
        screen = rec.wait(lambda s: CHOSEN in s and _prompt_ready(s), "the answer")
        rec.save("completed_after_question", screen, "completed", last_message=CHOSEN)
    rec.stop()


TIPS = {
    "enabled": True,
    "message": {"en": "kimi-cli is no longer maintained. Please move to Kimi Code."},
    "links": {},
    "migration": {"version": "2.0.0", "min_cli_version": "0.0.0"},
}
_GATES = (
    ("dialog_update_gate", "update gate", {"latest_version.txt": "9.9.9\n"}, "Upgrade now"),
    ("dialog_migration_gate", "migration gate", {"kimi_code_tips.json": json.dumps(TIPS)}, "Migrate now"),
)


def record_gates(world: World, size: tuple[int, int] = (220, 50), suffix: str = "") -> None:
    """The two start-up gates, from the caches Kimi's update check writes; each option pressed with its
    key. In a network namespace of its own the upgrade and the migration Enter starts reach nothing."""
    rec = recorder(world, size)
    for name, dialog, seed, sign in _GATES:
        def start(seed: dict[str, str] = seed) -> ScreenRecorder:
            rec.start(files={f"kimi-share/{file}": content for file, content in seed.items()},
                      plan_env={"KIMI_CLI_NO_AUTO_UPDATE": ""}, wrapper=("unshare", "--net", "--"))
            return rec

        prompt_back = Outcome(lambda s: "── input " in s and _prompt_ready(s), "idle",
                              note="the gate was passed; Kimi's prompt is waiting")
        outcomes = {2: prompt_back, 3: prompt_back} if name == "dialog_update_gate" else {2: prompt_back}
        outcomes[1] = Outcome(lambda s: "Upgrade failed" in s or "Migration complete" in s, "error",
                              note="Enter starts the upgrade (it fails offline) or the migration; Kimi exits")
        answer_each_option(start, lambda r, sign=sign: r.wait(lambda s: sign in s, name), read_prompt,
                           name=f"{name}{suffix}", outcomes=outcomes,
                           note="start-up gate shown from a seeded update-check cache")
        # answer_each_option cannot mark its prompt screen as a start-up dialog's: marked here.
        entry = rec.manifest[f"{name}{suffix}"]
        rec.manifest[f"{name}{suffix}"] = {"status": entry.pop("status"), "size": entry.pop("size"),
                                           "dialog": dialog, **entry}


def record_startup_failure(world: World) -> None:
    """error: Kimi refusing a config whose default model does not exist (it exits at once)."""
    rec = recorder(world)
    profile = AgentProfile(name="broken", extra={"kimiConfig": {"default_model": "missing-model"}})
    rec.start(profile=profile)
    screen = rec.wait(lambda s: "missing-model" in s, "the refusal", settle=0.5)
    rec.save("exited_bad_config", screen, "error",
             note="the program exited; the kernel also gets an 'exited' event")
    rec.stop()


RECORDING = Recording(
    provider=kimi_cli_provider(), package="kimi-cli",
    cli=pypi("kimi", python=">=3.12", exclude_newer=EXCLUDE_NEWER),
    model_server=lambda: OpenAIServer(Script(), models=(MODEL,)),
    # A fixed, machine-neutral folder: a refused config's screen shows its full path.
    root=lambda: neutral_root("cao-kimi-screens"), setup=user_config,
    scenarios=(record_main, record_prompts, record_gates, record_startup_failure,
               at_size(record_main, (100, 30)), at_size(record_prompts, (100, 30)),
               at_size(record_gates, (100, 30))),
)
