"""``cao skills``: cao's own agent skills (``SKILL.md`` guides shipped in ``cao_kernel/skills``), listed,
shown, and installed where an agent CLI looks for skills.

Where each CLI looks (``<base>/<name>/SKILL.md``; the base is the project folder, or the home folder
with ``--user``):

- ``claude_code``: ``.claude/skills``;
- ``codex`` and every other CLI: ``.agents/skills``, the folder of the open Agent Skills convention
  (Codex reads it; so do several other CLIs). ``--dir`` installs anywhere else.

An install checks every target before writing any: a different file already in place is refused
(``--force`` replaces it), so a refused install leaves nothing half-done.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import click

SKILL_FILE = "SKILL.md"
NAME_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
MAX_DESCRIPTION = 1024
# Skills folder, relative to a project or to the home folder, per agent CLI.
SKILL_DIRS = {"claude_code": ".claude/skills", "codex": ".agents/skills"}
STANDARD_DIR = ".agents/skills"


@dataclass(frozen=True)
class Skill:
    """One skill shipped with cao: its folder, name, one-line description and the files it holds."""

    name: str
    description: str
    folder: Path

    def files(self) -> list[Path]:
        return sorted(p for p in self.folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts)

    def text(self) -> str:
        return (self.folder / SKILL_FILE).read_text(encoding="utf-8")


def skills_root() -> Path:
    """The folder holding cao's skills (package data of cao-kernel)."""
    from importlib.resources import files

    return Path(str(files("cao_kernel") / "skills"))


def frontmatter(text: str, origin: str) -> dict[str, str]:
    """The ``name`` and ``description`` of a SKILL.md; ValueError naming ``origin`` when they are missing
    or malformed."""
    import yaml

    match = re.match(r"^---\n(.*?)\n---\n", text, re.DOTALL)
    if match is None:
        raise ValueError(f"{origin}: no YAML frontmatter between '---' lines at the top")
    try:
        data = yaml.safe_load(match.group(1))
    except yaml.YAMLError as exc:
        raise ValueError(f"{origin}: frontmatter is not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{origin}: frontmatter must be a mapping")
    name, description = data.get("name"), data.get("description")
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise ValueError(f"{origin}: name must be lowercase letters, digits and hyphens, got {name!r}")
    if not isinstance(description, str) or not description.strip() or len(description) > MAX_DESCRIPTION:
        raise ValueError(f"{origin}: description must be 1 to {MAX_DESCRIPTION} characters")
    return {"name": name, "description": description.strip()}


def list_skills(root: Path | None = None) -> list[Skill]:
    """Every skill under ``root`` (default: cao's own), sorted by name."""
    root = root or skills_root()
    found = []
    for folder in sorted(p for p in root.iterdir() if (p / SKILL_FILE).is_file()):
        meta = frontmatter((folder / SKILL_FILE).read_text(encoding="utf-8"), str(folder / SKILL_FILE))
        if meta["name"] != folder.name:
            raise ValueError(f"{folder / SKILL_FILE}: name {meta['name']!r} differs from its folder {folder.name!r}")
        found.append(Skill(name=meta["name"], description=meta["description"], folder=folder))
    return found


def find_skill(name: str, root: Path | None = None) -> Skill:
    skills = {s.name: s for s in list_skills(root)}
    if name not in skills:
        raise click.ClickException(f"no skill named {name!r} (cao has: {', '.join(sorted(skills))})")
    return skills[name]


def skills_dir(provider: str | None, *, base: Path, directory: str | None = None) -> Path:
    """Where skills go for ``provider`` under ``base`` (a project folder or the home folder)."""
    if directory is not None:
        return Path(directory).expanduser()
    return base / SKILL_DIRS.get(provider or "", STANDARD_DIR)


@dataclass(frozen=True)
class Planned:
    source: Path
    target: Path
    state: str  # "new", "unchanged", "replace", "conflict"


def plan_install(skills: Iterable[Skill], destination: Path, *, force: bool) -> list[Planned]:
    """What installing ``skills`` into ``destination`` would do, file by file, without writing."""
    planned = []
    for skill in skills:
        for source in skill.files():
            target = destination / skill.name / source.relative_to(skill.folder)
            if not target.exists():
                state = "new"
            elif target.is_file() and target.read_bytes() == source.read_bytes():
                state = "unchanged"
            else:
                state = "replace" if force and target.is_file() else "conflict"
            planned.append(Planned(source=source, target=target, state=state))
    return planned


def write_plan(planned: list[Planned]) -> None:
    """Write the new and replaced files, each through a temporary file moved into place."""
    for item in planned:
        if item.state not in ("new", "replace"):
            continue
        item.target.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=item.target.parent, prefix=f".{item.target.name}.")
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(item.source.read_bytes())
            os.chmod(temporary, 0o644)
            os.replace(temporary, item.target)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise


def _known_providers(ctx: click.Context) -> set[str]:
    from . import get_kernel

    try:
        return set(get_kernel(ctx).providers)
    except Exception:  # noqa: BLE001 - a broken plugin must not stop the skills command
        return set()


@click.group()
def skills() -> None:
    """cao's agent skills: guides for supervisors, workers and people driving cao from a shell."""


@skills.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def list_command(as_json: bool) -> None:
    """List cao's skills with their descriptions."""
    found = list_skills()
    if as_json:
        click.echo(json.dumps([{"name": s.name, "description": s.description, "path": str(s.folder / SKILL_FILE)}
                               for s in found], indent=2))
        return
    for skill in found:
        click.echo(f"{skill.name}\n    {skill.description}")


@skills.command("show")
@click.argument("name")
def show_command(name: str) -> None:
    """Print skill NAME's SKILL.md."""
    click.echo(find_skill(name).text(), nl=False)


@skills.command("install")
@click.argument("names", nargs=-1, metavar="[NAME]...")
@click.option("--provider", required=True, metavar="P",
              help="Agent CLI that will read the skills (claude_code, codex, ...): decides the folder.")
@click.option("--project", "project", type=click.Path(file_okay=False), metavar="DIR",
              help="Project folder to install into (default: the current folder).")
@click.option("--user", "user", is_flag=True, help="Install for every project of this user (home folder).")
@click.option("--dir", "directory", type=click.Path(file_okay=False), metavar="DIR",
              help="Install into this skills folder instead (a folder of <name>/SKILL.md).")
@click.option("--force", is_flag=True, help="Replace skill files that differ from cao's.")
@click.pass_context
def install_command(ctx: click.Context, names: tuple[str, ...], provider: str, project: str | None, user: bool,
                    directory: str | None, force: bool) -> None:
    """Install cao's skills (all, or each NAME) where agent CLI P looks for skills.

    claude_code: <project>/.claude/skills (with --user: ~/.claude/skills). codex and others:
    <project>/.agents/skills (with --user: ~/.agents/skills).
    """
    if sum(bool(x) for x in (project, user, directory)) > 1:
        raise click.UsageError("give at most one of --project, --user and --dir")
    known = set(SKILL_DIRS) | _known_providers(ctx)
    if directory is None and provider not in known:
        raise click.BadParameter(f"unknown provider {provider!r} (known: {', '.join(sorted(known))}); "
                                 "use --dir for another folder", param_hint="--provider")
    chosen = [find_skill(name) for name in dict.fromkeys(names)] if names else list_skills()
    base = Path.home() if user else Path(project or os.getcwd()).expanduser().resolve()
    destination = skills_dir(provider, base=base, directory=directory)
    planned = plan_install(chosen, destination, force=force)
    conflicts = [item.target for item in planned if item.state == "conflict"]
    if conflicts:
        listed = "\n  ".join(str(c) for c in conflicts)
        raise click.ClickException(f"these files exist and differ from cao's (nothing was written; --force "
                                   f"replaces them):\n  {listed}")
    write_plan(planned)
    for item in planned:
        verb = {"new": "installed", "replace": "replaced", "unchanged": "unchanged"}[item.state]
        click.echo(f"{verb}: {item.target}")
    if provider not in SKILL_DIRS and directory is None:
        click.echo(f"note: {provider} gets the shared Agent Skills folder {STANDARD_DIR}; if it reads skills "
                   "elsewhere, install with --dir", err=True)
