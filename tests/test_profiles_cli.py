"""``cao install`` and ``cao profile list|show|validate`` through click's CliRunner."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from cao_hookspecs import ProviderSpec, StatusReport, hookimpl
from cao_kernel.cli import cli
from cao_testkit.files import snapshot

FIXTURE = Path(__file__).parent / "fixtures" / "profiles" / "data_analyst.md"


def run(*args: str, kernel: Any = None) -> Result:
    obj = {"kernel": kernel} if kernel is not None else None
    return CliRunner().invoke(cli, ["--no-plugins", *args] if kernel is None else list(args), obj=obj)


def test_install_from_a_path_prints_check_lines(cao_home: Path) -> None:
    result = run("install", str(FIXTURE))
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        "✓ Copied agent from file to local store",
        "✓ Agent 'data_analyst' installed successfully",
        f"✓ Profile file: {cao_home / 'agent-store' / 'data_analyst.md'}",
        f"✓ Context file: {cao_home / 'agent-context' / 'data_analyst.md'}",
    ]
    assert (cao_home / "agent-store" / "data_analyst.md").read_bytes() == FIXTURE.read_bytes()


def test_install_by_name_with_env_and_unresolved_warning(cao_home: Path, tmp_path: Path) -> None:
    source = tmp_path / "svc.md"
    source.write_text("---\nname: svc\nprovider: claude_code\n---\n${TOKEN} ${MISSING}\n")
    assert run("install", str(source)).exit_code == 0
    result = run("install", "svc", "--env", "TOKEN=abc")
    assert result.exit_code == 0, result.output
    assert "✓ Copied agent" not in result.stdout  # already in the local store
    assert f"✓ Set 1 env var(s) in {cao_home / '.env'}" in result.stdout
    assert "✓ Provider: claude_code" in result.stdout
    assert result.stderr.startswith("⚠ Unresolved env var(s) in profile: MISSING.")
    assert (cao_home / ".env").read_text() == "TOKEN=abc\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["../evil"], "Error: ../evil: a profile file must end with .md"),
        (["nobody"], "Error: agent profile 'nobody' not found (looked in: local "),
        (
            ["http://github.com/o/r/a.md"],
            "Error: refused http://github.com/o/r/a.md: plain http is not allowed",
        ),
        (
            ["https://example.com/a.md"],
            "Error: refused https://example.com/a.md: host 'example.com' is not allowed",
        ),
        (["developer", "--env", "oops"], "Error: --env 'oops': expected KEY=VALUE"),
        (["developer", "--provider", "nope"], "Error: unknown provider 'nope' (known: none installed)"),
    ],
)
def test_install_failures_exit_1_with_one_error_line_and_change_nothing(
    cao_home: Path, args: list[str], message: str
) -> None:
    assert run("install", "reviewer").exit_code == 0
    before = snapshot(cao_home)
    result = run("install", *args)
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.startswith(message) and result.stderr.count("\n") == 1
    assert snapshot(cao_home) == before


def test_install_rejects_a_malformed_file(cao_home: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.md"
    bad.write_text("---\nname: x\ntags: nope\n---\n")
    result = run("install", str(bad))
    assert result.exit_code == 1
    assert result.stderr == f"Error: {bad}: field 'tags' must be a list of strings (got str)\n"
    assert snapshot(cao_home) == {}


def test_profile_list_table_and_json(cao_home: Path) -> None:
    store = cao_home / "agent-store"
    store.mkdir()
    (store / "broken.md").write_text("---\nname: broken\nengine: v9\n---\n")
    (store / "developer.md").write_text("---\nname: developer\ndescription: my own developer\n---\nhi\n")
    table = run("profile", "list")
    assert table.exit_code == 0, table.output
    lines = table.stdout.splitlines()
    assert lines[0].split() == ["NAME", "SOURCE", "DESCRIPTION"]
    rows = {line.split()[0]: line for line in lines[1:]}
    assert list(rows) == ["broken", "code_supervisor", "developer", "reviewer"]
    assert "local" in rows["broken"] and "(not loadable)" in rows["broken"]
    assert "my own developer [also in: built-in]" in rows["developer"]
    assert rows["reviewer"].split()[1] == "built-in"

    listed = run("profile", "list", "--json")
    assert listed.exit_code == 0
    data = {row["name"]: row for row in json.loads(listed.stdout)}
    assert data["broken"]["loadable"] is False and "field 'engine'" in data["broken"]["error"]
    assert data["developer"]["duplicated_in"] == ["built-in"]
    assert data["code_supervisor"] | {"path": None} == {
        "name": "code_supervisor",
        "source": "built-in",
        "loadable": True,
        "description": data["code_supervisor"]["description"],
        "capabilities": data["code_supervisor"]["capabilities"],
        "tags": ["supervisor", "orchestration"],
        "role": "supervisor",
        "duplicated_in": [],
        "path": None,
        "error": None,
    }


def test_profile_show_by_name_and_path(cao_home: Path) -> None:
    shown = run("profile", "show", "reviewer")
    assert shown.exit_code == 0
    assert shown.stdout.startswith("# source: built-in  path: ")
    assert "\n---\nname: reviewer\n" in shown.stdout and "# Reviewer" in shown.stdout
    as_json = json.loads(run("profile", "show", str(FIXTURE), "--json").stdout)
    assert as_json["name"] == "data_analyst" and as_json["source"] == "custom"
    assert as_json["mcpServers"]["cao-mcp-server"]["command"] == "uvx"
    assert as_json["system_prompt"].startswith("# Data analyst")
    missing = run("profile", "show", "nobody")
    assert missing.exit_code == 1 and missing.stderr.startswith("Error: agent profile 'nobody' not found")
    traversal = run("profile", "show", "..")
    assert traversal.exit_code == 1 and "must not contain" in traversal.stderr


def test_profile_validate(cao_home: Path, tmp_path: Path) -> None:
    good = run("profile", "validate", str(FIXTURE))
    assert good.exit_code == 0 and good.stdout == f"✓ Profile 'data_analyst' is valid (custom: {FIXTURE})\n"
    assert run("profile", "validate", "developer").exit_code == 0
    bad = tmp_path / "bad.md"
    bad.write_text("---\nname: bad\npermissionMode: yolo\n---\n")
    result = run("profile", "validate", str(bad))
    assert result.exit_code == 1
    assert result.stderr == (
        f"Error: {bad}: field 'permissionMode' 'yolo' is not one of default, acceptEdits, plan, auto,"
        " bypassPermissions\n"
    )


class AgentDirsProvider:
    """A provider plugin whose only job here is to contribute an agent folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    @hookimpl
    def cao_register_providers(self) -> list[ProviderSpec]:
        return [
            ProviderSpec(
                name="folder_cli",
                binary="true",
                launch=lambda ctx: None,
                detect_status=lambda screen: StatusReport(status="unknown"),
                extract_last_message=lambda text: text,
                agent_dirs=(str(self.folder),),
            )
        ]


def test_provider_agent_dirs_come_from_the_kernel(
    kernel: Any, register_plugin: Any, tmp_path: Path, cao_home: Path
) -> None:
    folder = tmp_path / "agents"
    (folder / "folder_worker").mkdir(parents=True)
    (folder / "folder_worker" / "agent.md").write_text(
        "---\ndescription: from a provider folder\n---\nwork\n"
    )
    with register_plugin(kernel, AgentDirsProvider(folder)):
        listed = json.loads(run("profile", "list", "--json", kernel=kernel).stdout)
        row = next(r for r in listed if r["name"] == "folder_worker")
        assert (row["source"], row["description"]) == ("folder_cli", "from a provider folder")
        installed = run("install", "folder_worker", "--provider", "folder_cli", kernel=kernel)
        assert installed.exit_code == 0, installed.output
        assert "✓ Copied agent from folder_cli to local store" in installed.stdout
        assert "✓ Provider: folder_cli" in installed.stdout
    assert (cao_home / "agent-store" / "folder_worker.md").read_text().endswith("work\n")
