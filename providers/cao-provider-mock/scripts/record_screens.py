"""mock_cli's recording scenarios: its screens in every status it has, from the real program.

Record them (from the repository root)::

    uv run --no-sync python -m cao_testkit.record providers/cao-provider-mock

Each screen is labelled by what the scenario made the program do (a ``__mock_sleep_`` turn is
"processing", ``__mock_error__`` is "error"...), never by the detector under test. mock_cli never asks
its user anything, so it has no ``waiting_user_answer`` screen and no start-up dialog. Turns that show
progress rows, multi-line answers or no answer at all come from a behaviour module written into the
recording's root folder (``CAO_MOCK_BEHAVIOUR_PATH``), the way users plug in their own.
"""

from __future__ import annotations

from collections.abc import Callable

from cao_hookspecs import AgentProfile
from cao_provider_mock.provider import BEHAVIOUR_PATH_VARIABLE, NAME, mock_cli_command, mock_provider
from cao_testkit.recorder import ScreenRecorder, scratch_root
from cao_testkit.recording import Recording, World, program

BEHAVIOUR_MODULE = "recorded_behaviours"
REPORT = "Findings:\n\n- the build script is missing a clean step\n- two tests are slow"
LONG_INPUT = ("Summarise what changed in the release, then list the three riskiest modules with a "
              "reason for each one and the tests that cover them.")

# The behaviour the scripted screens use: each first word picks how the turn goes.
BEHAVIOURS = f'''
async def recorder(turn):
    word = turn.task.split(" ", 1)[0]
    if word == "report":
        turn.say("reading the notes")
        await turn.think(float(turn.task.split()[1]))
        return {REPORT!r}
    if word == "quiet":
        turn.say("nothing worth saying")
        return None
    if word == "fail":
        raise RuntimeError("the notes are unreadable")
    return turn.task
'''


def behaviours(world: World) -> dict[str, str]:
    """The behaviour module in the root folder, where mock_cli looks for it."""
    (world.root / f"{BEHAVIOUR_MODULE}.py").write_text(BEHAVIOURS, encoding="utf-8")
    return {BEHAVIOUR_PATH_VARIABLE: str(world.root)}


def recorder(world: World) -> ScreenRecorder:
    return world.recorder(timeout=10.0, settle=0.3, poll=0.02, runtime_name="runtime-{count}")


def start(rec: ScreenRecorder, *, size: tuple[int, int] = (220, 50), behaviour: str | None = None,
          delay_ms: int = 50) -> None:
    """A mock_cli terminal answering after ``delay_ms``, driven by ``behaviour`` (``module:function``)."""
    extra: dict[str, object] = {"mock_delay_ms": delay_ms}
    if behaviour:
        extra["mockBehaviour"] = behaviour
    rec.start(AgentProfile(name="recorder", provider=NAME, extra=extra), size=size)


def _rows(screen: str) -> list[str]:
    rows = [row.rstrip() for row in screen.split("\n")]
    while rows and not rows[-1]:
        rows.pop()
    return rows


def _prompt_last(screen: str) -> bool:
    rows = _rows(screen)
    return bool(rows) and rows[-1] == "\u276f"


def _last_row(text: str) -> Callable[[str], bool]:
    return lambda screen: bool(_rows(screen)) and _rows(screen)[-1] == text


def record_echo(world: World) -> None:
    """idle, processing, completed, error: the plain echo agent."""
    rec = recorder(world)
    start(rec)
    rec.save("idle", rec.wait(_prompt_last, "the prompt"), "idle")

    rec.type("Summarise the repository.")
    screen = rec.wait(lambda s: "> MOCK: Summarise the repository." in s and _prompt_last(s), "the answer")
    rec.save("completed", screen, "completed", last_message="Summarise the repository.")

    rec.type("__mock_sleep_30")
    screen = rec.wait(_last_row("\u276f __mock_sleep_30"), "the sleeping turn")
    rec.save("processing", screen, "processing", note="a __mock_sleep_30 turn, before its answer")
    rec.keys("C-c")
    screen = rec.wait(lambda s: "^C" in s and _prompt_last(s), "the prompt after Ctrl-C")
    rec.save("idle_interrupted", screen, "idle", note="the sleeping turn cancelled with Ctrl-C")

    rec.type("__mock_error__")
    screen = rec.wait(lambda s: "ERROR: mock failure injected" in s and _prompt_last(s), "the error")
    rec.save("error", screen, "error", note="__mock_error__")

    rec.type("half-typed message, not sent", enter=False)
    screen = rec.wait(_last_row("\u276f half-typed message, not sent"), "the typed text")
    rec.save("processing_typed", screen, "processing", note="text on the prompt row, Enter not pressed")
    rec.stop()


def record_narrow(world: World) -> None:
    """A long input and its answer wrapped at 80 columns."""
    rec = recorder(world)
    start(rec, size=(80, 24))
    rec.wait(_prompt_last, "the prompt")
    rec.type(LONG_INPUT)
    screen = rec.wait(lambda s: "> MOCK: " in s and _prompt_last(s), "the wrapped answer")
    rec.save("completed_wrapped-80x24", screen, "completed", last_message=LONG_INPUT)
    rec.stop()


def record_behaviour(world: World) -> None:
    """Turns of a scripted behaviour: a progress row while it works, a multi-line answer, a turn that
    ends without an answer, a behaviour that fails."""
    rec = recorder(world)
    start(rec, behaviour=f"{BEHAVIOUR_MODULE}:recorder")
    rec.wait(_prompt_last, "the prompt")
    rec.type("report 2")
    screen = rec.wait(_last_row("\u23fa reading the notes"), "the progress row")
    rec.save("processing_behaviour", screen, "processing", note="a behaviour thinking after a progress row")
    screen = rec.wait(lambda s: "two tests are slow" in s and _prompt_last(s), "the report", timeout=15)
    rec.save("completed_multiline", screen, "completed", last_message=REPORT)

    rec.type("quiet please")
    screen = rec.wait(lambda s: "turn ended without an answer" in s and _prompt_last(s), "the silent turn")
    rec.save("completed_without_answer", screen, "completed", note="the behaviour returned no answer")

    rec.type("fail now")
    screen = rec.wait(lambda s: "behaviour failed" in s and _prompt_last(s), "the failed turn")
    rec.save("error_behaviour", screen, "error", note="the behaviour raised")
    rec.stop()


RECORDING = Recording(
    provider=mock_provider(), package="cao-provider-mock", cli=program(mock_cli_command),
    root=lambda: scratch_root("cao-mock-screens-"), setup=behaviours,
    scenarios=(record_echo, record_narrow, record_behaviour),
)
