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

import json
import re
import shutil
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from cao_hookspecs import AgentProfile
from cao_testkit.models import Script, call_tool, fail, hold, reply
from cao_testkit.models.anthropic import FAKE_API_KEY, AnthropicServer
from cao_testkit.models.cli import install_npm_cli, make_sandbox
from cao_testkit.recorder import (
    ScreenRecorder,
    environment,
    neutral_root,
    recording_arguments,
    tmux_backend,
    write_manifest,
)
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
PROFILE = AgentProfile(name="recorder", system_prompt="You answer briefly.")
_FINISHED = re.compile(r"^▣ .+ · .+ · \d[\dhms. ]*$", re.MULTILINE)


def global_config(server_url: str, **extra: object) -> dict:
    """The sandbox user's own OpenCode config: the ``anthropic`` provider at the scripted server."""
    return {
        "$schema": "https://opencode.ai/config.json",
        "model": MODEL,
        "provider": {"anthropic": {"options": {"baseURL": server_url + "/v1", "apiKey": FAKE_API_KEY}}},
        **extra,
    }


def user_config(rec: ScreenRecorder, **extra: object) -> None:
    """Write the sandbox user's OpenCode config (``extra``: more top-level settings)."""
    folder = rec.workdir.parent / ".config" / "opencode"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "opencode.json").write_text(json.dumps(global_config(rec.server.url, **extra), indent=2),
                                          encoding="utf-8")


def _ready(screen: str) -> bool:
    rows = [row for row in screen.splitlines() if row.strip()]
    return bool(rows) and rows[-1].rstrip().endswith("ctrl+p cmd") and "interrupt" not in rows[-1]


def _finished(text: str) -> Callable[[str], bool]:
    return lambda s: text in s and _ready(s) and bool(_FINISHED.search(s))


def record_main(rec: ScreenRecorder, suffix: str = "") -> None:
    """idle, processing (model and tool), completed (plain and after a tool), error, interrupted."""
    script = rec.server.script
    gate = threading.Event()
    user_config(rec)
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


def record_prompts(rec: ScreenRecorder) -> None:
    """waiting_user_answer: a permission prompt (OpenCode's own rules, bash set to ask) and a question."""
    script = rec.server.script
    user_config(rec, permission={"bash": "ask"})
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
    user_config(rec)
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


def record_failures(rec: ScreenRecorder) -> None:
    """error: OpenCode stopping at start-up (a broken user config), and a turn without any model provider."""
    folder = rec.workdir.parent / ".config" / "opencode"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "opencode.json").write_text('{"model": "anthropic/claude-sonnet-4-5",\n', encoding="utf-8")
    rec.start()
    screen = rec.wait(lambda s: "is not valid JSON" in s, "the config error", settle=0.3)
    rec.save("exited_bad_config", screen, "error",
             note="the program exited; the kernel also gets an 'exited' event")
    rec.stop()

    user_config(rec)
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
    user_config(rec)


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
    args = recording_arguments(__doc__, version=TESTED_VERSIONS[-1], cli="OpenCode").parse_args(argv)
    cli = install_npm_cli(PACKAGE, args.version, "opencode")
    out = args.out or SCREENS / args.version
    # A fixed, machine-neutral folder: OpenCode prints the working folder's path.
    with neutral_root("cao-screens") as root, AnthropicServer(Script()) as server:
        wanted = sandbox_env(cli.binary)
        sandbox = make_sandbox(root, env=wanted)
        # The user's own OpenCode settings stay out of the recording.
        env = {k: v for k, v in sandbox.env.items() if not k.startswith("OPENCODE_") or k in wanted}
        with environment(env), tmux_backend(root / "cao-home") as backend:
            print(f"recording {PACKAGE}@{args.version} ({cli.version_output}) into {out}")
            if out.exists():
                shutil.rmtree(out)

            def recorder(size: tuple[int, int]) -> ScreenRecorder:
                return ScreenRecorder(backend, opencode_provider().launch, provider=NAME, server=server,
                                      workdir=sandbox.home / "project", out=out, size=size, profile=PROFILE,
                                      timeout=60.0, settle=0.8, pause=0.4, runtime_root=sandbox.home.parent)

            rec = recorder((220, 50))
            record_main(rec)
            record_prompts(rec)
            record_failures(rec)
            narrow = recorder((100, 30))
            record_main(narrow, suffix="-100x30")
        write_manifest(out, package=PACKAGE, version=args.version, version_output=cli.version_output,
                       recorded_with="providers/cao-provider-opencode-cli/scripts/record_screens.py",
                       screens={**rec.manifest, **narrow.manifest})
        server.assert_healthy()
        server.script.assert_done()
    return 0


if __name__ == "__main__":
    sys.exit(main())
