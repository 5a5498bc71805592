"""Record Copilot CLI's screens in every status, from the real CLI, as detector test fixtures.

Usage (from the repository root)::

    uv run --no-sync python providers/cao-provider-copilot-cli/scripts/record_screens.py [--version X]

It installs ``@github/copilot@X`` (default: the newest tested version) into the live-CLI cache, runs it
in tmux through cao's own tmux backend (so screens are captured exactly as the kernel captures them),
and drives it through each status. Copilot CLI talks to a custom model provider when
``COPILOT_PROVIDER_BASE_URL`` is set ("bring your own key"); here that is a scripted Anthropic
Messages server on 127.0.0.1, with ``COPILOT_OFFLINE=true`` and an unreachable proxy for everything
else, so nothing leaves the machine and no GitHub account is needed. The signed-out screens are
recorded with the provider variables emptied, and the refusals by breaking the setup on purpose.

It writes ``tests/screens/<version>/<name>.txt`` plus ``manifest.json`` (the status each screen was
recorded in, and the answer it shows). Each screen is labelled by what the script made the CLI do (a
held model turn is "processing", a permission request is "waiting_user_answer"...), never by the
detector under test; the recorder only waits for the screen to settle on the sign it expects. Nothing
is edited after capture. The working folder is the fixed ``<tmp>/cao-screens-copilot-cli/home/project``,
so no path of the recording machine ends up in a fixture.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import threading
import time
from pathlib import Path

from cao_hookspecs import AgentProfile
from cao_testkit.models import Script, call_tool, fail, hold, reply
from cao_testkit.models.anthropic import FAKE_API_KEY, AnthropicServer
from cao_testkit.models.cli import cache_root, install_npm_cli, make_sandbox
from cao_testkit.recorder import (
    ScreenRecorder,
    environment,
    neutral_root,
    recording_arguments,
    tmux_backend,
    write_manifest,
)
from cao_provider_copilot_cli.provider import NAME, TESTED_VERSIONS, copilot_cli_provider

PACKAGE = "@github/copilot"
SCREENS = Path(__file__).resolve().parent.parent / "tests" / "screens"
MODEL = "claude-sonnet-4"
ANSWER = "The repository has 3 packages; all tests pass."
LONG_ANSWER = (
    "I listed the folder.\n\n"
    "Findings:\n\n"
    "- the build script is missing a clean step\n"
    "- two tests are slow\n\n"
    "Next I would add the clean step."
)
# How Copilot renders LONG_ANSWER's Markdown (list bullets become "•").
LONG_ANSWER_SHOWN = (
    "I listed the folder.\n\n"
    "Findings:\n\n"
    "• the build script is missing a clean step\n"
    "• two tests are slow\n\n"
    "Next I would add the clean step."
)
# Variables that would reach the user's GitHub account or Copilot settings.
ACCOUNT_VARS = ("COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN", "GH_HOST", "COPILOT_GH_HOST",
                "COPILOT_HOME", "COPILOT_ALLOW_ALL", "COPILOT_PROVIDER_BEARER_TOKEN",
                "COPILOT_PROVIDER_API_KEY_COMMAND", "COPILOT_PROVIDER_WIRE_API", "COPILOT_PROVIDER_HEADERS")
PROVIDER_VARS = ("COPILOT_PROVIDER_BASE_URL", "COPILOT_PROVIDER_TYPE", "COPILOT_PROVIDER_API_KEY",
                 "COPILOT_OFFLINE", "COPILOT_MODEL")


def copilot_env(server_url: str, binary: Path, pkg_cache: Path) -> dict[str, str]:
    """The environment Copilot runs with: the scripted server as model provider, nothing else reachable."""
    return {
        "CAO_COPILOT_CLI_BIN": str(binary),
        "COPILOT_PROVIDER_BASE_URL": server_url,
        "COPILOT_PROVIDER_TYPE": "anthropic",
        "COPILOT_PROVIDER_API_KEY": FAKE_API_KEY,
        "COPILOT_MODEL": MODEL,
        "COPILOT_OFFLINE": "true",
        "COPILOT_PKG_CACHE_HOME": str(pkg_cache),
        "COPILOT_AUTO_UPDATE": "false",
        "HTTPS_PROXY": "http://127.0.0.1:9",
        "HTTP_PROXY": "http://127.0.0.1:9",
        "NO_PROXY": "127.0.0.1,localhost",
        "TERM": "xterm-256color",
    }


def seed_first_launch(copilot_home: Path) -> None:
    """Mark Copilot as launched before, the way a user's config is after their first run (no animated
    banner)."""
    copilot_home.mkdir(parents=True, exist_ok=True)
    config = copilot_home / "config.json"
    if not config.exists():
        config.write_text(json.dumps({"firstLaunchAt": "2026-01-01T00:00:00.000Z"}), encoding="utf-8")


def _footer(screen: str) -> str:
    rows = [row for row in screen.splitlines() if row.strip()]
    return rows[-1] if rows else ""


def _box_ready(screen: str) -> bool:
    rows = [row.rstrip() for row in screen.splitlines() if row.strip()]
    return len(rows) >= 3 and rows[-2].startswith("─") and rows[-3] == "❯" and "/ commands" in rows[-1]


def _busy(screen: str) -> bool:
    return " Working" in _footer(screen)


def record_main(rec: ScreenRecorder, suffix: str = "") -> None:
    """idle, processing, completed (plain and after a tool), error: the default (allow-all) launch."""
    script = rec.server.script
    gate = threading.Event()
    rec.start(profile=AgentProfile(name="recorder", system_prompt="You answer briefly."))
    rec.save(f"idle{suffix}", rec.wait(_box_ready, "the prompt"), "idle")

    script.add(hold(gate, reply(ANSWER)))
    served = script.served
    rec.type("Summarise the repository.")
    rec.server.wait_for_arrivals(served + 1)
    screen = rec.wait_sign(_busy, "the busy footer")
    rec.save(f"processing{suffix}", screen, "processing", note="model turn held open by the server")
    gate.set()
    screen = rec.wait(lambda s: ANSWER in s and _box_ready(s), "the answer")
    rec.save(f"completed{suffix}", screen, "completed", last_message=ANSWER)

    script.add(call_tool("bash", {"command": "ls", "description": "List files"}), reply(LONG_ANSWER))
    rec.type("Look around and report.")
    screen = rec.wait(lambda s: "Next I would add the clean step." in s and _box_ready(s), "the long answer")
    rec.save(f"completed_after_tool{suffix}", screen, "completed", last_message=LONG_ANSWER_SHOWN)

    script.add(fail(400, "messages: text content blocks must be non-empty"))
    rec.type("Try once more.")
    screen = rec.wait(lambda s: "must be non-empty" in s and _box_ready(s), "the API error")
    rec.save(f"error{suffix}", screen, "error", note="the API answered 400")
    rec.stop()


def record_tool_and_cancel(rec: ScreenRecorder) -> None:
    """processing while a shell command runs, the user cancelling it (idle again), an MCP tool call."""
    script = rec.server.script
    probe = str(Path(__file__).with_name("probe_mcp.py"))
    mcp = {"probe": {"type": "stdio", "command": sys.executable, "args": [probe]}}
    rec.start(profile=AgentProfile(name="recorder", system_prompt="You answer briefly."), mcp_servers=mcp)
    rec.wait(_box_ready, "the prompt")
    # No answer after the call: a cancelled turn asks the model for nothing more.
    script.add(call_tool("bash", {"command": "sleep 30", "description": "Wait for the build"}))
    rec.type("Wait for the build.")
    screen = rec.wait_sign(lambda s: _busy(s) and "sleep 30" in s, "the running command")
    rec.save("processing_tool", screen, "processing", note="a shell command is running")
    rec.keys("Escape")
    time.sleep(0.2)
    rec.keys("Escape")
    screen = rec.wait(lambda s: "Operation cancelled by user" in s and _box_ready(s), "the cancelled turn")
    rec.save("idle_cancelled", screen, "idle", note="the user pressed Esc twice while a command ran")

    script.add(call_tool("probe-ping", {"text": "hello"}), reply("The probe answered."))
    rec.type("Ping the probe.")
    screen = rec.wait(lambda s: "The probe answered." in s and _box_ready(s), "the answer after the MCP tool")
    rec.save("completed_after_mcp_tool", screen, "completed", last_message="The probe answered.")
    rec.stop()


def record_between_steps(rec: ScreenRecorder, attempts: int = 8) -> None:
    """processing: a tool has run (or failed) and the model's next step has not started. For a moment the
    footer shows its idle hints; only the tool call as the turn's last item tells the turn is not over."""
    script = rec.server.script
    rec.start(profile=AgentProfile(name="recorder", system_prompt="You answer briefly."))
    rec.wait(_box_ready, "the prompt")
    cases = (
        ("processing_between_steps", "ls", "List files", "$ Shell List files",
         "the shell command finished; the model's next step not started yet"),
        ("processing_after_failed_tool", "exit 3", "Fail on purpose", "✗ Shell Fail on purpose",
         "the shell command failed; the model's next step not started yet"),
    )
    count = 0
    for name, command, description, row, note in cases:
        for _ in range(attempts):
            count += 1
            asked, done = f"Step {count}, please.", f"Finished step {count}."
            script.add(call_tool("bash", {"command": command, "description": description}), reply(done))
            rec.type(asked)
            screen = rec.catch(lambda s, a=asked, r=row, d=done: a in s and r in s.split(a)[-1]
                               and "/ commands" in _footer(s) and d not in s)
            rec.wait(lambda s, d=done: d in s and _box_ready(s), "the answer after the tool")
            if screen is not None:
                rec.save(name, screen, "processing", note=note)
                break
        else:
            raise SystemExit(f"{name}: the moment between a tool and the next step never showed "
                             f"in {attempts} tries")
    rec.stop()


def record_restricted(rec: ScreenRecorder) -> None:
    """The trust dialog and a permission prompt: a profile that allows only git among shell commands."""
    script = rec.server.script
    rec.start(profile=AgentProfile(name="careful", system_prompt="You are careful."),
              allowed_tools=("fs_*", "shell(git:*)"))
    screen = rec.wait(lambda s: "Do you trust the files in this folder?" in s, "the trust dialog")
    rec.save("dialog_trust_folder", screen, "waiting_user_answer", dialog="trust folder",
             note="start-up dialog of an agent restricted to some tools")
    rec.keys("Enter")
    rec.wait(_box_ready, "the prompt after trusting the folder")
    script.add(call_tool("bash", {"command": "touch recorded.txt", "description": "Create a file"}),
               reply("Created the file."))
    rec.type("Create a file.")
    screen = rec.wait(lambda s: "Do you want to run this command?" in s, "the permission prompt")
    rec.save("waiting_user_answer", screen, "waiting_user_answer", note="shell permission prompt")
    rec.keys("Enter")
    screen = rec.wait(lambda s: "Created the file." in s and _box_ready(s), "the answer after approval")
    rec.save("completed_after_permission", screen, "completed", last_message="Created the file.")
    rec.stop()


def record_question(rec: ScreenRecorder) -> None:
    """waiting_user_answer: the model asks the user to choose (the ask_user tool)."""
    question = {"message": "Which database should I use?",
                "requestedSchema": {"properties": {"db": {"type": "string", "title": "Database",
                                                          "enum": ["SQLite", "Postgres"]}},
                                    "required": ["db"]}}
    rec.start()
    rec.wait(_box_ready, "the prompt")
    rec.server.script.add(call_tool("ask_user", question), reply("Going with SQLite."))
    rec.type("Set up storage.")
    screen = rec.wait(lambda s: "Which database should I use?" in s and "enter accept" in s, "the question")
    rec.save("waiting_user_answer_question", screen, "waiting_user_answer", note="ask_user question")
    rec.keys("Enter")
    screen = rec.wait(lambda s: "Going with SQLite." in s and _box_ready(s), "the answer after the choice")
    rec.save("completed_after_question", screen, "completed", last_message="Going with SQLite.")
    rec.stop()


def record_unreachable(rec: ScreenRecorder) -> None:
    """processing while Copilot retries a model provider it cannot reach, then the error it ends with."""
    rec.start(env={"COPILOT_PROVIDER_BASE_URL": "http://127.0.0.1:9"})
    rec.wait(_box_ready, "the prompt")
    rec.type("Hello?")
    screen = rec.wait_sign(lambda s: "Retrying..." in s and _busy(s), "the retries")
    rec.save("processing_retrying", screen, "processing",
             note="the model provider cannot be reached; retrying")
    screen = rec.wait(lambda s: "Could not connect" in s and _box_ready(s), "the connection error",
                      timeout=90)
    rec.save("error_provider_unreachable", screen, "error", note="nothing listens at the provider's address")
    rec.stop()


def record_refusals(rec: ScreenRecorder) -> None:
    """error: Copilot CLI refusing to start (it exits at once; the kernel also gets an 'exited' event)."""
    rec.start(env={"COPILOT_PROVIDER_BASE_URL": ""})
    screen = rec.wait(lambda s: "Offline mode requires" in s, "the refusal", settle=0.3)
    rec.save("error_offline_without_provider", screen, "error",
             note="COPILOT_OFFLINE=true without COPILOT_PROVIDER_BASE_URL; the program exited")
    rec.stop()
    # An option this release does not know, as an older release shows it for one cao passes.
    rec.start(extra_args=("--no-such-option",))
    screen = rec.wait(lambda s: "unexpected argument" in s, "the option error", settle=0.3)
    rec.save("error_bad_option", screen, "error", note="an unknown command-line option; the program exited")
    rec.stop()


def record_signed_out(rec: ScreenRecorder) -> None:
    """error: no model provider and no GitHub account (or token) to use Copilot's own models."""
    rec.start(env={name: "" for name in PROVIDER_VARS})
    screen = rec.wait(lambda s: "Please use /login" in s and _box_ready(s), "the sign-in request")
    rec.save("error_not_signed_in", screen, "error", note="no GitHub account, token or model provider")
    rec.type("Hello?")
    screen = rec.wait(lambda s: "You must be logged in" in s and _box_ready(s), "the refusal to send")
    rec.save("error_not_signed_in_after_send", screen, "error", note="a message sent while signed out")
    rec.stop()


def record_first_run(rec: ScreenRecorder, root: Path) -> None:
    """unknown: the animated banner of the very first start (a config folder Copilot has never used)."""
    fresh = root / "fresh-copilot-home"
    shutil.rmtree(fresh, ignore_errors=True)
    rec.start(env={"COPILOT_HOME": str(fresh)})
    screen = rec.wait_sign(lambda s: "▀▀▀▀▀▀▀▀" in s, "the first-run banner")
    rec.save("first_run_banner", screen, "unknown", note="animated banner of the very first start")
    rec.stop()


def main(argv: list[str] | None = None) -> int:
    args = recording_arguments(__doc__, version=TESTED_VERSIONS[-1], cli="Copilot CLI").parse_args(argv)
    # The CLI unpacks ~240 MB on its first start (even for --version): one shared copy, not one per HOME.
    pkg_cache = cache_root() / "copilot-pkg"
    os.environ["COPILOT_PKG_CACHE_HOME"] = str(pkg_cache)
    cli = install_npm_cli(PACKAGE, args.version, "copilot")
    out = args.out or SCREENS / args.version
    # A fixed, machine-neutral folder: Copilot prints the working folder's full path.
    with neutral_root("cao-screens-copilot-cli") as root, AnthropicServer(Script()) as server:
        sandbox = make_sandbox(root, env=copilot_env(server.url, cli.binary, pkg_cache))
        env = {k: v for k, v in sandbox.env.items() if k not in ACCOUNT_VARS}
        seed_first_launch(sandbox.home / ".copilot")
        with environment(env), tmux_backend(root / "cao-home") as backend:
            print(f"recording {PACKAGE}@{args.version} ({cli.version_output}) into {out}")
            if out.exists():
                shutil.rmtree(out)

            def recorder(size: tuple[int, int]) -> ScreenRecorder:
                return ScreenRecorder(backend, copilot_cli_provider().launch, provider=NAME, server=server,
                                      workdir=sandbox.home / "project", out=out, size=size, settle=0.8)

            rec = recorder((220, 50))
            record_main(rec)
            record_tool_and_cancel(rec)
            record_between_steps(rec)
            record_restricted(rec)
            record_question(rec)
            record_refusals(rec)
            record_unreachable(rec)
            record_signed_out(rec)
            record_first_run(rec, root)
            narrow = recorder((100, 30))
            record_main(narrow, suffix="-100x30")
        write_manifest(out, package=PACKAGE, version=args.version, version_output=cli.version_output,
                       recorded_with="providers/cao-provider-copilot-cli/scripts/record_screens.py",
                       screens={**rec.manifest, **narrow.manifest})
        server.assert_healthy()
        server.script.assert_done()
    return 0


if __name__ == "__main__":
    sys.exit(main())
