"""The body of a flow filled from its gate script's output: ``[[key]]`` becomes the value of ``key``."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .flow_file import FlowError

PLACEHOLDER = re.compile(r"\[\[(\w+)\]\]")


def render(template: str, values: Mapping[str, Any]) -> str:
    """``template`` with every placeholder replaced; ``FlowError`` naming the placeholders the values lack
    (a prompt with a hole in it is not sent)."""
    missing = sorted({key for key in PLACEHOLDER.findall(template) if key not in values})
    if missing:
        raise FlowError("the script's output has no value for " + ", ".join(f"[[{key}]]" for key in missing))
    return PLACEHOLDER.sub(lambda found: str(values[found.group(1)]), template)


__all__ = ["PLACEHOLDER", "render"]
