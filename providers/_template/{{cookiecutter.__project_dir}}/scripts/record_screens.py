"""Record {{ cookiecutter.display_name }}'s screens in every status, as the detector's test fixtures.

Usage, from this package's folder with its test extra installed (``pip install -e '.[test]'``)::

    python scripts/record_screens.py [--out DIR]

It starts the CLI through cao's own tmux backend on a private tmux server (so each screen is captured
exactly as the kernel captures it), in a throw-away HOME, against the scripted model server of
``cao_kernel.testing.models``, drives it into each status, and writes
``tests/screens/<version>/<name>.txt`` plus ``manifest.json``. Each screen is labelled with the
status the script drove the CLI into, never with what the detector under test says, and nothing is
edited after capture: when a screen looks wrong, fix the script and record again.

TODO (real CLI): today this records the stand-in program ``tests/programs/example_cli.py``. Point
``cli_program`` at the real CLI (``cao_kernel.testing.models.cli.install_npm_cli`` installs an npm
package once per machine), use the model server it speaks (``anthropic.AnthropicServer`` or
``openai.OpenAIServer``), set ``PACKAGE``, and add a step per start-up dialog and per state it has.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from cao_hookspecs import AgentProfile, LaunchContext, Terminal, TerminalLaunch
from cao_kernel.testing.models import Script, call_tool, fail, hold, reply
from cao_kernel.testing.models.anthropic import AnthropicServer
from cao_kernel.testing.models.cli import make_sandbox
from {{ cookiecutter.__module }}.launch import BINARY
from {{ cookiecutter.__module }}.provider import NAME, provider

HERE = Path(__file__).resolve().parent.parent
SCREENS = HERE / "tests" / "screens"
EXAMPLE_CLI = HERE / "tests" / "programs" / "example_cli.py"
# TODO: the npm or PyPI package of the real CLI.
PACKAGE = "tests/programs/example_cli.py"
RECORDED_WITH = "scripts/record_screens.py"
SIZE = (220, 50)
ANSWER = "The repository has 3 packages; all tests pass."
LONG_ANSWER = ("Findings:\n\n- the build script has no clean step\n- two tests are slow\n\n"
               "I would add the clean step first.")
TOOL_ANSWER = "Created notes.txt."


def cli_program(bin_dir: Path) -> Path:
    """The CLI as ``{{ cookiecutter.binary }}`` in ``bin_dir`` (put first on PATH): the stand-in program, run by this Python."""
    launcher = bin_dir / BINARY
    command = f"exec {shlex.quote(sys.executable)} {shlex.quote(str(EXAMPLE_CLI))} \"$@\""
    launcher.write_text(f"#!/bin/sh\n{command}\n", encoding="utf-8")
    launcher.chmod(0o755)
    return launcher


class Recorder:
    """One terminal at a time on a private tmux server, and the screens saved from it."""

    def __init__(self, backend, server: AnthropicServer, workdir: Path, out: Path) -> None:
        self.backend = backend
        self.server = server
        self.workdir = workdir
        self.out = out
        self.manifest: dict[str, dict] = {}
        self.terminal_id = ""
        self._count = 0

    def start(self, profile: AgentProfile | None = None) -> None:
        self._count += 1
        self.terminal_id = f"{self._count:08x}"
        runtime = Path(tempfile.mkdtemp(prefix="rt-", dir=self.workdir.parent))
        terminal = Terminal(id=self.terminal_id, name=f"rec-{self._count}",
                            session_name=f"cao-rec{self._count}", provider=NAME,
                            agent_profile=profile.name if profile else "recorder")
        ctx = LaunchContext(terminal=terminal, profile=profile, working_directory=str(self.workdir),
                            runtime_dir=str(runtime))
        plan = provider().launch(ctx)
        for name, content in plan.files.items():
            target = runtime / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content, encoding="utf-8")
        width, height = SIZE
        self.backend.create_terminal(TerminalLaunch(
            terminal_id=self.terminal_id, session_name=terminal.session_name, window_name=terminal.name,
            working_directory=str(self.workdir), argv=plan.argv, env=plan.env, width=width, height=height,
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

    def wait(self, sign: Callable[[str], bool], what: str, timeout: float = 20.0, settle: float = 0.5) -> str:
        """The screen once ``sign`` holds and the screen stayed the same for ``settle`` seconds."""
        deadline = time.monotonic() + timeout
        last, since = None, time.monotonic()
        while time.monotonic() < deadline:
            screen = self.screen()
            if screen != last:
                last, since = screen, time.monotonic()
            elif sign(screen) and time.monotonic() - since >= settle:
                return screen
            time.sleep(0.05)
        raise SystemExit(f"gave up waiting for {what}; screen:\n{last}")

    def save(self, name: str, screen: str, status: str, *, last_message: str | None = None,
             dialog: str | None = None, note: str = "") -> None:
        self.out.mkdir(parents=True, exist_ok=True)
        (self.out / f"{name}.txt").write_text(screen + "\n", encoding="utf-8")
        entry: dict = {"status": status, "size": list(SIZE)}
        if last_message is not None:
            entry["last_message"] = last_message
        if dialog is not None:
            entry["dialog"] = dialog
        if note:
            entry["note"] = note
        self.manifest[name] = entry
        print(f"  {name}: {status}")

    def type(self, text: str) -> None:
        self.backend.send_text(self.terminal_id, text, enter_count=1, submit_delay=0.0)

    def keys(self, *keys: str) -> None:
        self.backend.send_keys(self.terminal_id, list(keys))


def _bottom(screen: str) -> str:
    rows = [row for row in screen.splitlines() if row.strip()]
    return rows[-1] if rows else ""


def _prompt_back(screen: str) -> bool:
    return _bottom(screen) == ">"


def record_dialogs(rec: Recorder) -> None:
    """The trust question, shown the first time the CLI starts in a folder."""
    rec.start()
    screen = rec.wait(lambda s: _bottom(s) == "Trust this folder? [y/n]", "the trust question")
    rec.save("dialog_trust_folder", screen, "waiting_user_answer", dialog="trust folder")
    rec.keys("y", "Enter")
    rec.wait(_prompt_back, "the prompt after trusting the folder")
    rec.stop()


def record_turns(rec: Recorder) -> None:
    """idle, processing, completed, waiting_user_answer, error: one terminal, one turn after another."""
    script = rec.server.script
    rec.start(AgentProfile(name="recorder", system_prompt="You answer briefly."))
    rec.save("idle", rec.wait(_prompt_back, "the prompt"), "idle")

    gate = threading.Event()
    script.add(hold(gate, reply(ANSWER)))
    served = script.served
    rec.type("Summarise the repository.")
    rec.server.wait_for_arrivals(served + 1)
    screen = rec.wait(lambda s: "Working…" in s, "the busy row")
    rec.save("processing", screen, "processing", note="model turn held open by the server")
    gate.set()
    screen = rec.wait(lambda s: ANSWER in s and _prompt_back(s), "the answer")
    rec.save("completed", screen, "completed", last_message=ANSWER)

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

    script.add(fail(529, "Overloaded", kind="overloaded_error"))
    rec.type("Try once more.")
    screen = rec.wait(lambda s: "✗ Error:" in s and _prompt_back(s), "the model error")
    rec.save("error", screen, "error", note="the model API answered 529")
    rec.stop()


@contextlib.contextmanager
def _environment(env: dict[str, str]) -> Iterator[None]:
    # The tmux server (started by the first terminal) and launch() both read os.environ.
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _version(program: Path, env: dict[str, str]) -> tuple[str, str]:
    done = subprocess.run([str(program), *provider().version_args], capture_output=True, text=True, env=env,
                          timeout=60, check=True)
    output = done.stdout.strip() or done.stderr.strip()
    found = re.search(r"\d+\.\d+\.\d+\S*", output)
    if found is None:
        raise SystemExit(f"no version number in {output!r}")
    return found.group(0), output


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=None,
                        help="folder for the screens (default: tests/screens/<version>)")
    args = parser.parse_args(argv)

    from cao_kernel.testing.tmux import private_tmux_socket
    from cao_tmux.backend import TmuxBackend

    root = Path(tempfile.mkdtemp(prefix="cao-screens-"))
    try:
        bin_dir = root / "bin"
        bin_dir.mkdir()
        program = cli_program(bin_dir)
        with AnthropicServer(Script()) as server:
            sandbox = make_sandbox(root / "sandbox", env=server.client_env(), path=[bin_dir])
            version, version_output = _version(program, dict(sandbox.env))
            out = args.out or SCREENS / version
            workdir = sandbox.home / "project"
            workdir.mkdir()
            with _environment(dict(sandbox.env)), private_tmux_socket() as tmux:
                backend = TmuxBackend(home_dir=root / "cao-home", socket_path=tmux.socket_path,
                                      config_file=tmux.config_file)
                print(f"recording {PACKAGE} {version} ({version_output}) into {out}")
                if out.exists():
                    shutil.rmtree(out)
                rec = Recorder(backend, server, workdir, out)
                record_dialogs(rec)
                record_turns(rec)
                backend.close()
            manifest = {
                "package": PACKAGE,
                "version": version,
                "version_output": version_output,
                "source": "recorded",
                "recorded_with": RECORDED_WITH,
                "screens": rec.manifest,
            }
            (out / "manifest.json").write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n",
                                               encoding="utf-8")
            server.assert_healthy()
            server.script.assert_done()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
