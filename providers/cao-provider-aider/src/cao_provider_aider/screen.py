"""Reading Aider's screen: status with evidence, and the last answer.

Aider draws a line-based chat (prompt_toolkit), its answers rendered from markdown (rich), bottom rows
last::

    ──────────────────────────────────────   <- a full-width rule before each prompt
    > Say hello                              <- the user's message, echoed at the prompt (``diff> ...``
                                                when the edit format is not the model's own)
      ░█       Waiting for openai/scripted     <- spinner while the model has not answered (erased then)
    Hello there.                             <- the answer (no prompt below it yet: still running)
    Tokens: 594 sent, 7 received.            <- the turn's usage, when the API reports it
    Run shell command? (Y)es/(N)o/(D)on't ask again [Yes]:   <- a question waiting for a word and Enter
    litellm.BadRequestError: OpenAIException - ...           <- the turn failed
    ──────────────────────────────────────
    Readonly: ../rt-x/system-prompt.md       <- the files in the chat
    >                                        <- the empty prompt: Aider waits for input

Everything works on the rendered text ``tmux capture-pane`` gives (no colours), never raises, and names
the rule that decided in the evidence.
"""

from __future__ import annotations

import re

from cao_hookspecs import StatusReport, TerminalStatus
from cao_screen_core.reports import read_safely
from cao_screen_core.reports import report as _report
from cao_screen_core.rows import last_index

__all__ = ["QUESTION", "detect_status", "extract_last_message", "screen_rows"]

# The prompt names the edit format when it is not the model's own (``diff>``, ``ask>``, ``architect>``).
_PROMPT = re.compile(r"^(?:[a-z-]+)?>(?: (?P<typed>.*))?$")
_USER = re.compile(r"^(?:[a-z-]+)?> (?P<text>\S.*)$")
_RULE = re.compile(r"^─{20,}$")
_BUSY = re.compile(r"Waiting for \S+\s*$")
_USAGE = re.compile(r"^Tokens: \S+ sent, \S+ received\.")
#: A question waiting for its answer: ``Run shell command? (Y)es/(N)o/(D)on't ask again [Yes]:``.
QUESTION = re.compile(r"^(?P<question>\S.*?\?) (?P<options>\(\w\)[^\[\]]*?(?:/\(\w\)[^\[\]/]*)+) "
                      r"\[(?:Yes|No|\w+)\]: ?$")
# litellm's exception names (``litellm.BadRequestError: ...``, ``litellm.APIConnectionError: ...``). The
# spinner's thread can leave a piece of itself in front (``  ░litellm.BadRequestError: ...``, captured
# from 0.86.2 when the error came before the spinner was wiped), so symbols may precede the name.
_TURN_ERROR = re.compile(r"^[^\w]*litellm\.(?P<kind>\w+(?:Error|Exception)): (?P<text>.*)$")
# What Aider prints about its repository map before the answer, inside a git repository: the first scan
# (``Initial repo scan ...`` and tqdm's ``Scanning repo:`` bar, drawn over itself, other notices running
# into it), files in git but not on disk, a tags cache it cannot use. Strings of aider/repomap.py.
_REPO_MAP = re.compile(r"^(?:Initial repo scan can be slow|Scanning repo: |Repo-map can't include |"
                       r"Has it been deleted from the file system but not from git\?|Tags cache error: |"
                       r"Unable to use tags cache|Cache recreation error: |File not found error: |"
                       r"Disabling repo map, git repo too large\?|Updating repo map)")
# Screens left by an Aider that refused to start or stopped.
FATAL = (
    ("bad command-line option", re.compile(r"^aider: error: ", re.MULTILINE)),
    ("Python traceback", re.compile(r"^Traceback \(most recent call last\):", re.MULTILINE)),
)


def screen_rows(text: str) -> list[str]:
    """The screen's rows, right-stripped, without the blank rows under the last one."""
    rows = [row.rstrip() for row in text.splitlines()]
    while rows and not rows[-1]:
        rows.pop()
    return rows


def _at_prompt(rows: list[str]) -> bool:
    """The empty prompt is the bottom row, under its rule: Aider waits for input."""
    if len(rows) < 2 or not _PROMPT.match(rows[-1]) or (_PROMPT.match(rows[-1]).group("typed") or "").strip():
        return False
    # Between the rule and the prompt: the files in the chat (``Readonly: ...``), wrapped or not.
    return any(_RULE.match(row) for row in rows[-6:-1])


def detect_status(screen: str) -> StatusReport:
    """Aider's status from its rendered screen. Never raises."""
    return read_safely(_detect, screen)


def _detect(text: str) -> StatusReport:
    rows = screen_rows(text)
    if not rows:
        return _report(TerminalStatus.UNKNOWN, "blank screen")
    bottom = rows[-1]
    if QUESTION.match(bottom):
        return _report(TerminalStatus.WAITING_USER_ANSWER, f"question waiting for an answer: {bottom}")
    # The spinner is erased when the answer comes, so one in the last turn means the turn runs.
    user = last_index(rows, _USER.match)
    busy = next((row for row in rows[user or 0:] if _BUSY.search(row)), None)
    if busy is not None:
        return _report(TerminalStatus.PROCESSING, f"spinner: {busy.strip()}")
    if not _at_prompt(rows):
        tail = "\n".join(rows[-12:])
        for name, pattern in FATAL:
            if pattern.search(tail):
                return _report(TerminalStatus.ERROR, f"Aider stopped: {name}")
        if user is not None:
            # Sent (or typed) and the prompt not back: the answer is on its way.
            about = _USER.match(rows[user]).group("text").strip()[:40]
            return _report(TerminalStatus.PROCESSING, f"no prompt after {about!r}")
        return _report(TerminalStatus.UNKNOWN, "no prompt at the bottom of the screen")
    user = last_index(rows[:-1], _USER.match)
    turn = _answer_rows(rows[user + 1:_turn_end(rows, user)] if user is not None else rows[:_last_rule(rows)])
    # Readings of two turns must differ even when their answers look alike.
    about = f" after {_USER.match(rows[user]).group('text').strip()[:40]!r}" if user is not None else ""
    for row in reversed(turn):
        error = _TURN_ERROR.match(row)
        if error:
            return _report(TerminalStatus.ERROR, f"turn{about} failed: {error.group('kind')}: "
                                                 f"{error.group('text')}")
    if user is None:
        return _report(TerminalStatus.IDLE, "empty prompt, no message sent yet")
    if turn:
        return _report(TerminalStatus.COMPLETED, f"answer{about} above the empty prompt")
    return _report(TerminalStatus.IDLE, f"turn{about} ended without an answer")


def _last_rule(rows: list[str]) -> int:
    """The rule above the prompt at the bottom (``_at_prompt`` holds)."""
    return max(index for index, row in enumerate(rows) if _RULE.match(row))


def _turn_end(rows: list[str], user: int) -> int:
    """Where the turn of the message on row ``user`` ends: the first rule after it. Empty prompts may
    follow (an Enter pressed during the turn waits in the terminal and redraws the prompt once the turn
    ends); they are not part of the answer."""
    return next(index for index in range(user + 1, len(rows)) if _RULE.match(rows[index]))


def _answer_rows(rows: list[str]) -> list[str]:
    """A turn's answer: its rows up to the usage line (what follows is Aider's own: the shell commands it
    offers to run, their output), without the blank rows around the text and the repository map's notices
    before it."""
    usage = next((index for index, row in enumerate(rows) if _USAGE.match(row)), len(rows))
    rows = rows[:usage]
    while rows and (not rows[0].strip() or _REPO_MAP.match(rows[0])):
        rows.pop(0)
    while rows and not rows[-1].strip():
        rows.pop()
    return rows


def extract_last_message(text: str) -> str:
    """The text of the answer to the user's last message.

    ``text`` is a screen, optionally with scrollback above it. Raises ``ValueError`` when the prompt is
    not back, or the turn ended in an error or without an answer.
    """
    rows = screen_rows(text)
    if not _at_prompt(rows):
        raise ValueError("the prompt is not back: the turn has not finished")
    if any(_BUSY.search(row) for row in rows[last_index(rows, _USER.match) or 0:]):
        raise ValueError("a turn is still running")
    user = last_index(rows[:-1], _USER.match)
    if user is None:
        raise ValueError("no message was sent")
    answer = _answer_rows(rows[user + 1:_turn_end(rows, user)])
    if not answer:
        raise ValueError("the last message got no answer")
    if any(_TURN_ERROR.match(row) for row in answer):
        raise ValueError("the last turn failed")
    return "\n".join(answer)
