"""The line-based chat both CLIs draw (Amazon Q Developer CLI; Kiro CLI 1.x, and 2.x with
``--legacy-ui``), read into a status and the rows of the last answer::

    [cao-developer-0123abcd] 20% λ > list the files        <- the prompt, with what the user sent
    > I'll list them.                                       <- an answer starts with "> " at column 0
    I will run the following command: ls (using tool: shell)
     - Completed in 0.2s                                    <- a tool call
    > There are three files.                                <- the final answer, unindented lines
     ▸ Credits: 0.14 • Time: 22s                            <- turn summary (Kiro only)
    [cao-developer-0123abcd] 22% λ >                        <- the prompt again: the turn is over

The prompt is ``[agent] `` then optional ``N% `` (context used), ``λ ``, ``↯ `` and ``!`` markers, then
``> `` (the format Q's own prompt parser accepts). A tool that needs permission ends its block with
``Allow this action? ... [y/n/t]:`` and the prompt, where the answer is typed (:meth:`ChatScreen.prompt`
reads it into a ``Prompt``). What differs between
the CLIs (the name evidence gives them, how a tool is named, how a failed turn reads) is a
:class:`ChatScreen`; everything works on the rendered text ``capture-pane`` gives (no colours).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from cao_hookspecs import OptionEffect, Prompt, PromptKind, PromptOption, StatusReport, TerminalStatus
from cao_screen_core.reports import EVIDENCE_LENGTH
from cao_screen_core.rows import last_index

__all__ = [
    "ANSWER", "COMMAND", "CREDITS", "FATAL", "HINTS", "MCP_LOADING", "PERMISSION", "PERMISSION_OPTIONS",
    "PROMPT", "SPINNER", "ChatScreen",
    "Reading", "find_prompts", "last_answer", "reading",
]

PROMPT = re.compile(r"^\[(?P<agent>[^\]\s]{1,128})\] (?:\d{1,3}% )?(?:λ )?(?:↯ )?!?>(?: (?P<rest>.*))?$")
ANSWER = re.compile(r"^>(?: (?P<text>.*))?$")
PERMISSION = re.compile(r"Allow this action\?.*\[y/n/t\]:")
#: The shell command a permission question is about, on its own row (``I will run the following
#: command: ls (using tool: shell)``) or on the rows after it (``● I will run the following shell
#: command:`` then the command, up to a blank row).
COMMAND = re.compile(r"I will run the following (?:shell )?command:"
                     r"(?: (?P<command>.+?))?(?: \(using tool: [\w.-]+\))?$")
#: The answers a ``[y/n/t]`` question takes, typed at the chat prompt and sent with Enter; the wording
#: of the third is the question's own.
PERMISSION_OPTIONS = (
    ("y", "allow this action", OptionEffect.ALLOW),
    ("n", "deny this action", OptionEffect.DENY),
    ("t", "trust (always allow) this tool for the session", OptionEffect.ALLOW_ALWAYS),
)
# One frame of the braille Dots spinner then its message ("⠋ Thinking...", "⠏ 0 of 1 mcp servers
# initialized..."). The logo's braille art never has one braille cell followed by a space and a word.
SPINNER = re.compile(r"^\s*[\u2801-\u28ff] +\S.*[A-Za-z]")
MCP_LOADING = re.compile(r"\d+ of \d+ mcp servers? initialized", re.IGNORECASE)
CREDITS = re.compile(r"^\s*▸ Credits:")
#: Screens of a CLI that stopped or cannot go on (nothing of the chat drawn after them).
FATAL = (
    ("not logged in", re.compile(r"You are not logged in, please log in with \S+ login")),
    ("the agent file was not loaded", re.compile(r"no agent with name \S+ found")),
    ("bad command-line option",
     re.compile(r"^error: (?:unexpected argument|invalid value|unrecognized subcommand)")),
)
#: Grey hints drawn after an empty prompt; a plain capture cannot tell them from typed text.
HINTS = frozenset({
    "How can I help?", "What should we work on?", "Ask me anything!", "What would you like to do?",
    "Ready when you are!", "Curious what I can do? Just ask!",
    "Not sure where to start? Ask me about my features", "Want to know what commands I have? Just ask",
    "Need help with features or setup? Use /help",
    "Use @file or @dir to include file contents inline", "What would you like to do next?",
})


@dataclass(frozen=True)
class Reading:
    """What one screen says: the status, the rule that decided it, and for a finished turn the rows
    of its answer (``answer`` is a ``(first, end)`` slice of ``rows``; ``marker`` the prefix the first
    answer row starts with: ``>`` here, ``•`` or nothing in Kiro's full-screen interface)."""

    status: TerminalStatus
    evidence: str
    rows: tuple[str, ...] = ()
    answer: tuple[int, int] | None = None
    marker: str = ""

    @property
    def report(self) -> StatusReport:
        return StatusReport(status=self.status, evidence=self.evidence)


def reading(status: TerminalStatus, evidence: str, rows: list[str] | None = None,
            answer: tuple[int, int] | None = None, marker: str = "") -> Reading:
    """A :class:`Reading` with its evidence cut to a loggable length."""
    return Reading(status=status, evidence=evidence[:EVIDENCE_LENGTH], rows=tuple(rows or ()), answer=answer,
                   marker=marker)


def find_prompts(rows: list[str]) -> list[int]:
    """Indices of the rows that are the chat prompt."""
    return [i for i, row in enumerate(rows) if PROMPT.match(row)]


def _rest(row: str) -> str:
    match = PROMPT.match(row)
    return (match.group("rest") or "").strip() if match else ""


def _previous(rows: list[str], index: int) -> int | None:
    return last_index(rows, str.strip, end=index)


def _is_message(rows: list[str], index: int) -> bool:
    """A prompt row holding something the user sent (not a hint, not the answer to a permission question)."""
    rest = _rest(rows[index])
    if not rest or rest in HINTS:
        return False
    before = _previous(rows, index)
    return before is None or not PERMISSION.search(rows[before])


@dataclass(frozen=True, kw_only=True)
class ChatScreen:
    """How one CLI's line-based chat differs from the other's."""

    #: What evidence calls the CLI: "Kiro stopped: ...", "no q chat prompt on screen".
    name: str
    #: Finds the tool a permission question is about, in its ``tool`` group.
    tool: re.Pattern[str]
    #: A row a failed turn ends on.
    turn_error: re.Pattern[str]

    def stopped(self, rows: list[str], filled: list[int], drawn: list[int]) -> Reading | None:
        """``error`` when a fatal message is on screen with nothing drawn after it (``drawn``: the
        rows that show the CLI is still there, its prompt first of all)."""
        for what, pattern in FATAL:
            hits = [i for i in filled if pattern.search(rows[i])]
            if hits and not any(p > hits[-1] for p in drawn):
                return reading(TerminalStatus.ERROR, f"{self.name} stopped: {what}: {rows[hits[-1]].strip()}")
        return None

    def read(self, rows: list[str]) -> Reading:
        """The status of a chat screen (busy rows, dialogs and fatal errors already ruled out)."""
        filled = [i for i, row in enumerate(rows) if row.strip()]
        prompts = find_prompts(rows)
        if not prompts:
            if any(MCP_LOADING.search(rows[i]) for i in filled):
                return reading(TerminalStatus.PROCESSING, "MCP servers still loading, no prompt yet")
            return reading(TerminalStatus.UNKNOWN, f"no {self.name} chat prompt on screen")
        last = filled[-1]
        bottom = prompts[-1]
        if bottom != last:
            sent = _rest(rows[bottom])
            about = f"working on {sent[:40]!r}" if sent else "output after the prompt"
            return reading(TerminalStatus.PROCESSING, f"{about}: {rows[last].strip()[:80]}")

        # The prompt is the last row: the CLI waits for the user.
        before = _previous(rows, bottom)
        if before is not None and PERMISSION.search(rows[before]):
            tool = next((m.group("tool") for i in range(before, -1, -1) if (m := self.tool.search(rows[i]))),
                        "a tool")
            return reading(TerminalStatus.WAITING_USER_ANSWER, f"asks to allow {tool} [y/n/t]")
        pending = _rest(rows[bottom])
        if pending and pending not in HINTS:
            return reading(TerminalStatus.PROCESSING, f"input not submitted yet: {pending[:60]!r}")
        user = next((p for p in reversed(prompts) if p < bottom and _is_message(rows, p)), None)
        if user is None:
            return reading(TerminalStatus.IDLE, "prompt waiting, no message sent yet")
        about = f" to {_rest(rows[user])[:40]!r}"
        for i in range(bottom - 1, user, -1):
            if self.turn_error.search(rows[i]):
                return reading(TerminalStatus.ERROR, f"turn{about} ended in an error: {rows[i].strip()}")
            if ANSWER.match(rows[i]):
                return reading(TerminalStatus.COMPLETED, f"answer{about}, prompt back", rows, (i, bottom),
                               marker=">")
        return reading(TerminalStatus.IDLE, f"prompt back without an answer{about}")

    def prompt(self, rows: list[str]) -> Prompt | None:
        """The open ``[y/n/t]`` permission question of a chat screen, or None.

        Open means: the question is the last row before the chat prompt, the prompt is the last row
        on screen, and nothing is typed at it (answered questions stay in the scrollback, each followed
        by a prompt holding the answer and more output). A question whose prompt already holds text
        (a message typed in while it waited) is not read either: keys pressed now would be added to
        that text, not answer the question. ``tool`` is the one its block names (``using tool: shell``,
        ``Using tool: execute_bash``) and ``arguments`` the shell command when the block shows one.
        """
        filled = [i for i, row in enumerate(rows) if row.strip()]
        if len(filled) < 2:
            return None
        bottom, question = filled[-1], filled[-2]
        if not PROMPT.match(rows[bottom]) or not PERMISSION.search(rows[question]):
            return None
        pending = _rest(rows[bottom])
        if pending and pending not in HINTS:
            return None
        # The tool block: from the row after the previous prompt (the user's message) to the question.
        start = max((p + 1 for p in find_prompts(rows) if p < bottom), default=0)
        block = rows[start:question]
        tool = next((m.group("tool") for row in reversed(block) if (m := self.tool.search(row))), None)
        arguments = _command(block)
        # The evidence starts at the asking tool's row (an earlier tool of the turn is not part of it).
        first = last_index(block, self.tool.search)
        if first is None:
            first = last_index(block, COMMAND.search)
        shown = [row for row in (block[first:] if first is not None else []) if row.strip()]
        options = tuple(PromptOption(label=key, keys=(key, "Enter"), effect=effect, description=meaning)
                        for key, meaning, effect in PERMISSION_OPTIONS)
        return Prompt(kind=PromptKind.PERMISSION, question="Allow this action?", tool=tool,
                      arguments=arguments, options=options, evidence=(*shown, rows[question], rows[bottom]))


def _command(block: list[str]) -> dict[str, str]:
    for index in range(len(block) - 1, -1, -1):
        found = COMMAND.search(block[index])
        if found is None:
            continue
        if found.group("command"):
            return {"command": found.group("command").strip()}
        lines = []
        for row in block[index + 1:]:
            if not row.strip():
                break
            lines.append(row)
        return {"command": "\n".join(lines)} if lines else {}
    return {}


def last_answer(read_screen: Callable[[str], Reading], text: str, product: str) -> str:
    """The text of the answer to the last message, from a screen optionally with scrollback above it.

    ``read_screen`` is the provider's reader; ``product`` names the CLI in the errors. The answer's
    marker is removed (and in the full-screen layout the two-space indent of its rows), the turn
    summary (``▸ Credits``) is not part of it, and rows the CLI wrapped stay separate lines.

    :raises ValueError: when the screen cannot be read or its last turn has not finished with an answer.
    """
    try:
        found = read_screen(text)
    except Exception as exc:  # noqa: BLE001 - the extractor's only failure is ValueError
        raise ValueError(f"screen not understood: {exc!r}") from exc
    if found.status is not TerminalStatus.COMPLETED or found.answer is None:
        raise ValueError(f"no finished {product} answer on screen ({found.status.value}: {found.evidence})")
    first, end = found.answer
    body = list(found.rows[first:end])
    if found.marker == ">":
        body[0] = body[0][1:].removeprefix(" ")
    else:
        if found.marker == "•":
            body[0] = body[0][1:].removeprefix(" ")
        body = [row[2:] if row.startswith("  ") else row for row in body]
    while body and (not body[-1].strip() or CREDITS.match(body[-1])):
        body.pop()
    answer = "\n".join(body).strip()
    if not answer:
        raise ValueError(f"the last {product} answer is empty")
    return answer
