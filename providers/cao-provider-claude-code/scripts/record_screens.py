"""Record Claude Code's screens in every status, from the real CLI, as detector test fixtures.

Usage (from the repository root)::

    uv run --no-sync python providers/cao-provider-claude-code/scripts/record_screens.py [--version X]

It installs ``@anthropic-ai/claude-code@X`` (default: the newest tested version) into the live-CLI
cache, runs it in tmux through cao's own tmux backend (so screens are captured exactly as the kernel
captures them), drives it with a scripted Anthropic server through each status, and writes
``tests/screens/<version>/<name>.txt`` plus ``manifest.json`` (the status each screen was recorded in,
and the answer it shows). Nothing is edited after capture. The working folder sits in the sandbox's
HOME, which Claude Code shows as ``~/project``; dialogs that print the full path show the fixed
``<tmp>/cao-screens/home/project``, so no path of the recording machine ends up in a fixture.

Each screen is labelled by what the script made the CLI do (a held model turn is "processing", a
permission request is "waiting_user_answer"...), never by the detector under test; the recorder only
waits for the screen to settle on the sign it expects.
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
from cao_kernel.testing.models.anthropic import AnthropicServer
from cao_kernel.testing.models.cli import install_npm_cli, make_sandbox
from cao_provider_claude_code.provider import NAME, TESTED_VERSIONS, claude_code_provider

PACKAGE = "@anthropic-ai/claude-code"
SCREENS = Path(__file__).resolve().parent.parent / "tests" / "screens"
ANSWER = "The repository has 3 packages; all tests pass."
LONG_ANSWER = (
    "I listed the folder.\n\n"
    "Findings:\n\n"
    "- the build script is missing a clean step\n"
    "- two tests are slow\n\n"
    "Next I would add the clean step."
)


class Recorder:
    """One Claude Code terminal on a private tmux server, and the screens saved from it."""

    def __init__(self, backend, server: AnthropicServer, sandbox_home: Path, out: Path,
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
              edit_config: Callable[[dict], None] | None = None, env: dict[str, str] | None = None) -> None:
        self._count += 1
        self.terminal_id = f"{self._count:08x}"
        runtime = Path(tempfile.mkdtemp(prefix="rt-", dir=self.workdir.parent))
        terminal = Terminal(id=self.terminal_id, name=f"rec-{self._count}",
                            session_name=f"cao-rec{self._count}", provider=NAME,
                            agent_profile=profile.name if profile else "recorder")
        ctx = LaunchContext(terminal=terminal, profile=profile, working_directory=str(self.workdir),
                            runtime_dir=str(runtime), yolo=yolo, env=env or {})
        plan = claude_code_provider().launch(ctx)
        for name, content in plan.files.items():
            target = runtime / name
            target.parent.mkdir(parents=True, exist_ok=True)
            if name.endswith(".claude.json") and edit_config is not None:
                config = json.loads(content)
                edit_config(config)
                content = json.dumps(config)
            target.write_text(content, encoding="utf-8")
        width, height = self.size
        self.backend.create_terminal(TerminalLaunch(
            terminal_id=self.terminal_id, session_name=terminal.session_name, window_name=terminal.name,
            working_directory=str(self.workdir), argv=plan.argv, env={**(env or {}), **plan.env},
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
        self.backend.send_text(self.terminal_id, text, enter_count=1, submit_delay=0.0)

    def keys(self, *keys: str) -> None:
        self.backend.send_keys(self.terminal_id, list(keys))


def _box_ready(screen: str) -> bool:
    rows = screen.splitlines()
    return any(row.startswith("❯") for row in rows[-6:]) and "esc to interrupt" not in screen


def record_main(rec: Recorder, suffix: str = "") -> None:
    """idle, processing, completed (plain and after a tool), error: the default (bypass) launch."""
    script = rec.server.script
    gate = threading.Event()
    rec.start(profile=AgentProfile(name="recorder", system_prompt="You answer briefly."))
    rec.save(f"idle{suffix}", rec.wait(_box_ready, "the prompt"), "idle")

    script.add(hold(gate, reply(ANSWER)))
    served = script.served
    rec.type("Summarise the repository.")
    rec.server.wait_for_arrivals(served + 1)
    screen = rec.wait_sign(lambda s: "esc to interrupt" in s and "…" in s, "the spinner")
    rec.save(f"processing{suffix}", screen, "processing", note="model turn held open by the server")
    gate.set()
    screen = rec.wait(lambda s: ANSWER in s and _box_ready(s), "the answer")
    rec.save(f"completed{suffix}", screen, "completed", last_message=ANSWER)

    script.add(call_tool("Bash", {"command": "ls", "description": "List files"}), reply(LONG_ANSWER))
    rec.type("Look around and report.")
    screen = rec.wait(lambda s: "Next I would add the clean step." in s and _box_ready(s), "the long answer")
    rec.save(f"completed_after_tool{suffix}", screen, "completed", last_message=LONG_ANSWER)

    script.add(fail(529, "Overloaded", kind="overloaded_error"))
    rec.type("Try once more.")
    screen = rec.wait(lambda s: "API Error" in s and _box_ready(s), "the API error")
    rec.save(f"error{suffix}", screen, "error", note="the API answered 529 without a retry hint")
    rec.stop()


def record_permission(rec: Recorder) -> None:
    """waiting_user_answer: a permission prompt under the default permission mode."""
    script = rec.server.script
    rec.start(profile=AgentProfile(name="careful", permission_mode="default"))
    rec.wait(_box_ready, "the prompt")
    script.add(call_tool("Bash", {"command": "touch recorded.txt", "description": "Create a file"}),
               reply("Created the file."))
    rec.type("Create a file.")
    # The pending tool call's bullet blinks under the prompt: the screen never settles.
    screen = rec.wait_sign(lambda s: "Do you want to proceed?" in s and "Esc to cancel" in s,
                           "the permission prompt")
    rec.save("waiting_user_answer", screen, "waiting_user_answer", note="Bash permission prompt")
    rec.keys("Enter")
    screen = rec.wait(lambda s: "Created the file." in s and _box_ready(s), "the answer after approval")
    rec.save("completed_after_permission", screen, "completed", last_message="Created the file.")
    rec.stop()


def record_question(rec: Recorder) -> None:
    """waiting_user_answer: the model asks the user a multiple-choice question (AskUserQuestion)."""
    question = {"questions": [{
        "question": "Which database should I use?", "header": "Database", "multiSelect": False,
        "options": [{"label": "SQLite", "description": "Embedded"},
                    {"label": "Postgres", "description": "Server"}],
    }]}
    rec.start()
    rec.wait(_box_ready, "the prompt")
    rec.server.script.add(call_tool("AskUserQuestion", question), reply("Going with SQLite."))
    rec.type("Set up storage.")
    screen = rec.wait_sign(lambda s: "Which database should I use?" in s and "Enter to select" in s,
                           "the question")
    rec.save("waiting_user_answer_question", screen, "waiting_user_answer", note="AskUserQuestion menu")
    rec.keys("Enter")
    screen = rec.wait(lambda s: "Going with SQLite." in s and _box_ready(s), "the answer after the choice")
    rec.save("completed_after_question", screen, "completed", last_message="Going with SQLite.")
    rec.stop()


def record_dialogs(rec: Recorder) -> None:
    """Start-up dialogs, shown when the seeded config lacks the answer (kept to pin their wording)."""
    def untrusted(config: dict) -> None:
        config.pop("projects", None)

    def key_unknown(config: dict) -> None:
        config["customApiKeyResponses"] = {"approved": [], "rejected": []}

    def bypass_unaccepted(config: dict) -> None:
        config.pop("bypassPermissionsModeAccepted", None)

    for name, dialog, edit, sign in (
        ("dialog_trust_folder", "trust folder", untrusted, "one you trust"),
        ("dialog_api_key", "API key confirmation", key_unknown, "Do you want to use this API key?"),
        ("dialog_bypass_permissions", "bypass permissions confirmation", bypass_unaccepted,
         "Bypass Permissions mode"),
    ):
        rec.start(edit_config=edit)
        screen = rec.wait(lambda s, sign=sign: sign in s, name)
        rec.save(name, screen, "waiting_user_answer", dialog=dialog, note="start-up dialog")
        rec.stop()


def record_exit(rec: Recorder, sandbox_env: dict[str, str]) -> None:
    """error: Claude Code refusing bypass mode as root outside a sandbox (it exits at once)."""
    if os.geteuid() != 0:
        print("  exited_root: skipped (not running as root)")
        return
    env = {"IS_SANDBOX": ""}
    rec.start(yolo=True, env=env)
    screen = rec.wait(lambda s: "root/sudo" in s, "the refusal", settle=0.3)
    rec.save("exited_root", screen, "error",
             note="the program exited; the kernel also gets an 'exited' event")
    rec.stop()
    _ = sandbox_env


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
    parser.add_argument("--version", default=TESTED_VERSIONS[-1], help="Claude Code version to record")
    parser.add_argument("--out", type=Path, default=None,
                        help="folder for the screens (default: tests/screens/<version>)")
    args = parser.parse_args(argv)

    from cao_kernel.testing.tmux import private_tmux_socket
    from cao_tmux.backend import TmuxBackend

    cli = install_npm_cli(PACKAGE, args.version, "claude")
    out = args.out or SCREENS / args.version
    # A fixed, machine-neutral folder: dialogs print the working folder's full path.
    root = Path(tempfile.gettempdir()) / "cao-screens"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(mode=0o700)
    try:
        with AnthropicServer(Script()) as server:
            sandbox = make_sandbox(root, env={
                **server.client_env(), "CAO_CLAUDE_CODE_BIN": str(cli.binary), "IS_SANDBOX": "1",
                "DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                "TERM": "xterm-256color",
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
                record_exit(rec, dict(sandbox.env))
                narrow = Recorder(backend, server, sandbox.home, out, (100, 30))
                record_main(narrow, suffix="-100x30")
                manifest = {
                    "package": PACKAGE,
                    "version": args.version,
                    "version_output": cli.version_output,
                    "source": "recorded",
                    "recorded_with": "providers/cao-provider-claude-code/scripts/record_screens.py",
                    "screens": {**rec.manifest, **narrow.manifest},
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
