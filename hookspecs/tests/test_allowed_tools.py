"""``read_allowed_tools``: cao's forms sorted out, everything else handed back in order."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cao_hookspecs.allowed_tools import FS_CATEGORIES, read_allowed_tools

CATEGORIES = ("execute_bash", "fs_read", "fs_list", "fs_write", "web_fetch")


def test_each_form_lands_in_its_place():
    read = read_allowed_tools([" execute_bash ", "fs_*", "@builtin", "@git.hub", "discovery", "", "Bash(git *)",
                               "shell"], CATEGORIES)
    assert read.categories == {"execute_bash", *FS_CATEGORIES}
    assert read.servers == {"git.hub"} and read.builtin is True
    assert read.other == ("Bash(git *)", "shell")


def test_a_category_the_provider_does_not_map_is_handed_back():
    assert read_allowed_tools(["web_fetch"], ("execute_bash",)).other == ("web_fetch",)


@pytest.mark.parametrize("item", ["@", "@bad name", "@" + "x" * 65])
def test_an_at_entry_without_a_server_name_is_refused_naming_it(item):
    with pytest.raises(ValueError, match=r"'@' must be followed by an MCP server name"):
        read_allowed_tools([item], CATEGORIES)


@given(st.lists(st.text(max_size=20), max_size=8))
def test_any_list_is_sorted_or_refused_and_nothing_is_lost(items):
    try:
        read = read_allowed_tools(items, CATEGORIES)
    except ValueError as exc:
        assert any(i.strip().startswith("@") and i.strip() != "@builtin" for i in items), exc
        return
    for raw in items:
        item = raw.strip()
        assert (not item or item == "discovery" or item == "@builtin" or item in read.other
                or item in read.categories or item[1:] in read.servers
                or (item == "fs_*" and set(FS_CATEGORIES) <= read.categories))
