"""{{ cookiecutter.display_name }}'s recording scenarios: its screens in every status.

Record them, from this package's folder with its test extra installed (``pip install -e '.[test]'``)::

    python -m cao_testkit.record . [--out DIR]

The recording starts the CLI through cao's own tmux backend on a private tmux server (so each screen is
captured exactly as the kernel captures it), in a throw-away HOME, against the scripted model server of
``cao_testkit.models``, runs the scenarios below, and writes ``tests/screens/<version>/<name>.txt`` plus
``manifest.json``. Each screen is labelled with the status the scenario drove the CLI into, never with
what the detector under test says, and nothing is edited after capture: when a screen looks wrong, fix
the scenario and record again.

Prompts: each waiting screen is saved with the prompt ``read_prompt`` reads on it (``prompt=``; check it
against the screen by eye in the manifest), every kind at two sizes (220x50 and 100x30), and every
option of the permission question is pressed on a fresh terminal with the keys the reader gives it
(``answer_each_option``), proving them: the screen after each is saved with ``answers``.

TODO (real CLI): today this records the stand-in program ``tests/programs/example_cli.py``. Set
``package`` to the real CLI's npm or PyPI package and ``cli`` to ``npm("{{ cookiecutter.binary }}")`` (or
``pypi``), use the model server it speaks (``anthropic.AnthropicServer``, ``openai.OpenAIServer``,
``chat.ChatServer`` or ``gemini.GeminiServer``), and add a scenario per start-up dialog, per state and
per kind of prompt it has. A screen that never stands still (a clock, a spinner) is waited for with
``rec.wait_sign``.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from cao_hookspecs import AgentProfile
from cao_testkit.models import Conversation, Script, call_tool, fail, reply, respond
from cao_testkit.models.anthropic import AnthropicServer
from cao_testkit.recorder import ScreenRecorder
from cao_testkit.recording import Recording, World, at_size, stand_in
from cao_testkit.steps import Outcome, answer_each_option, failed_turn, held_turn
from {{ cookiecutter.__module }}.launch import BINARY
from {{ cookiecutter.__module }}.prompts import read_prompt
from {{ cookiecutter.__module }}.provider import provider

EXAMPLE_CLI = Path(__file__).resolve().parent.parent / "tests" / "programs" / "example_cli.py"
LONG_ANSWER = ("Findings:\n\n- the build script has no clean step\n- two tests are slow\n\n"
               "I would add the clean step first.")
TOOL_ANSWER = "Created notes.txt."
DENIED_ANSWER = "I left notes.txt alone."
# Long enough to be cut on a 100-column terminal: the prompt then says its argument is incomplete.
LONG_COMMAND = ("python -m pytest tests/unit tests/integration --maxfail=3 --durations=10 "
                "-k 'not slow and not network' --junitxml=reports/junit.xml")


def recorder(world: World, size: tuple[int, int] = (220, 50)) -> ScreenRecorder:
    return world.recorder(size, timeout=20.0, settle=0.5)


def _bottom(screen: str) -> str:
    rows = [row for row in screen.splitlines() if row.strip()]
    return rows[-1] if rows else ""


def _prompt_back(screen: str) -> bool:
    return _bottom(screen) == ">"


def _asking(screen: str) -> bool:
    """A question waits for a key on the bottom row."""
    return _bottom(screen).endswith(("· [n] No", "· [n] No, exit"))


def record_dialogs(world: World, size: tuple[int, int] = (220, 50), suffix: str = "") -> None:
    """The trust question, shown the first time the CLI starts in a folder, answered with its key."""
    # TODO (real CLI): how the real CLI forgets a trusted folder (here: the stand-in's list of them).
    shutil.rmtree(world.home / ".example-cli", ignore_errors=True)
    rec = recorder(world, size)
    rec.start()
    screen = rec.wait(_asking, "the trust question")
    prompt = read_prompt(screen)
    if prompt is None:
        raise SystemExit(f"read_prompt read no prompt on the trust question:\n{screen}")
    rec.save(f"dialog_trust_folder{suffix}", screen, "waiting_user_answer", dialog="trust folder",
             prompt=prompt)
    rec.keys(*prompt.option(1).keys)  # "Yes"
    rec.wait(_prompt_back, "the prompt after trusting the folder")
    rec.stop()


def record_turns(world: World) -> None:
    """idle, processing, completed, error: one terminal, one turn after another."""
    rec = recorder(world)
    script = world.server.script
    rec.start(AgentProfile(name="recorder", system_prompt="You answer briefly."))
    rec.save("idle", rec.wait(_prompt_back, "the prompt"), "idle")

    held_turn(rec, busy=lambda s: "Working…" in s, ready=_prompt_back, animated=False)

    script.add(reply(LONG_ANSWER))
    rec.type("Review the build.")
    screen = rec.wait(lambda s: "I would add the clean step first." in s and _prompt_back(s),
                      "the long answer")
    rec.save("completed_multiline", screen, "completed", last_message=LONG_ANSWER)

    failed_turn(rec, fail(529, "Overloaded", kind="overloaded_error"), shows="✗ Error:", ready=_prompt_back,
                note="the model API answered 529")
    rec.stop()


def _after_tool(conversation: Conversation) -> str:
    """The model's answer once the CLI sent the tool's result: what the user's choice made of it."""
    result = conversation.last_tool_result
    return DENIED_ANSWER if result is not None and result.is_error else TOOL_ANSWER


def _fresh_terminal(world: World, size: tuple[int, int]) -> Callable[[], ScreenRecorder]:
    """A new terminal at its empty prompt (each option is pressed on a terminal of its own)."""
    def start() -> ScreenRecorder:
        rec = recorder(world, size)
        rec.start()
        rec.wait(_prompt_back, "the prompt")
        return rec

    return start


def _ask_permission(command: str, *, answered: bool = True) -> Callable[[ScreenRecorder], str]:
    """The model calls the tool: the CLI asks before running ``command``; the question's screen. With
    ``answered``, the model's turn after the answer is scripted too."""
    def ask(rec: ScreenRecorder) -> str:
        after = [respond(_after_tool)] if answered else []
        rec.server.script.add(call_tool("run_command", {"command": command}), *after)
        rec.type("Create a notes file.")
        return rec.wait(_asking, "the tool question")

    return ask


def _answered(answer: str, note: str = "") -> Outcome:
    return Outcome(lambda s: answer in s and _prompt_back(s), "completed", note=note, last_message=answer)


def record_permission(world: World) -> None:
    """``waiting_user_answer``: the question before a tool runs, then each option pressed with its key
    (``waiting_user_answer_answer<n>``), proving the keys ``read_prompt`` gives."""
    answer_each_option(
        _fresh_terminal(world, (220, 50)), _ask_permission("touch notes.txt"), read_prompt,
        name="waiting_user_answer", note="permission question before a tool",
        outcomes={1: _answered(TOOL_ANSWER),
                  2: _answered(TOOL_ANSWER, note="run_command allowed for the rest of the session"),
                  3: _answered(DENIED_ANSWER, note="the tool was denied")})


def record_permission_small(world: World) -> None:
    """The same question at 100x30, where its command is too long for its row and is cut (each kind of
    prompt is recorded at two sizes; its keys are proven once)."""
    rec = _fresh_terminal(world, (100, 30))()
    screen = _ask_permission(LONG_COMMAND, answered=False)(rec)
    rec.save("waiting_user_answer-100x30", screen, "waiting_user_answer", prompt=read_prompt(screen),
             note="permission question before a tool; its command is cut to fit the row")
    rec.stop()


RECORDING = Recording(
    provider=provider(),
    # TODO: the npm or PyPI package of the real CLI, and where to get it (npm("{{ cookiecutter.binary }}")).
    package="tests/programs/example_cli.py", cli=stand_in(EXAMPLE_CLI, BINARY), cli_on_path=True,
    model_server=lambda: AnthropicServer(Script()), setup=lambda world: world.server.client_env(),
    scenarios=(record_dialogs, record_turns, record_permission, at_size(record_dialogs, (100, 30)),
               record_permission_small),
)
