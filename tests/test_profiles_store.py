"""Profile lookup order, name checks and the listing (sources, loadability, duplicates)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cao_kernel.errors import InvalidInput, NotFound
from cao_kernel.home import CaoHome
from cao_kernel.profiles import ProfileStore, find_profile, list_profiles
from cao_kernel.profiles.store import builtin_dir


def _write(path: Path, name: str, description: str = "", body: str = "body") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\nname: {name}\ndescription: {description}\n---\n{body}\n", encoding="utf-8")
    return path


@pytest.fixture
def home(cao_home: Path) -> CaoHome:
    return CaoHome(cao_home)


def test_builtins_are_packaged_and_declare_the_cao_mcp_server(home: CaoHome) -> None:
    names = {p.stem for p in builtin_dir().glob("*.md")}
    assert {"code_supervisor", "developer", "reviewer"} <= names
    roles = {}
    for name in ("code_supervisor", "developer", "reviewer"):
        profile = find_profile(name, home=home)
        assert profile.source == "built-in" and profile.description and profile.system_prompt
        assert dict(profile.mcp_servers) == {
            "cao-mcp-server": {"type": "stdio", "command": "cao-mcp-server", "args": []}
        }
        roles[name] = profile.role
    assert roles == {"code_supervisor": "supervisor", "developer": "developer", "reviewer": "reviewer"}
    supervisor = find_profile("code_supervisor", home=home).system_prompt
    assert "`developer`" in supervisor and "`reviewer`" in supervisor


def test_lookup_order_local_then_providers_then_installed_then_builtin(home: CaoHome, tmp_path: Path) -> None:
    claude_dir, codex_dir = tmp_path / "claude", tmp_path / "codex"
    dirs = {"claude_code": [str(claude_dir)], "codex": [str(codex_dir)]}

    def source() -> tuple[str, str]:
        profile = find_profile("developer", home=home, provider_dirs=dirs)
        return profile.source, profile.description

    assert source() == ("built-in", find_profile("developer", home=home).description)
    _write(home.agent_context / "developer.md", "developer", "from context")
    assert source() == ("installed", "from context")
    _write(codex_dir / "developer" / "agent.md", "developer", "codex nested")
    assert source() == ("codex", "codex nested")
    _write(claude_dir / "developer.md", "developer", "claude flat")
    assert source() == ("claude_code", "claude flat")
    _write(home.agent_store / "developer.md", "developer", "local")
    assert source() == ("local", "local")
    entry = {e.name: e for e in list_profiles(home=home, provider_dirs=dirs)}["developer"]
    assert (entry.source, entry.duplicated_in) == ("local", ("claude_code", "codex", "installed", "built-in"))


def test_flat_file_wins_over_nested_in_one_folder_and_nested_name_defaults(
    home: CaoHome, tmp_path: Path
) -> None:
    folder = tmp_path / "agents"
    (folder / "helper").mkdir(parents=True)
    (folder / "helper" / "agent.md").write_text("nested body\n")
    store = ProfileStore(home, {"kiro_cli": [str(folder)]})
    nested = store.load("helper")
    assert (nested.name, nested.system_prompt, nested.source) == ("helper", "nested body", "kiro_cli")
    (folder / "helper.md").write_text("flat body\n")
    assert store.load("helper").system_prompt == "flat body"
    [entry] = [e for e in store.list() if e.name == "helper"]
    assert entry.path == str(folder / "helper.md") and entry.duplicated_in == ()


def test_tilde_in_provider_dirs_is_expanded(
    home: CaoHome, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    _write(tmp_path / ".kiro" / "agents" / "kiro_one.md", "kiro_one")
    assert (
        find_profile("kiro_one", home=home, provider_dirs={"kiro_cli": ["~/.kiro/agents"]}).source
        == "kiro_cli"
    )


def test_a_folder_listed_twice_is_searched_once(home: CaoHome) -> None:
    _write(home.agent_store / "mine.md", "mine")
    dirs = {"claude_code": [str(home.agent_store)], "codex": [str(home.agent_store)]}
    store = ProfileStore(home, dirs)
    assert [r.label for r in store.roots()] == ["local", "installed", "built-in"]
    [entry] = [e for e in store.list() if e.name == "mine"]
    assert (entry.source, entry.duplicated_in) == ("local", ())


@pytest.mark.parametrize(
    "name", ["../developer", "a/b", "a\\b", "..", "x..y", "has space", "", "n" * 65, "é"]
)
def test_bad_names_are_rejected_before_touching_the_filesystem(home: CaoHome, name: str) -> None:
    with pytest.raises(InvalidInput) as info:
        find_profile(name, home=home)
    assert "\n" not in str(info.value) and "agent profile name" in str(info.value)


def test_not_found_lists_where_it_looked(home: CaoHome, tmp_path: Path) -> None:
    with pytest.raises(NotFound) as info:
        find_profile("nobody", home=home, provider_dirs={"codex": [str(tmp_path / "cx")]})
    message = str(info.value)
    assert "\n" not in message and "'nobody' not found" in message
    for part in (
        f"local {home.agent_store}",
        f"codex {tmp_path / 'cx'}",
        f"installed {home.agent_context}",
        "built-in ",
    ):
        assert part in message


def test_listing_marks_malformed_files_and_never_raises(home: CaoHome, tmp_path: Path) -> None:
    _write(home.agent_store / "good.md", "good", "fine", body="hello")
    (home.agent_store / "broken.md").write_text("---\nname: broken\ntags: [bad tag]\n---\n")
    (home.agent_store / "unclosed.md").write_text("---\nname: unclosed\n")
    (home.agent_store / "bad name.md").write_text("hello\n")
    (home.agent_store / "binary.md").write_bytes(b"\xff\xfe\x00")
    (home.agent_store / ".hidden.md").write_text("---\nname: hidden\n---\n")
    (home.agent_store / "notes.txt").write_text("not a profile")
    entries = {e.name: e for e in list_profiles(home=home)}
    assert (
        entries["good"].loadable and entries["good"].description == "fine" and entries["good"].error is None
    )
    for name, problem in [
        ("broken", "field 'tags' item 0"),
        ("unclosed", "never closed"),
        ("bad name", "is invalid"),
        ("binary", "not UTF-8"),
    ]:
        assert not entries[name].loadable, name
        assert problem in entries[name].error and "\n" not in entries[name].error
    assert ".hidden" not in entries and "notes" not in entries and "hidden" not in entries
    assert list(entries) == sorted(entries)
    row = entries["broken"].to_dict()
    assert list(row)[:8] == [
        "name",
        "source",
        "loadable",
        "description",
        "capabilities",
        "tags",
        "role",
        "duplicated_in",
    ]


def test_listing_survives_unreadable_and_missing_folders(home: CaoHome, tmp_path: Path) -> None:
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("x")
    entries = list_profiles(
        home=home, provider_dirs={"a": [str(tmp_path / "missing")], "b": [str(not_a_dir)]}
    )
    assert {e.name for e in entries} >= {"developer", "reviewer", "code_supervisor"}


def test_frontmatter_name_differing_from_the_file_name(home: CaoHome) -> None:
    # As upstream: the file name is what a lookup matches; the frontmatter name is the profile's.
    _write(home.agent_store / "alias.md", "real_name")
    assert find_profile("alias", home=home).name == "real_name"
    assert [e.name for e in list_profiles(home=home) if e.source == "local"] == ["alias"]


def test_placeholders_resolve_from_the_managed_env_file(home: CaoHome) -> None:
    home.root.mkdir(parents=True, exist_ok=True)
    (home.root / ".env").write_text("# managed\nexport API_URL='https://example.test/v1'\nEMPTY=\n")
    (home.agent_store).mkdir(parents=True)
    (home.agent_store / "svc.md").write_text(
        "---\nname: svc\ndescription: talks to ${API_URL}\n---\nUse ${API_URL} and ${EMPTY}x and ${NOPE}.\n"
    )
    store = ProfileStore(home)
    unresolved: set[str] = set()
    profile = store.load("svc", unresolved=unresolved)
    assert profile.description == "talks to https://example.test/v1"
    assert profile.system_prompt == "Use https://example.test/v1 and x and ${NOPE}."
    assert unresolved == {"NOPE"}
    # The raw text stays as written.
    assert "${API_URL}" in store.read("svc")[0]


def test_load_ref_takes_paths_or_names(home: CaoHome, tmp_path: Path) -> None:
    path = _write(tmp_path / "custom_one.md", "custom_one")
    store = ProfileStore(home)
    assert store.load_ref(str(path)).source == "custom"
    assert store.load_ref("reviewer").source == "built-in"
    with pytest.raises(NotFound, match="no such file"):
        store.load_ref(str(tmp_path / "nope.md"))
