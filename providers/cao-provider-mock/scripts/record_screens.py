"""Record mock_cli's screens in every status it has, from the real program, as detector test fixtures.

Usage (from the repository root)::

    uv run --no-sync python providers/cao-provider-mock/scripts/record_screens.py

It starts this distribution's ``mock_cli`` the way the provider launches it, in tmux through cao's own
tmux backend on a private server (so screens are captured exactly as the kernel captures them), drives
it into each state and writes ``tests/screens/<version>/<name>.txt`` plus ``manifest.json`` (the
status each screen was recorded in, the answer it shows). Nothing is edited after capture.

Each screen is labelled by what the script made the program do (a ``__mock_sleep_`` turn is
"processing", ``__mock_error__`` is "error"...), never by the detector under test. mock_cli never asks
its user anything, so it has no ``waiting_user_answer`` screen and no start-up dialog. Turns that show
progress rows, multi-line answers or no answer at all come from a behaviour module this script writes
into a scratch folder (``CAO_MOCK_BEHAVIOUR_PATH``), the way users plug in their own.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from cao_hookspecs import AgentProfile
from cao_testkit.recorder import (
    ScreenRecorder,
    environment,
    recording_arguments,
    tmux_backend,
    write_manifest,
)
from cao_provider_mock.contract import VERSION
from cao_provider_mock.provider import BEHAVIOUR_PATH_VARIABLE, NAME, mock_cli_command, mock_provider

PACKAGE = "cao-provider-mock"
RECORDED_WITH = "providers/cao-provider-mock/scripts/record_screens.py"
SCREENS = Path(__file__).resolve().parent.parent / "tests" / "screens"
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


def record_echo(rec: ScreenRecorder) -> None:
    """idle, processing, completed, error: the plain echo agent."""
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


def record_narrow(rec: ScreenRecorder) -> None:
    """A long input and its answer wrapped at 80 columns."""
    start(rec, size=(80, 24))
    rec.wait(_prompt_last, "the prompt")
    rec.type(LONG_INPUT)
    screen = rec.wait(lambda s: "> MOCK: " in s and _prompt_last(s), "the wrapped answer")
    rec.save("completed_wrapped-80x24", screen, "completed", last_message=LONG_INPUT)
    rec.stop()


def record_behaviour(rec: ScreenRecorder) -> None:
    """Turns of a scripted behaviour: a progress row while it works, a multi-line answer, a turn that
    ends without an answer, a behaviour that fails."""
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


def main(argv: list[str] | None = None) -> int:
    parser = recording_arguments(__doc__, out_default=f"tests/screens/{VERSION}")
    args = parser.parse_args(argv)
    if shutil.which("tmux") is None:
        parser.error("tmux is not installed")

    version_output = subprocess.run([*mock_cli_command(), "--version"], capture_output=True, text=True,
                                    timeout=30, check=True).stdout.strip()
    out = args.out or SCREENS / VERSION
    with tempfile.TemporaryDirectory(prefix="cao-mock-screens-") as scratch:
        root = Path(scratch)
        (root / f"{BEHAVIOUR_MODULE}.py").write_text(BEHAVIOURS, encoding="utf-8")
        with (environment({BEHAVIOUR_PATH_VARIABLE: str(root)}, clear=False),
              tmux_backend(root / "cao-home") as backend):
            print(f"recording {PACKAGE} {VERSION} ({version_output}) into {out}")
            if out.exists():
                shutil.rmtree(out)
            rec = ScreenRecorder(backend, mock_provider().launch, provider=NAME, workdir=root / "project",
                                 out=out, timeout=10.0, settle=0.3, poll=0.02, runtime_name="runtime-{count}")
            record_echo(rec)
            record_narrow(rec)
            record_behaviour(rec)
    write_manifest(out, package=PACKAGE, version=VERSION, version_output=version_output,
                   recorded_with=RECORDED_WITH, screens=rec.manifest)
    return 0


if __name__ == "__main__":
    sys.exit(main())
