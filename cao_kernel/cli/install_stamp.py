"""What is installed in this Python environment, read cheaply: the stamp a cached command table is
checked against.

The stamp names every folder on ``sys.path`` with the metadata folders (``*.dist-info``,
``*.egg-info``) it holds and the modification time and size of each one's ``entry_points.txt``.
Installing, removing or upgrading a distribution adds, removes or renames such a folder (its name
carries the version); changing a distribution's entry points rewrites that file. Reading the stamp
costs one directory listing per path entry and one ``stat`` per distribution: no metadata is parsed
and ``importlib.metadata`` is not imported.
"""

from __future__ import annotations

import os
import sys
from typing import Any

METADATA_SUFFIXES = (".dist-info", ".egg-info")


def file_state(path: str | os.PathLike[str]) -> list[int] | None:
    """``[mtime_ns, size]`` of a file, None when it cannot be read."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return [info.st_mtime_ns, info.st_size]


def environment_stamp() -> list[Any]:
    """This interpreter and what its ``sys.path`` holds, as JSON-ready lists (compared for equality)."""
    folders: list[Any] = []
    for entry in sys.path:
        folder = entry or os.getcwd()
        try:
            with os.scandir(folder) as found:
                names = sorted(item.name for item in found if item.name.endswith(METADATA_SUFFIXES))
        except NotADirectoryError:
            # A zip archive on sys.path: any change to it counts.
            folders.append([entry, file_state(folder)])
            continue
        except OSError:
            folders.append([entry, None])
            continue
        dists = [[name, file_state(os.path.join(folder, name, "entry_points.txt"))] for name in names]
        folders.append([entry, dists])
    return [sys.version, sys.prefix, folders]
