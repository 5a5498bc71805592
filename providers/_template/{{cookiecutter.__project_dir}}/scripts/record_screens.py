"""{{ cookiecutter.display_name }}'s recording scenarios: its screens in every status.

Record them, from this package's folder with its test extra installed (``pip install -e '.[test]'``)::

    python -m cao_testkit.record . [--out DIR]

The recording starts the CLI through cao's own tmux backend on a private tmux server (so each screen is
captured exactly as the kernel captures it), in a throw-away HOME, against the scripted model server of
``cao_testkit.models``, runs the scenarios below, and writes ``tests/screens/<version>/<name>.txt`` plus
``manifest.json``. Each screen is labelled with the status the scenario drove the CLI into, never with
what the detector under test says, and nothing is edited after capture: when a screen looks wrong, fix
the scenario and record again.

TODO (real CLI): today this records the stand-in program ``tests/programs/example_cli.py``. Set
``package`` to the real CLI's npm or PyPI package and ``cli`` to ``npm("{{ cookiecutter.binary }}")`` (or
``pypi``), use the model server it speaks (``anthropic.AnthropicServer`` or ``openai.OpenAIServer``),
and add a scenario per start-up dialog and per state it has.
"""

from __future__ import annotations

from pathlib import Path

from cao_hookspecs import AgentProfile
from cao_testkit.models import Script, call_tool, fail, reply
from cao_testkit.models.anthropic import AnthropicServer
from cao_testkit.recorder import ScreenRecorder
from cao_testkit.recording import Recording, World, stand_in
from cao_testkit.steps import failed_turn, held_turn
from {{ cookiecutter.__module }}.launch import BINARY
from {{ cookiecutter.__module }}.provider import provider

EXAMPLE_CLI = Path(__file__).resolve().parent.parent / "tests" / "programs" / "example_cli.py"
LONG_ANSWER = ("Findings:\n\n- the build script has no clean step\n- two tests are slow\n\n"
               "I would add the clean step first.")
TOOL_ANSWER = "Created notes.txt."


def recorder(world: World) -> ScreenRecorder:
    return world.recorder((220, 50), timeout=20.0, settle=0.5)


def _bottom(screen: str) -> str:
    rows = [row for row in screen.splitlines() if row.strip()]
    return rows[-1] if rows else ""


def _prompt_back(screen: str) -> bool:
    return _bottom(screen) == ">"


def record_dialogs(world: World) -> None:
    """The trust question, shown the first time the CLI starts in a folder."""
    rec = recorder(world)
    rec.start()
    screen = rec.wait(lambda s: _bottom(s) == "Trust this folder? [y/n]", "the trust question")
    rec.save("dialog_trust_folder", screen, "waiting_user_answer", dialog="trust folder")
    rec.keys("y", "Enter")
    rec.wait(_prompt_back, "the prompt after trusting the folder")
    rec.stop()


def record_turns(world: World) -> None:
    """idle, processing, completed, waiting_user_answer, error: one terminal, one turn after another."""
    rec = recorder(world)
    script = world.server.script
    rec.start(AgentProfile(name="recorder", system_prompt="You answer briefly."))
    rec.save("idle", rec.wait(_prompt_back, "the prompt"), "idle")

    held_turn(rec, busy=lambda s: "Working…" in s, ready=_prompt_back, animated=False)

    script.add(call_tool("run_command", {"command": "touch notes.txt"}), reply(TOOL_ANSWER))
    rec.type("Create a notes file.")
    screen = rec.wait(lambda s: _bottom(s) == "Allow run_command? [y/n]", "the tool question")
    rec.save("waiting_user_answer", screen, "waiting_user_answer", note="permission question before a tool")
    rec.type("y")
    screen = rec.wait(lambda s: TOOL_ANSWER in s and _prompt_back(s), "the answer after the tool")
    rec.save("completed_after_tool", screen, "completed", last_message=TOOL_ANSWER)

    script.add(reply(LONG_ANSWER))
    rec.type("Review the build.")
    screen = rec.wait(lambda s: "I would add the clean step first." in s and _prompt_back(s),
                      "the long answer")
    rec.save("completed_multiline", screen, "completed", last_message=LONG_ANSWER)

    failed_turn(rec, fail(529, "Overloaded", kind="overloaded_error"), shows="✗ Error:", ready=_prompt_back,
                note="the model API answered 529")
    rec.stop()


RECORDING = Recording(
    provider=provider(),
    # TODO: the npm or PyPI package of the real CLI, and where to get it (npm("{{ cookiecutter.binary }}")).
    package="tests/programs/example_cli.py", cli=stand_in(EXAMPLE_CLI, BINARY), cli_on_path=True,
    model_server=lambda: AnthropicServer(Script()), setup=lambda world: world.server.client_env(),
    scenarios=(record_dialogs, record_turns),
)
