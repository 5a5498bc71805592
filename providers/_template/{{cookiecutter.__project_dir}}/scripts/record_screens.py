"""Record {{ cookiecutter.display_name }}'s screens in every status, as the detector's test fixtures.

Usage, from this package's folder with its test extra installed (``pip install -e '.[test]'``)::

    python scripts/record_screens.py [--out DIR]

It starts the CLI through cao's own tmux backend on a private tmux server (so each screen is captured
exactly as the kernel captures it), in a throw-away HOME, against the scripted model server of
``cao_testkit.models``, drives it into each status, and writes
``tests/screens/<version>/<name>.txt`` plus ``manifest.json``. Each screen is labelled with the
status the script drove the CLI into, never with what the detector under test says, and nothing is
edited after capture: when a screen looks wrong, fix the script and record again.

TODO (real CLI): today this records the stand-in program ``tests/programs/example_cli.py``. Point
``cli_program`` at the real CLI (``cao_testkit.models.cli.install_npm_cli`` installs an npm
package once per machine), use the model server it speaks (``anthropic.AnthropicServer`` or
``openai.OpenAIServer``), set ``PACKAGE``, and add a step per start-up dialog and per state it has.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from cao_hookspecs import AgentProfile
from cao_testkit.models import Script, call_tool, fail, hold, reply
from cao_testkit.models.anthropic import AnthropicServer
from cao_testkit.models.cli import make_sandbox
from cao_testkit.recorder import (
    ScreenRecorder,
    environment,
    recording_arguments,
    tmux_backend,
    write_manifest,
)
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


def _bottom(screen: str) -> str:
    rows = [row for row in screen.splitlines() if row.strip()]
    return rows[-1] if rows else ""


def _prompt_back(screen: str) -> bool:
    return _bottom(screen) == ">"


def record_dialogs(rec: ScreenRecorder) -> None:
    """The trust question, shown the first time the CLI starts in a folder."""
    rec.start()
    screen = rec.wait(lambda s: _bottom(s) == "Trust this folder? [y/n]", "the trust question")
    rec.save("dialog_trust_folder", screen, "waiting_user_answer", dialog="trust folder")
    rec.keys("y", "Enter")
    rec.wait(_prompt_back, "the prompt after trusting the folder")
    rec.stop()


def record_turns(rec: ScreenRecorder) -> None:
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


def _version(program: Path, env: dict[str, str]) -> tuple[str, str]:
    done = subprocess.run([str(program), *provider().version_args], capture_output=True, text=True, env=env,
                          timeout=60, check=True)
    output = done.stdout.strip() or done.stderr.strip()
    found = re.search(r"\d+\.\d+\.\d+\S*", output)
    if found is None:
        raise SystemExit(f"no version number in {output!r}")
    return found.group(0), output


def main(argv: list[str] | None = None) -> int:
    args = recording_arguments(__doc__).parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="cao-screens-"))
    try:
        bin_dir = root / "bin"
        bin_dir.mkdir()
        program = cli_program(bin_dir)
        with AnthropicServer(Script()) as server:
            sandbox = make_sandbox(root / "sandbox", env=server.client_env(), path=[bin_dir])
            version, version_output = _version(program, dict(sandbox.env))
            out = args.out or SCREENS / version
            with environment(sandbox.env), tmux_backend(root / "cao-home") as backend:
                print(f"recording {PACKAGE} {version} ({version_output}) into {out}")
                if out.exists():
                    shutil.rmtree(out)
                rec = ScreenRecorder(backend, provider().launch, provider=NAME, server=server,
                                     workdir=sandbox.home / "project", out=out, size=SIZE,
                                     timeout=20.0, settle=0.5)
                record_dialogs(rec)
                record_turns(rec)
            write_manifest(out, package=PACKAGE, version=version, version_output=version_output,
                           recorded_with=RECORDED_WITH, screens=rec.manifest)
            server.assert_healthy()
            server.script.assert_done()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
