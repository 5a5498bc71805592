"""Record Kimi CLI's screens in every status, from the real CLI, as detector test fixtures.

Usage (from the repository root)::

    uv run --no-sync python providers/cao-provider-kimi-cli/scripts/record_screens.py [--version X]

It installs ``kimi-cli==X`` (default: the newest tested version) from PyPI into the live-CLI cache (a
virtual environment on a Python >= 3.12 found on the machine, dependencies resolved as of the day
after the release), runs it in tmux through cao's own tmux backend (so screens are captured exactly
as the kernel captures them), launched by the provider itself, against a scripted OpenAI Responses
server (Kimi's ``openai_responses`` provider type), and drives it through each status. It writes
``tests/screens/<version>/<name>.txt`` plus ``manifest.json`` (the status each screen was recorded
in, and the answer it shows). Nothing is edited after capture. The working folder sits in the
sandbox's HOME, which Kimi shows as ``~/project``.

Each screen is labelled by what the script made the CLI do (a held model turn is "processing", a
tool call under ``permissionMode: default`` is "waiting_user_answer"...), never by the detector under
test; the recorder only waits for the screen to settle on the sign it expects. The two start-up
gates are shown by seeding the private share folder with the caches Kimi's update check writes,
with the update check switched back on and the CLI in a network namespace of its own (so the check
cannot reach out); each gate is then answered with its key to show that the key gets past it.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
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
from cao_kernel.testing.models.cli import install_pypi_cli, make_sandbox
from cao_kernel.testing.models.openai import OpenAIServer
from cao_provider_kimi_cli.dialogs import STARTUP_DIALOGS
from cao_provider_kimi_cli.provider import NAME, TESTED_VERSIONS, kimi_cli_provider

PACKAGE = "kimi-cli"
#: Dependencies as PyPI had them the day after each tested release (kimi-cli pins few of its own).
EXCLUDE_NEWER = {"1.51.0": "2026-09-22"}
PYTHON = ">=3.12"
SCREENS = Path(__file__).resolve().parent.parent / "tests" / "screens"
MODEL = "scripted"
ANSWER = "The repository has 3 packages; all tests pass."
LONG_ANSWER = (
    "I listed the folder.\n\n"
    "The build script is missing a clean step, and two tests are slow.\n\n"
    "Next I would add the clean step."
)


def user_config(base_url: str, api_key: str) -> str:
    """The sandbox user's ``~/.kimi/config.toml``: one model on the scripted server, no telemetry."""
    return (
        f'default_model = "{MODEL}"\n'
        "telemetry = false\n\n"
        f"[providers.{MODEL}]\n"
        'type = "openai_responses"\n'
        f'base_url = "{base_url}"\n'
        f'api_key = "{api_key}"\n\n'
        f"[models.{MODEL}]\n"
        f'provider = "{MODEL}"\n'
        f'model = "{MODEL}"\n'
        "max_context_size = 200000\n"
    )


class Recorder:
    """One Kimi CLI terminal on a private tmux server, and the screens saved from it."""

    def __init__(self, backend, server: OpenAIServer, sandbox_home: Path, out: Path,
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

    def start(self, *, profile: AgentProfile | None = None, seed: dict[str, str] | None = None,
              env: dict[str, str] | None = None, isolated: bool = False) -> None:
        self._count += 1
        self.terminal_id = f"{next(_IDS):08x}"
        width, height = self.size
        # A fixed name: the screen of a refused config prints the config's full path.
        runtime = self.workdir.parent / f"rt-{width}x{height}-{self._count}"
        runtime.mkdir()
        terminal = Terminal(id=self.terminal_id, name=f"rec-{self._count}",
                            session_name=f"cao-rec{self._count}", provider=NAME,
                            agent_profile=profile.name if profile else "recorder")
        ctx = LaunchContext(terminal=terminal, profile=profile, working_directory=str(self.workdir),
                            runtime_dir=str(runtime))
        plan = kimi_cli_provider().launch(ctx)
        seeded = {f"kimi-share/{name}": content for name, content in (seed or {}).items()}
        for name, content in {**plan.files, **seeded}.items():
            target = runtime / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content, encoding="utf-8")
        argv = list(plan.argv)
        if isolated:
            # A network namespace of its own: the update check that comes with the gates reaches nothing.
            argv = ["unshare", "--net", "--", *argv]
        self.backend.create_terminal(TerminalLaunch(
            terminal_id=self.terminal_id, session_name=terminal.session_name, window_name=terminal.name,
            working_directory=str(self.workdir), argv=argv, env={**plan.env, **(env or {})},
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

    def wait(self, sign: Callable[[str], bool], what: str, timeout: float = 30.0, settle: float = 0.8) -> str:
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

    def arrivals(self, count: int, timeout: float = 15.0) -> None:
        """Wait until ``count`` scripted turns have been taken (a held one counts once it is asked for)."""
        deadline = time.monotonic() + timeout
        while self.server.script.served < count:
            if time.monotonic() > deadline:
                raise SystemExit(f"{self.server.script.served} of {count} model turns asked for within "
                                 f"{timeout:g} s; screen:\n{self.screen()}")
            time.sleep(0.05)

    def keys(self, *keys: str) -> None:
        self.backend.send_keys(self.terminal_id, list(keys))


_MOON = "🌑🌒🌓🌔🌕🌖🌗🌘"
_IDS = itertools.count(1)


def _rows(screen: str) -> list[str]:
    return [row.rstrip() for row in screen.splitlines()]


def _spinning(screen: str) -> bool:
    return any(row[:1] in _MOON or "\u2800" <= row[:1] <= "\u28ff" for row in _rows(screen) if row)


def _prompt_ready(screen: str) -> bool:
    rows = _rows(screen)
    boxed = any(row.startswith("── input ") for row in rows)
    return boxed and "context:" in rows[-1] and not _spinning(screen)


def record_main(rec: Recorder, suffix: str = "") -> None:
    """idle, processing (model and tool), completed (plain and after a tool), error: the default launch."""
    script = rec.server.script
    gate = threading.Event()
    rec.start(profile=AgentProfile(name="recorder", system_prompt="You answer briefly."))
    rec.save(f"idle{suffix}", rec.wait(_prompt_ready, "the prompt"), "idle")

    script.add(hold(gate, reply(ANSWER)))
    served = script.served
    rec.type("Summarise the repository.")
    rec.arrivals(served + 1)
    screen = rec.wait_sign(lambda s: any(r[:1] in _MOON for r in _rows(s) if r), "the moon spinner")
    rec.save(f"processing{suffix}", screen, "processing", note="model turn held open by the server")
    gate.set()
    screen = rec.wait(lambda s: ANSWER in s and _prompt_ready(s), "the answer")
    rec.save(f"completed{suffix}", screen, "completed", last_message=ANSWER)

    script.add(call_tool("Shell", {"command": "sleep 4; ls"}), reply(LONG_ANSWER))
    rec.type("Look around and report.")
    screen = rec.wait_sign(lambda s: "Using Shell (sleep 4; ls)" in s, "the running tool")
    rec.save(f"processing_tool{suffix}", screen, "processing", note="a Shell call still running")
    screen = rec.wait(lambda s: "Next I would add the clean step." in s and _prompt_ready(s),
                      "the long answer")
    rec.save(f"completed_after_tool{suffix}", screen, "completed", last_message=LONG_ANSWER)

    script.add(fail(400, "The model `scripted` does not exist", kind="invalid_request_error"))
    rec.type("Try once more.")
    screen = rec.wait(lambda s: "LLM provider error" in s and _prompt_ready(s), "the API error")
    rec.save(f"error{suffix}", screen, "error", note="the API answered 400 (no retry)")
    rec.stop()


def record_approval(rec: Recorder) -> None:
    """waiting_user_answer: an approval prompt under ``permissionMode: default``."""
    script = rec.server.script
    rec.start(profile=AgentProfile(name="careful", permission_mode="default"))
    rec.wait(_prompt_ready, "the prompt")
    script.add(call_tool("Shell", {"command": "touch recorded.txt"}), reply("Created the file."))
    rec.type("Create a file.")
    # The pending tool call's spinner keeps turning above the panel: the screen never settles.
    screen = rec.wait_sign(lambda s: "requesting approval" in s and "confirm" in s, "the approval panel")
    rec.save("waiting_user_answer", screen, "waiting_user_answer", note="Shell approval panel")
    rec.keys("Enter")
    screen = rec.wait(lambda s: "Created the file." in s and _prompt_ready(s), "the answer after approval")
    rec.save("completed_after_approval", screen, "completed", last_message="Created the file.")
    rec.stop()


def record_question(rec: Recorder) -> None:
    """waiting_user_answer: the model asks the user a multiple-choice question (AskUserQuestion)."""
    question = {"questions": [{
        "question": "Which database should I use?", "header": "Database", "multi_select": False,
        "options": [{"label": "SQLite", "description": "Embedded"},
                    {"label": "Postgres", "description": "Server"}],
    }]}
    rec.start()
    rec.wait(_prompt_ready, "the prompt")
    rec.server.script.add(call_tool("AskUserQuestion", question), reply("Going with SQLite."))
    rec.type("Set up storage.")
    screen = rec.wait_sign(lambda s: "Which database should I use?" in s and "[2] Postgres" in s,
                           "the question")
    rec.save("waiting_user_answer_question", screen, "waiting_user_answer", note="AskUserQuestion panel")
    rec.keys("Enter")
    screen = rec.wait(lambda s: "Going with SQLite." in s and _prompt_ready(s), "the answer after the choice")
    rec.save("completed_after_question", screen, "completed", last_message="Going with SQLite.")
    rec.stop()


TIPS = {
    "enabled": True,
    "message": {"en": "kimi-cli is no longer maintained. Please move to Kimi Code."},
    "links": {},
    "migration": {"version": "2.0.0", "min_cli_version": "0.0.0"},
}


def record_gates(rec: Recorder) -> None:
    """The two start-up gates, from the caches Kimi's update check writes; each answered by its key."""
    dialogs = {dialog.name: dialog for dialog in STARTUP_DIALOGS}
    gates = (
        ("dialog_update_gate", "update gate", {"latest_version.txt": "9.9.9\n"}, "Upgrade now"),
        ("dialog_migration_gate", "migration gate", {"kimi_code_tips.json": json.dumps(TIPS)}, "Migrate now"),
    )
    for name, dialog, seed, sign in gates:
        rec.start(seed=seed, env={"KIMI_CLI_NO_AUTO_UPDATE": ""}, isolated=True)
        screen = rec.wait(lambda s, sign=sign: sign in s, name)
        rec.save(name, screen, "waiting_user_answer", dialog=dialog,
                 note="start-up gate shown from a seeded update-check cache")
        rec.keys(*dialogs[dialog].keys)
        rec.wait(lambda s: "── input " in s, f"the prompt after the {dialog}", settle=0.3)
        rec.stop()


def record_startup_failure(rec: Recorder) -> None:
    """error: Kimi refusing a config whose default model does not exist (it exits at once)."""
    profile = AgentProfile(name="broken", extra={"kimiConfig": {"default_model": "missing-model"}})
    rec.start(profile=profile)
    screen = rec.wait(lambda s: "missing-model" in s, "the refusal", settle=0.5)
    rec.save("exited_bad_config", screen, "error",
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
    parser.add_argument("--version", default=TESTED_VERSIONS[-1], help="kimi-cli version to record")
    parser.add_argument("--out", type=Path, default=None,
                        help="folder for the screens (default: tests/screens/<version>)")
    args = parser.parse_args(argv)

    from cao_kernel.testing.tmux import private_tmux_socket
    from cao_tmux.backend import TmuxBackend

    cli = install_pypi_cli(PACKAGE, args.version, "kimi", python=PYTHON,
                           exclude_newer=EXCLUDE_NEWER.get(args.version))
    out = args.out or SCREENS / args.version
    # A fixed, machine-neutral folder: a refused config's screen shows its full path.
    root = Path(tempfile.gettempdir()) / "cao-kimi-screens"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(mode=0o700)
    try:
        with OpenAIServer(Script(), models=(MODEL,)) as server:
            sandbox = make_sandbox(root, env={"CAO_KIMI_CLI_BIN": str(cli.binary), "TERM": "xterm-256color"})
            (sandbox.home / ".kimi").mkdir()
            (sandbox.home / ".kimi" / "config.toml").write_text(
                user_config(server.base_url, "sk-scripted-" + os.urandom(4).hex()), encoding="utf-8")
            with _environment(dict(sandbox.env)), private_tmux_socket() as tmux:
                backend = TmuxBackend(home_dir=root / "cao-home", socket_path=tmux.socket_path,
                                      config_file=tmux.config_file)
                print(f"recording {PACKAGE}=={args.version} ({cli.version_output}) into {out}")
                if out.exists():
                    shutil.rmtree(out)
                rec = Recorder(backend, server, sandbox.home, out, (220, 50))
                record_main(rec)
                record_approval(rec)
                record_question(rec)
                record_gates(rec)
                record_startup_failure(rec)
                narrow = Recorder(backend, server, sandbox.home, out, (100, 30))
                record_main(narrow, suffix="-100x30")
                backend.close()
                manifest = {
                    "package": PACKAGE,
                    "version": args.version,
                    "version_output": cli.version_output,
                    "source": "recorded",
                    "recorded_with": "providers/cao-provider-kimi-cli/scripts/record_screens.py",
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
