"""A stand-in agent CLI, so this package's tests run before the real CLI is wired in.

It is NOT the real CLI. It behaves like a small line-based agent CLI, and the screens under
``tests/screens/`` were recorded from it (``scripts/record_screens.py``); replace both with the real
thing as README.md explains. Only the standard library is used.

What it shows, in the order a conversation goes:

- the first time it starts in a folder, a trust question ``Trust this folder? [y] Yes · [n] No, exit``;
- a banner, then the prompt ``> `` (one message per line; ``/exit`` quits);
- ``· Working… (ctrl+c to interrupt)`` while it waits for the model (erased when the answer comes);
- the answer as a ``● `` block (further lines indented by two spaces), a blank row, the prompt;
- before a tool runs, ``⚙ <tool>: <command>`` (cut with ``…`` when it does not fit one row) and the
  question ``Allow <tool>? [y] Yes · [a] Yes, always for <tool> · [n] No``;
- ``✗ Error: <status> <type>: <message>`` when the model API fails.

A question waits for one of its keys, pressed alone (no Enter), and ignores every other key; the
row stays on screen as it was, and the outcome is printed under it (``  ⎿ allowed``).

It talks to the model over the Anthropic Messages API at ``ANTHROPIC_BASE_URL`` with
``ANTHROPIC_API_KEY`` (the tests point both at ``cao_testkit.models.anthropic``), and offers
the model one tool, ``run_command``, which it never actually runs.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import urllib.error
import urllib.request
from pathlib import Path

VERSION = "0.1.0"
PROMPT = "> "
BUSY = "· Working… (ctrl+c to interrupt)"
TOOL = {
    "name": "run_command",
    "description": "Run a shell command in the working folder.",
    "input_schema": {"type": "object", "properties": {"command": {"type": "string"}},
                     "required": ["command"]},
}


class ModelError(Exception):
    """The model API answered with an error, or could not be reached."""


def out(text: str = "") -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def ask(question: str) -> str | None:
    """Print ``question`` without a newline and read one line (None at end of input)."""
    sys.stdout.write(question)
    sys.stdout.flush()
    line = sys.stdin.readline()
    return None if line == "" else line.rstrip("\n")


def ask_key(question: str, options: list[tuple[str, str]]) -> str | None:
    """Draw ``question`` and its ``(key, label)`` options on one row, and wait for one of the keys.

    On a terminal the key is read alone (no Enter, not echoed); with input from a pipe, a line's first
    character. None at end of input or on Ctrl-C.
    """
    keys = {key for key, _ in options}
    sys.stdout.write(question + " " + " · ".join(f"[{key}] {label}" for key, label in options))
    sys.stdout.flush()
    try:
        if not sys.stdin.isatty():
            while (line := sys.stdin.readline()) != "":
                if line[:1].lower() in keys:
                    return line[:1].lower()
            return None
        import termios
        import tty

        fd = sys.stdin.fileno()
        saved = termios.tcgetattr(fd)
        tty.setcbreak(fd)
        try:
            while True:
                typed = os.read(fd, 32).decode("utf-8", errors="ignore")
                if not typed:
                    return None
                key = next((ch.lower() for ch in typed if ch.lower() in keys), None)
                if key is not None:
                    return key
        finally:
            # Keys pressed after the answer are dropped, not typed at the next prompt.
            termios.tcsetattr(fd, termios.TCSAFLUSH, saved)
    except KeyboardInterrupt:
        return None
    finally:
        out()


def trust_file() -> Path:
    return Path(os.environ.get("HOME") or Path.home()) / ".example-cli" / "trusted-folders"


def is_trusted(folder: Path) -> bool:
    try:
        return str(folder) in trust_file().read_text(encoding="utf-8").splitlines()
    except OSError:
        return False


def remember_trust(folder: Path) -> None:
    path = trust_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as fh:
        fh.write(f"{folder}\n")


def call_model(model: str, system: str, messages: list) -> dict:
    base = os.environ.get("ANTHROPIC_BASE_URL")
    if not base:
        raise ModelError("ANTHROPIC_BASE_URL is not set")
    body: dict = {"model": model, "max_tokens": 1024, "messages": messages, "tools": [TOOL]}
    if system:
        body["system"] = system
    request = urllib.request.Request(
        base.rstrip("/") + "/v1/messages", data=json.dumps(body).encode("utf-8"), method="POST",
        headers={"content-type": "application/json", "anthropic-version": "2023-06-01",
                 "x-api-key": os.environ.get("ANTHROPIC_API_KEY", "")},
    )
    try:
        with urllib.request.urlopen(request, timeout=600) as response:
            return json.loads(response.read().decode("utf-8"))
    except urllib.error.HTTPError as exc:
        try:
            error = json.loads(exc.read().decode("utf-8")).get("error") or {}
        except ValueError:
            error = {}
        kind, message = error.get("type", "error"), error.get("message", exc.reason)
        raise ModelError(f"{exc.code} {kind}: {message}") from exc
    except (urllib.error.URLError, OSError) as exc:
        raise ModelError(f"cannot reach {base}: {getattr(exc, 'reason', exc)}") from exc


def show_answer(text: str) -> None:
    lines = text.strip("\n").split("\n")
    out("● " + lines[0])
    for line in lines[1:]:
        out("  " + line if line else "")


def tool_row(name: str, command: str) -> str:
    """``⚙ <tool>: <command>`` on one row: a command longer than the row, or of several lines, is cut
    and ends with ``…``."""
    first = command.split("\n", 1)[0]
    row = f"⚙ {name}: {first}"
    width = shutil.get_terminal_size().columns
    if len(row) > width - 1:
        return row[:width - 2] + "…"
    return row + "…" if first != command else row


def run_tools(calls: list, always: set) -> list:
    """Ask before each tool call (unless allowed always); the results handed back to the model."""
    results = []
    for call in calls:
        name = str(call.get("name"))
        command = str((call.get("input") or {}).get("command", ""))
        out(tool_row(name, command))
        if name in always:
            allowed = True
            out("  ⎿ allowed always")
        else:
            answer = ask_key(f"Allow {name}?", [("y", "Yes"), ("a", f"Yes, always for {name}"), ("n", "No")])
            allowed = answer in ("y", "a")
            if answer == "a":
                always.add(name)
            out("  ⎿ allowed (the example CLI does not really run it)" if allowed else "  ⎿ denied")
        results.append({"type": "tool_result", "tool_use_id": call.get("id"),
                        "content": "done" if allowed else "the user denied this command",
                        "is_error": not allowed})
    return results


def run_turn(model: str, system: str, messages: list, always: set) -> None:
    """One user message: ask the model, show its answers, run its tools, until it stops asking."""
    start = len(messages) - 1
    while True:
        sys.stdout.write(BUSY)
        sys.stdout.flush()
        try:
            reply = call_model(model, system, messages)
        except (ModelError, KeyboardInterrupt) as exc:
            sys.stdout.write("\r\x1b[K")
            out(f"✗ Error: {exc}" if isinstance(exc, ModelError) else "· Interrupted.")
            del messages[start:]  # the conversation goes on as if this message was never sent
            return
        sys.stdout.write("\r\x1b[K")
        content = reply.get("content") or []
        messages.append({"role": "assistant", "content": content})
        for block in content:
            if block.get("type") == "text" and block.get("text", "").strip():
                show_answer(block["text"])
        calls = [block for block in content if block.get("type") == "tool_use"]
        if not calls:
            return
        messages.append({"role": "user", "content": run_tools(calls, always)})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="example-cli", description="A stand-in agent CLI for tests.")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    parser.add_argument("--model", default="example-model", help="model name sent to the API")
    parser.add_argument("--system-prompt-file", type=Path, help="file whose text is the system prompt")
    parser.add_argument("--mcp-config", type=Path, help="JSON file of MCP servers (listed, not started)")
    args = parser.parse_args(argv)
    if args.version:
        out(f"example-cli {VERSION}")
        return 0
    system = args.system_prompt_file.read_text(encoding="utf-8") if args.system_prompt_file else ""
    servers = {}
    if args.mcp_config:
        servers = json.loads(args.mcp_config.read_text(encoding="utf-8")).get("mcpServers", {})

    folder = Path.cwd()
    if not is_trusted(folder):
        out(f"The example CLI has not run in {folder.name!r} before.")
        if ask_key("Trust this folder?", [("y", "Yes"), ("n", "No, exit")]) != "y":
            out("Not trusted; exiting.")
            return 1
        remember_trust(folder)
    out(f"Example agent CLI {VERSION} · model {args.model}")
    if servers:
        out("MCP servers: " + ", ".join(sorted(servers)))
    out("Type a message and press Enter; /exit quits.")
    out()
    messages: list = []
    always: set = set()  # tools the user allowed for the rest of the session
    while True:
        try:
            line = ask(PROMPT)
        except KeyboardInterrupt:
            out()
            continue
        if line is None:
            return 0
        text = line.strip()
        if not text:
            continue
        if text in ("/exit", "/quit"):
            out("Bye.")
            return 0
        messages.append({"role": "user", "content": text})
        run_turn(args.model, system, messages, always)
        out()


if __name__ == "__main__":
    sys.exit(main())
