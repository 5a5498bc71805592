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

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from cao_hookspecs import AgentProfile, LaunchContext, Terminal, TerminalLaunch
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


class Recorder:
    """One mock_cli terminal on a private tmux server, and the screens saved from it."""

    def __init__(self, backend, workdir: Path, out: Path) -> None:  # noqa: ANN001
        self.backend = backend
        self.workdir = workdir
        self.out = out
        self.manifest: dict[str, dict] = {}
        self.terminal_id = ""
        self.size = (220, 50)
        self._count = 0

    def start(self, *, size: tuple[int, int] = (220, 50), behaviour: str | None = None,
              delay_ms: int = 50) -> None:
        self._count += 1
        self.size = size
        self.terminal_id = f"{self._count:08x}"
        extra: dict[str, object] = {"mock_delay_ms": delay_ms}
        if behaviour:
            extra["mockBehaviour"] = behaviour
        profile = AgentProfile(name="recorder", provider=NAME, extra=extra)
        terminal = Terminal(id=self.terminal_id, name=f"rec-{self._count}",
                            session_name=f"cao-rec{self._count}", provider=NAME, agent_profile=profile.name)
        runtime = self.workdir.parent / f"runtime-{self._count}"
        runtime.mkdir()
        plan = mock_provider().launch(LaunchContext(terminal=terminal, profile=profile,
                                                    working_directory=str(self.workdir),
                                                    runtime_dir=str(runtime)))
        width, height = size
        self.backend.create_terminal(TerminalLaunch(
            terminal_id=self.terminal_id, session_name=terminal.session_name, window_name=terminal.name,
            working_directory=str(self.workdir), argv=plan.argv, env=dict(plan.env),
            width=width, height=height,
        ))
        # The backend streams output to whoever watches; an unread stream would stall the program.
        self.backend.watch(self.terminal_id, lambda event: None)

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self.backend.unwatch(self.terminal_id)
        with contextlib.suppress(Exception):
            self.backend.kill_terminal(self.terminal_id)

    def screen(self) -> str:
        return self.backend.capture(self.terminal_id)

    def wait(self, sign: Callable[[str], bool], what: str, timeout: float = 10.0, settle: float = 0.3) -> str:
        """The screen once ``sign`` holds and the screen stayed the same for ``settle`` seconds."""
        deadline = time.monotonic() + timeout
        last, since = None, time.monotonic()
        while time.monotonic() < deadline:
            screen = self.screen()
            if screen != last:
                last, since = screen, time.monotonic()
            elif sign(screen) and time.monotonic() - since >= settle:
                return screen
            time.sleep(0.02)
        raise SystemExit(f"gave up waiting for {what}; screen:\n{last}")

    def save(self, name: str, screen: str, status: str, *, last_message: str | None = None,
             note: str = "") -> None:
        self.out.mkdir(parents=True, exist_ok=True)
        (self.out / f"{name}.txt").write_text(screen + "\n", encoding="utf-8")
        entry: dict = {"status": status, "size": list(self.size)}
        if last_message is not None:
            entry["last_message"] = last_message
        if note:
            entry["note"] = note
        self.manifest[name] = entry
        print(f"  {name}: {status}")

    def type(self, text: str, *, enter: bool = True) -> None:
        self.backend.send_text(self.terminal_id, text, enter_count=1 if enter else 0, submit_delay=0.0)

    def keys(self, *keys: str) -> None:
        self.backend.send_keys(self.terminal_id, list(keys))


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


def record_echo(rec: Recorder) -> None:
    """idle, processing, completed, error: the plain echo agent."""
    rec.start()
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


def record_narrow(rec: Recorder) -> None:
    """A long input and its answer wrapped at 80 columns."""
    rec.start(size=(80, 24))
    rec.wait(_prompt_last, "the prompt")
    rec.type(LONG_INPUT)
    screen = rec.wait(lambda s: "> MOCK: " in s and _prompt_last(s), "the wrapped answer")
    rec.save("completed_wrapped-80x24", screen, "completed", last_message=LONG_INPUT)
    rec.stop()


def record_behaviour(rec: Recorder) -> None:
    """Turns of a scripted behaviour: a progress row while it works, a multi-line answer, a turn that
    ends without an answer, a behaviour that fails."""
    rec.start(behaviour=f"{BEHAVIOUR_MODULE}:recorder")
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


@contextlib.contextmanager
def _setting(name: str, value: str) -> Iterator[None]:
    saved = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = saved


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=None,
                        help=f"folder for the screens (default: tests/screens/{VERSION})")
    args = parser.parse_args(argv)
    if shutil.which("tmux") is None:
        parser.error("tmux is not installed")

    from cao_kernel.testing.tmux import private_tmux_socket
    from cao_tmux.backend import TmuxBackend

    version_output = subprocess.run([*mock_cli_command(), "--version"], capture_output=True, text=True,
                                    timeout=30, check=True).stdout.strip()
    out = args.out or SCREENS / VERSION
    with tempfile.TemporaryDirectory(prefix="cao-mock-screens-") as scratch:
        root = Path(scratch)
        (root / f"{BEHAVIOUR_MODULE}.py").write_text(BEHAVIOURS, encoding="utf-8")
        workdir = root / "project"
        workdir.mkdir()
        with _setting(BEHAVIOUR_PATH_VARIABLE, str(root)), private_tmux_socket() as tmux:
            backend = TmuxBackend(home_dir=root / "cao-home", socket_path=tmux.socket_path,
                                  config_file=tmux.config_file)
            print(f"recording {PACKAGE} {VERSION} ({version_output}) into {out}")
            if out.exists():
                shutil.rmtree(out)
            rec = Recorder(backend, workdir, out)
            try:
                record_echo(rec)
                record_narrow(rec)
                record_behaviour(rec)
            finally:
                backend.close()
    manifest = {"package": PACKAGE, "version": VERSION, "version_output": version_output,
                "source": "recorded", "recorded_with": RECORDED_WITH, "screens": rec.manifest}
    text = json.dumps(manifest, indent=2, ensure_ascii=False) + "\n"
    (out / "manifest.json").write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
