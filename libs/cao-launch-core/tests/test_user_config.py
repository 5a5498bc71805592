"""The user's config read, merged under cao's settings and linked into a private folder."""

from __future__ import annotations

import copy
import os
import types

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cao_launch_core.user_config import link_user_files, merge, read_config_text, read_json_object

KEYS = st.sampled_from(["a", "b", "c", "d"])
TABLES = st.recursive(st.integers() | st.text(max_size=3),
                      lambda inner: st.dictionaries(KEYS, inner, max_size=3), max_leaves=10)
TOP = st.dictionaries(KEYS, TABLES, max_size=4)


def test_a_json_object_is_read_and_anything_else_counts_as_empty(tmp_path):
    good = tmp_path / "good.json"
    good.write_text('{"theme": "dark"}', encoding="utf-8")
    assert read_json_object(good) == {"theme": "dark"}
    for name, text in (("list.json", "[1]"), ("broken.json", "{"), ("binary.json", None)):
        path = tmp_path / name
        if text is None:
            path.write_bytes(b"\xff\xfe")
        else:
            path.write_text(text, encoding="utf-8")
        assert read_json_object(path) == {}
    assert read_json_object(tmp_path / "missing.json") == {}
    assert read_json_object(tmp_path) == {}


def test_config_text_is_read_none_when_missing_and_an_error_naming_it_when_unreadable(tmp_path):
    path = tmp_path / "config.toml"
    assert read_config_text(path, "the Acme config") is None
    path.write_text("model = 'x'\n", encoding="utf-8")
    assert read_config_text(path, "the Acme config") == "model = 'x'\n"
    with pytest.raises(ValueError, match=rf"^cannot read the Acme config {tmp_path}: \[Errno 21\] Is a directory"):
        read_config_text(tmp_path, "the Acme config")


@given(TOP, TOP)
def test_merge_keeps_every_key_and_lets_over_win(base, over):
    before = (copy.deepcopy(base), copy.deepcopy(over))
    merged = merge(base, over)
    assert (base, over) == before
    assert set(merged) == set(base) | set(over)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            assert merged[key] == merge(base[key], value)
        else:
            assert merged[key] == value
    for key in set(base) - set(over):
        assert merged[key] == base[key]


def test_merge_reads_read_only_tables_and_returns_fresh_dicts():
    base = types.MappingProxyType({"ui": types.MappingProxyType({"theme": "dark", "size": 1})})
    merged = merge(base, {"ui": {"size": 2}, "new": {"x": 1}})
    assert merged == {"ui": {"theme": "dark", "size": 2}, "new": {"x": 1}}
    assert type(merged["ui"]) is dict
    merged["ui"]["theme"] = "light"
    assert base["ui"]["theme"] == "dark"


def test_existing_user_entries_are_linked_and_nothing_else(tmp_path):
    user, private = tmp_path / "user", tmp_path / "runtime" / "private"
    (user / "agents").mkdir(parents=True)
    (user / "credentials.json").write_text("{}", encoding="utf-8")
    assert link_user_files(user, private, ("credentials.json", "agents", "missing")) == ["credentials.json",
                                                                                        "agents"]
    assert (private / "credentials.json").resolve() == (user / "credentials.json").resolve()
    assert os.readlink(private / "agents") == str(user / "agents")
    assert not os.path.lexists(private / "missing")
    assert oct(private.stat().st_mode & 0o777) == oct(0o700)
    # A second call finds the links in place and leaves them alone.
    assert link_user_files(user, private, ("credentials.json", "agents")) == []


def test_an_entry_the_private_folder_has_is_kept(tmp_path):
    user, private = tmp_path / "user", tmp_path / "private"
    user.mkdir()
    private.mkdir()
    (user / "settings.json").write_text("user", encoding="utf-8")
    (private / "settings.json").write_text("ours", encoding="utf-8")
    assert link_user_files(user, private, ("settings.json",)) == []
    assert (private / "settings.json").read_text(encoding="utf-8") == "ours"


def test_no_user_folder_or_the_private_folder_itself_links_nothing(tmp_path):
    assert link_user_files(tmp_path / "none", tmp_path / "private", ("a",)) == []
    assert not (tmp_path / "private").exists()
    (tmp_path / "a").write_text("x", encoding="utf-8")
    assert link_user_files(tmp_path, tmp_path, ("a",)) == []
