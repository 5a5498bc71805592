"""A skill's guide by name, for ``GET /skills/{name}``: the user's skills folder in the cao home first
(``<home>/skills/<name>/SKILL.md``), then the extra skill folders of the settings, then the skills
shipped with cao (``cao_kernel/skills``)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from .errors import InvalidInput, NotFound

if TYPE_CHECKING:
    from .home import CaoHome

# The Agent Skills naming rule (as ``cao skills`` checks it), which also keeps a name inside its folder.
SKILL_NAME_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*\Z")
MAX_SKILL_NAME = 64
MAX_SKILL_BYTES = 1024 * 1024
_FRONTMATTER_RE = re.compile(r"\A---\r?\n.*?\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)


def skill_content(home: CaoHome, name: str, extra_dirs: Iterable[str] = ()) -> str:
    """The Markdown body of skill ``name`` (its frontmatter left out), from the home's skills folder,
    then ``extra_dirs``, then cao's own skills.

    :raises InvalidInput: a name that is not lowercase letters, digits and single hyphens (64 at most).
    :raises NotFound: no folder holds it.
    """
    from importlib.resources import files
    from pathlib import Path

    if len(name) > MAX_SKILL_NAME or not SKILL_NAME_RE.match(name):
        raise InvalidInput(f"invalid skill name {name!r}: use lowercase letters, digits and single hyphens")
    for root in (home.skills, *map(Path, extra_dirs), Path(str(files("cao_kernel") / "skills"))):
        path = root / name / "SKILL.md"
        try:
            with open(path, "rb") as fh:
                data = fh.read(MAX_SKILL_BYTES + 1)
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError as exc:
            raise InvalidInput(f"cannot read skill {name!r}: {exc.strerror or exc}") from None
        if len(data) > MAX_SKILL_BYTES:
            raise InvalidInput(f"skill {name!r} is larger than {MAX_SKILL_BYTES} bytes")
        text = data.decode("utf-8", errors="replace")
        return _FRONTMATTER_RE.sub("", text, count=1).lstrip("\r\n")
    raise NotFound(f"skill {name!r} not found")


__all__ = ["skill_content"]
