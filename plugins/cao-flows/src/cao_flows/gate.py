"""A flow's gate script: run before each run, it says whether to run and what fills the prompt.

The script runs without a shell, in the flow file's folder, for at most ``SCRIPT_TIMEOUT`` seconds, and
prints one JSON object: ``{"execute": true|false, "output": {...}}`` (both keys, as upstream). A script
that fails, hangs, or prints anything else fails the run with a message saying which.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import attrs

from .flow_file import FlowError

SCRIPT_TIMEOUT = 30.0
#: Standard output read from a script at most; a gate's answer is a small JSON object.
MAX_OUTPUT = 1024 * 1024


@attrs.frozen(kw_only=True)
class Gate:
    execute: bool
    output: dict[str, Any] = attrs.field(factory=dict)


OPEN = Gate(execute=True)


def decode(stdout: str, script: str) -> Gate:
    """The gate a script's standard output says; ``FlowError`` naming what is wrong with it."""
    try:
        answer = json.loads(stdout)
    except ValueError:
        shown = stdout.strip()[:200]
        raise FlowError(f"script {script} must print a JSON object, printed {shown!r}") from None
    if not isinstance(answer, dict) or "execute" not in answer or "output" not in answer:
        raise FlowError(f'script {script} must print {{"execute": ..., "output": {{...}}}} with both keys')
    if not isinstance(answer["execute"], bool):
        raise FlowError(f"script {script}: 'execute' must be true or false")
    if not isinstance(answer["output"], dict):
        raise FlowError(f"script {script}: 'output' must be a JSON object")
    return Gate(execute=answer["execute"], output=answer["output"])


async def run_gate(script: Path | None, *, timeout: float | None = None) -> Gate:
    """Run the gate ``script`` (``OPEN`` when there is none) and read its answer."""
    timeout = SCRIPT_TIMEOUT if timeout is None else timeout
    if script is None:
        return OPEN
    if not script.is_file():
        raise FlowError(f"script {script} does not exist")
    if not os.access(script, os.X_OK):
        raise FlowError(f"script {script} is not executable (chmod +x it)")
    try:
        process = await asyncio.create_subprocess_exec(
            str(script), cwd=str(script.parent), stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, start_new_session=True)
    except OSError as exc:
        raise FlowError(f"script {script} cannot be started: {exc.strerror or exc}") from None
    try:
        stdout, stderr = await asyncio.wait_for(process.communicate(), timeout)
    except TimeoutError:
        _kill_group(process.pid)
        await process.wait()
        raise FlowError(f"script {script} did not finish within {timeout:g} s") from None
    except BaseException:
        _kill_group(process.pid)
        await process.wait()
        raise
    if process.returncode != 0:
        tail = stderr.decode(errors="replace").strip()[-300:]
        said = f": {tail}" if tail else ""
        raise FlowError(f"script {script} exited with status {process.returncode}{said}")
    return decode(stdout[:MAX_OUTPUT].decode(errors="replace"), str(script))


def _kill_group(pid: int) -> None:
    # The script may have started children of its own: they end with it.
    import signal

    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


__all__ = ["OPEN", "SCRIPT_TIMEOUT", "Gate", "decode", "run_gate"]
