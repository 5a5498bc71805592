"""The command an agent CLI's hook runs to tell cao what the agent is doing.

    <python> -I -S <this file> [--socket PATH] [--terminal ID] [--stdin] EVENT [PAYLOAD]

It sends one datagram ``{"v": 1, "terminal": ID, "event": EVENT, "payload": {...}, "sent": <time>}`` to
the kernel's signal socket (``--socket``, else ``CAO_SIGNAL_SOCKET``) for the terminal ``--terminal``
(else ``CAO_TERMINAL_ID``) and exits. ``PAYLOAD`` is the JSON a CLI passes as an argument (Codex's
``notify``); ``--stdin`` reads it from standard input instead (Claude Code's hooks).

A hook must never hang or fail the CLI that runs it, so this command always exits 0, prints nothing,
and gives up at once when nothing listens or the socket's queue is full: a datagram socket in
non-blocking mode, standard input read for at most half a second. Payloads are cut down to their
top-level scalars (long strings shortened; an answer is kept whole when it fits, else left out), so a
payload of any size fits one datagram.

It imports only the standard library and nothing of cao, so the kernel's hooks run it by path with
``-I -S``: no site-packages scan, no package import; about 25 ms from exec to exit on a busy 2-core
machine, where a bare interpreter takes 9. The kernel's listener (``cao_kernel.signal_channel``)
decodes what it sends with :func:`decode` from this module.
"""

from __future__ import annotations

import json
import os
import re
import socket
import sys
import time
from collections.abc import Mapping

__all__ = [
    "COMMAND_ENV",
    "SOCKET_ENV",
    "TERMINAL_ENV",
    "compact",
    "decode",
    "encode",
    "main",
    "send",
]

SOCKET_ENV = "CAO_SIGNAL_SOCKET"
COMMAND_ENV = "CAO_SIGNAL_COMMAND"
TERMINAL_ENV = "CAO_TERMINAL_ID"
VERSION = 1
#: Largest datagram sent or accepted; well under the smallest default socket buffer.
MAX_DATAGRAM = 32 * 1024
MAX_STRING = 1000
#: Keys whose text is an agent's whole answer (Claude Code's and Qwen Code's ``Stop`` hook, Codex's
#: ``notify``, Grok Build's ``Stop``): kept whole when the datagram holds it, else left out, never cut (a
#: cut answer would pass for the answer).
ANSWER_KEYS = frozenset({"last_assistant_message", "last-assistant-message", "lastAssistantMessage"})
MAX_KEYS = 32
STDIN_WAIT = 0.5
STDIN_LIMIT = 1 << 20

EVENT = re.compile(r"[A-Za-z][A-Za-z0-9_.:-]{0,63}")
# cao_hookspecs.names.TERMINAL_ID_RE, restated: hooks run this file alone, with no site-packages to
# import it from.
TERMINAL = re.compile(r"[0-9a-f]{8}")
_KEY = re.compile(r"[A-Za-z0-9_.:-]{1,64}")


def compact(payload: object) -> dict[str, object]:
    """The part of a payload worth sending: top-level keys with scalar values, strings shortened.

    Lists and objects are dropped (Claude Code's and Codex's payloads carry transcripts there);
    anything that is not a JSON object becomes ``{}``.
    """
    if not isinstance(payload, Mapping):
        return {}
    kept: dict[str, object] = {}
    for key, value in payload.items():
        if len(kept) >= MAX_KEYS:
            break
        if not isinstance(key, str) or not _KEY.fullmatch(key):
            continue
        if isinstance(value, str) and key in ANSWER_KEYS:
            if len(value) < MAX_DATAGRAM:
                kept[key] = value
        elif isinstance(value, str):
            kept[key] = value[:MAX_STRING]
        elif value is None or isinstance(value, bool | int) or (
            isinstance(value, float) and value == value and abs(value) != float("inf")
        ):
            kept[key] = value
    return kept


def encode(terminal_id: str, event: str, payload: object = None, *, sent: float | None = None) -> bytes:
    """One datagram. Raises ValueError for a malformed terminal id or event name."""
    if not isinstance(terminal_id, str) or not TERMINAL.fullmatch(terminal_id):
        raise ValueError(f"terminal id must be 8 lowercase hex characters, got {terminal_id!r}")
    if not isinstance(event, str) or not EVENT.fullmatch(event):
        raise ValueError(f"event must be a name of letters, digits and _.:- (at most 64), got {event!r}")
    body = {"v": VERSION, "terminal": terminal_id, "event": event, "payload": compact(payload),
            "sent": time.time() if sent is None else sent}
    data = json.dumps(body, ensure_ascii=True, separators=(",", ":")).encode("ascii")
    if len(data) > MAX_DATAGRAM:
        # An answer too long for one datagram is left out (the kernel reads it from the screen).
        body["payload"] = {k: v for k, v in body["payload"].items() if k not in ANSWER_KEYS}
        data = json.dumps(body, ensure_ascii=True, separators=(",", ":")).encode("ascii")
    if len(data) > MAX_DATAGRAM:
        body["payload"] = {}
        data = json.dumps(body, separators=(",", ":")).encode("ascii")
    return data


def decode(data: bytes) -> tuple[str, str, dict[str, object], float | None]:
    """``(terminal id, event, payload, sent)`` from one datagram; ValueError names what is wrong."""
    if len(data) > MAX_DATAGRAM:
        raise ValueError(f"datagram of {len(data)} bytes is larger than {MAX_DATAGRAM}")
    try:
        body = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ValueError(f"datagram is not JSON: {exc}") from None
    if not isinstance(body, dict):
        raise ValueError("datagram is not a JSON object")
    if body.get("v") != VERSION:
        raise ValueError(f"unsupported datagram version {body.get('v')!r}")
    terminal_id, event = body.get("terminal"), body.get("event")
    if not isinstance(terminal_id, str) or not TERMINAL.fullmatch(terminal_id):
        raise ValueError(f"bad terminal id {terminal_id!r}")
    if not isinstance(event, str) or not EVENT.fullmatch(event):
        raise ValueError(f"bad event name {event!r}")
    sent = body.get("sent")
    if isinstance(sent, bool) or not isinstance(sent, int | float) or sent != sent:
        sent = None
    return terminal_id, event, compact(body.get("payload")), (float(sent) if sent is not None else None)


def send(path: str, data: bytes) -> bool:
    """Send one datagram to ``path`` without ever blocking; False when it could not be sent."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    try:
        sock.setblocking(False)
        try:
            sock.sendto(data, path)
        except OSError as exc:
            if len(os.fsencode(path)) < 100 or isinstance(exc, BlockingIOError | ConnectionRefusedError):
                return False
            # A path longer than a socket address holds: go to its folder and use the short name. This
            # process does nothing else, so changing its folder is harmless.
            os.chdir(os.path.dirname(path) or ".")
            sock.sendto(data, os.path.basename(path))
        return True
    except OSError:
        return False
    finally:
        sock.close()


def _read_stdin() -> str:
    """Standard input, if it is not a terminal, up to STDIN_LIMIT bytes and STDIN_WAIT seconds."""
    import select

    try:
        fd = sys.stdin.fileno()
    except (AttributeError, OSError, ValueError):
        return ""
    if os.isatty(fd):
        return ""
    chunks: list[bytes] = []
    size = 0
    deadline = time.monotonic() + STDIN_WAIT
    while size < STDIN_LIMIT:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        ready, _, _ = select.select([fd], [], [], remaining)
        if not ready:
            break
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)[:STDIN_LIMIT].decode("utf-8", "replace")


def _payload(text: str) -> dict[str, object]:
    text = text.strip()
    if not text:
        return {}
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return {"text": text[:MAX_STRING]}
    return compact(value) if isinstance(value, dict) else {"text": text[:MAX_STRING]}


def _parse(argv: list[str]) -> tuple[str | None, str | None, bool, list[str]]:
    socket_path, terminal_id, use_stdin, rest = None, None, False, []
    args = iter(argv)
    for arg in args:
        if arg == "--socket":
            socket_path = next(args, None)
        elif arg == "--terminal":
            terminal_id = next(args, None)
        elif arg == "--stdin":
            use_stdin = True
        else:
            rest.append(arg)
    return socket_path, terminal_id, use_stdin, rest


def run(argv: list[str], environ: Mapping[str, str]) -> bool:
    """Send the signal ``argv`` describes; False when there was nothing to send or nobody took it."""
    socket_path, terminal_id, use_stdin, rest = _parse(argv)
    socket_path = socket_path or environ.get(SOCKET_ENV)
    terminal_id = terminal_id or environ.get(TERMINAL_ENV)
    if not rest or not socket_path or not terminal_id:
        return False
    event = rest[0]
    # Codex appends its JSON as the last argument, after whatever the command line already held.
    payload = _payload(_read_stdin()) if use_stdin else (_payload(rest[-1]) if len(rest) > 1 else {})
    try:
        data = encode(terminal_id, event, payload)
    except ValueError:
        return False
    return send(socket_path, data)


def main(argv: list[str] | None = None) -> int:
    """Entry point: always 0, never a word on stdout or stderr (a hook's output can steer its CLI)."""
    try:
        run(list(sys.argv[1:] if argv is None else argv), os.environ)
    except BaseException:  # noqa: BLE001 - nothing may escape to the agent CLI running this hook
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
