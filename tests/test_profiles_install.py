"""``install()`` from a name or a file: what it writes, and that every failure leaves the home as it was."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cao_kernel.errors import CaoError, InvalidInput, NotFound
from cao_kernel.home import CaoHome
from cao_kernel.profiles import find_profile, install
from cao_kernel.profiles.envfile import parse_env, read_env
from cao_testkit.files import snapshot

FIXTURE = Path(__file__).parent / "fixtures" / "profiles" / "data_analyst.md"


@pytest.fixture
def home(cao_home: Path) -> CaoHome:
    return CaoHome(cao_home)


def test_fixture_installs_unchanged_from_a_path(home: CaoHome) -> None:
    result = install(str(FIXTURE), home)
    raw = FIXTURE.read_bytes()
    assert (home.agent_store / "data_analyst.md").read_bytes() == raw
    assert (home.agent_context / "data_analyst.md").read_bytes() == raw
    assert (result.name, result.source_kind, result.origin) == ("data_analyst", "path", str(FIXTURE))
    assert result.store_file == str(home.agent_store / "data_analyst.md")
    assert result.env_file is None and result.unresolved_vars == ()
    loaded = find_profile("data_analyst", home=home)
    assert loaded.source == "local" and loaded.mcp_servers["cao-mcp-server"]["command"] == "uvx"
    assert sorted(snapshot(home.root)) == [
        "agent-context/",
        "agent-context/data_analyst.md",
        "agent-store/",
        "agent-store/data_analyst.md",
    ]
    assert oct((home.agent_store / "data_analyst.md").stat().st_mode & 0o777) == "0o644"


def test_bom_and_crlf_are_copied_byte_for_byte(home: CaoHome, tmp_path: Path) -> None:
    source = tmp_path / "win.md"
    source.write_bytes(b"\xef\xbb\xbf---\r\nname: win\r\ndescription: d\r\n---\r\nline\r\n")
    install(str(source), home)
    assert (home.agent_store / "win.md").read_bytes() == source.read_bytes()
    assert find_profile("win", home=home).system_prompt == "line"


def test_installing_again_replaces_the_file(home: CaoHome, tmp_path: Path) -> None:
    source = tmp_path / "worker.md"
    source.write_text("---\nname: worker\ndescription: one\n---\nv1\n")
    install(str(source), home)
    source.write_text("---\nname: worker\ndescription: two\n---\nv2\n")
    install(str(source), home)
    assert find_profile("worker", home=home).description == "two"
    assert [p.name for p in home.agent_store.iterdir()] == ["worker.md"]  # no temp files left behind


def test_the_frontmatter_name_names_the_installed_file(home: CaoHome, tmp_path: Path) -> None:
    source = tmp_path / "some-file.md"
    source.write_text("---\nname: real_name\n---\nbody\n")
    result = install(str(source), home)
    assert result.name == "real_name" and (home.agent_store / "real_name.md").is_file()
    assert find_profile("real_name", home=home).system_prompt == "body"


def test_bare_name_copies_a_builtin_into_the_local_store(home: CaoHome) -> None:
    result = install("developer", home)
    assert (result.source_kind, result.found_in, result.already_local) == ("name", "built-in", False)
    builtin = Path(find_profile("developer", home=CaoHome(home.root / "other")).path or "")
    assert (home.agent_store / "developer.md").read_bytes() == builtin.read_bytes()
    assert find_profile("developer", home=home).source == "local"
    again = install("developer", home)
    assert (again.found_in, again.already_local) == ("local", True)


def test_bare_name_from_a_provider_folder_without_frontmatter(home: CaoHome, tmp_path: Path) -> None:
    folder = tmp_path / "agents" / "helper"
    folder.mkdir(parents=True)
    (folder / "agent.md").write_text("Just a prompt.\n")
    result = install("helper", home, provider_dirs={"claude_code": [str(tmp_path / "agents")]})
    assert (result.name, result.found_in) == ("helper", "claude_code")
    assert (home.agent_store / "helper.md").read_text() == "Just a prompt.\n"


def test_env_pairs_go_to_the_managed_env_file_and_resolve_placeholders(home: CaoHome, tmp_path: Path) -> None:
    source = tmp_path / "svc.md"
    source.write_text("---\nname: svc\ndescription: uses ${API_TOKEN}\n---\n${SERVICE_URL} ${LATER}\n")
    home.root.mkdir(parents=True, exist_ok=True)
    (home.root / ".env").write_text("# keep me\nAPI_TOKEN=old\nOTHER=1\n")
    result = install(str(source), home, env=["API_TOKEN=s3cret #x", "SERVICE_URL=http://127.0.0.1:27124"])
    assert result.env_set == ("API_TOKEN", "SERVICE_URL") and result.env_file == str(home.root / ".env")
    assert result.unresolved_vars == ("LATER",)
    assert result.profile is not None and result.profile.description == "uses s3cret #x"
    env_text = (home.root / ".env").read_text()
    assert env_text.startswith("# keep me\n") and "OTHER=1" in env_text
    assert parse_env(env_text) == {
        "API_TOKEN": "s3cret #x",
        "OTHER": "1",
        "SERVICE_URL": "http://127.0.0.1:27124",
    }
    assert oct((home.root / ".env").stat().st_mode & 0o777) == "0o600"
    # The stored profile keeps its placeholders: the secret lives only in .env.
    assert "${API_TOKEN}" in (home.agent_store / "svc.md").read_text()
    assert find_profile("svc", home=home).description == "uses s3cret #x"


def test_env_values_with_quotes_and_backslashes_survive(home: CaoHome) -> None:
    value = 'a "quoted" \\ value with spaces'
    install("reviewer", home, env=[f"ODD={value}", "EMPTY="])
    assert read_env(home) == {"ODD": value, "EMPTY": ""}


BAD_SOURCES = {
    "malformed frontmatter": ("---\nname: [oops\n---\n", InvalidInput, "malformed YAML frontmatter"),
    "missing name": (
        "---\ndescription: no name\n---\nbody\n",
        InvalidInput,
        "frontmatter has no 'name' field",
    ),
    "traversal in name": ("---\nname: ../evil\n---\n", InvalidInput, "must not contain"),
    "bad field type": ("---\nname: ok\nallowedTools: all\n---\n", InvalidInput, "field 'allowedTools'"),
    "unclosed": ("---\nname: ok\n", InvalidInput, "never closed"),
}


@pytest.mark.parametrize("case", sorted(BAD_SOURCES))
def test_bad_profile_files_change_nothing(home: CaoHome, tmp_path: Path, case: str) -> None:
    text, error, message = BAD_SOURCES[case]
    install("reviewer", home, env=["KEEP=1"])  # a home with content, so "unchanged" means something
    before = snapshot(home.root)
    source = tmp_path / "bad.md"
    source.write_text(text)
    with pytest.raises(error, match=message) as info:
        install(str(source), home, env=["NEW=2"])
    assert "\n" not in str(info.value) and str(source) in str(info.value)
    assert snapshot(home.root) == before


@pytest.mark.parametrize(
    ("source", "kwargs", "error", "message"),
    [
        ("../evil", {}, InvalidInput, "a profile file must end with .md"),
        ("../evil.md", {}, NotFound, "no such file"),
        ("..", {}, InvalidInput, "must not contain"),
        ("bad name", {}, InvalidInput, "is invalid"),
        ("nobody", {}, NotFound, "'nobody' not found"),
        ("http://github.com/a/b/c.md", {}, InvalidInput, "plain http is not allowed"),
        ("https://example.com/a.md", {}, InvalidInput, "host 'example.com' is not allowed"),
        ("ftp://github.com/a.md", {}, InvalidInput, "only https URLs"),
        ("developer", {"env": ["NOEQUALS"]}, InvalidInput, "expected KEY=VALUE"),
        ("developer", {"env": ["1BAD=x"]}, InvalidInput, "invalid env var name '1BAD'"),
        ("developer", {"env": ["K=line\nbreak"]}, InvalidInput, "must be one line"),
        (
            "developer",
            {"provider": "nope", "known_providers": {"mock_cli"}},
            NotFound,
            "unknown provider 'nope'",
        ),
        ("developer", {"provider": "../x"}, InvalidInput, "provider name"),
    ],
)
def test_refused_sources_and_options_change_nothing(
    home: CaoHome, source: str, kwargs: dict, error: type[CaoError], message: str
) -> None:
    install("reviewer", home)
    before = snapshot(home.root)
    with pytest.raises(error, match=message) as info:
        install(source, home, **kwargs)
    assert "\n" not in str(info.value)
    assert snapshot(home.root) == before


def test_failures_on_an_empty_home_create_nothing(home: CaoHome, tmp_path: Path) -> None:
    source = tmp_path / "x.md"
    source.write_text("---\ndescription: nameless\n---\n")
    with pytest.raises(InvalidInput):
        install(str(source), home, env=["A=1"])
    assert snapshot(home.root) == {}


def test_oversized_file_is_refused_without_reading_it_all(home: CaoHome, tmp_path: Path) -> None:
    source = tmp_path / "huge.md"
    with open(source, "wb") as fh:
        fh.write(b"---\nname: huge\n---\n")
        fh.truncate(64 * 1024 * 1024)  # sparse: reading it all would be slow and visible
    with pytest.raises(InvalidInput, match="larger than 262144 bytes"):
        install(str(source), home)
    assert snapshot(home.root) == {}


def test_a_write_failure_leaves_no_partial_files(home: CaoHome, tmp_path: Path) -> None:
    if os.geteuid() == 0:
        # root ignores directory permissions; make the context path a file so mkdir fails instead.
        home.root.mkdir(parents=True, exist_ok=True)
        home.agent_context.write_text("not a folder")
    else:
        home.agent_context.mkdir(parents=True)
        home.agent_context.chmod(0o500)
    before = snapshot(home.root)
    try:
        with pytest.raises(InvalidInput, match="cannot write to"):
            install(str(FIXTURE), home)
    finally:
        if home.agent_context.is_dir():
            home.agent_context.chmod(0o700)
    assert snapshot(home.root) == before


def test_concurrent_installs_keep_every_key_of_the_managed_env(home: CaoHome) -> None:
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(20) as pool:
        list(pool.map(lambda n: install(str(FIXTURE), home, env=[f"KEY_{n}=value-{n}"]), range(20)))
    assert read_env(home) == {f"KEY_{n}": f"value-{n}" for n in range(20)}


def test_a_value_with_a_line_separator_stays_one_value(home: CaoHome) -> None:
    tricky = "first\u2028INJECTED=1\x0cx\x1dy"
    install(str(FIXTURE), home, env=[f"TRICKY={tricky}"])
    assert read_env(home) == {"TRICKY": tricky}


def test_a_managed_env_open_to_others_is_made_private(home: CaoHome) -> None:
    install(str(FIXTURE), home, env=["SECRET=s"])
    env_file = home.root / ".env"
    env_file.chmod(0o644)
    assert read_env(home) == {"SECRET": "s"}
    assert env_file.stat().st_mode & 0o777 == 0o600
