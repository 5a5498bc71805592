"""The local store's editing, profile search and the folder settings, on a real cao home (no server)."""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cao_kernel.dir_settings import DirSettings, check_dir
from cao_kernel.errors import Conflict, InvalidInput, NotFound
from cao_kernel.home import CaoHome
from cao_kernel.profiles.edit import delete_profile, save_profile, search_rows

WORDS = st.text(alphabet="abcdefgh XYZ-_,", max_size=30)
ROW = st.fixed_dictionaries({"name": st.from_regex(r"[a-z]{1,8}", fullmatch=True), "description": WORDS,
                             "capabilities": st.lists(WORDS, max_size=3), "tags": st.lists(WORDS, max_size=3),
                             "role": st.none() | WORDS, "source": st.just("local")})


@settings(max_examples=200, deadline=None)
@given(rows=st.lists(ROW, max_size=8, unique_by=lambda r: r["name"]), query=WORDS,
       limit=st.integers(min_value=1, max_value=10))
def test_search_ranks_by_words_matched_and_never_more_than_asked(rows, query, limit):
    hits = search_rows(rows, query, limit)
    assert len(hits) <= limit
    scores = [hit["score"] for hit in hits]
    assert scores == sorted(scores, reverse=True)
    for hit in hits:
        assert hit["coverage"] >= 1 and hit["coverage"] <= hit["score"] < hit["coverage"] + 1
    coverages = [hit["coverage"] for hit in hits]
    assert coverages == sorted(coverages, reverse=True)  # more words matched always ranks first


def test_store_edits_stay_in_the_local_store(tmp_path):
    home = CaoHome(tmp_path)
    text = "---\nname: ok\n---\nbody\n"
    save_profile(home, "ok", text, replace=False)
    with pytest.raises(Conflict):
        save_profile(home, "ok", text, replace=False)
    with pytest.raises(NotFound):
        save_profile(home, "other", "---\nname: other\n---\n", replace=True)
    for name in ("../ok", "a/b", "..", "", "x" * 65):
        with pytest.raises(InvalidInput):
            save_profile(home, name, text, replace=False)
    delete_profile(home, "ok")
    with pytest.raises(NotFound):
        delete_profile(home, "ok")
    assert sorted(p.name for p in home.agent_store.iterdir()) == [".store.lock"]


@settings(max_examples=200, deadline=None)
@given(path=st.text(max_size=40))
def test_a_folder_setting_is_absolute_one_line_and_not_the_root(path):
    try:
        kept = check_dir(path, what="extra_dirs", must_exist=False)
    except InvalidInput as exc:
        assert "extra_dirs" in str(exc)
        return
    assert os.path.isabs(kept) and kept != os.sep and kept == os.path.normpath(kept)
    assert not any(ord(c) < 32 for c in kept)


def test_folder_settings_refuse_whole_changes(tmp_path):
    home = CaoHome(tmp_path / "home")
    extra = tmp_path / "extra"
    extra.mkdir()
    dirs = DirSettings(home, lambda: {"kiro_cli": ["~/.kiro/agents"]})
    assert dirs.profile_dirs() == {"kiro_cli": ["~/.kiro/agents"]}
    dirs.set_agent_dirs({"kiro_cli": str(tmp_path / "kiro")}, [str(extra)], None)
    assert dirs.profile_dirs() == {"kiro_cli": [str(tmp_path / "kiro")], "extra": [str(extra)]}
    # The provider's old folder is no longer configured, so it cannot be switched off; its new one can,
    # in any spelling.
    with pytest.raises(InvalidInput, match="not a configured agent folder"):
        dirs.set_agent_dirs(None, None, ["~/.kiro/agents"])
    dirs.set_agent_dirs(None, None, [str(tmp_path / "kiro" / ".." / "kiro")])
    assert "kiro_cli" not in dirs.profile_dirs()
    dirs.set_agent_dirs(None, None, [])
    assert dirs.profile_dirs()["extra"] == [str(extra)]
    before = dirs.path.read_text()
    with pytest.raises(InvalidInput, match="not a configured agent folder"):
        dirs.set_agent_dirs(None, [str(extra)], ["/elsewhere"])
    with pytest.raises(InvalidInput, match="unknown provider"):
        dirs.set_agent_dirs({"nope": "/x"}, None, None)
    assert dirs.path.read_text() == before
    dirs.set_agent_dirs(None, None, [str(extra)])
    assert "extra" not in dirs.profile_dirs()
