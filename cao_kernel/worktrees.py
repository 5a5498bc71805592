"""Git worktrees for workers: each worker started with ``use_worktree`` gets its own checkout.

Guarantees:

- The worktree is made from the caller's current ``HEAD`` (the commit checked out where the caller works,
  not ``origin/HEAD``) on a new branch ``cao/<profile>-<terminal id>``; the terminal id is fresh and
  random, so two workers of one caller never share a branch or a folder.
- It lives where upstream puts it, ``<top of the caller's checkout>/.cao/worktrees/<terminal id>``, and a
  ``.gitignore`` holding ``*`` in ``.cao/worktrees`` keeps it (and itself) out of the caller's ``git
  status``.
- The caller's uncommitted changes (staged, unstaged and untracked files) are copied in only when asked
  (``worktree_changes``); otherwise the worktree is exactly ``HEAD``.
- A caller working in a subfolder of its repository gets its worker started in the same subfolder of the
  worktree.
- A folder outside any git repository is refused before anything is made. A creation that fails part-way
  removes what it made. Every worktree is written in a journal in cao's home before git is asked to make
  it and struck out once it is settled, so a kernel that crashed mid-way settles it on its next start.
- When its worker goes, a worktree is removed with its branch, unless the worker left commits on the
  branch or changes in the folder (against what it started with): then both are kept and reported.

Everything here blocks (it runs git); the kernel calls it on its I/O pool.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path

import attrs

from .errors import InvalidInput

#: Where worktrees go inside the caller's checkout, and the prefix of their branches (upstream's).
WORKTREE_SUBDIR = Path(".cao") / "worktrees"
BRANCH_PREFIX = "cao/"
# Local git commands only; bounded so a hung git cannot hang a terminal's creation or removal.
GIT_TIMEOUT = 60.0
# The longest profile part of a branch name.
MAX_SLUG = 40
# Keys under which a terminal keeps its worktree (``LiveTerminal.extra``: re-read after a restart).
EXTRA_KEYS = ("worktree_path", "worktree_branch", "worktree_repo", "worktree_base", "worktree_tree",
              "worktree_start")

_REPO_VARIABLES = frozenset({"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_PREFIX",
                             "GIT_OBJECT_DIRECTORY", "GIT_NAMESPACE"})
# One git mutation at a time per repository in this process (git's own locks refuse, not wait).
_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()


class GitFailed(InvalidInput):
    """A git command failed; the message names the command and what git said. Answered like bad input
    (HTTP 400), as upstream answers a worktree it could not make."""


@attrs.frozen(kw_only=True)
class Worktree:
    """One worker's worktree. ``start_dir`` is where the worker starts (its caller's subfolder in it);
    ``base`` the commit it was made from; ``tree`` the tree of its files as the worker got them."""

    terminal_id: str
    repo: str
    path: str
    branch: str
    base: str
    start_dir: str
    tree: str = ""

    def extra(self) -> dict[str, str]:
        return dict(zip(EXTRA_KEYS, (self.path, self.branch, self.repo, self.base, self.tree,
                                     self.start_dir), strict=True))

    @classmethod
    def from_extra(cls, terminal_id: str, extra: Mapping[str, str]) -> Worktree | None:
        if not extra.get("worktree_path"):
            return None
        values = [str(extra.get(key) or "") for key in EXTRA_KEYS]
        fields = ("path", "branch", "repo", "base", "tree", "start_dir")
        return cls(terminal_id=terminal_id, **dict(zip(fields, values, strict=True)))


@attrs.frozen(kw_only=True)
class Outcome:
    """What became of a worktree when its worker went: ``kept`` with the reasons, or removed."""

    worktree: Worktree
    kept: bool
    commits: int = 0
    changed: bool = False

    def describe(self) -> str:
        wt = self.worktree
        if not self.kept:
            return f"its worktree was removed (no commits or changes): branch {wt.branch}"
        why = " and ".join(part for part in (
            f"{self.commits} commit{'s' if self.commits != 1 else ''}" if self.commits else "",
            "uncommitted changes" if self.changed else "") if part)
        return (f"its worktree was kept because it has {why}: branch {wt.branch} at {wt.path}; merge or "
                f"delete the branch, then remove it with `git worktree remove {wt.path}`")


# -- names -----------------------------------------------------------------------------------------


def branch_slug(profile: str) -> str:
    """The part of a branch name made from a profile name: lowercase letters, digits, ``.``, ``_`` and
    ``-`` only, no leading or trailing punctuation, no ``..``, at most ``MAX_SLUG`` characters; ``worker``
    when nothing is left. Always a valid piece of a git branch name."""
    slug = re.sub(r"[^a-z0-9._-]+", "-", profile.lower())
    slug = re.sub(r"\.{2,}", ".", slug)
    slug = re.sub(r"-{2,}", "-", slug)[:MAX_SLUG]
    slug = slug.strip(".-_")
    if slug.endswith(".lock"):
        slug = slug[: -len(".lock")].strip(".-_")
    return slug or "worker"


def branch_name(profile: str, terminal_id: str) -> str:
    """``cao/<profile slug>-<terminal id>``: unique per worker, readable in ``git branch``."""
    return f"{BRANCH_PREFIX}{branch_slug(profile)}-{terminal_id}"


# -- git -------------------------------------------------------------------------------------------


def git(args: list[str], cwd: str, *, env: Mapping[str, str] | None = None, input: bytes | None = None,
        check: bool = True) -> subprocess.CompletedProcess[bytes]:
    """Run ``git args`` in ``cwd``; ``GitFailed`` naming the command and git's words when it fails."""
    # A server started from a git hook inherits variables that would point every command at that repo.
    inherited = {k: v for k, v in os.environ.items() if k not in _REPO_VARIABLES}
    full_env = {**inherited, **(env or {}), "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
    try:
        done = subprocess.run(["git", *args], cwd=cwd, env=full_env, input=input, capture_output=True,
                              timeout=GIT_TIMEOUT, check=False)
    except FileNotFoundError:
        raise GitFailed("git is not installed (use_worktree runs git)") from None
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GitFailed(f"'git {' '.join(args)}' in {cwd} failed: {exc}") from None
    if check and done.returncode != 0:
        said = done.stderr.decode(errors="replace").strip() or f"exit status {done.returncode}"
        raise GitFailed(f"'git {' '.join(args)}' in {cwd} failed: {said}")
    return done


def _out(args: list[str], cwd: str, **options: object) -> str:
    return git(args, cwd, **options).stdout.decode(errors="surrogateescape").strip()  # type: ignore[arg-type]


def _lock(repo: str) -> threading.Lock:
    with _locks_guard:
        return _locks.setdefault(repo, threading.Lock())


# -- making one ------------------------------------------------------------------------------------


def plan(workdir: str, profile: str, terminal_id: str) -> Worktree:
    """Where the worktree of a worker started from ``workdir`` goes, without making anything.

    ``InvalidInput`` when ``workdir`` is not in a git repository, or its repository has no commit yet.
    """
    probe = git(["rev-parse", "--show-toplevel", "--show-prefix"], workdir, check=False)
    if probe.returncode != 0:
        raise InvalidInput(f"use_worktree: working directory {workdir!r} is not inside a git repository; "
                           f"start the worker from a folder of a git checkout, or without use_worktree")
    lines = probe.stdout.decode(errors="surrogateescape").splitlines()
    repo, prefix = lines[0], (lines[1] if len(lines) > 1 else "")
    head = git(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], workdir, check=False)
    if head.returncode != 0:
        raise InvalidInput(f"use_worktree: the repository at {repo!r} has no commit yet; commit once, "
                           f"then start the worker")
    path = str(Path(repo) / WORKTREE_SUBDIR / terminal_id)
    return Worktree(terminal_id=terminal_id, repo=repo, path=path, branch=branch_name(profile, terminal_id),
                    base=head.stdout.decode().strip(), start_dir=str(Path(path) / prefix) if prefix else path)


def create(planned: Worktree, journal: Path, *, changes: bool = False, source: str | None = None) -> Worktree:
    """Make the planned worktree (``plan``) and return it with its starting tree. With ``changes`` the
    uncommitted changes of ``source`` (the caller's folder; default the repository's top) are copied in.
    Anything made is removed again when a step fails."""
    _journal_write(journal, planned)
    made = False
    try:
        with _lock(planned.repo):
            _ignore_worktrees(planned.repo)
            git(["worktree", "add", "--quiet", "-b", planned.branch, planned.path, planned.base],
                planned.repo)
        made = True
        if changes:
            _copy_changes(source or planned.repo, planned)
        Path(planned.start_dir).mkdir(parents=True, exist_ok=True)
        # A clean checkout starts from its commit's tree; only inherited changes need their own.
        tree = state_tree(planned.path) if changes else _out(["rev-parse", f"{planned.base}^{{tree}}"],
                                                             planned.repo)
        made_tree = attrs.evolve(planned, tree=tree)
        _journal_write(journal, made_tree)
        return made_tree
    except BaseException:
        if made:
            discard(planned)
        _journal_strike(journal, planned.terminal_id)
        raise


def _ignore_worktrees(repo: str) -> None:
    """``.cao/worktrees/.gitignore`` with ``*``: the worktrees, and the file itself, stay out of the
    caller's ``git status`` without touching the user's own ignore files."""
    folder = Path(repo) / WORKTREE_SUBDIR
    folder.mkdir(parents=True, exist_ok=True)
    ignore = folder / ".gitignore"
    if not ignore.exists():
        ignore.write_text("*\n", encoding="utf-8")


def _copy_changes(source: str, wt: Worktree) -> None:
    """The caller's uncommitted work, as it stands: tracked changes (staged or not) as one patch against
    ``HEAD``, untracked files (not ignored) copied."""
    top = _out(["rev-parse", "--show-toplevel"], source)
    patch = git(["diff", "--binary", "HEAD"], top).stdout
    if patch.strip():
        git(["apply", "--binary", "--whitespace=nowarn"], wt.path, input=patch)
    listed = git(["ls-files", "--others", "--exclude-standard", "-z"], top).stdout
    for raw in filter(None, listed.split(b"\0")):
        name = os.fsdecode(raw)
        origin, target = Path(top) / name, Path(wt.path) / name
        if name.endswith("/") or not (origin.is_file() or origin.is_symlink()):
            continue  # a nested repository: not part of this one's changes
        target.parent.mkdir(parents=True, exist_ok=True)
        if origin.is_symlink():
            target.symlink_to(os.readlink(origin))
        else:
            shutil.copy2(origin, target)


def state_tree(path: str) -> str:
    """The git tree of the worktree's files as they are now (untracked, not ignored, files included),
    written through a private copy of its index so its real index is left alone."""
    index = _out(["rev-parse", "--path-format=absolute", "--git-path", "index"], path)
    with tempfile.TemporaryDirectory(prefix="cao-wt-") as scratch:
        private = str(Path(scratch) / "index")
        if Path(index).exists():
            shutil.copyfile(index, private)
        env = {"GIT_INDEX_FILE": private}
        git(["add", "--all", "--", "."], path, env=env)
        return _out(["write-tree"], path, env=env)


# -- removing one ----------------------------------------------------------------------------------


def settle(wt: Worktree, journal: Path) -> Outcome:
    """Its worker is gone: remove the worktree and its branch unless it holds commits or changes, in
    which case both are kept. Either way it leaves the journal."""
    outcome = inspect(wt)
    if not outcome.kept:
        discard(wt)
    _journal_strike(journal, wt.terminal_id)
    return outcome


def inspect(wt: Worktree) -> Outcome:
    """Whether the worktree holds work: commits on its branch past its base, or files that differ from
    what the worker started with. One that cannot be read (removed by hand) holds nothing."""
    if not Path(wt.path).is_dir():
        return Outcome(worktree=wt, kept=False)
    try:
        commits = int(_out(["rev-list", "--count", f"{wt.base}..{wt.branch}"], wt.repo) or 0)
    except (GitFailed, ValueError):
        commits = 0
    try:
        # Files as committed (a clean status) are not changes; nor is what it inherited and left alone.
        # The status first: a clean worktree costs no hashing of its files.
        dirty = bool(_out(["status", "--porcelain", "--untracked-files=all"], wt.path))
        changed = dirty and bool(wt.tree) and state_tree(wt.path) != wt.tree
    except GitFailed:
        changed = True  # unreadable: keep it rather than lose work
    return Outcome(worktree=wt, kept=bool(commits or changed), commits=commits, changed=changed)


def discard(wt: Worktree) -> None:
    """Remove the worktree and its branch (there is nothing in them to keep)."""
    with _lock(wt.repo):
        git(["worktree", "remove", "--force", "--force", wt.path], wt.repo, check=False)
        if Path(wt.path).exists():
            shutil.rmtree(wt.path, ignore_errors=True)
            git(["worktree", "prune"], wt.repo, check=False)
        git(["branch", "-D", wt.branch], wt.repo, check=False)


def drop(wt: Worktree, journal: Path) -> None:
    """Remove a worktree whatever it holds (its terminal never started) and strike it from the journal."""
    discard(wt)
    _journal_strike(journal, wt.terminal_id)


# -- the journal -----------------------------------------------------------------------------------


def _journal_write(journal: Path, wt: Worktree) -> None:
    journal.mkdir(parents=True, exist_ok=True, mode=0o700)
    target = journal / f"{wt.terminal_id}.json"
    scratch = target.with_suffix(".tmp")
    scratch.write_text(json.dumps(attrs.asdict(wt)), encoding="utf-8")
    os.replace(scratch, target)


def _journal_strike(journal: Path, terminal_id: str) -> None:
    (journal / f"{terminal_id}.json").unlink(missing_ok=True)


def unsettled(journal: Path) -> list[Worktree]:
    """Worktrees in the journal: made (or being made) and not yet settled."""
    found = []
    for entry in sorted(journal.glob("*.json")) if journal.is_dir() else ():
        try:
            found.append(Worktree(**json.loads(entry.read_text(encoding="utf-8"))))
        except (OSError, ValueError, TypeError):
            entry.unlink(missing_ok=True)
    return found


def recover(journal: Path, live: set[str]) -> list[Outcome]:
    """Settle the journal's worktrees whose terminal is not running (a kernel stopped mid-way): one made
    part-way, or never given a starting tree, is removed; one holding work is kept."""
    outcomes = []
    for wt in unsettled(journal):
        if wt.terminal_id in live:
            continue
        if not wt.tree:
            if Path(wt.path).is_dir():
                discard(wt)
            else:
                git(["branch", "-D", wt.branch], wt.repo, check=False)
            _journal_strike(journal, wt.terminal_id)
            continue
        outcomes.append(settle(wt, journal))
    return outcomes


__all__ = ["Outcome", "Worktree", "branch_name", "branch_slug", "create", "discard", "drop", "inspect",
           "plan", "recover", "settle", "state_tree"]
