"""Native status from an Oh My Pi extension, ahead of its screen.

Oh My Pi loads extensions given with ``-e FILE`` (TypeScript, no build step) and calls their handlers
at points of the agent loop. cao writes :func:`extension_source` into the terminal's runtime folder;
it runs the kernel's signal command with the event's name and a JSON object on standard input, and
ignores any failure (the command sends one datagram and exits at once, printing nothing).

| extension event (sent under the same name) | status |
|---|---|
| ``agent_start`` (a prompt was submitted, the loop starts) | ``processing`` |
| ``agent_end`` (the loop settled; not sent while a retry is scheduled) | ``completed``; ``error`` when |
| | the last assistant message stopped on an error |

``agent_end`` carries the last assistant message's text (``last_assistant_message``), its
``stop_reason`` and ``error``: a handoff gets the model's own text (``native_answer``) without reading
the screen. A turn the user interrupted ends ``aborted`` and says nothing (the screen decides).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from cao_hookspecs import StatusReport, TerminalStatus

__all__ = ["EXTENSION_FILE", "extension_source", "native_answer", "native_signal"]

#: The extension, relative to the terminal's runtime folder.
EXTENSION_FILE = "cao-signals.ts"

# The command's words are a JSON array literal: JSON is valid TypeScript, and no shell is involved.
_EXTENSION = """\
// cao's turn signals for Oh My Pi (generated for one terminal; see the cao-provider-omp package).
import { spawn } from "node:child_process";

const COMMAND: string[] = __COMMAND__;

function send(event: string, payload: Record<string, unknown>): void {
  try {
    const child = spawn(COMMAND[0], [...COMMAND.slice(1), "--stdin", event],
                        { stdio: ["pipe", "ignore", "ignore"] });
    child.on("error", () => {});
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(payload));
  } catch {
    // A signal is a hint: the screen still tells cao the status.
  }
}

function text(message: any): string {
  const content = Array.isArray(message?.content) ? message.content : [];
  return content.filter((part: any) => part?.type === "text" && typeof part.text === "string")
    .map((part: any) => part.text).join("");
}

export default function (pi: any) {
  pi.on("agent_start", async () => send("agent_start", {}));
  pi.on("agent_end", async (event: any) => {
    if (event?.willContinue) return;  // a retry follows: the turn is not over
    const messages = Array.isArray(event?.messages) ? event.messages : [];
    const last = [...messages].reverse().find((m: any) => m?.role === "assistant");
    send("agent_end", { last_assistant_message: text(last), stop_reason: String(last?.stopReason ?? ""),
                        error: String(last?.errorMessage ?? "") });
  });
}
"""


def extension_source(command: Sequence[str]) -> str:
    """The extension that sends the mapped events through the kernel's signal ``command``."""
    return _EXTENSION.replace("__COMMAND__", json.dumps(list(command)))


def _failed(payload: Mapping[str, Any]) -> bool:
    return payload.get("stop_reason") == "error"


def native_answer(event: str, payload: Mapping[str, Any]) -> str | None:
    """The answer an ``agent_end`` signal carries (the model's own text, not its drawing on the
    screen); None for other events, a failed turn, or when it is empty."""
    if event != "agent_end" or _failed(payload):
        return None
    answer = payload.get("last_assistant_message")
    return answer if isinstance(answer, str) and answer.strip() else None


def native_signal(event: str, payload: Mapping[str, Any]) -> StatusReport | None:
    """The status one extension event means, or None when it says nothing about it."""
    if event == "agent_start":
        return StatusReport(status=TerminalStatus.PROCESSING)
    if event != "agent_end":
        return None
    if _failed(payload):
        return StatusReport(status=TerminalStatus.ERROR, evidence=str(payload.get("error") or "")[:200])
    if payload.get("stop_reason") in ("stop", "length"):
        return StatusReport(status=TerminalStatus.COMPLETED)
    return None
