"""``use_worktree`` over HTTP, as upstream's clients send it (a query parameter) and cao's client sends it
(a body field): on session and terminal creation, handoff and assign, against real git repositories."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.tmux


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository with one commit and a subfolder."""
    root = tmp_path / "repo"
    (root / "sub").mkdir(parents=True)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "config", "user.email", "dev@example.com")
    _git(root, "config", "user.name", "Dev")
    (root / "sub" / "file.txt").write_text("one\n", encoding="utf-8")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "one")
    return root


def test_a_session_created_with_use_worktree_runs_in_its_worktree_until_deleted(api: Any, repo: Path,
                                                                               poll: Any) -> None:
    made = api.post("/sessions", params={"agent_profile": "developer", "working_directory": str(repo / "sub"),
                                         "use_worktree": "true", "session_name": "wt"})
    assert made.status_code == 201, made.text
    terminal = made.json()
    folder = repo / ".cao" / "worktrees" / terminal["id"]
    assert terminal["worktree_branch"] == f"cao/developer-{terminal['id']}"
    assert terminal["worktree_path"] == str(folder)
    assert terminal["working_directory"] == str(folder / "sub")
    assert api.get(f"/terminals/{terminal['id']}").json()["worktree_branch"] == terminal["worktree_branch"]
    assert api.get(f"/terminals/{terminal['id']}/working-directory").json()["working_directory"] == \
        str(folder / "sub")
    assert api.delete("/sessions/cao-wt").status_code == 200
    poll(lambda: not folder.exists())
    assert _git(repo, "branch", "--format=%(refname:short)") == "main"


def test_use_worktree_outside_git_is_a_400_with_nothing_created(api: Any, workdir: str,
                                                                make_terminal: Any) -> None:
    refused = api.post("/sessions", json={"agent_profile": "developer", "working_directory": workdir,
                                          "use_worktree": True, "session_name": "nogit"})
    assert refused.status_code == 400, refused.text
    assert "is not inside a git repository" in refused.json()["detail"]
    assert [s["name"] for s in api.get("/sessions").json()] == []
    supervisor = make_terminal(session="sup")
    for route in ("handoff", "assign"):
        answer = api.post(f"/terminals/{supervisor['id']}/{route}",
                          params={"agent_profile": "developer", "message": "hi", "use_worktree": "true"})
        assert answer.status_code == 400 and "not inside a git repository" in answer.json()["detail"], route
    assert [t["id"] for t in api.get("/sessions/cao-sup/terminals").json()] == [supervisor["id"]]
    assert list(Path(workdir).iterdir()) == []


async def test_assign_and_handoff_with_use_worktree_through_the_client(make_kernel, cao_home, repo) -> None:
    import asyncio

    from cao_hookspecs import CreateTerminalRequest
    from cao_server.api_token import ensure_token
    from cao_server.client import HttpKernel
    from cao_testkit.serve import serve_in_thread

    token = ensure_token(cao_home)
    with serve_in_thread(make_kernel(), token=token) as running:
        async with HttpKernel(running.url, token=token) as kernel:
            supervisor = await kernel.create_session(CreateTerminalRequest(
                agent_profile="developer", working_directory=str(repo), session_name="wtc"))
            assigned = await kernel.assign(supervisor.id, "developer", "hello", use_worktree=True)
            assert assigned.success and assigned.worktree_branch == f"cao/developer-{assigned.terminal_id}"
            assert Path(assigned.worktree_path).is_dir()
            handed = await kernel.handoff(supervisor.id, "developer", "hello", use_worktree=True)
            # The mock agent changes nothing: the worktree goes with its worker and is named nowhere.
            assert handed.success and handed.worktree_branch is None, handed
            for _ in range(200):
                if not (repo / ".cao" / "worktrees" / handed.terminal_id).exists():
                    break
                await asyncio.sleep(0.05)
            else:
                raise AssertionError("the handoff's clean worktree was not removed")
            await kernel.delete_session("wtc")
        assert not Path(assigned.worktree_path).exists()
