"""What only the Kiro CLI provider does at launch: ``--legacy-ui`` on request, its provider record and
what its version parser reads. The agent file, the tool list, the refusals, the wrapper, the entry
point and the version parser's properties are shared with the Q CLI provider and tested through both
in libs/cao-agent-file-core."""

from __future__ import annotations

import pytest

from cao_hookspecs import AgentProfile, LaunchContext, Terminal, TerminalStatus
from cao_provider_kiro_cli.launch import BINARY_ENV, LEGACY_UI_ENV, launch
from cao_provider_kiro_cli.provider import TESTED_VERSIONS, kiro_cli_provider, parse_version


def legacy_launch(tmp_path, value: str):
    """``launch`` for a ``developer`` terminal with ``CAO_KIRO_CLI_LEGACY_UI=value``, HOME in tmp_path."""
    program = tmp_path / "kiro-cli"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    terminal = Terminal(id="0123abcd", name="developer-1a2b", session_name="cao-x", provider="kiro_cli",
                        agent_profile="developer")
    env = {"HOME": str(tmp_path / "home"), BINARY_ENV: str(program), LEGACY_UI_ENV: value}
    return launch(LaunchContext(terminal=terminal, profile=AgentProfile(name="developer"), env=env,
                                working_directory=str(tmp_path), runtime_dir=str(tmp_path / "runtime")))


def test_legacy_ui_on_request(tmp_path):
    plan = legacy_launch(tmp_path, "1")
    assert plan.argv[5:] == ("chat", "--trust-all-tools", "--legacy-ui", "--agent", "cao-developer-0123abcd")
    assert "--legacy-ui" not in legacy_launch(tmp_path, "0").argv
    with pytest.raises(ValueError, match=f"{LEGACY_UI_ENV}='yes'"):
        legacy_launch(tmp_path, "yes")


def test_provider_record():
    provider = kiro_cli_provider()
    assert provider.name == "kiro_cli" and provider.binary == "kiro-cli" and provider.binary_env == BINARY_ENV
    assert provider.exit_command == "/quit"
    assert "curl -fsSL https://cli.kiro.dev/install | bash" in provider.install_hint
    assert provider.tested_versions == TESTED_VERSIONS == ("1.20.0", "2.25.0")
    assert [d.name for d in provider.startup_dialogs] == ["trust all tools consent"]
    assert provider.startup_dialogs[0].keys == ("Down", "Enter")
    assert provider.agent_dirs == ("~/.kiro/agents",)
    assert provider.model_endpoint is not None and provider.model_endpoint({"HOME": "/x"}) is None
    assert provider.capabilities.enter_count == 1
    assert provider.detect_status("").status is TerminalStatus.UNKNOWN


def test_version_output_is_parsed():
    assert parse_version("kiro-cli 1.20.0\n") == "1.20.0"
    assert parse_version("kiro-cli 2.25.0") == "2.25.0"
    assert parse_version("q 1.17.0") is None
    assert parse_version("") is None

