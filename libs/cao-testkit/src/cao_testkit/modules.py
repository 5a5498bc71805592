"""A Python file that is no installed module (a script of the repository, an example), loaded in a test
without touching ``sys.path``."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

__all__ = ["load_file"]


def load_file(path: Path, name: str) -> ModuleType:
    """The file at ``path`` as module ``name``, executed once per process: every later call, from any
    test module, gets the same module (and the state it keeps, such as built wheels)."""
    return sys.modules.get(name) or _execute(path, name)


def _execute(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path} as a module")
    module = importlib.util.module_from_spec(spec)
    # Registered before it runs, as an import would: dataclasses and pickling look their module up.
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
