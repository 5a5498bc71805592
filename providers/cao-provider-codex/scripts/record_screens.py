"""Record real Codex screens for the detector tests.

Run from the repository root (needs tmux, npm and the npm registry the first time)::

    uv run --no-sync python providers/cao-provider-codex/scripts/record_screens.py [--version 0.169.0]

For each scenario it starts the real Codex (installed from npm into the live-CLI cache) the way the
provider launches it, in a private tmux server at the kernel's window size, drives it against the
scripted Responses server into a known state and saves what ``capture-pane`` shows to
``tests/screens/<version>/<scenario>.txt``. ``manifest.json`` there records, per screen, the status
the scenario put Codex in, for finished turns the answer the model gave, and for start-up dialogs the
provider's dialog it shows: the conformance kit (``cao_kernel.testing.conformance``) checks the
provider against all three. Paths are written relative to a sandbox HOME (``~``), so nothing of the
recording machine ends up in the files.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cao_hookspecs import AgentProfile, LaunchContext, Terminal, TerminalStatus
from cao_testkit.models.cli import install_npm_cli, make_sandbox
from cao_testkit.models.openai import OpenAIServer
from cao_testkit.models.script import Script, call_tool, fail, reply, think
from cao_testkit.recorder import environment, screen_entry, write_manifest
from cao_provider_codex.codex_home import HOME_DIR
from cao_provider_codex.provider import TESTED_VERSIONS, launch

HERE = Path(__file__).resolve().parent
SCREENS = HERE.parent / "tests" / "screens"
WIDTH, HEIGHT = 220, 50  # the kernel's default window size
KEY_VARIABLE = "CAO_SCRIPTED_OPENAI_KEY"
MODEL = "scripted"
TERMINAL_ID = "0123abcd"


class Retry(Exception):
    """The scenario missed a short-lived screen; running it again may catch it."""


class Recorder:
    """One scenario: a sandbox, a scripted server, Codex in a private tmux server."""

    def __init__(self, root: Path, codex_bin: Path, script: Script, version: str) -> None:
        self.root = root
        self.version = version
        self.server = OpenAIServer(script, models=(MODEL,)).start()
        self.sandbox = make_sandbox(root, env={KEY_VARIABLE: "sk-scripted"}, path=[codex_bin.parent])
        self.home = self.sandbox.home
        self.workdir = self.home / "project"
        self.workdir.mkdir(exist_ok=True)
        self.socket = str(root / "tmux.sock")

    def tmux(self, *args: str, stdin: bytes | None = None) -> str:
        done = subprocess.run(["tmux", "-S", self.socket, "-f", os.devnull, *args], input=stdin,
                              capture_output=True, env=dict(self.sandbox.env), check=False, timeout=10)
        return done.stdout.decode("utf-8", "replace")

    def profile(self, **fields: Any) -> AgentProfile:
        codex_config = {"model_provider": "scripted",
                        "model_providers": {"scripted": {"name": "scripted model server",
                                                         "base_url": self.server.base_url,
                                                         "env_key": KEY_VARIABLE, "wire_api": "responses"}}}
        return AgentProfile(name="coder", provider="codex", model=MODEL, codex_config=codex_config, **fields)

    def start(self, profile: AgentProfile | None = None, *, cwd: Path | None = None,
              edit_argv: Callable[[list[str]], list[str]] = lambda argv: argv,
              edit_files: Callable[[dict[str, str]], dict[str, str]] = lambda files: files) -> None:
        profile = profile if profile is not None else self.profile()
        terminal = Terminal(id=TERMINAL_ID, name="coder-0001", session_name="cao-record", provider="codex",
                            agent_profile=profile.name)
        runtime = self.home / ".aws" / "cli-agent-orchestrator" / "runtime" / "terminals" / TERMINAL_ID
        ctx = LaunchContext(terminal=terminal, profile=profile, working_directory=str(self.workdir),
                            runtime_dir=str(runtime), model=profile.model, mcp_servers=profile.mcp_servers)
        # The provider reads the (empty) user Codex home of the sandbox and finds codex on its PATH.
        with environment({"HOME": str(self.home), "PATH": self.sandbox.env["PATH"]}, clear=False):
            plan = launch(ctx)
        for name, content in edit_files(dict(plan.files)).items():
            target = runtime / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content, encoding="utf-8")
        env_args = [arg for name, value in plan.env.items() for arg in ("-e", f"{name}={value}")]
        self.tmux("new-session", "-d", "-s", "rec", "-x", str(WIDTH), "-y", str(HEIGHT),
                  "-c", str(cwd or self.workdir), *env_args, "--", *edit_argv(list(plan.argv)))

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "rec")

    def wait_for(self, text: str, timeout: float = 20.0, *, absent: str | None = None) -> str:
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if text in screen and (absent is None or absent not in screen):
                return screen
            if time.monotonic() > deadline:
                raise RuntimeError(f"{text!r} did not show within {timeout:g} s; screen:\n{screen}")
            time.sleep(0.05)

    def ready(self) -> str:
        # The footer's model line: before it, Codex shows a bare composer for a moment (see _starting).
        return self.wait_for(f"{MODEL} default \u00b7")

    def send(self, text: str) -> None:
        self.tmux("load-buffer", "-b", "msg", "-", stdin=text.encode())
        self.tmux("paste-buffer", "-p", "-r", "-d", "-b", "msg", "-t", "rec")
        time.sleep(0.2)
        self.tmux("send-keys", "-t", "rec", "Enter")

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "rec", *keys)

    def close(self) -> None:
        self.tmux("kill-server")
        self.server.close()

    def sanitize(self, screen: str) -> str:
        # Longest first: the runtime folder lives under HOME, HOME under the recording root.
        replacements = sorted([(str(self.home), "~"), (str(self.root), "~/..")], key=lambda p: -len(p[0]))
        for path, shown in replacements:
            screen = screen.replace(path, shown)
        return "\n".join(row.rstrip() for row in screen.splitlines()).rstrip("\n") + "\n"


def _no_yolo(argv: list[str]) -> list[str]:
    kept = [a for a in argv if a != "--dangerously-bypass-approvals-and-sandbox"]
    return [*kept, "--ask-for-approval", "on-request"]


# Each scenario: (name, expected status, answer or None, script turns, how to drive Codex). Scenarios
# ending on a start-up dialog name the provider's StartupDialog in DIALOGS.
ANSWER = "The answer is 42, from the scripted model."
PARAGRAPHS = "First paragraph of the answer.\n\nSecond paragraph, after a blank line."


def _starting(r: Recorder) -> str:
    r.start()
    return r.wait_for("? for shortcuts", absent="\u00b7")


def _idle(r: Recorder) -> str:
    r.start()
    return r.ready()


def _completed(r: Recorder) -> str:
    r.start()
    r.ready()
    r.send("What is the answer?")
    return r.wait_for("Worked for")


def _two_turns(r: Recorder) -> str:
    r.start()
    r.ready()
    r.send("first question")
    r.wait_for("Worked for")
    r.send("second question")
    deadline = time.monotonic() + 20
    while (screen := r.screen()).count("Worked for") < 2:
        if time.monotonic() > deadline:
            raise RuntimeError(f"the second turn did not finish; screen:\n{screen}")
        time.sleep(0.05)
    return screen


def _answer_before_summary(r: Recorder) -> str:
    # The answer is on screen a moment before the turn summary: catch that moment (it may take tries).
    r.start()
    r.ready()
    r.send("Answer quickly.")
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        screen = r.screen()
        if "Worked for" in screen:
            raise Retry("the turn finished before a screen without its summary was captured")
        if PARAGRAPHS.split("\n")[-1] in screen:
            return screen
        time.sleep(0.002)
    raise RuntimeError(f"the answer did not show; screen:\n{r.screen()}")


def _thinking(r: Recorder) -> str:
    r.start()
    r.ready()
    r.send("Think about it.")
    return r.wait_for("esc to interrupt")


def _tool_running(r: Recorder) -> str:
    r.start()
    r.ready()
    r.send("Run a slow command.")
    r.wait_for("esc to interrupt")
    time.sleep(2.5)  # well inside the command's 6 s
    return r.wait_for("esc to interrupt")


def _after_tool(r: Recorder) -> str:
    r.start()
    r.ready()
    r.send("List the folder, then answer.")
    return r.wait_for("Worked for")


NOTES_SERVER = '''
from mcp.server.mcpserver import MCPServer

app = MCPServer("notes")


@app.tool()
def add_note(text: str) -> str:
    """Store a note."""
    return f"noted: {text}"


app.run()
'''


def _after_mcp_tool(r: Recorder) -> str:
    server = r.root / "notes_server.py"
    server.write_text(NOTES_SERVER, encoding="utf-8")
    r.start(r.profile(mcp_servers={"notes": {"command": sys.executable, "args": [str(server)]}}))
    r.ready()
    r.send("Take a note.")
    return r.wait_for("Worked for")


def _approval(r: Recorder) -> str:
    r.start(edit_argv=_no_yolo)
    r.ready()
    r.send("Create the marker file.")
    return r.wait_for("Press enter to confirm")


def _model_error(r: Recorder) -> str:
    r.start()
    r.ready()
    r.send("Please fail.")
    return r.wait_for("scripted refusal")


def _interrupted(r: Recorder) -> str:
    r.start()
    r.ready()
    r.send("Think for a long time.")
    r.wait_for("esc to interrupt")
    r.keys("Escape")
    return r.wait_for("interrupted")


def _typed(r: Recorder) -> str:
    r.start()
    r.ready()
    r.keys("-l", "half-typed message, not sent")
    return r.wait_for("not sent", absent="? for shortcuts")


def _trust(r: Recorder) -> str:
    repo = r.home / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True, env=dict(r.sandbox.env))
    r.start(cwd=repo)
    return r.wait_for("Trust this folder?")


def _update_prompt(r: Recorder) -> str:
    # What a Codex that finds a newer release in its version cache shows at start-up. The private config
    # turns the check off; here it is on, and the cache is fresh so Codex does not ask the network.
    from datetime import UTC, datetime

    def with_update_check(files: dict[str, str]) -> dict[str, str]:
        config = f"{HOME_DIR}/config.toml"
        assert "check_for_update_on_startup = false" in files[config], files[config]
        newer = ".".join([*r.version.split(".")[:-1], "999"])
        return {**files,
                config: files[config].replace("check_for_update_on_startup = false",
                                              "check_for_update_on_startup = true"),
                f"{HOME_DIR}/version.json": json.dumps({"latest_version": newer,
                                                        "last_checked_at": datetime.now(UTC).isoformat()})}

    r.start(edit_files=with_update_check)
    return r.wait_for("Update available")


def _update_skipped(r: Recorder) -> str:
    # After "Skip" Codex still shows a banner about the release above its prompt.
    _update_prompt(r)
    time.sleep(0.5)  # answer once the prompt has settled, as the kernel does
    r.keys("Down", "Enter")
    r.ready()
    return r.wait_for("Update available!")


def _login(r: Recorder) -> str:
    r.start(AgentProfile(name="nologin", provider="codex"))
    return r.wait_for("Press enter to continue")


SCENARIOS: list[tuple[str, TerminalStatus, str | None, list[Any], Callable[[Recorder], str]]] = [
    ("unknown-starting", TerminalStatus.UNKNOWN, None, [], _starting),
    ("idle-start", TerminalStatus.IDLE, None, [], _idle),
    ("completed-reply", TerminalStatus.COMPLETED, ANSWER, [reply(ANSWER)], _completed),
    ("completed-second-turn", TerminalStatus.COMPLETED, PARAGRAPHS, [reply("First turn."), reply(PARAGRAPHS)],
     _two_turns),
    ("processing-thinking", TerminalStatus.PROCESSING, None, [think(8, "late")], _thinking),
    ("processing-answer-before-summary", TerminalStatus.PROCESSING, None, [reply(PARAGRAPHS)],
     _answer_before_summary),
    ("processing-tool", TerminalStatus.PROCESSING, None,
     [call_tool("exec_command", {"cmd": "sleep 6"}), reply("slept")], _tool_running),
    ("completed-after-tool", TerminalStatus.COMPLETED, "The folder is empty.",
     [call_tool("exec_command", {"cmd": "ls"}, text="Listing it."), reply("The folder is empty.")],
     _after_tool),
    ("completed-after-mcp-tool", TerminalStatus.COMPLETED, "Noted it.",
     [call_tool("mcp__notes__add_note", {"text": "buy milk"}), reply("Noted it.")], _after_mcp_tool),
    ("waiting-approval", TerminalStatus.WAITING_USER_ANSWER, None,
     [call_tool("exec_command", {"cmd": "touch marker", "sandbox_permissions": "require_escalated",
                                 "justification": "Create the marker file?"})], _approval),
    ("error-model-refusal", TerminalStatus.ERROR, None, [fail(400, "scripted refusal: context too long")],
     _model_error),
    ("idle-interrupted", TerminalStatus.IDLE, None, [think(30, "never seen")], _interrupted),
    ("processing-typed-unsent", TerminalStatus.PROCESSING, None, [], _typed),
    ("waiting-trust-folder", TerminalStatus.WAITING_USER_ANSWER, None, [], _trust),
    ("waiting-update-prompt", TerminalStatus.WAITING_USER_ANSWER, None, [], _update_prompt),
    ("idle-update-skipped", TerminalStatus.IDLE, None, [], _update_skipped),
    ("error-login", TerminalStatus.ERROR, None, [], _login),
]
DIALOGS = {"waiting-trust-folder": "trust-folder", "waiting-update-prompt": "update-prompt"}
NOTES = {"waiting-update-prompt": "update check turned on, version cache seeded with a newer release",
         "idle-update-skipped": "the update prompt answered with its keys (Down, Enter: Skip)"}
PACKAGE = "@openai/codex"
RECORDED_WITH = "providers/cao-provider-codex/scripts/record_screens.py"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", default=TESTED_VERSIONS[-1], help="Codex version to record (npm)")
    parser.add_argument("--only", action="append", default=[], help="record only these scenarios")
    args = parser.parse_args(argv)
    if shutil.which("tmux") is None:
        parser.error("tmux is not installed")
    with tempfile.TemporaryDirectory() as version_home:
        # The install check runs `codex --version`, which writes helper files into its home: not ~/.codex.
        os.environ["CODEX_HOME"] = version_home
        try:
            codex = install_npm_cli(PACKAGE, args.version, "codex")
        finally:
            del os.environ["CODEX_HOME"]
    out = SCREENS / args.version
    out.mkdir(parents=True, exist_ok=True)
    manifest_path = out / "manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8")) if manifest_path.exists() else {}
    screens: dict[str, Any] = manifest.get("screens", {})
    # The install check captures stderr too (Codex warns about its scratch home there): keep the line
    # that names the version.
    lines = codex.version_output.splitlines()
    version_output = next((line.strip() for line in lines if args.version in line),
                          codex.version_output.strip())
    # Outside the system temp folder: Codex warns about a home under it, which is not what users see.
    scratch_base = Path.home() / ".cache" / "cao"
    scratch_base.mkdir(parents=True, exist_ok=True)
    for name, status, answer, turns, drive in SCENARIOS:
        if args.only and name not in args.only:
            continue
        for attempt in range(1, 21):
            root = Path(tempfile.mkdtemp(prefix="record-", dir=scratch_base))
            recorder = Recorder(root, codex.binary, Script(*turns, side="Scripted title"), args.version)
            try:
                screen = recorder.sanitize(drive(recorder))
                break
            except Retry as missed:
                print(f"{name}: attempt {attempt}: {missed}", file=sys.stderr)
            finally:
                recorder.close()
                shutil.rmtree(root, ignore_errors=True)
        else:
            raise RuntimeError(f"{name}: not captured in 20 attempts")
        (out / f"{name}.txt").write_text(screen, encoding="utf-8")
        screens[name] = screen_entry(status.value, (WIDTH, HEIGHT), last_message=answer,
                                     dialog=DIALOGS.get(name), note=NOTES.get(name, ""))
        print(f"recorded {name} ({status.value})", file=sys.stderr)
    write_manifest(out, package=PACKAGE, version=args.version, version_output=version_output,
                   recorded_with=RECORDED_WITH, screens=dict(sorted(screens.items())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
