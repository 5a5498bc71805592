"""Record Gemini CLI's screens in every status, from the real CLI, as detector test fixtures.

Usage (from the repository root)::

    uv run --no-sync python providers/cao-provider-gemini-cli/scripts/record_screens.py [--version X]

It installs ``@google/gemini-cli@X`` (default: the newest tested version) into the live-CLI cache, runs
it in tmux through cao's own tmux backend (so screens are captured exactly as the kernel captures
them), launched the way the provider launches it, drives it with a scripted Gemini API server through
each status, and writes ``tests/screens/<version>/<name>.txt`` plus ``manifest.json`` (the status each
screen was recorded in, and the answer it shows). Nothing is edited after capture. The working folder
is ``<tmp>/cao-screens-gemini-cli/home/project``, so no path of the recording machine ends up in a fixture.

Each screen is labelled by what the script made the CLI do (a held model turn is "processing", a tool
approval is "waiting_user_answer"...), never by the detector under test; the recorder only waits for
the screen to settle on the sign it expects.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from cao_hookspecs import AgentProfile, LaunchContext, Terminal, TerminalLaunch
from cao_kernel.testing.models import Script, call_tool, fail, hold, reply
from cao_kernel.testing.models.cli import install_npm_cli, make_sandbox
from cao_kernel.testing.models.gemini import GeminiServer
from cao_provider_gemini_cli.provider import NAME, TESTED_VERSIONS, gemini_cli_provider

PACKAGE = "@google/gemini-cli"
SCREENS = Path(__file__).resolve().parent.parent / "tests" / "screens"
MODEL = "gemini-2.5-pro"
ANSWER = "The repository has 3 packages; all tests pass."
LONG_ANSWER = (
    "I listed the folder.\n\n"
    "Findings:\n\n"
    "- the build script is missing a clean step\n"
    "- two tests are slow\n\n"
    "Next I would add the clean step."
)
# Gemini CLI renders a Markdown list item with a space before its marker.
LONG_ANSWER_SHOWN = LONG_ANSWER.replace("\n- ", "\n - ")
SPINNER = "esc to cancel"


class Recorder:
    """One Gemini CLI terminal on a private tmux server, and the screens saved from it."""

    def __init__(self, backend, server: GeminiServer, sandbox_home: Path, out: Path,
                 size: tuple[int, int]) -> None:
        self.backend = backend
        self.server = server
        self.workdir = sandbox_home / "project"
        self.workdir.mkdir(exist_ok=True)
        self.out = out
        self.size = size
        self.manifest: dict[str, dict] = {}
        self.terminal_id = ""
        self._count = 0

    def start(self, *, profile: AgentProfile | None = None, yolo: bool = False,
              edit_settings: Callable[[dict], None] | None = None, drop_env: tuple[str, ...] = ()) -> None:
        self._count += 1
        self.terminal_id = f"{self._count:08x}"
        runtime = Path(tempfile.mkdtemp(prefix="rt-", dir=self.workdir.parent))
        terminal = Terminal(id=self.terminal_id, name=f"rec-{self._count}",
                            session_name=f"cao-rec{self._count}", provider=NAME,
                            agent_profile=profile.name if profile else "recorder")
        ctx = LaunchContext(terminal=terminal, profile=profile, working_directory=str(self.workdir),
                            runtime_dir=str(runtime), yolo=yolo, model=MODEL)
        plan = gemini_cli_provider().launch(ctx)
        for name, content in plan.files.items():
            target = runtime / name
            target.parent.mkdir(parents=True, exist_ok=True)
            if name.endswith("settings.json") and edit_settings is not None:
                settings = json.loads(content)
                edit_settings(settings)
                content = json.dumps(settings)
            target.write_text(content, encoding="utf-8")
        env = {name: value for name, value in plan.env.items() if name not in drop_env}
        width, height = self.size
        self.backend.create_terminal(TerminalLaunch(
            terminal_id=self.terminal_id, session_name=terminal.session_name, window_name=terminal.name,
            working_directory=str(self.workdir), argv=plan.argv, env=env, width=width, height=height,
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

    def wait(self, sign: Callable[[str], bool], what: str, timeout: float = 30.0, settle: float = 0.6) -> str:
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

    def wait_sign(self, sign: Callable[[str], bool], what: str, timeout: float = 30.0) -> str:
        """A screen where ``sign`` holds, taken a moment after it first did (for states that animate
        and never settle: the moment lets the CLI finish drawing)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if sign(self.screen()):
                time.sleep(0.3)
                screen = self.screen()
                if sign(screen):
                    return screen
            time.sleep(0.05)
        raise SystemExit(f"gave up waiting for {what}; screen:\n{self.screen()}")

    def save(self, name: str, screen: str, status: str, *, last_message: str | None = None,
             dialog: str | None = None, note: str = "") -> None:
        self.out.mkdir(parents=True, exist_ok=True)
        (self.out / f"{name}.txt").write_text(screen + "\n", encoding="utf-8")
        entry: dict = {"status": status, "size": list(self.size)}
        if last_message is not None:
            entry["last_message"] = last_message
        if dialog is not None:
            entry["dialog"] = dialog
        if note:
            entry["note"] = note
        self.manifest[name] = entry
        print(f"  {name}: {status}")

    def type(self, text: str) -> None:
        # Typed the way the kernel types: with the provider's Enter count and submit delay.
        caps = gemini_cli_provider().capabilities
        self.backend.send_text(self.terminal_id, text, enter_count=caps.enter_count,
                               submit_delay=caps.submit_delay)

    def keys(self, *keys: str) -> None:
        self.backend.send_keys(self.terminal_id, list(keys))


def _prompt_ready(screen: str) -> bool:
    """The input area is drawn with its empty-prompt hint, set-up is done (the header, or a turn, is
    above it) and nothing runs."""
    rows = screen.splitlines()
    started = "Gemini CLI v" in screen or any(row.startswith(" > ") for row in rows)
    return started and any("Type your message" in row for row in rows[-8:]) and SPINNER not in screen


def _starting(screen: str) -> bool:
    """The input area is drawn and nothing above it yet (the header comes once set-up is done)."""
    rows = [row for row in screen.splitlines() if row.strip()]
    return bool(rows) and any("Type your message" in row for row in rows) and "Gemini CLI v" not in screen \
        and not any(row.startswith(" > ") for row in rows)


def record_main(rec: Recorder, suffix: str = "") -> None:
    """idle, processing, completed (plain and after a tool), error: the default (yolo) launch."""
    script = rec.server.script
    gate = threading.Event()
    rec.start(profile=AgentProfile(name="recorder", system_prompt="You answer briefly."))
    # Transient (under a second): taken the moment it shows, not after it settles.
    rec.save(f"unknown_starting{suffix}", rec.wait(_starting, "the prompt without the header", settle=0.0),
             "unknown", note="prompt drawn before the header: still setting up")
    rec.save(f"idle{suffix}", rec.wait(_prompt_ready, "the prompt"), "idle")

    script.add(hold(gate, reply(ANSWER)))
    served = script.served
    rec.type("Summarise the repository.")
    rec.server.wait_for_arrivals(served + 1)
    screen = rec.wait_sign(lambda s: SPINNER in s, "the spinner")
    rec.save(f"processing{suffix}", screen, "processing", note="model turn held open by the server")
    gate.set()
    screen = rec.wait(lambda s: ANSWER in s and _prompt_ready(s), "the answer")
    rec.save(f"completed{suffix}", screen, "completed", last_message=ANSWER)

    script.add(call_tool("run_shell_command", {"command": "ls", "description": "List files"}),
               reply(LONG_ANSWER))
    rec.type("Look around and report.")
    screen = rec.wait(lambda s: "Next I would add the clean step." in s and _prompt_ready(s),
                      "the long answer")
    rec.save(f"completed_after_tool{suffix}", screen, "completed", last_message=LONG_ANSWER_SHOWN)

    script.add(call_tool("run_shell_command", {"command": "sleep 4", "description": "Wait for the build"}),
               reply("The build finished."))
    rec.type("Wait for the build.")
    screen = rec.wait_sign(lambda s: "sleep 4" in s and SPINNER in s, "the running tool")
    rec.save(f"processing_tool{suffix}", screen, "processing", note="a shell command is running")
    screen = rec.wait(lambda s: "The build finished." in s and _prompt_ready(s), "the answer after the tool")
    rec.save(f"completed_after_running_tool{suffix}", screen, "completed", last_message="The build finished.")

    # A 4xx: Gemini CLI retries 429 and 5xx answers for a long while before it shows them.
    script.add(fail(400, "API key not valid. Please pass a valid API key.", kind="INVALID_ARGUMENT"))
    rec.type("Try once more.")
    screen = rec.wait(lambda s: "API Error" in s and _prompt_ready(s), "the API error")
    rec.save(f"error{suffix}", screen, "error", note="the API answered 400 INVALID_ARGUMENT")
    rec.stop()


def record_permission(rec: Recorder) -> None:
    """waiting_user_answer: a tool approval under the default approval mode."""
    script = rec.server.script
    rec.start(profile=AgentProfile(name="careful", permission_mode="default"))
    rec.wait(_prompt_ready, "the prompt")
    script.add(call_tool("run_shell_command", {"command": "touch recorded.txt",
                                               "description": "Create a file"}),
               reply("Created the file."))
    rec.type("Create a file.")
    screen = rec.wait(lambda s: "Allow execution of" in s and "● 1. Allow once" in s, "the approval")
    rec.save("waiting_user_answer", screen, "waiting_user_answer", note="shell command approval")
    rec.keys("Enter")
    screen = rec.wait(lambda s: "Created the file." in s and _prompt_ready(s), "the answer after approval")
    rec.save("completed_after_permission", screen, "completed", last_message="Created the file.")
    rec.stop()


def record_question(rec: Recorder) -> None:
    """waiting_user_answer: the model asks the user a multiple-choice question (ask_user)."""
    question = {"questions": [{
        "question": "Which database should I use?", "header": "Database", "type": "choice",
        "options": [{"label": "SQLite", "description": "Embedded"},
                    {"label": "Postgres", "description": "Server"}],
    }]}
    rec.start()
    rec.wait(_prompt_ready, "the prompt")
    rec.server.script.add(call_tool("ask_user", question), reply("Going with SQLite."))
    rec.type("Set up storage.")
    screen = rec.wait(lambda s: "Which database should I use?" in s and "SQLite" in s, "the question")
    rec.save("waiting_user_answer_question", screen, "waiting_user_answer", note="ask_user choice")
    rec.keys("Enter")
    screen = rec.wait(lambda s: "Going with SQLite." in s and _prompt_ready(s), "the answer after the choice")
    rec.save("completed_after_question", screen, "completed", last_message="Going with SQLite.")
    rec.stop()


def record_dialogs(rec: Recorder) -> None:
    """Start-up dialogs, shown when the private home lacks the answer (kept to pin their wording)."""
    rec.start(drop_env=("GEMINI_CLI_TRUST_WORKSPACE",))
    screen = rec.wait(lambda s: "Do you trust the files in this folder?" in s, "the trust dialog")
    rec.save("dialog_trust_folder", screen, "waiting_user_answer", dialog="trust folder",
             note="start-up dialog")
    rec.stop()

    def no_sign_in(settings: dict) -> None:
        settings.get("security", {}).pop("auth", None)

    rec.start(edit_settings=no_sign_in)
    screen = rec.wait(lambda s: "How would you like to authenticate" in s, "the sign-in dialog")
    rec.save("dialog_sign_in_method", screen, "waiting_user_answer", dialog="sign-in method",
             note="start-up dialog")
    rec.keys("Enter")
    screen = rec.wait(lambda s: "Enter Gemini API Key" in s, "the API key dialog")
    rec.save("dialog_api_key", screen, "waiting_user_answer", dialog="API key confirmation",
             note="start-up dialog")
    rec.keys("Enter")
    rec.wait(_prompt_ready, "the prompt after the sign-in")
    rec.stop()


def record_exit(rec: Recorder) -> None:
    """error: Gemini CLI refusing an approval mode it does not know (it prints its usage and exits)."""
    rec.start(profile=AgentProfile(name="odd", permission_mode="autopilot"))
    screen = rec.wait(lambda s: "--help" in s, "the refusal", settle=0.5)
    rec.save("exited_bad_approval_mode", screen, "error",
             note="the program exited; the kernel also gets an 'exited' event")
    rec.stop()


@contextlib.contextmanager
def _environment(env: dict[str, str]) -> Iterator[None]:
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", default=TESTED_VERSIONS[-1], help="Gemini CLI version to record")
    parser.add_argument("--out", type=Path, default=None,
                        help="folder for the screens (default: tests/screens/<version>)")
    args = parser.parse_args(argv)

    from cao_kernel.testing.tmux import private_tmux_socket
    from cao_tmux.backend import TmuxBackend

    cli = install_npm_cli(PACKAGE, args.version, "gemini")
    out = args.out or SCREENS / args.version
    # A fixed, machine-neutral folder (the footer shows the working folder's path), this recorder's own:
    # recorders of other CLIs may run at the same time.
    root = Path(tempfile.gettempdir()) / "cao-screens-gemini-cli"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(mode=0o700)
    try:
        with GeminiServer(Script()) as server:
            sandbox = make_sandbox(root, env={
                **server.client_env(), "CAO_GEMINI_CLI_BIN": str(cli.binary), "TERM": "xterm-256color",
            })
            with _environment(dict(sandbox.env)), private_tmux_socket() as tmux:
                backend = TmuxBackend(home_dir=root / "cao-home", socket_path=tmux.socket_path,
                                      config_file=tmux.config_file)
                print(f"recording {PACKAGE}@{args.version} ({cli.version_output}) into {out}")
                if out.exists():
                    shutil.rmtree(out)
                rec = Recorder(backend, server, sandbox.home, out, (220, 50))
                record_main(rec)
                record_permission(rec)
                record_question(rec)
                record_dialogs(rec)
                record_exit(rec)
                narrow = Recorder(backend, server, sandbox.home, out, (100, 30))
                record_main(narrow, suffix="-100x30")
                manifest = {
                    "package": PACKAGE,
                    "version": args.version,
                    "version_output": cli.version_output,
                    "source": "recorded",
                    "recorded_with": "providers/cao-provider-gemini-cli/scripts/record_screens.py",
                    "screens": {**rec.manifest, **narrow.manifest},
                }
                (out / "manifest.json").write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n",
                                                   encoding="utf-8")
                backend.close()
            server.assert_healthy()
            server.script.assert_done()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
