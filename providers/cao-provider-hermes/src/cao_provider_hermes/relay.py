"""Hermes's shell hooks, relayed to cao's signal command with the payload made flat.

    <python> -I -S <this file> EVENT -- <signal command...>

Hermes hands a hook its JSON on standard input with the event's own fields nested under ``extra``
(``{"hook_event_name": ..., "session_id": ..., "extra": {"assistant_response": ..., "platform": ...}}``);
cao's signal command keeps top-level scalars only, so the answer would be lost on the way. This relay
reads the JSON, lifts the fields cao maps to the top (the answer under the key the signal command
keeps whole, ``last_assistant_message``) and replaces itself with the signal command, the flat JSON
as its last argument. Like the signal command it prints nothing and always exits 0: a hook's output
can steer Hermes, and a failing hook must never fail a turn.

It imports only the standard library and nothing of cao, so it runs by path with ``-I -S``.
"""

from __future__ import annotations

import json
import os
import select
import sys

#: Fields of ``extra`` lifted to the top level (scalars only; the signal command drops the rest).
LIFTED = ("platform", "turn_id", "is_first_turn", "completed", "interrupted", "model")
#: Keeps the answer to what one datagram holds (the signal command leaves a longer one out whole).
MAX_ANSWER = 32 * 1024
STDIN_WAIT = 0.5
STDIN_LIMIT = 1 << 20


def flat(payload: object) -> dict[str, object]:
    """The fields cao reads from one Hermes hook payload, at the top level."""
    if not isinstance(payload, dict):
        return {}
    out: dict[str, object] = {}
    for key in ("hook_event_name", "session_id"):
        if isinstance(payload.get(key), str):
            out[key] = payload[key]
    extra = payload.get("extra")
    if isinstance(extra, dict):
        for key in LIFTED:
            value = extra.get(key)
            if isinstance(value, (str, bool, int, float)):
                out[key] = value
        answer = extra.get("assistant_response")
        if isinstance(answer, str) and len(answer) < MAX_ANSWER:
            out["last_assistant_message"] = answer
    return out


def _read_stdin() -> str:
    try:
        fd = sys.stdin.fileno()
    except (AttributeError, OSError, ValueError):
        return ""
    if os.isatty(fd):
        return ""
    chunks: list[bytes] = []
    size = 0
    while size < STDIN_LIMIT:
        ready, _, _ = select.select([fd], [], [], STDIN_WAIT)
        if not ready:
            break
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks).decode("utf-8", "replace")


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        return 0
    event, command = argv[0], argv[2:]
    try:
        payload = flat(json.loads(_read_stdin() or "{}"))
    except ValueError:
        payload = {}
    text = json.dumps(payload, ensure_ascii=True, separators=(",", ":"))
    try:
        os.execvp(command[0], [*command, event, text])
    except OSError:
        return 0
    return 0


if __name__ == "__main__":
    try:
        code = main(sys.argv[1:])
    except BaseException:  # noqa: BLE001 - nothing may escape to Hermes
        code = 0
    sys.exit(code)
