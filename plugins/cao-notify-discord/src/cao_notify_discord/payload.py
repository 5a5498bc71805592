"""Discord's execute-webhook JSON for one notice: a ``username`` and one embed, within Discord's limits.

Lengths are counted in UTF-16 code units, which is never less than the number of characters, so a
text that fits here fits Discord however it counts. Mentions are switched off (``allowed_mentions``):
agent output that happens to contain ``@everyone`` must not ping a whole server.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from cao_notify_core.events import Notice
from cao_notify_core.text import fit, units

TITLE_MAX = 256
DESCRIPTION_MAX = 4096
FIELDS_MAX = 25
FIELD_NAME_MAX = 256
FIELD_VALUE_MAX = 1024
FOOTER_MAX = 2048
EMBED_TOTAL_MAX = 6000

FOOTER_PREFIX = "cao · "

COLORS = {
    "good": 0x2ECC71,
    "bad": 0xE74C3C,
    "warn": 0xF1C40F,
    "info": 0x3498DB,
    "muted": 0x95A5A6,
}


def timestamp(at: float) -> str:
    """ISO 8601 in UTC, as Discord's ``timestamp`` wants it."""
    return datetime.fromtimestamp(at, tz=UTC).isoformat(timespec="milliseconds")


def build_payload(notice: Notice, *, username: str) -> dict[str, Any]:
    """The JSON body to post for ``notice``."""
    description = notice.summary
    if notice.body:
        description = f"{description}\n\n{notice.body}" if description else notice.body
    title = fit(notice.title, TITLE_MAX, empty="cao")
    footer = fit(f"{FOOTER_PREFIX}{notice.kind}", FOOTER_MAX)
    fields = [
        {"name": fit(name, FIELD_NAME_MAX, empty="-"), "value": fit(value, FIELD_VALUE_MAX, empty="-"),
         "inline": units(value) <= 40}
        for name, value in notice.fields[:FIELDS_MAX]
    ]
    # Whatever the fixed parts leave of the embed's total budget goes to the description.
    fixed = units(title) + units(footer) + sum(units(f["name"]) + units(f["value"]) for f in fields)
    while fixed > EMBED_TOTAL_MAX - 1 and fields:
        dropped = fields.pop()
        fixed -= units(dropped["name"]) + units(dropped["value"])
    description = fit(description, min(DESCRIPTION_MAX, EMBED_TOTAL_MAX - fixed))
    embed: dict[str, Any] = {"title": title}
    if description:
        embed["description"] = description
    embed["color"] = COLORS.get(notice.level, COLORS["info"])
    if fields:
        embed["fields"] = fields
    embed["timestamp"] = timestamp(notice.at)
    embed["footer"] = {"text": footer}
    return {"username": username, "embeds": [embed], "allowed_mentions": {"parse": []}}


def embed_units(embed: dict[str, Any]) -> int:
    """The characters Discord counts against an embed's total limit."""
    total = units(embed.get("title", "")) + units(embed.get("description", ""))
    total += units(embed.get("footer", {}).get("text", ""))
    total += sum(units(f["name"]) + units(f["value"]) for f in embed.get("fields", []))
    return total
