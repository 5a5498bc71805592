"""How the commands print a prompt: its question, what asks, its options, and the command that answers it."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cao_hookspecs import OpenPrompt, PromptEvent


def prompt_lines(opened: OpenPrompt) -> list[str]:
    prompt = opened.prompt
    lines = [f"Prompt {opened.id} ({prompt.kind.value}): {prompt.question}"]
    if prompt.tool:
        shown = " ".join(prompt.arguments.values())
        lines.append(f"  {prompt.tool}" + (f": {shown}" if shown else "")
                     + ("" if prompt.arguments_complete else " (cut on screen)"))
    for number, option in enumerate(prompt.options, 1):
        flags = (("default", number == prompt.default), ("takes text", option.takes_text))
        marks = [mark for mark, on in flags if on]
        lines.append(f"  {number}. {option.label}" + (f"  ({', '.join(marks)})" if marks else ""))
    terminal = opened.terminal_id
    if prompt.options:
        lines.append(f"Answer: cao terminal answer {terminal} <number> --prompt {opened.id}")
    if prompt.free_text:
        lines.append(f"    or: cao terminal answer {terminal} --text '<answer>' --prompt {opened.id}")
    return lines


def event_line(event: PromptEvent) -> str:
    """One audit trail entry: when, what, which prompt, who, and the answer or the reason."""
    from ._render import clock

    opened = event.prompt
    what = f"{clock(event.at)}  {event.kind.value:<9} {opened.id}"
    if event.kind.value == "opened":
        return f"{what}  {opened.prompt.kind.value}: {opened.prompt.question}"
    parts = [what]
    if event.by:
        parts.append(f"by {event.by}")
    if event.option:
        options = opened.prompt.options
        label = options[event.option - 1].label if event.option <= len(options) else "?"
        parts.append(f"option {event.option} ({label})")
    if event.text:
        parts.append(f"text {event.text!r}")
    if event.detail:
        parts.append(f"- {event.detail}")
    return "  ".join(parts)
