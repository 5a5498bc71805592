"""mock_cli's recording scenarios: its screens in every status it has, from the real program.

Record them (from the repository root)::

    uv run --no-sync python -m cao_testkit.record providers/cao-provider-mock

Each screen is labelled by what the scenario made the program do (a ``__mock_sleep_`` turn is
"processing", ``__mock_error__`` is "error"...), never by the detector under test. mock_cli has no
start-up dialog; it asks only when a behaviour does (``turn.ask``): the shipped ``permission`` behaviour
asks to run a command, and the scripts' own behaviour asks a question. Each kind is recorded at 220x50
and 100x30, and each option of the 220x50 prompts is picked, on a fresh terminal each, with the keys
``read_prompt`` gives it. Turns that show progress rows, multi-line answers, no answer at all or a
question come from a behaviour module written into the recording's root folder
(``CAO_MOCK_BEHAVIOUR_PATH``), the way users plug in their own.
"""

from __future__ import annotations

from collections.abc import Callable

from cao_hookspecs import AgentProfile
from cao_provider_mock.contract import PERMISSION_HINT, QUESTION_HINT, TEXT_HINT
from cao_provider_mock.prompts import read_prompt
from cao_provider_mock.provider import BEHAVIOUR_PATH_VARIABLE, NAME, mock_cli_command, mock_provider
from cao_testkit.recorder import ScreenRecorder, scratch_root
from cao_testkit.recording import Recording, World, at_size, program
from cao_testkit.steps import CHOSEN, QUESTION, Outcome, answer_each_option

BEHAVIOUR_MODULE = "recorded_behaviours"
REPORT = "Findings:\n\n- the build script is missing a clean step\n- two tests are slow"
LONG_INPUT = ("Summarise what changed in the release, then list the three riskiest modules with a "
              "reason for each one and the tests that cover them.")

COMMAND = "touch recorded.txt"
# Long enough to wrap on a 100-column terminal: the reader joins the question's rows.
LONG_COMMAND = ("python -m pytest tests/unit tests/integration --maxfail=3 --durations=10 "
                "-k 'not slow and not network' --junitxml=reports/junit.xml")
REASON = "use make clean instead"

# The behaviour the scripted screens use: each first word picks how the turn goes.
BEHAVIOURS = f'''
from cao_provider_mock.asking import Option


async def recorder(turn):
    word = turn.task.split(" ", 1)[0]
    if word == "ask":
        choice = await turn.ask({QUESTION!r}, [
            Option("SQLite", "One file next to the code: nothing to run, nothing to configure, and a "
                             "backup is a copy of that file"),
            Option("Postgres", "A server; what production uses"),
            Option("Type something.", takes_text=True),
        ])
        picked = choice.text if choice.text is not None else choice.label
        return {CHOSEN!r} if picked == "SQLite" else f"Going with {{picked}}."
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


def _hint(hint: str) -> Callable[[str], bool]:
    return _last_row(hint)


def _answered(text: str) -> Callable[[str], bool]:
    return lambda screen: text in screen and _prompt_last(screen)


def _permission_terminal(world: World, size: tuple[int, int] = (220, 50)) -> Callable[[], ScreenRecorder]:
    def begin() -> ScreenRecorder:
        rec = recorder(world)
        start(rec, size=size, behaviour="permission")
        rec.wait(_prompt_last, "the prompt")
        return rec

    return begin


def _ask_permission(command: str) -> Callable[[ScreenRecorder], str]:
    def ask(rec: ScreenRecorder) -> str:
        rec.type(f"Clean up the workspace. run: {command}")
        return rec.wait(_hint(PERMISSION_HINT), "the permission prompt")

    return ask


def _question_terminal(world: World, size: tuple[int, int] = (220, 50)) -> Callable[[], ScreenRecorder]:
    def begin() -> ScreenRecorder:
        rec = recorder(world)
        start(rec, size=size, behaviour=f"{BEHAVIOUR_MODULE}:recorder")
        rec.wait(_prompt_last, "the prompt")
        return rec

    return begin


def _ask_question(rec: ScreenRecorder) -> str:
    rec.type("ask about storage")
    return rec.wait(_hint(QUESTION_HINT), "the question")


def _permission_outcomes(ran: str) -> dict[int, Outcome]:
    # The answer may wrap on a narrow terminal: its start is enough to know it came.
    shown = _answered("> MOCK: Ran ")
    return {
        1: Outcome(shown, "completed", last_message=ran),
        2: Outcome(shown, "completed", last_message=ran, note="Bash is not asked again"),
        3: Outcome(_hint(TEXT_HINT), "waiting_user_answer", note="the refusal's text field"),
    }


QUESTION_OUTCOMES = {
    1: Outcome(_answered(CHOSEN), "completed", last_message=CHOSEN),
    2: Outcome(_answered("Going with Postgres."), "completed", last_message="Going with Postgres."),
    3: Outcome(_hint(TEXT_HINT), "waiting_user_answer", note="the free-text option's field"),
}


def record_permission(world: World) -> None:
    """The shipped ``permission`` behaviour asks to run a command; each option picked by its digit. The
    refusal opens a text field; the text typed into it goes with the refusal."""
    answer_each_option(
        _permission_terminal(world), _ask_permission(COMMAND), read_prompt, name="waiting_user_answer",
        note="the permission behaviour asks to run the command of its task",
        outcomes=_permission_outcomes(f"Ran {COMMAND}."))
    rec = _permission_terminal(world)()
    _ask_permission(COMMAND)(rec)
    rec.keys("3")
    rec.wait(_hint(TEXT_HINT), "the text field")
    rec.type(REASON, enter=False)
    screen = rec.wait(lambda s: REASON in s and _hint(TEXT_HINT)(s), "the typed reason")
    rec.save("waiting_user_answer_text", screen, "waiting_user_answer",
             prompt=read_prompt(screen), note="the refusal's text field with a reason typed")
    rec.keys("Enter")
    refused = f"Did not run {COMMAND}.\nReason: {REASON}"
    screen = rec.wait(_answered(REASON), "the refusal")
    rec.save("completed_after_refusal", screen, "completed", last_message=refused,
             note="option 3 with a reason typed in its text field")
    rec.stop()


def record_question(world: World) -> None:
    """A behaviour asks a question with descriptions and a free-text option; each option picked."""
    answer_each_option(_question_terminal(world), _ask_question, read_prompt,
                       name="waiting_user_answer_question", note="a behaviour asks with turn.ask",
                       outcomes=QUESTION_OUTCOMES)


def record_prompts_small(world: World, size: tuple[int, int], suffix: str) -> None:
    """Both kinds on a smaller terminal (their keys are proven at the larger size): a command long enough
    to wrap the permission's question, a description long enough to wrap under its option."""
    for start, ask, name, note in (
            (_permission_terminal(world, size), _ask_permission(LONG_COMMAND), "waiting_user_answer",
             "the command wraps: the question takes two rows"),
            (_question_terminal(world, size), _ask_question, "waiting_user_answer_question",
             "the first description wraps")):
        rec = start()
        screen = ask(rec)
        rec.save(f"{name}{suffix}", screen, "waiting_user_answer", prompt=read_prompt(screen), note=note)
        rec.stop()


RECORDING = Recording(
    provider=mock_provider(), package="cao-provider-mock", cli=program(mock_cli_command),
    root=lambda: scratch_root("cao-mock-screens-"), setup=behaviours,
    scenarios=(record_echo, record_narrow, record_behaviour, record_permission, record_question,
               at_size(record_prompts_small, (100, 30))),
)
