"""cao's allowed-tools vocabulary mapped to an agent file's ``tools``, and refusals naming the CLI."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cao_agent_file_core.tools import agent_tools


@pytest.mark.parametrize("cli", ["Kiro", "Q"])
def test_allowed_tools_in_caos_vocabulary(cli):
    assert agent_tools(None, cli=cli) == ["*"]
    assert agent_tools(["*", "fs_read"], cli=cli) == ["*"]
    assert agent_tools(None, ["fs_read", "@git"], cli=cli) == ["fs_read", "@git"]
    developer = ["@builtin", "fs_*", "execute_bash", "web_fetch", "@cao-mcp-server"]
    assert agent_tools(developer, cli=cli) == [
        "@builtin", "fs_read", "fs_write", "execute_bash", "web_fetch", "@cao-mcp-server"]
    assert agent_tools(["@cao-mcp-server", "fs_read", "fs_list"], cli=cli) == ["@cao-mcp-server", "fs_read"]
    assert agent_tools(["@git/git_status", "discovery", ""], cli=cli) == ["@git/git_status"]
    assert agent_tools([], cli=cli) == []
    for bad, words in (("--trust-all-tools", "command-line option"), ("fs read", f"not a {cli} tool name"),
                       ("@", f"not a {cli} tool name"), ("$(rm -rf /)", f"not a {cli} tool name")):
        with pytest.raises(ValueError, match=words):
            agent_tools([bad], cli=cli)


def test_profile_tools_are_checked_too():
    with pytest.raises(ValueError, match="profile tools 'rm -rf' is not a Kiro tool name"):
        agent_tools(None, ["fs_read", "rm -rf"], cli="Kiro")


@given(st.lists(st.text(max_size=20), max_size=8), st.sampled_from(["Kiro", "Q"]))
def test_agent_tools_gives_only_tool_names_or_refuses(allowed, cli):
    try:
        tools = agent_tools(allowed, cli=cli)
    except ValueError as exc:
        assert "tool" in str(exc)
        return
    assert len(tools) == len(set(tools))
    assert not any(t.startswith("-") or any(c.isspace() for c in t) for t in tools)
