"""The rules for what users type: run ids, input pairs, workflow names. Each parser names the rule a
value breaks, so the CLI, HTTP and MCP surfaces report the same message."""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterable

from .errors import BadRunInput

#: Run ids as upstream names them: they are also URL path segments and DBOS workflow ids.
RUN_ID_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")
#: Input keys are Python identifiers, so a workflow reads ``inputs["topic"]`` without surprises.
INPUT_KEY_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
#: A workflow's name is its file's stem, kept to the run id alphabet (it leads generated run ids).
WORKFLOW_NAME_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")
#: Inputs travel as JSON in the journal; a cap keeps one run from bloating it.
MAX_INPUT_BYTES = 32 * 1024


def run_id(value: object) -> str:
    """``value`` when it is a valid run id; ``BadRunInput`` naming the rule otherwise."""
    if not isinstance(value, str) or not RUN_ID_RE.fullmatch(value):
        raise BadRunInput(f"invalid run id {value!r}: expected 1 to 64 letters, digits, '_' or '-'")
    return value


def workflow_name(value: object) -> str:
    """``value`` when it is a valid workflow name; ``BadRunInput`` otherwise."""
    if not isinstance(value, str) or not WORKFLOW_NAME_RE.fullmatch(value):
        raise BadRunInput(f"invalid workflow name {value!r}: expected 1 to 64 letters, digits, '_' or '-'")
    return value


def new_run_id(name: str) -> str:
    """A fresh run id led by the workflow's name: ``analysis-3f9c2a1b7e``."""
    return f"{name[:48]}-{secrets.token_hex(5)}"


def parse_inputs(pairs: Iterable[str]) -> dict[str, str]:
    """``--input key=value`` options as a dict. The value is everything after the first ``=`` (it may
    be empty or hold more ``=``); a key may be given once."""
    inputs: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise BadRunInput(f"invalid input {pair!r}: expected key=value")
        if not INPUT_KEY_RE.fullmatch(key):
            raise BadRunInput(f"invalid input key {key!r}: expected a letter or '_' then letters, digits "
                              f"or '_' (at most 64)")
        if key in inputs:
            raise BadRunInput(f"input {key!r} is given twice")
        if "\x00" in value:
            raise BadRunInput(f"input {key!r} holds a NUL character")
        inputs[key] = value
    return inputs


def check_inputs(value: object) -> dict[str, object]:
    """Inputs as they arrive over HTTP or MCP: a JSON object with valid keys, at most
    ``MAX_INPUT_BYTES`` as JSON."""
    import json

    if value is None:
        return {}
    if not isinstance(value, dict):
        raise BadRunInput(f"inputs must be a JSON object, got {type(value).__name__}")
    for key in value:
        if not isinstance(key, str) or not INPUT_KEY_RE.fullmatch(key):
            raise BadRunInput(f"invalid input key {key!r}: expected a letter or '_' then letters, digits or "
                              f"'_' (at most 64)")
    try:
        size = len(json.dumps(value, allow_nan=False).encode())
    except (TypeError, ValueError) as exc:
        raise BadRunInput(f"inputs must be plain JSON: {exc}") from None
    if size > MAX_INPUT_BYTES:
        raise BadRunInput(f"inputs are {size} bytes as JSON; the limit is {MAX_INPUT_BYTES}")
    return dict(value)
