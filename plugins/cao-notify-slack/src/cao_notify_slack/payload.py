"""Slack's incoming-webhook JSON for one notice: a ``text`` fallback plus Block Kit ``blocks``.

Blocks: a ``header`` (plain text, with an emoji for the outcome), a ``section`` with the summary, a
``section`` of ``fields`` (the ids and names), a ``section`` with the long text when there is one (a
message, an answer), and a ``context`` line naming the event kind and its time. Every text is cut to
its block's limit, counted in UTF-16 code units (never less than Slack's count of characters). Text in
``mrkdwn`` has ``&``, ``<`` and ``>`` escaped, so agent output cannot form links or ``<!channel>``
mentions.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from cao_notify_core.events import Notice
from cao_notify_core.text import ELLIPSIS, fit

TEXT_MAX = 3000
HEADER_MAX = 150
SECTION_TEXT_MAX = 3000
FIELDS_MAX = 10
FIELD_TEXT_MAX = 2000
CONTEXT_TEXT_MAX = 3000

CONTEXT_PREFIX = "cao · "

EMOJI = {
    "good": ":large_green_circle:",
    "bad": ":red_circle:",
    "warn": ":large_yellow_circle:",
    "info": ":large_blue_circle:",
    "muted": ":white_circle:",
}

# An entity cut short by truncation ("&am…") would show as garbage; it is dropped whole instead.
_PARTIAL_ENTITY = re.compile(r"&(?:a|am|amp|l|lt|g|gt)?" + ELLIPSIS + "$")


def escape(text: str) -> str:
    """Slack's three control characters for ``mrkdwn`` and ``text``."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def fit_mrkdwn(text: str, limit: int, *, empty: str = "") -> str:
    """Escape ``text``, then cut it to ``limit`` without leaving half an entity behind."""
    out = fit(escape(text), limit, empty=empty)
    return _PARTIAL_ENTITY.sub(ELLIPSIS, out)


def _mrkdwn(text: str) -> dict[str, str]:
    return {"type": "mrkdwn", "text": text}


def _when(at: float) -> str:
    # Slack shows a date token in each reader's own time zone; the ISO text is its fallback.
    iso = datetime.fromtimestamp(at, tz=UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    return f"<!date^{int(at)}^{{date_short_pretty}} {{time_secs}}|{iso}>"


def build_payload(notice: Notice) -> dict[str, Any]:
    """The JSON body to post for ``notice``."""
    emoji = EMOJI.get(notice.level, EMOJI["info"])
    blocks: list[dict[str, Any]] = [{
        "type": "header",
        "text": {"type": "plain_text", "text": fit(f"{emoji} {notice.title}", HEADER_MAX), "emoji": True},
    }]
    if notice.summary.strip():
        blocks.append({"type": "section", "text": _mrkdwn(fit_mrkdwn(notice.summary, SECTION_TEXT_MAX))})
    fields = [
        _mrkdwn(fit_mrkdwn(f"*{name}*\n{value}", FIELD_TEXT_MAX, empty="-"))
        for name, value in notice.fields[:FIELDS_MAX]
    ]
    if fields:
        blocks.append({"type": "section", "fields": fields})
    if notice.body.strip():
        blocks.append({"type": "section", "text": _mrkdwn(fit_mrkdwn(notice.body, SECTION_TEXT_MAX))})
    context = fit(f"{CONTEXT_PREFIX}{escape(notice.kind)} · {_when(notice.at)}", CONTEXT_TEXT_MAX)
    blocks.append({"type": "context", "elements": [_mrkdwn(context)]})
    fallback = f"{notice.title}: {notice.summary}" if notice.summary.strip() else notice.title
    return {"text": fit_mrkdwn(fallback, TEXT_MAX, empty="cao"), "blocks": blocks}
