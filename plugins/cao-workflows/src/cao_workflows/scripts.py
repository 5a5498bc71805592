"""Script-tier runs: the workflow file runs as a process of its own, and each ``cao_workflow.run_step``
it calls is a request to the server's run-step route, journaled there (:mod:`cao_workflows.steps`).

A run's script gets a folder under the cao home (``workflow-scripts/<run id>/``, private) holding the
journaled text, its stdout and stderr, and ``state.json``: the attempt's *generation* and the script's
process group. Every start of the script (the first, and each after a server restart) is a new
generation; the run-step route refuses calls from an older one, so a script left over from before a
crash cannot drive the run next to its successor. The folder goes when the run ends.

The script's environment is built, not inherited: the run's identity, the server's URL, the inputs,
``PATH``, ``HOME`` and the cao home (where the script reads the API token; the token itself is never
passed). It runs in a process group of its own, killed when the run ends, is cancelled, runs past its
time, or the server stops.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from .errors import RunNotFound, ScriptFailed, StaleGeneration

log = logging.getLogger(__name__)

FOLDER = "workflow-scripts"
OUTPUT_PREFIX = "CAO_WORKFLOW_OUTPUT:"
#: A script's wall-clock bound (``CAO_WORKFLOW_SCRIPT_TIMEOUT``), as upstream's.
DEFAULT_TIMEOUT = 8700.0
#: The end of stderr a failed run reports.
ERROR_TAIL = 4000
#: The end of stdout searched for the output line.
OUTPUT_TAIL = 256 * 1024
# Seconds between SIGTERM and SIGKILL when the script's group is stopped.
_GRACE = 5.0
_POLL = 0.2


def folder(home: str | os.PathLike[str], run_id: str) -> Path:
    return Path(home) / FOLDER / run_id


def generation(home: str | os.PathLike[str], run_id: str) -> str:
    """The generation of ``run_id``'s running script; ``RunNotFound`` when no script runs as it."""
    state = _read_state(folder(home, run_id))
    if state is None:
        raise RunNotFound(f"no workflow script is running as run {run_id!r}")
    return str(state["generation"])


def check_generation(home: str | os.PathLike[str], run_id: str, claimed: str) -> None:
    """Refuse a step call from an attempt of the run that is no longer the current one."""
    current = generation(home, run_id)
    if claimed != current:
        raise StaleGeneration(f"run {run_id!r} has been started again (generation {current}); this call "
                              f"comes from generation {claimed}, which no longer owns its steps")


def run(*, home: str, run_id: str, text: str, inputs: Mapping[str, Any], base_url: str,
        working_directory: str | None, timeout: float, should_stop: Callable[[], None],
        settle: Callable[[int], None]) -> Any:
    """Run a script attempt to its end and return its output (the last ``CAO_WORKFLOW_OUTPUT:`` line's
    value, None when it printed none). ``should_stop`` is asked a few times a second and raises to end
    the attempt (the group is killed, the exception goes on); ``settle`` gets the exit code first and
    may raise instead of the code being read as the run's outcome. ``ScriptFailed`` on a non-zero exit
    or at ``timeout`` seconds."""
    where = folder(home, run_id)
    where.mkdir(parents=True, exist_ok=True, mode=0o700)
    previous = _read_state(where)
    if previous is not None and previous.get("pgid"):
        # An attempt from before a server crash may still be alive: it must not drive the run any more.
        _kill_leftover(int(previous["pgid"]), run_id)
    number = int(previous["generation"]) + 1 if previous is not None else 1
    # The generation is stored before the script starts: its first step call is checked against it.
    _write_state(where, {"generation": str(number), "pgid": None})
    script = where / "script.py"
    script.write_text(text, encoding="utf-8")
    env = _environment(run_id, str(number), base_url, inputs, home, resumed=number > 1)
    cwd = working_directory if working_directory and os.path.isdir(working_directory) else str(where)
    with open(where / "stdout", "wb") as out, open(where / "stderr", "wb") as err:
        process = subprocess.Popen([sys.executable, str(script)], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                   stdout=out, stderr=err, start_new_session=True)
    _write_state(where, {"generation": str(number), "pgid": process.pid})
    deadline = time.monotonic() + timeout
    try:
        while True:
            try:
                code = process.wait(_POLL)
                break
            except subprocess.TimeoutExpired:
                pass
            should_stop()
            if time.monotonic() >= deadline:
                _kill_group(process.pid, process)
                raise ScriptFailed(f"script {run_id} ran past its {timeout:g} s limit\n"
                                   f"{_tail(where / 'stderr', ERROR_TAIL)}".rstrip())
    except BaseException:
        _kill_group(process.pid, process)
        raise
    # What the script started itself ends with it.
    _kill_group(process.pid, None)
    settle(code)
    if code != 0:
        raise ScriptFailed(f"script exited with code {code}\n{_tail(where / 'stderr', ERROR_TAIL)}".rstrip())
    return output_of(_tail(where / "stdout", OUTPUT_TAIL), run_id)


def finish(home: str | os.PathLike[str], run_id: str) -> None:
    """Forget the run's script folder (the run has ended)."""
    shutil.rmtree(folder(home, run_id), ignore_errors=True)


def output_of(stdout: str, run_id: str = "?") -> Any:
    """The value of the last ``CAO_WORKFLOW_OUTPUT:`` line (None when there is none, or when it is not
    JSON: the script succeeded, so its run does too, with a warning in the log)."""
    lines = [line for line in stdout.splitlines() if line.startswith(OUTPUT_PREFIX)]
    if not lines:
        return None
    try:
        return json.loads(lines[-1][len(OUTPUT_PREFIX):])
    except ValueError:
        log.warning("run %s: its last %s line is not JSON; its output is null", run_id, OUTPUT_PREFIX)
        return None


def _environment(run_id: str, number: str, base_url: str, inputs: Mapping[str, Any], home: str, *,
                 resumed: bool) -> dict[str, str]:
    env = {
        "CAO_WORKFLOW_RUN_ID": run_id,
        "CAO_WORKFLOW_GENERATION": number,
        "CAO_API_BASE_URL": base_url,
        "CAO_WORKFLOW_INPUTS": json.dumps(dict(inputs), separators=(",", ":")),
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": os.environ.get("HOME", ""),
        "CAO_HOME_DIR": str(home),
    }
    if resumed:
        env["CAO_WORKFLOW_RESUME"] = "1"
    return env


def _read_state(where: Path) -> dict[str, Any] | None:
    try:
        state = json.loads((where / "state.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return state if isinstance(state, dict) and "generation" in state else None


def _write_state(where: Path, state: Mapping[str, Any]) -> None:
    # Replaced whole: the run-step route reads it at any moment.
    fd, tmp = tempfile.mkstemp(dir=where, prefix=".state.")
    with os.fdopen(fd, "w", encoding="utf-8") as file:
        json.dump(dict(state), file)
    os.replace(tmp, where / "state.json")


def _kill_group(pgid: int, process: subprocess.Popen[bytes] | None) -> None:
    """SIGTERM the group, then SIGKILL what is left after a grace period."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGTERM)
    if process is not None:
        try:
            process.wait(_GRACE)
        except subprocess.TimeoutExpired:
            pass
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
    if process is not None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(_GRACE)


def _kill_leftover(pgid: int, run_id: str) -> None:
    """Kill an earlier attempt's group, when its leader is gone or is that attempt (its environment
    names the run): a leader's id is never given to another process while it still leads a group."""
    environ = Path("/proc") / str(pgid) / "environ"
    if environ.exists():
        try:
            ours = f"CAO_WORKFLOW_RUN_ID={run_id}\0".encode() in environ.read_bytes()
        except OSError:
            ours = False
        if not ours:
            return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _tail(path: Path, limit: int) -> str:
    try:
        with open(path, "rb") as file:
            file.seek(0, os.SEEK_END)
            size = file.tell()
            file.seek(max(0, size - limit))
            return file.read().decode("utf-8", "replace")
    except OSError:
        return ""
