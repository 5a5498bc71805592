"""What only the Q CLI provider does at launch: its provider record and what its version parser reads.
The agent file, the tool list, the refusals, the wrapper, the entry point and the version parser's
properties are shared with the Kiro CLI provider and tested through both in libs/cao-agent-file-core."""

from __future__ import annotations

from cao_hookspecs import TerminalStatus
from cao_provider_q_cli.launch import BINARY_ENV
from cao_provider_q_cli.provider import TESTED_VERSIONS, parse_version, q_cli_provider


def test_provider_record():
    provider = q_cli_provider()
    assert provider.name == "q_cli" and provider.binary == "q" and provider.binary_env == BINARY_ENV
    assert provider.exit_command == "/quit"
    assert "not published on npm, PyPI or Debian" in provider.install_hint
    assert provider.tested_versions == TESTED_VERSIONS
    assert provider.startup_dialogs == ()
    assert provider.model_endpoint is not None and provider.model_endpoint({"HOME": "/x"}) is None
    assert provider.capabilities.enter_count == 1
    assert provider.detect_status("").status is TerminalStatus.UNKNOWN


def test_version_output_is_parsed():
    assert parse_version("q 1.17.0\n") == "1.17.0"
    assert parse_version("q 1.12.4") == "1.12.4"
    assert parse_version("kiro-cli 1.20.0") is None
    assert parse_version("") is None

