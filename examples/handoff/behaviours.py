"""What the mock agents of the handoff example do: the steps the profiles ask of a real model, done
deterministically (each profile names its function in ``mockBehaviour``).

- ``release_manager``: hands the change list off to a ``planner``, waits for the plan, then hands the
  plan off to a ``writer``, waits for the notes, and answers with them: a sequential pipeline.
- ``planner``: groups the changes into sections (features, fixes, documentation, other).
- ``writer``: turns the plan into Markdown release notes.
"""

from __future__ import annotations

import re
from typing import Any

SECTIONS = {"feat": "New features", "fix": "Bug fixes", "docs": "Documentation"}
OTHER = "Other changes"
STEP_SECONDS = 1.0
PLAN_LINE_RE = re.compile(r"^\d+\. (?P<section>[^(]+?) \(\d+\): (?P<items>.+)$")


def changes(text: str) -> list[tuple[str, str]]:
    """``kind: description`` items after ``changes:`` (separated by ``;`` or new lines), in order."""
    _, found, rest = text.partition("changes:")
    if not found:
        raise ValueError("the task lists no changes (expected 'changes: feat: ...; fix: ...')")
    items = [item.strip().strip("-").strip().rstrip(".") for item in re.split(r"[;\n]", rest)]
    pairs = []
    for item in filter(None, items):
        kind, sep, description = item.partition(":")
        pairs.append((kind.strip().lower(), description.strip()) if sep else ("other", item))
    return pairs


def version(text: str) -> str:
    match = re.search(r"version\s+([\w.-]+\w)", text)
    return match.group(1) if match else "(unnamed)"


async def planner(turn: Any) -> str:
    found = changes(turn.task)
    turn.say(f"grouping {len(found)} changes")
    await turn.think(STEP_SECONDS)
    groups: dict[str, list[str]] = {}
    for kind, description in found:
        groups.setdefault(SECTIONS.get(kind, OTHER), []).append(description)
    order = [*SECTIONS.values(), OTHER]
    lines = [f"Plan for the {version(turn.task)} release notes"]
    for number, section in enumerate((s for s in order if s in groups), 1):
        lines.append(f"{number}. {section} ({len(groups[section])}): {'; '.join(groups[section])}")
    return "\n".join(lines)


async def writer(turn: Any) -> str:
    sections = [m.groupdict() for m in map(PLAN_LINE_RE.match, turn.task.splitlines()) if m]
    if not sections:
        raise ValueError("the task holds no plan (expected lines like '1. New features (2): a; b')")
    turn.say(f"writing {len(sections)} sections")
    await turn.think(STEP_SECONDS)
    lines = [f"# Release {version(turn.task)}"]
    for section in sections:
        lines += ["", f"## {section['section']}"]
        prefix = "Fixed: " if section["section"] == SECTIONS["fix"] else ""
        for item in section["items"].split("; "):
            text = f"{prefix}{item}" if prefix else item[:1].upper() + item[1:]
            lines.append(f"- {text}.")
    return "\n".join(lines)


async def release_manager(turn: Any) -> str:
    found = changes(turn.task)
    name = version(turn.task)
    listed = "\n".join(f"- {kind}: {description}" for kind, description in found)
    plan = await turn.call("handoff", agent_profile="planner",
                           message=f"Plan the release notes for version {name}. The changes:\n{listed}")
    if not plan.get("success"):
        raise RuntimeError(plan.get("message"))
    notes = await turn.call("handoff", agent_profile="writer",
                            message=f"Write the release notes for version {name} following this plan:\n"
                                    f"{plan['output']}")
    if not notes.get("success"):
        raise RuntimeError(notes.get("message"))
    return notes["output"]
