"""Workflow files: reading one safely, checking it before it runs, and loading the code a run
journaled.

A workflow is a Python file with a top-level ``def workflow(inputs):`` (the function tier), or a script
whose top-level code imports ``cao_workflow`` and calls its ``run_step`` (the script tier, run as a
process of its own: :mod:`cao_workflows.scripts`). A run keeps the file's text in its journal, so
recovery after a restart runs the code the run started with even when the file has changed or gone
since (DBOS replays steps by their order; other code would diverge).
"""

from __future__ import annotations

import ast
import hashlib
import os
import stat
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from .errors import WorkflowFileError
from .names import WORKFLOW_NAME_RE

#: The function a workflow file defines.
ENTRY = "workflow"
#: Workflow files are programs a person wrote; anything larger is a mistake (a data file, a log).
MAX_SOURCE_BYTES = 256 * 1024
#: The module a script-tier file imports.
SCRIPT_MODULE = "cao_workflow"
FUNCTION_TIER, SCRIPT_TIER = "function", "script"
# Calls that name an agent profile, checked before a run starts, and where: the function tier's
# ``run_step(profile, ...)``/``Step(profile, ...)``; the script tier's ``run_step(provider, agent, ...)``.
_PROFILE_CALLS = {FUNCTION_TIER: ({"run_step", "Step"}, 0, "profile"),
                  SCRIPT_TIER: ({"run_step", "step"}, 1, "agent")}


@attrs.frozen(kw_only=True)
class WorkflowSource:
    """A workflow's code as a run keeps it: ``name`` (the file's stem), ``path`` (for people), ``text``
    and its ``digest`` (sha256, short)."""

    name: str
    path: str
    text: str
    digest: str = attrs.field(default=attrs.Factory(lambda self: _digest(self.text), takes_self=True))


@attrs.frozen
class ProfileUse:
    """A profile named literally in the file, and the line that names it."""

    profile: str
    line: int


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def read_file(path: str | os.PathLike[str], *, base: str | os.PathLike[str] | None = None) -> WorkflowSource:
    """Read a workflow file; ``WorkflowFileError`` naming the problem when it cannot be one.

    ``base`` resolves a relative path (the caller's working directory). Only a regular ``.py`` file is
    read: a device, a FIFO or a directory is refused before it is opened, so a hostile path cannot make
    the server block or read something that is not a program.
    """
    raw = os.fspath(path)
    if not raw or "\x00" in raw or any(ord(c) < 32 for c in raw):
        raise WorkflowFileError(f"invalid workflow path {raw!r}: empty or holding control characters")
    full = Path(base, raw) if base is not None and not os.path.isabs(raw) else Path(raw)
    full = full.expanduser()
    if full.suffix != ".py":
        raise WorkflowFileError(f"workflow file {raw!r} is not a Python file (expected a name ending in .py)")
    try:
        info = full.stat()
    except FileNotFoundError:
        raise WorkflowFileError(f"workflow file {str(full)!r} does not exist") from None
    except OSError as exc:
        raise WorkflowFileError(f"workflow file {str(full)!r} cannot be read: {exc.strerror}") from None
    if not stat.S_ISREG(info.st_mode):
        raise WorkflowFileError(f"workflow file {str(full)!r} is not a regular file")
    if info.st_size > MAX_SOURCE_BYTES:
        raise WorkflowFileError(f"workflow file {str(full)!r} is {info.st_size} bytes; the limit is "
                                f"{MAX_SOURCE_BYTES}")
    try:
        text = full.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise WorkflowFileError(f"workflow file {str(full)!r} is not UTF-8 text") from None
    except OSError as exc:
        raise WorkflowFileError(f"workflow file {str(full)!r} cannot be read: {exc.strerror}") from None
    stem = full.stem
    if not WORKFLOW_NAME_RE.fullmatch(stem):
        raise WorkflowFileError(f"workflow file {str(full)!r}: its name {stem!r} must be 1 to 64 letters, "
                                f"digits, '_' or '-'")
    return WorkflowSource(name=stem, path=str(full.resolve()), text=text)


def check(source: WorkflowSource) -> list[ProfileUse]:
    """Check that ``source`` compiles and is a workflow of either tier; return the profiles it names
    literally (the caller checks that they exist). Raises ``WorkflowFileError`` naming the file, the
    line and the problem."""
    return classify(source)[1]


def classify(source: WorkflowSource) -> tuple[str, list[ProfileUse]]:
    """:func:`check`, also returning the file's tier (``function`` or ``script``)."""
    if len(source.text.encode()) > MAX_SOURCE_BYTES:
        raise WorkflowFileError(f"workflow {source.name!r} is larger than {MAX_SOURCE_BYTES} bytes")
    try:
        tree = ast.parse(source.text, filename=source.path)
    except SyntaxError as exc:
        raise WorkflowFileError(f"workflow file {source.path!r} has a syntax error at line {exc.lineno}: "
                                f"{exc.msg}") from None
    entry = next((node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == ENTRY),
                 None)
    if entry is None:
        if not _imports_script_module(tree):
            raise WorkflowFileError(f"workflow file {source.path!r} defines no top-level function "
                                    f"'{ENTRY}(inputs)' and does not import {SCRIPT_MODULE} (a script)")
        return SCRIPT_TIER, _profiles(tree, SCRIPT_TIER)
    params = entry.args
    if len(params.posonlyargs) + len(params.args) != 1 or params.vararg or params.kwonlyargs:
        raise WorkflowFileError(f"workflow file {source.path!r}: '{ENTRY}' must take exactly one "
                                f"argument, the inputs (line {entry.lineno})")
    return FUNCTION_TIER, _profiles(tree, FUNCTION_TIER)


def _imports_script_module(tree: ast.Module) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == SCRIPT_MODULE:
            return True
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == SCRIPT_MODULE for a in node.names):
            return True
    return False


def _profiles(tree: ast.AST, tier: str) -> list[ProfileUse]:
    calls, position, keyword = _PROFILE_CALLS[tier]
    uses: list[ProfileUse] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        called = (func.id if isinstance(func, ast.Name)
                  else func.attr if isinstance(func, ast.Attribute) else None)
        if called not in calls:
            continue
        named = node.args[position] if len(node.args) > position else next(
            (kw.value for kw in node.keywords if kw.arg == keyword), None)
        if isinstance(named, ast.Constant) and isinstance(named.value, str):
            uses.append(ProfileUse(named.value, node.lineno))
    return uses


def load(source: WorkflowSource) -> Callable[[Any], Any]:
    """The ``workflow`` function of ``source``, executed in a fresh module of its own (never
    ``sys.modules``: two runs of one file must not share globals)."""
    module = types.ModuleType(f"cao_workflow_{source.name.replace('-', '_')}")
    module.__file__ = source.path
    code = compile(source.text, source.path, "exec")
    exec(code, module.__dict__)  # noqa: S102 - running the user's workflow is the point
    entry = module.__dict__.get(ENTRY)
    if not callable(entry):
        raise WorkflowFileError(f"workflow file {source.path!r} defines no function '{ENTRY}'")
    return entry
