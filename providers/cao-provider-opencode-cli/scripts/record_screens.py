"""Record OpenCode's screens in every status, from the real CLI, as detector test fixtures.

Usage (from the repository root)::

    uv run --no-sync python providers/cao-provider-opencode-cli/scripts/record_screens.py [--version X]

It installs ``opencode-ai@X`` (default: the newest tested version) into the live-CLI cache, runs it in
tmux through cao's own tmux backend (so screens are captured exactly as the kernel captures them),
drives it with a scripted Anthropic server (OpenCode's ``anthropic`` provider pointed at it by the
sandbox's global config) through each status, and writes ``tests/screens/<version>/<name>.txt`` plus
``manifest.json`` (the status each screen was recorded in, and the answer it shows). Nothing is edited
after capture. The working folder sits in the sandbox's HOME under the fixed ``<tmp>/cao-screens``, so
no path of the recording machine ends up in a fixture.

Each screen is labelled by what the script made the CLI do (a held model turn is "processing", a
permission request is "waiting_user_answer"...), never by the detector under test; the recorder only
waits for the screen to settle on the sign it expects.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from cao_hookspecs import AgentProfile, LaunchContext, Terminal, TerminalLaunch
from cao_kernel.testing.models import Script, call_tool, fail, hold, reply
from cao_kernel.testing.models.anthropic import FAKE_API_KEY, AnthropicServer
from cao_kernel.testing.models.cli import install_npm_cli, make_sandbox
from cao_provider_opencode_cli.provider import NAME, PACKAGE, TESTED_VERSIONS, opencode_provider

SCREENS = Path(__file__).resolve().parent.parent / "tests" / "screens"
MODEL = "anthropic/claude-sonnet-4-5"
ANSWER = "The repository has 3 packages; all tests pass."
LONG_ANSWER = (
    "I listed the folder.\n\n"
    "Findings:\n\n"
    "- the build script is missing a clean step\n"
    "- two tests are slow\n\n"
    "Next I would add the clean step."
)
# What OpenCode shows of LONG_ANSWER: Markdown is rendered (list items keep their dash).
LONG_SHOWN = LONG_ANSWER
_FINISHED = re.compile(r"^▣ .+ · .+ · \d[\dhms. ]*$", re.MULTILINE)


def global_config(server_url: str, **extra: object) -> dict:
    """The sandbox user's own OpenCode config: the ``anthropic`` provider at the scripted server."""
    return {
        "$schema": "https://opencode.ai/config.json",
        "model": MODEL,
        "provider": {"anthropic": {"options": {"baseURL": server_url + "/v1", "apiKey": FAKE_API_KEY}}},
        **extra,
    }


class Recorder:
    """One OpenCode terminal on a private tmux server, and the screens saved from it."""

    def __init__(self, backend, server: AnthropicServer, sandbox_home: Path, out: Path,
                 size: tuple[int, int]) -> None:
        self.backend = backend
        self.server = server
        self.home = sandbox_home
        self.workdir = sandbox_home / "project"
        self.workdir.mkdir(exist_ok=True)
        self.out = out
        self.size = size
        self.manifest: dict[str, dict] = {}
        self.terminal_id = ""
        self._count = 0

    def user_config(self, **extra: object) -> None:
        folder = self.home / ".config" / "opencode"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "opencode.json").write_text(json.dumps(global_config(self.server.url, **extra), indent=2),
                                              encoding="utf-8")

    def start(self, *, profile: AgentProfile | None = None, env: dict[str, str] | None = None,
              extra_args: tuple[str, ...] = ()) -> None:
        self._count += 1
        self.terminal_id = f"{self._count:08x}"
        runtime = Path(tempfile.mkdtemp(prefix="rt-", dir=self.home.parent))
        profile = profile or AgentProfile(name="recorder", system_prompt="You answer briefly.")
        terminal = Terminal(id=self.terminal_id, name=f"rec-{self._count}",
                            session_name=f"cao-rec{self._count}", provider=NAME, agent_profile=profile.name)
        ctx = LaunchContext(terminal=terminal, profile=profile, working_directory=str(self.workdir),
                            runtime_dir=str(runtime), env=env or {})
        plan = opencode_provider().launch(ctx)
        for name, content in plan.files.items():
            target = runtime / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content, encoding="utf-8")
        width, height = self.size
        self.backend.create_terminal(TerminalLaunch(
            terminal_id=self.terminal_id, session_name=terminal.session_name, window_name=terminal.name,
            working_directory=str(self.workdir), argv=(*plan.argv, *extra_args),
            env={**(env or {}), **plan.env},
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

    def wait(self, sign: Callable[[str], bool], what: str, timeout: float = 60.0, settle: float = 0.8) -> str:
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

    def wait_sign(self, sign: Callable[[str], bool], what: str, timeout: float = 60.0) -> str:
        """A screen where ``sign`` holds, taken a moment after it first did (for states that animate
        and never settle: the moment lets the CLI finish drawing)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if sign(self.screen()):
                time.sleep(0.4)
                screen = self.screen()
                if sign(screen):
                    return screen
            time.sleep(0.05)
        raise SystemExit(f"gave up waiting for {what}; screen:\n{self.screen()}")

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


def _ready(screen: str) -> bool:
    rows = [row for row in screen.splitlines() if row.strip()]
    return bool(rows) and rows[-1].rstrip().endswith("ctrl+p cmd") and "interrupt" not in rows[-1]


def _finished(text: str) -> Callable[[str], bool]:
    return lambda s: text in s and _ready(s) and bool(_FINISHED.search(s))


def record_main(rec: Recorder, suffix: str = "") -> None:
    """idle, processing (model and tool), completed (plain and after a tool), error, interrupted."""
    script = rec.server.script
    gate = threading.Event()
    rec.user_config()
    rec.start()
    rec.save(f"idle{suffix}", rec.wait(lambda s: _ready(s) and "Ask anything" in s, "the prompt"), "idle")
    rec.type("Fix the flaky test", enter=False)
    screen = rec.wait(lambda s: "Fix the flaky test" in s, "the typed text")
    rec.save(f"processing_typed_unsent{suffix}", screen, "processing",
             note="text typed into the prompt, Enter not pressed yet")
    rec.keys("C-u")
    rec.wait(lambda s: _ready(s) and "Fix the flaky test" not in s, "the cleared prompt")

    script.add(hold(gate, reply(ANSWER)))
    served = script.served
    rec.type("Summarise the repository.")
    rec.server.wait_for_arrivals(served + 1, timeout=40)
    screen = rec.wait_sign(lambda s: "esc interrupt" in s, "the spinner")
    rec.save(f"processing{suffix}", screen, "processing", note="model turn held open by the server")
    gate.set()
    screen = rec.wait(_finished(ANSWER), "the answer")
    rec.save(f"completed{suffix}", screen, "completed", last_message=ANSWER)

    script.add(call_tool("bash", {"command": "sleep 4; ls", "description": "List files slowly"}),
               reply(LONG_ANSWER))
    rec.type("Look around and report.")
    screen = rec.wait_sign(lambda s: "sleep 4; ls" in s and "esc interrupt" in s, "the running tool")
    rec.save(f"processing_tool{suffix}", screen, "processing", note="a bash tool call still running")
    screen = rec.wait(_finished("Next I would add the clean step."), "the long answer")
    rec.save(f"completed_after_tool{suffix}", screen, "completed", last_message=LONG_SHOWN)

    script.add(fail(401, "invalid x-api-key", kind="authentication_error"))
    rec.type("Try once more.")
    screen = rec.wait(lambda s: "invalid x-api-key" in s and _ready(s), "the API error")
    rec.save(f"error{suffix}", screen, "error", note="the API answered 401 (not retried)")

    gate = threading.Event()
    script.add(hold(gate, reply("Never shown.")))
    served = script.served
    rec.type("Start something long.")
    rec.server.wait_for_arrivals(served + 1, timeout=40)
    rec.wait_sign(lambda s: "esc interrupt" in s, "the spinner")
    rec.keys("Escape")
    rec.wait_sign(lambda s: "again to interrupt" in s, "the interrupt hint")
    rec.keys("Escape")
    screen = rec.wait(lambda s: _ready(s) and "Aborted" in s, "the interrupted turn")
    rec.save(f"idle_interrupted{suffix}", screen, "idle", note="the user pressed Esc twice")
    gate.set()
    rec.stop()


def record_prompts(rec: Recorder) -> None:
    """waiting_user_answer: a permission prompt (OpenCode's own rules, bash set to ask) and a question."""
    script = rec.server.script
    rec.user_config(permission={"bash": "ask"})
    rec.start(profile=AgentProfile(name="careful", permission_mode="default"))
    rec.wait(_ready, "the prompt")
    script.add(call_tool("bash", {"command": "touch recorded.txt", "description": "Create a file"}),
               reply("Created the file."))
    rec.type("Create a file.")
    screen = rec.wait_sign(lambda s: "Permission required" in s and "Allow once" in s,
                           "the permission prompt")
    rec.save("waiting_user_answer", screen, "waiting_user_answer", note="bash permission prompt")
    rec.keys("Enter")
    screen = rec.wait(_finished("Created the file."), "the answer after approval")
    rec.save("completed_after_permission", screen, "completed", last_message="Created the file.")
    rec.stop()

    question = {"questions": [{
        "question": "Which database should I use?", "header": "Database",
        "options": [{"label": "SQLite", "description": "Embedded"},
                    {"label": "Postgres", "description": "Server"}],
    }]}
    rec.user_config()
    rec.start()
    rec.wait(_ready, "the prompt")
    script.add(call_tool("question", question), reply("Going with SQLite."))
    rec.type("Set up storage.")
    screen = rec.wait_sign(lambda s: "Which database should I use?" in s and "enter submit" in s,
                           "the question")
    rec.save("waiting_user_answer_question", screen, "waiting_user_answer", note="question tool")
    rec.keys("Enter")
    deadline = time.monotonic() + 3
    while "enter submit" in rec.screen() and time.monotonic() < deadline:
        time.sleep(0.05)
    if "enter submit" in rec.screen():
        # The choice was taken but still needs confirming.
        rec.keys("Enter")
    screen = rec.wait(_finished("Going with SQLite."), "the answer after the choice")
    rec.save("completed_after_question", screen, "completed", last_message="Going with SQLite.")
    rec.stop()


def record_failures(rec: Recorder) -> None:
    """error: OpenCode stopping at start-up (a broken user config), and a turn without any model provider."""
    folder = rec.home / ".config" / "opencode"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "opencode.json").write_text('{"model": "anthropic/claude-sonnet-4-5",\n', encoding="utf-8")
    rec.start()
    screen = rec.wait(lambda s: "is not valid JSON" in s, "the config error", settle=0.3)
    rec.save("exited_bad_config", screen, "error",
             note="the program exited; the kernel also gets an 'exited' event")
    rec.stop()

    rec.user_config()
    # What OpenCode shows for an option it does not know (as a release without --mini would): its usage.
    rec.start(extra_args=("--no-such-option",))
    screen = rec.wait(lambda s: "Options:" in s and "--mini" in s, "the usage text", settle=0.3)
    rec.save("exited_unknown_option", screen, "error",
             note="started with an option OpenCode does not know; it printed its usage and exited")
    rec.stop()

    (folder / "opencode.json").write_text(json.dumps({"disabled_providers": ["opencode"]}), encoding="utf-8")
    rec.start()
    rec.wait(_ready, "the prompt")
    rec.type("Hello?")
    screen = rec.wait(lambda s: "No providers are available" in s and _ready(s), "the provider error")
    rec.save("error_no_provider", screen, "error",
             note="no model provider is configured: the first message fails with a stack trace")
    rec.stop()
    rec.user_config()


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


def sandbox_env(cli_binary: Path) -> dict[str, str]:
    """What every recording (and live test) runs OpenCode with, besides the sandboxed HOME."""
    return {
        "CAO_OPENCODE_CLI_BIN": str(cli_binary),
        # models.dev is out of reach offline; OpenCode's bundled model list is enough.
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
        "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
        "TERM": "xterm-256color",
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", default=TESTED_VERSIONS[-1], help="OpenCode version to record")
    parser.add_argument("--out", type=Path, default=None,
                        help="folder for the screens (default: tests/screens/<version>)")
    args = parser.parse_args(argv)

    from cao_kernel.testing.tmux import private_tmux_socket
    from cao_tmux.backend import TmuxBackend

    cli = install_npm_cli(PACKAGE, args.version, "opencode")
    out = args.out or SCREENS / args.version
    # A fixed, machine-neutral folder: OpenCode prints the working folder's path.
    root = Path(tempfile.gettempdir()) / "cao-screens"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(mode=0o700)
    try:
        with AnthropicServer(Script()) as server:
            wanted = sandbox_env(cli.binary)
            sandbox = make_sandbox(root, env=wanted)
            # The user's own OpenCode settings stay out of the recording.
            env = {k: v for k, v in sandbox.env.items() if not k.startswith("OPENCODE_") or k in wanted}
            with _environment(env), private_tmux_socket() as tmux:
                backend = TmuxBackend(home_dir=root / "cao-home", socket_path=tmux.socket_path,
                                      config_file=tmux.config_file)
                print(f"recording {PACKAGE}@{args.version} ({cli.version_output}) into {out}")
                if out.exists():
                    shutil.rmtree(out)
                rec = Recorder(backend, server, sandbox.home, out, (220, 50))
                record_main(rec)
                record_prompts(rec)
                record_failures(rec)
                narrow = Recorder(backend, server, sandbox.home, out, (100, 30))
                record_main(narrow, suffix="-100x30")
                manifest = {
                    "package": PACKAGE,
                    "version": args.version,
                    "version_output": cli.version_output,
                    "source": "recorded",
                    "recorded_with": "providers/cao-provider-opencode-cli/scripts/record_screens.py",
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
