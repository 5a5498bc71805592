"""Workflow files: reading one safely, checking it before it runs, and loading the code a run
journaled.

A workflow is a Python file with a top-level ``def workflow(inputs):``. A run keeps the file's text in
its journal, so recovery after a restart runs the code the run started with even when the file has
changed or gone since (DBOS replays steps by their order; other code would diverge).
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
# Calls whose first argument (or ``profile=``) names an agent profile, checked before a run starts.
_PROFILE_CALLS = frozenset({"run_step", "Step"})


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
    """Check that ``source`` compiles and defines ``workflow(inputs)``; return the profiles it names
    literally (the caller checks that they exist). Raises ``WorkflowFileError`` naming the file, the
    line and the problem."""
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
        raise WorkflowFileError(f"workflow file {source.path!r} defines no top-level function "
                                f"'{ENTRY}(inputs)'")
    params = entry.args
    if len(params.posonlyargs) + len(params.args) != 1 or params.vararg or params.kwonlyargs:
        raise WorkflowFileError(f"workflow file {source.path!r}: '{ENTRY}' must take exactly one "
                                f"argument, the inputs (line {entry.lineno})")
    return _profiles(tree)


def _profiles(tree: ast.AST) -> list[ProfileUse]:
    uses: list[ProfileUse] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        called = (func.id if isinstance(func, ast.Name)
                  else func.attr if isinstance(func, ast.Attribute) else None)
        if called not in _PROFILE_CALLS:
            continue
        named = node.args[0] if node.args else next(
            (kw.value for kw in node.keywords if kw.arg == "profile"), None)
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
