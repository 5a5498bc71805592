"""Comparing a read prompt with the one a manifest expects, and writing a prompt as a manifest holds it."""

from __future__ import annotations

from typing import Any

from cao_hookspecs import Prompt

__all__ = ["prompt_as_manifest", "prompt_differences"]

_FIELDS = ("kind", "question", "title", "tool", "arguments", "arguments_complete", "default", "free_text")
_OPTION_FIELDS = ("label", "keys", "effect", "description", "takes_text")


def prompt_as_manifest(prompt: Prompt) -> dict[str, Any]:
    """``prompt`` in a manifest's form (evidence left out: the screen file holds it)."""
    from ..prompt_log import as_plain

    return {key: value for key, value in as_plain(prompt).items() if key != "evidence"}


def prompt_differences(expected: dict[str, Any], actual: Prompt | None) -> list[str]:
    """What differs between the expectation (keys it leaves out are not compared) and ``actual``."""
    if actual is None:
        return ["no prompt was read"]
    if not isinstance(actual, Prompt):
        return [f"read_prompt returned {type(actual).__name__}, not a Prompt"]
    got = prompt_as_manifest(actual)
    problems = []
    for field in _FIELDS:
        if field in expected and expected[field] != got[field]:
            problems.append(f"{field}: expected {expected[field]!r}, read {got[field]!r}")
    if "options" in expected:
        wanted, options = expected["options"], got["options"]
        if len(wanted) != len(options):
            problems.append(f"options: expected {len(wanted)} ({[o.get('label') for o in wanted]}), read "
                            f"{len(options)} ({[o['label'] for o in options]})")
        for number, (want, have) in enumerate(zip(wanted, options, strict=False), 1):
            for field in _OPTION_FIELDS:
                if field in want and want[field] != have[field]:
                    problems.append(f"option {number} {field}: expected {want[field]!r}, "
                                    f"read {have[field]!r}")
    if not actual.evidence:
        problems.append("the prompt carries no evidence rows")
    return problems
