"""Profile values turned into JSON, MCP server names checked, the ``mcpServers`` file."""

from __future__ import annotations

import json
import types

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cao_hookspecs.allowed_tools import MCP_SERVER_NAME
from cao_launch_core.json_config import check_server_name, mcp_config, plain, stdio_typed

SCALARS = st.none() | st.booleans() | st.integers() | st.text(max_size=10)
JSON = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=15)


def frozen(value):
    """``value`` as a record holds it: read-only mappings, tuples."""
    if isinstance(value, dict):
        return types.MappingProxyType({key: frozen(item) for key, item in value.items()})
    if isinstance(value, list):
        return tuple(frozen(item) for item in value)
    return value


@given(JSON)
def test_plain_undoes_what_a_record_does_to_json_values(value):
    assert plain(frozen(value)) == value
    assert json.loads(json.dumps(plain(frozen(value)))) == value


def test_plain_gives_string_keys_and_fresh_containers():
    inner = {"a": [1]}
    copied = plain({1: inner})
    assert copied == {"1": {"a": [1]}}
    copied["1"]["a"].append(2)
    assert inner == {"a": [1]}


@given(st.text(max_size=70))
def test_a_server_name_is_accepted_exactly_when_the_contract_allows_it(name):
    if MCP_SERVER_NAME.match(name):
        assert check_server_name(name) == name
    else:
        with pytest.raises(ValueError) as caught:
            check_server_name(name)
        assert str(caught.value) == f"MCP server name {name!r} must be 1-64 letters, digits, '_', '-' or '.'"


@given(st.dictionaries(st.from_regex(r"[A-Za-z0-9_.-]{1,8}", fullmatch=True), JSON, max_size=3))
def test_the_mcp_file_holds_the_servers_as_given(servers):
    text = mcp_config({name: frozen(entry) for name, entry in servers.items()})
    assert json.loads(text) == {"mcpServers": servers}
    assert text == json.dumps({"mcpServers": servers}, indent=2)


@given(JSON)
def test_stdio_typed_marks_only_command_entries_without_a_type(entry):
    typed = stdio_typed(frozen(entry))
    if isinstance(entry, dict) and "command" in entry and "type" not in entry:
        assert typed == {**entry, "type": "stdio"}
    else:
        assert typed == entry


def test_stdio_typed_keeps_a_type_that_is_given():
    assert stdio_typed({"command": "x", "type": "sse"}) == {"command": "x", "type": "sse"}
    assert stdio_typed({"url": "http://127.0.0.1:9"}) == {"url": "http://127.0.0.1:9"}
