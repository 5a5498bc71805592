"""Finding the program a provider starts, the way ``ProviderSpec.binary_env`` promises: the override
variable when it is set, else the program's name on ``PATH``."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path

__all__ = ["beside_interpreter", "find_program"]


def find_program(env: Mapping[str, str], binary: str, binary_env: str | None, *, missing: str) -> str:
    """The path of the program to run.

    :param env: the environment the program will start in (its ``PATH`` is searched).
    :param binary: the program's name, looked up on ``PATH``.
    :param binary_env: a variable that, when set and not empty, names the program to run instead.
    :param missing: the error message when ``binary`` is not on ``PATH``; say what to install.
    :return: an absolute path (the override's, with ``~`` expanded, or the one found on ``PATH``).
    :raises ValueError: when the override does not name an executable file (the message names the
        variable and its value), or ``missing`` when the program is not on ``PATH``.
    """
    chosen = env.get(binary_env) if binary_env else None
    if chosen:
        path = Path(chosen).expanduser()
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise ValueError(f"{binary_env}={chosen!r} is not an executable file")
        return str(path)
    found = shutil.which(binary, path=env.get("PATH"))
    if found is None:
        raise ValueError(missing)
    return found


def beside_interpreter(binary: str) -> str | None:
    """The program ``binary`` installed next to the running interpreter (a console script of cao's own
    Python environment), or None: a provider that ships its program in Python starts it from there."""
    if not sys.executable:
        return None
    beside = Path(sys.executable).parent / binary
    return str(beside) if beside.is_file() and os.access(beside, os.X_OK) else None
