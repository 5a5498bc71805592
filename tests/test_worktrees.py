"""Workers in their own git worktrees (``use_worktree``), on real git repositories made here, real tmux
and the mock agent: where a worker starts, what it inherits, what is kept or removed when it goes, and
what its caller is told."""

from __future__ import annotations

import asyncio
import subprocess
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cao_hookspecs import AgentProfile, CaoError, CreateTerminalRequest, InvalidInput, TerminalStatus
from cao_kernel import worktrees

# The worker's behaviour: a task names what it does in its folder; its answer says where it ran and what
# it saw there.
AGENT = '''
import os
import subprocess
from pathlib import Path


async def act(turn):
    task = turn.task
    if "write" in task:
        Path("worker-output.txt").write_text("done", encoding="utf-8")
    if "commit" in task:
        subprocess.run(["git", "add", "-A"], check=True)
        subprocess.run(["git", "commit", "-q", "-m", "work"], check=True)
    seen = {name: Path(name).read_text(encoding="utf-8") for name in ("README", "draft.txt", "staged.txt")
            if Path(name).is_file()}
    return f"cwd={os.getcwd()} seen={sorted(seen.items())}"
'''


def git(repo: Path | str, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git repository with two commits on branch ``feature`` (its ``main`` one behind), files in a
    subfolder, and the worker's behaviour on the mock agent's path."""
    behaviours = tmp_path / "behaviours"
    behaviours.mkdir()
    (behaviours / "wtagent.py").write_text(AGENT, encoding="utf-8")
    monkeypatch.setenv("CAO_MOCK_BEHAVIOUR_PATH", str(behaviours))
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "dev@example.com")
    git(root, "config", "user.name", "Dev")
    (root / "README").write_text("v1\n", encoding="utf-8")
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "pkg" / "code.py").write_text("x = 1\n", encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "one")
    git(root, "checkout", "-q", "-b", "feature")
    (root / "README").write_text("v2\n", encoding="utf-8")
    git(root, "commit", "-q", "-am", "two")
    return root


def kernel_with_worker(make_kernel):
    kernel = make_kernel(agents=("developer",))
    kernel.add_profile(AgentProfile(name="wt-worker", provider="mock_cli",
                                    extra={"mockBehaviour": "wtagent:act"}))
    return kernel


async def supervisor_in(kernel, folder: Path | str, name: str = "sup"):
    return await kernel.create_session(CreateTerminalRequest(agent_profile="developer", session_name=name,
                                                             working_directory=str(folder)))


async def gone(path: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while Path(path).exists():
        assert time.monotonic() < deadline, f"{path} was not removed"
        await asyncio.sleep(0.05)


async def workers_removed(kernel, supervisor) -> None:
    deadline = time.monotonic() + 10
    while [t for t in await kernel.list_terminals(supervisor.session_name) if t.caller_id == supervisor.id]:
        assert time.monotonic() < deadline, "the worker was not removed"
        await asyncio.sleep(0.05)


def branches(repo: Path) -> list[str]:
    return git(repo, "branch", "--format=%(refname:short)").splitlines()


async def test_handoff_worker_runs_in_a_fresh_worktree_of_head_removed_when_clean(make_kernel, repo,
                                                                                  cao_home):
    (repo / "README").write_text("uncommitted\n", encoding="utf-8")
    (repo / "draft.txt").write_text("mine\n", encoding="utf-8")
    async with kernel_with_worker(make_kernel) as kernel:
        supervisor = await supervisor_in(kernel, repo)
        result = await kernel.handoff(supervisor.id, "wt-worker", "look around", use_worktree=True)
        assert result.success, result
        worker = result.terminal_id
        folder = repo / ".cao" / "worktrees" / worker
        # The caller's HEAD (branch feature, README v2), none of its uncommitted work.
        assert result.output == f"cwd={folder} seen=[('README', 'v2\\n')]", result.output
        assert result.worktree_branch is None and "worktree" not in result.message  # nothing kept
        await workers_removed(kernel, supervisor)
        await gone(str(folder))
    assert branches(repo) == ["feature", "main"]
    # The caller's checkout shows only its own changes: no worktree folder, no ignore file.
    assert git(repo, "status", "--porcelain").splitlines() == ["M README", "?? draft.txt"]
    assert not list(Path(cao_home).glob("worktrees/*.json"))  # settled


async def test_handoff_worker_that_commits_keeps_its_worktree_and_the_result_names_it(make_kernel, repo):
    head = git(repo, "rev-parse", "HEAD")
    async with kernel_with_worker(make_kernel) as kernel:
        supervisor = await supervisor_in(kernel, repo)
        result = await kernel.handoff(supervisor.id, "wt-worker", "write and commit", use_worktree=True)
        assert result.success, result
        worker = result.terminal_id
        branch, path = f"cao/wt-worker-{worker}", str(repo / ".cao" / "worktrees" / worker)
        assert (result.worktree_branch, result.worktree_path) == (branch, path)
        assert f"1 commit: branch {branch} at {path}" in result.message, result.message
        await workers_removed(kernel, supervisor)
        # No inbox note repeats what the result said.
        await asyncio.sleep(0.3)
        assert await kernel.list_messages(supervisor.id) == []
    assert Path(path, "worker-output.txt").read_text() == "done"
    # Made from the caller's HEAD (feature), not main or a remote's.
    assert git(repo, "rev-parse", f"{branch}~1") == head
    assert git(repo, "status", "--porcelain") == ""


async def test_worktree_changes_carries_the_callers_uncommitted_work_into_the_worktree(make_kernel, repo):
    (repo / "README").write_text("edited\n", encoding="utf-8")
    (repo / "staged.txt").write_text("staged\n", encoding="utf-8")
    git(repo, "add", "staged.txt")
    (repo / "draft.txt").write_text("untracked\n", encoding="utf-8")
    async with kernel_with_worker(make_kernel) as kernel:
        supervisor = await supervisor_in(kernel, repo)
        result = await kernel.handoff(supervisor.id, "wt-worker", "look around", use_worktree=True,
                                      worktree_changes=True)
        assert result.success, result
        assert "seen=[('README', 'edited\\n'), ('draft.txt', 'untracked\\n'), ('staged.txt', 'staged\\n')]" \
            in result.output, result.output
        # What it inherited is not the worker's work: nothing to keep.
        assert result.worktree_branch is None, result
        await workers_removed(kernel, supervisor)
        await gone(str(repo / ".cao" / "worktrees" / result.terminal_id))
    assert branches(repo) == ["feature", "main"]
    assert (repo / "draft.txt").read_text() == "untracked\n"  # the caller's own files are untouched


async def test_a_worker_from_a_subfolder_starts_in_the_same_subfolder_of_its_worktree(make_kernel, repo):
    async with kernel_with_worker(make_kernel) as kernel:
        supervisor = await supervisor_in(kernel, repo / "src" / "pkg")
        result = await kernel.handoff(supervisor.id, "wt-worker", "write", use_worktree=True)
        assert result.success, result
        folder = repo / ".cao" / "worktrees" / result.terminal_id
        assert result.output.startswith(f"cwd={folder / 'src' / 'pkg'} "), result.output
        # Its file is a change in the worktree: kept.
        assert result.worktree_path == str(folder)
    assert (folder / "src" / "pkg" / "worker-output.txt").is_file()


async def test_a_folder_outside_git_is_refused_with_nothing_created(make_kernel, workdir):
    async with kernel_with_worker(make_kernel) as kernel:
        supervisor = await supervisor_in(kernel, workdir)
        with pytest.raises(InvalidInput, match="is not inside a git repository"):
            await kernel.handoff(supervisor.id, "wt-worker", "look around", use_worktree=True)
        with pytest.raises(InvalidInput, match="is not inside a git repository"):
            await kernel.assign(supervisor.id, "wt-worker", "look around", use_worktree=True)
        assert [t.id for t in await kernel.list_terminals(supervisor.session_name)] == [supervisor.id]
    assert list(Path(workdir).iterdir()) == []


async def test_assigned_workers_get_their_own_worktrees_and_kept_ones_are_reported_to_the_caller(
        make_kernel, repo):
    async with kernel_with_worker(make_kernel) as kernel:
        supervisor = await supervisor_in(kernel, repo)
        first, second = await asyncio.gather(
            kernel.assign(supervisor.id, "wt-worker", "write", use_worktree=True),
            kernel.assign(supervisor.id, "wt-worker", "look around", use_worktree=True))
        assert first.success and second.success
        assert first.worktree_branch != second.worktree_branch and first.worktree_path != second.worktree_path
        assert f"branch {first.worktree_branch}" in first.message
        shown = await kernel.get_terminal(first.terminal_id)
        assert (shown.worktree_branch, shown.worktree_path) == (first.worktree_branch, first.worktree_path)
        for worker in (first, second):
            await kernel.wait_for_status(worker.terminal_id, {TerminalStatus.COMPLETED}, timeout=20)
            await kernel.delete_terminal(worker.terminal_id)
        await gone(second.worktree_path)  # it changed nothing
        deadline = time.monotonic() + 10
        while not (notes := await kernel.list_messages(supervisor.id)):
            assert time.monotonic() < deadline, "the caller was not told of the kept worktree"
            await asyncio.sleep(0.05)
        (note,) = notes
        assert note.sender_id == first.terminal_id
        assert f"uncommitted changes: branch {first.worktree_branch} at {first.worktree_path}" in note.body
    assert Path(first.worktree_path, "worker-output.txt").is_file()
    assert sorted(branches(repo)) == sorted(["feature", "main", first.worktree_branch])


async def test_a_worktree_left_by_a_stopped_kernel_is_settled_at_the_next_start(make_kernel, repo, cao_home):
    journal = Path(cao_home) / "worktrees"
    # One made part-way (its starting tree never recorded), one made whole with nothing in it.
    half = worktrees.plan(str(repo), "dev", "0000aaaa")
    worktrees.create(half, journal)
    worktrees._journal_write(journal, half)  # as it was before the kernel recorded its tree
    whole = worktrees.create(worktrees.plan(str(repo), "dev", "0000bbbb"), journal)
    assert len(list(journal.glob("*.json"))) == 2
    async with kernel_with_worker(make_kernel) as kernel:
        await kernel.list_sessions()
    assert not Path(half.path).exists() and not Path(whole.path).exists()
    assert branches(repo) == ["feature", "main"]
    assert list(journal.glob("*.json")) == []


@settings(max_examples=60, deadline=None)
@given(profile=st.text(min_size=0, max_size=80))
def test_branch_names_from_any_profile_name_are_valid_and_distinct_per_worker(profile):
    first, second = worktrees.branch_name(profile, "0123abcd"), worktrees.branch_name(profile, "4567ef01")
    assert first != second and first.startswith("cao/") and first.endswith("-0123abcd")
    checked = subprocess.run(["git", "check-ref-format", "--branch", first], capture_output=True, text=True)
    assert checked.returncode == 0, (first, checked.stderr)
    assert len(worktrees.branch_slug(profile)) <= worktrees.MAX_SLUG


async def test_a_worker_that_fails_to_start_takes_its_worktree_with_it(make_kernel, repo, cao_home):
    async with kernel_with_worker(make_kernel) as kernel:
        kernel.add_profile(AgentProfile(name="broken", provider="mock_cli",
                                        extra={"mockBehaviour": "no_such_module:act"}))
        supervisor = await supervisor_in(kernel, repo)
        with pytest.raises(CaoError, match="failed to start"):
            await kernel.handoff(supervisor.id, "broken", "look around", use_worktree=True)
        assert [t.id for t in await kernel.list_terminals(supervisor.session_name)] == [supervisor.id]
    assert list((repo / ".cao" / "worktrees").iterdir()) == [repo / ".cao" / "worktrees" / ".gitignore"]
    assert branches(repo) == ["feature", "main"]
    assert list(Path(cao_home).glob("worktrees/*.json")) == []
