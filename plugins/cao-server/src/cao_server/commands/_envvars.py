"""``--env KEY=VALUE`` options: parsed and checked before anything is created."""

from __future__ import annotations

import re
from collections.abc import Iterable

import click

KEY_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\Z")
MAX_VALUE_BYTES = 2048
# Variables that steer the agent CLIs themselves (nested-session guards, config homes, tool managers):
# set from outside they would break the agent instead of configuring the task, as upstream rules.
RESERVED_PREFIXES = ("CLAUDE", "CODEX_", "__MISE_")
# Cloud-provider switches of the agent CLIs that users do need to pass per session.
ALLOWED_RESERVED = frozenset({"CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY"})


def parse_env(items: Iterable[str]) -> dict[str, str]:
    """``["KEY=VALUE", ...]`` as a dict, or a ``click.BadParameter`` naming the first bad item.

    Only the first ``=`` separates: the value may contain more. A key given twice is refused rather
    than silently keeping one of the values.
    """
    env: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep:
            raise click.BadParameter(f"{item!r} is not KEY=VALUE", param_hint="'--env'")
        if not KEY_RE.match(key):
            raise click.BadParameter(
                f"invalid variable name {key!r}: use letters, digits and '_', not starting with a digit",
                param_hint="'--env'",
            )
        if key.upper().startswith(RESERVED_PREFIXES) and key not in ALLOWED_RESERVED:
            raise click.BadParameter(
                f"{key} is reserved: variables starting with {', '.join(RESERVED_PREFIXES)} steer the agent "
                f"CLI itself", param_hint="'--env'",
            )
        if "\x00" in value or len(value.encode("utf-8", "surrogatepass")) >= MAX_VALUE_BYTES:
            raise click.BadParameter(f"value of {key} must be text under {MAX_VALUE_BYTES} bytes",
                                     param_hint="'--env'")
        if key in env:
            raise click.BadParameter(f"{key} is given twice", param_hint="'--env'")
        env[key] = value
    return env
