"""Reading mock_cli's rendered screen: its status, and its last answer (its prompts: ``prompts``).

Both functions take text shaped like ``tmux capture-pane -p`` output: one line per terminal row,
trailing blanks stripped (they strip again, and drop ANSI escapes, so ``-e`` captures work too).
mock_cli writes every row that matters at column 0 (the prompt, ``> MOCK:`` answers and their ``│``
continuation rows, the ``ERROR`` line, the no-answer line, the banner) and shows multi-line pastes as a
one-line placeholder, so pasted text cannot pose as one.
"""

from __future__ import annotations

import re

from cao_hookspecs import StatusReport, TerminalStatus

from .contract import ANSWER_CONTINUATION, BANNER, ERROR_PREFIX, NO_ANSWER_LINE, PROMPT, PROMPT_GLYPH

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
_REPLY = re.compile(r">\s*MOCK: ?(.*)")


def screen_rows(text: str) -> list[str]:
    return [_ANSI.sub("", row).rstrip() for row in text.split("\n")]


def _is_input_row(row: str) -> bool:
    # After rstrip a bare prompt is just the glyph, so a row starting "❯ " always carries input.
    return row.startswith(PROMPT)


def _answer_kind(rows: list[str]) -> str | None:
    if any(row.startswith(ERROR_PREFIX) for row in rows):
        return "error"
    if any(_REPLY.match(row) for row in rows):
        return "reply"
    if any(row.startswith(NO_ANSWER_LINE) for row in rows):
        return "ended"
    return None


def _report(status: TerminalStatus, rule: str) -> StatusReport:
    return StatusReport(status=status, evidence=f"mock_cli: {rule}")


def detect_status(screen: str) -> StatusReport:
    """Status of a mock_cli terminal from its rendered screen; never raises.

    Rules, first match wins (the ``evidence`` names the one that matched):

    - nothing on screen: unknown;
    - a behaviour's prompt (``prompts.read_prompt`` reads one): waiting_user_answer;
    - no prompt row at all: processing once the banner is shown, else unknown;
    - last non-empty row is the bare prompt ``❯``: look at the rows between the last input row
      (``❯ <text>``) and it: an ``ERROR: mock ...`` row (an injected failure or a failed behaviour)
      means error, a ``> MOCK:`` row or the no-answer row of a behaviour completed, nothing idle. With no input row on screen, the same check runs on everything above
      the prompt; if that finds nothing, the banner (or an otherwise empty screen) means idle and any
      other text means completed: an answer so long that it pushed its own input row off the screen;
    - last non-empty row is an input row (echoed input, answer not printed yet): processing;
    - anything else below the last prompt: processing.
    """
    rows = screen_rows(screen)
    while rows and not rows[-1]:
        rows.pop()
    if not rows:
        return _report(TerminalStatus.UNKNOWN, "empty screen")
    from .prompts import read_prompt  # it reads rows with this module's helpers

    prompt = read_prompt(screen)
    if prompt is not None:
        what = "a text field" if prompt.free_text else f"{len(prompt.options)} options"
        return _report(TerminalStatus.WAITING_USER_ANSWER,
                       f"a {prompt.kind.value} prompt with {what} above its key hint {rows[-1]!r}")
    if not any(row.startswith(PROMPT_GLYPH) for row in rows):
        if BANNER in rows:
            return _report(TerminalStatus.PROCESSING, "banner shown, prompt not drawn yet")
        return _report(TerminalStatus.UNKNOWN, "no mock_cli prompt on screen")
    last = rows[-1]
    if last == PROMPT_GLYPH:
        above = rows[:-1]
        start = next((i for i in range(len(above) - 1, -1, -1) if _is_input_row(above[i])), None)
        block = above if start is None else above[start + 1:]
        kind = _answer_kind(block)
        where = "after the last input" if start is not None else "with no input row on screen"
        if kind == "error":
            return _report(TerminalStatus.ERROR, f"prompt after the error line, {where}")
        if kind == "reply":
            return _report(TerminalStatus.COMPLETED, f"prompt after a '> MOCK:' answer, {where}")
        if kind == "ended":
            return _report(TerminalStatus.COMPLETED, f"prompt after a turn that ended without an answer, {where}")
        if start is not None:
            return _report(TerminalStatus.IDLE, "prompt with no answer since the last input")
        if BANNER in above or not any(above):
            return _report(TerminalStatus.IDLE, "prompt, no input yet")
        return _report(TerminalStatus.COMPLETED, "prompt after output whose input row scrolled off screen")
    if _is_input_row(last):
        return _report(TerminalStatus.PROCESSING, "input on the prompt row, no answer yet")
    return _report(TerminalStatus.PROCESSING, "output below the last prompt, no fresh prompt yet")


def extract_last_message(text: str) -> str:
    """The last answer in ``text`` (screen plus history); ValueError if there is none.

    An answer starts at a ``> MOCK:`` row. mock_cli always draws a prompt right after an answer, so the
    rows between that row and the next prompt row belong to it: a row starting ``│`` begins a new line
    of a multi-line answer, any other row is the wrapped rest of the row above (a capture made without
    ``-J``) and is joined to it. Only a joined capture keeps blanks that fell on a wrap point. When the
    last turn ended without an answer (a behaviour returned None), there is no answer to return.
    """
    rows = screen_rows(text)
    for index in range(len(rows) - 1, -1, -1):
        row = rows[index]
        if row.startswith(NO_ANSWER_LINE):
            raise ValueError("the last mock_cli turn ended without an answer")
        match = _REPLY.match(row)
        if match is None:
            continue
        lines = [match.group(1)]
        following = rows[index + 1:]
        end = next((i for i, row in enumerate(following) if row.startswith(PROMPT_GLYPH)), None)
        for row in following[:end] if end else ():
            if row.startswith(ANSWER_CONTINUATION):
                lines.append(row[len(ANSWER_CONTINUATION):].removeprefix(" "))
            else:
                lines[-1] += row
        return "\n".join(line.rstrip() for line in lines)
    raise ValueError("no '> MOCK:' answer found in the mock_cli output")
