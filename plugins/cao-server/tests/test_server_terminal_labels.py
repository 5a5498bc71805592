"""Upstream's terminal labels (description, group, metadata), sibling discovery and output ranges, on a
real server over real tmux with the mock agent; labels survive a server restart."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.tmux

MISSING_ID = "0badf00d"


def patch(api, terminal_id, field, value):
    return api.request("PATCH", f"/terminals/{terminal_id}/{field}", json={field: value})


def test_labels_are_stored_shown_and_cleared(api, make_terminal):
    terminal = make_terminal(session="labels")
    tid = terminal["id"]
    shown = api.get(f"/terminals/{tid}").json()
    assert (shown["description"], shown["group"], shown["metadata"]) == (None, None, None)

    answer = patch(api, tid, "description", "  fixes\nthe build\x07 ")
    assert answer.status_code == 200, answer.text
    assert answer.json()["description"] == "fixes the build"
    assert patch(api, tid, "group", ["acme", "web", "ci"]).json()["group"] == ["acme", "web", "ci"]
    meta = {"ticket": 42, "tags": ["a"], "nested": {"ok": True}}
    assert patch(api, tid, "metadata", meta).json()["metadata"] == meta

    listed = api.get("/sessions/labels/terminals").json()[0]
    labels = (listed["description"], listed["group"], listed["metadata"])
    assert labels == ("fixes the build", ["acme", "web", "ci"], meta)
    # Whole-value replace, and null (or an empty value) clears.
    assert patch(api, tid, "metadata", {"only": 1}).json()["metadata"] == {"only": 1}
    assert patch(api, tid, "group", []).json()["group"] is None
    assert patch(api, tid, "description", None).json()["description"] is None


def test_label_errors_are_upstreams(api, make_terminal, cao_home):
    tid = make_terminal()["id"]
    bad = [
        ("description", "x" * 65), ("description", 5), ("group", ["x" * 129]), ("group", ["g"] * 17),
        ("group", [1]), ("group", "acme"), ("metadata", {"big": "x" * 17000}), ("metadata", [1, 2]),
    ]
    for field, value in bad:
        answer = patch(api, tid, field, value)
        assert answer.status_code == 422, (field, answer.text)
    for field in ("description", "group", "metadata"):
        # The field is required: leaving it out is not clearing it.
        assert api.request("PATCH", f"/terminals/{tid}/{field}", json={}).status_code == 422
        assert patch(api, MISSING_ID, field, None).status_code == 404
        assert patch(api, "NOT-AN-ID", field, None).status_code == 422
    assert not (cao_home / "db" / "terminal-labels.json").exists()


def test_siblings_share_a_group_prefix_within_the_session(api, make_terminal):
    lead = make_terminal(session="team")["id"]
    other_session = make_terminal(session="elsewhere")["id"]
    mate = api.post("/sessions/team/terminals", json={"agent_profile": "developer"}).json()["id"]
    loner = api.post("/sessions/team/terminals", json={"agent_profile": "developer"}).json()["id"]
    patch(api, lead, "group", ["acme", "web", "ci"])
    patch(api, mate, "group", ["acme", "web", "docs"])
    patch(api, other_session, "group", ["acme", "web", "ci"])
    patch(api, loner, "group", ["other"])

    def ids(**params):
        answer = api.get(f"/terminals/{lead}/siblings", params=params)
        assert answer.status_code == 200, answer.text
        return {row["id"] for row in answer.json()}

    assert ids() == set()  # the whole group: nobody else is in acme/web/ci in this session
    assert ids(depth=2) == {mate}
    assert ids(depth=2, cross_session="true") == {mate, other_session}
    assert ids(depth=99, cross_session="true") == {other_session}  # clamped to the group's length
    row = api.get(f"/terminals/{lead}/siblings", params={"depth": 1}).json()[0]
    assert row["status"] and row["group"] == ["acme", "web", "docs"]
    assert api.get(f"/terminals/{loner}/siblings", params={"depth": 1}).json() == []
    assert api.get(f"/terminals/{lead}/siblings", params={"depth": 0}).status_code == 422
    assert api.get(f"/terminals/{MISSING_ID}/siblings").status_code == 404
    patch(api, loner, "group", None)
    assert api.get(f"/terminals/{loner}/siblings").json() == []  # no group, no discovery


def test_output_range_reads_bytes_of_the_scrollback(api, make_terminal):
    tid = make_terminal()["id"]
    full = api.get(f"/terminals/{tid}/output", params={"mode": "full"}).json()["output"].encode()
    answer = api.get(f"/terminals/{tid}/output/range", params={"offset": 0, "length": 5}).json()
    assert answer == {"terminal_id": tid, "offset": 0, "length": 5, "data": full[:5].decode(errors="replace")}
    past = api.get(f"/terminals/{tid}/output/range", params={"offset": 10**9, "length": 10}).json()
    assert past["data"] == ""
    for params in ({"offset": -1, "length": 1}, {"offset": 0, "length": 0},
                   {"offset": 0, "length": 1024 * 1024 + 1}, {"offset": 0}, {"length": 1}):
        assert api.get(f"/terminals/{tid}/output/range", params=params).status_code == 422, params
    missing = api.get(f"/terminals/{MISSING_ID}/output/range", params={"offset": 0, "length": 1})
    assert missing.status_code == 404


def test_memory_context_is_empty_text(api, make_terminal):
    tid = make_terminal()["id"]
    answer = api.get(f"/terminals/{tid}/memory-context")
    assert answer.status_code == 200 and answer.text == ""
    assert answer.headers["content-type"].startswith("text/plain")
    assert api.get(f"/terminals/{MISSING_ID}/memory-context").status_code == 404


def test_labels_survive_a_server_restart(tmux, cao_home, workdir):
    from cao_testkit.kernels import build_kernel
    from cao_testkit.openapi import ApiClient
    from cao_testkit.serve import serve_in_thread

    plugins = ("tmux", "mock_cli", "inbox_sqlite", "mcp")
    with serve_in_thread(build_kernel(cao_home, tmux.socket_path, *plugins)) as first:
        api = ApiClient(first)
        body = {"agent_profile": "developer", "working_directory": workdir}
        tid = api.post("/sessions", json=body).json()["id"]
        patch(api, tid, "group", ["keep"])
        patch(api, tid, "metadata", {"k": "v"})
        api.close()
    with serve_in_thread(build_kernel(cao_home, tmux.socket_path, *plugins)) as second:
        api = ApiClient(second)
        shown = api.get(f"/terminals/{tid}").json()
        assert (shown["group"], shown["metadata"]) == (["keep"], {"k": "v"})
        api.delete(f"/terminals/{tid}")
        api.close()


METADATA = st.dictionaries(st.text(max_size=20), st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=10), max_size=5)


def test_any_label_is_kept_exactly_or_refused(api, make_terminal):
    tid = make_terminal()["id"]  # one terminal for every example: starting one per example is slow

    @settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(meta=METADATA, description=st.text(max_size=80))
    def check(meta, description):
        answer = patch(api, tid, "metadata", meta)
        assert answer.status_code == 200, answer.text
        assert api.get(f"/terminals/{tid}").json()["metadata"] == (json.loads(json.dumps(meta)) or None)
        answer = patch(api, tid, "description", description)
        assert answer.status_code in (200, 422), answer.text
        if answer.status_code == 200:
            kept = answer.json()["description"]
            assert kept is None or (len(kept) <= 64 and "\n" not in kept and kept == kept.strip())

    check()
