"""Upstream's profile authoring routes, skills and the memory setting on a real server (real uvicorn, real
HTTP, a real kernel and cao home); every answer is checked against the OpenAPI document."""

from __future__ import annotations

import threading

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.tmux

PROFILE = ("---\nname: {name}\ndescription: {description}\ncapabilities: [{caps}]\n---\n"
           "# {name}\nBody ${{TOKEN}}\n")


def doc(name: str, description: str = "writes code", caps: str = "python") -> str:
    return PROFILE.format(name=name, description=description, caps=caps)


def test_create_read_replace_delete_a_profile(api, cao_home):
    created = api.post("/agents/profiles", json={"name": "scribe", "content": doc("scribe")})
    assert created.status_code == 201, created.text
    assert created.json() == {"name": "scribe", "warnings": []}
    stored = cao_home / "agent-store" / "scribe.md"
    assert stored.read_text() == doc("scribe")
    assert stored.stat().st_mode & 0o777 == 0o600
    # The source keeps ${TOKEN} as written; the parsed profile is what launches use.
    assert api.get("/agents/profiles/scribe/source").json() == {"name": "scribe", "content": doc("scribe")}
    assert api.get("/agents/profiles/scribe").json()["description"] == "writes code"
    assert "scribe" in {p["name"] for p in api.get("/agents/profiles").json()}

    again = api.post("/agents/profiles", json={"name": "scribe", "content": doc("scribe")})
    assert again.status_code == 409 and "already exists" in again.json()["detail"]

    replaced = api.request("PUT", "/agents/profiles/scribe", json={"content": doc("scribe", "edits docs")})
    assert replaced.status_code == 200, replaced.text
    assert api.get("/agents/profiles/scribe").json()["description"] == "edits docs"

    assert api.delete("/agents/profiles/scribe").status_code == 204
    assert not stored.exists()
    assert api.get("/agents/profiles/scribe").status_code == 404
    assert api.delete("/agents/profiles/scribe").status_code == 404
    assert not [p.name for p in stored.parent.iterdir() if p.name.endswith(".tmp")]


def test_built_in_profiles_are_readable_but_not_writable(api, cao_home):
    source = api.get("/agents/profiles/developer/source").json()
    assert source["name"] == "developer" and "# Developer" in source["content"]
    # Only the local store is edited: a built-in name is not there (a new file would shadow it).
    put = api.request("PUT", "/agents/profiles/developer", json={"content": doc("developer")})
    assert put.status_code == 404
    assert api.delete("/agents/profiles/developer").status_code == 404
    assert not (cao_home / "agent-store" / "developer.md").exists()
    assert api.get("/agents/profiles/nosuch/source").status_code == 404


def test_bad_documents_and_names_leave_nothing_behind(api, cao_home):
    cases = [
        ({"name": "mismatch", "content": doc("other")}, 400, "does not match"),
        ({"name": "broken", "content": "---\nname: broken\ncapabilities: 7\n---\nx"}, 400, "capabilities"),
        ({"name": "unclosed", "content": "---\nname: [unclosed\n---\n"}, 400, ""),
        ({"name": "../escape", "content": doc("escape")}, 400, ""),
        ({"name": "a/b", "content": doc("b")}, 400, ""),
        ({"name": "ok"}, 422, "content"),
        ({"content": doc("ok")}, 422, "name"),
    ]
    for body, status, words in cases:
        answer = api.post("/agents/profiles", json=body)
        assert answer.status_code == status, (body, answer.text)
        assert words in answer.json()["detail"]
    assert api.request("PUT", "/agents/profiles/bad.name", json={"content": doc("x")}).status_code == 400
    huge = api.post("/agents/profiles", json={"name": "huge", "content": doc("huge") + "x" * 300_000})
    assert huge.status_code == 413
    store = cao_home / "agent-store"
    assert not store.exists() or sorted(p.name for p in store.iterdir() if p.name != ".store.lock") == []


def test_concurrent_creators_of_one_name_one_wins(server, cao_home):
    answers: list[int] = []

    def create() -> None:
        with httpx.Client(base_url=server.url, trust_env=False) as http:
            answer = http.post("/agents/profiles", json={"name": "race", "content": doc("race")})
            answers.append(answer.status_code)

    threads = [threading.Thread(target=create) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(answers) == [201] + [409] * 5


def test_validate_schema_and_search(api):
    good = api.post("/agents/profiles/validate", json={"content": doc("fine")}).json()
    assert good == {"valid": True, "messages": []}
    bad = api.post("/agents/profiles/validate", json={"content": "---\nname: x\nengine: warp\n---\n"}).json()
    assert bad["valid"] is False and bad["messages"][0]["severity"] == "error"
    assert bad["messages"][0]["path"] == "engine"
    assert api.post("/agents/profiles/validate", json={}).status_code == 422

    schema = api.get("/agents/profiles/schema").json()
    assert schema["type"] == "object" and "name" in schema["required"]
    assert {"description", "capabilities", "mcpServers"} <= set(schema["properties"])

    sqs = doc("sqs-watch", "monitor sqs queues", "sqs")
    assert api.post("/agents/profiles", json={"name": "sqs-watch", "content": sqs}).status_code == 201
    hits = api.get("/agents/profiles/search", params={"q": "monitor SQS"}).json()
    assert hits[0]["name"] == "sqs-watch" and hits[0]["coverage"] == 2
    assert all("system_prompt" not in hit for hit in hits)
    assert api.get("/agents/profiles/search", params={"q": "zzzz-nothing"}).json() == []
    assert len(api.get("/agents/profiles/search", params={"q": "code", "limit": 1}).json()) <= 1
    assert api.get("/agents/profiles/search").status_code == 422
    # The spelled-out paths are not profile names: no template route takes them.
    for path in ("/agents/profiles/search", "/agents/profiles/schema", "/agents/profiles/validate"):
        assert api.http.delete(path).status_code == 405
        assert "DELETE" not in api.http.request("OPTIONS", path).headers["allow"]
    for limit in ("0", "101", "x"):
        assert api.get("/agents/profiles/search", params={"q": "a", "limit": limit}).status_code == 422


def test_skills_and_memory_setting(api, cao_home):
    built_in = api.get("/skills/cao-supervisor")
    assert built_in.status_code == 200, built_in.text
    assert built_in.json()["name"] == "cao-supervisor"
    assert not built_in.json()["content"].startswith("---")  # the body, frontmatter left out
    own = cao_home / "skills" / "cao-supervisor"
    own.mkdir(parents=True)
    (own / "SKILL.md").write_text("---\nname: cao-supervisor\ndescription: mine\n---\nMy own guide\n")
    assert api.get("/skills/cao-supervisor").json()["content"] == "My own guide\n"
    assert api.get("/skills/nosuch").status_code == 404
    for bad in ("Upper", "a_b", "..", "-x"):
        assert api.get(f"/skills/{bad}").status_code in (400, 404), bad
    assert api.get("/skills/Upper").status_code == 400
    oauth = api.get("/.well-known/oauth-protected-resource")
    assert oauth.status_code == 404 and "API token" in oauth.json()["detail"]
    assert api.get("/settings/memory").json() == {
        "enabled": False, "learning_enabled": False, "settings_readable": True}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.text(min_size=1, max_size=80))
def test_any_name_is_stored_inside_the_store_or_refused(api, cao_home, name):
    answer = api.post("/agents/profiles", json={"name": name, "content": doc("x")})
    # The document names "x": a different valid name is refused for the mismatch, so nothing is written
    # but "x" itself, and never outside the store.
    assert answer.status_code in (201, 400, 409), answer.text
    written = [p for p in cao_home.rglob("*.md") if "agent-store" in p.parts]
    assert {p.name for p in written} <= {"x.md"}
    assert all(p.parent == cao_home / "agent-store" for p in written)


def test_agent_dirs_are_kept_checked_and_honoured(api, cao_home, tmp_path):
    extra = tmp_path / "team-profiles"
    extra.mkdir()
    (extra / "teamlead.md").write_text(doc("teamlead", "leads the team", "planning"))
    shown = api.get("/settings/agent-dirs").json()
    assert shown["extra_dirs"] == [] and shown["disabled_dirs"] == []
    assert api.get("/agents/profiles/teamlead").status_code == 404

    saved = api.post("/settings/agent-dirs", json={"extra_dirs": [str(extra) + "/"]})
    assert saved.status_code == 200, saved.text
    assert saved.json()["extra_dirs"] == [str(extra)]
    assert api.get("/agents/profiles/teamlead").json()["description"] == "leads the team"
    assert "teamlead" in {p["name"] for p in api.get("/agents/profiles").json()}

    off = api.post("/settings/agent-dirs", json={"disabled_dirs": [str(extra)]})
    assert off.json()["disabled_dirs"] == [str(extra)]
    assert api.get("/agents/profiles/teamlead").status_code == 404
    api.post("/settings/agent-dirs", json={"disabled_dirs": []})
    assert api.get("/agents/profiles/teamlead").status_code == 200

    before = (cao_home / "dirs.json").read_text()
    for body in ({"extra_dirs": ["relative/path"]}, {"extra_dirs": [str(tmp_path / "missing")]},
                 {"extra_dirs": ["/tmp/a\nb"]}, {"disabled_dirs": ["/not/configured"]},
                 {"agent_dirs": {"no_such_provider": "/tmp"}},
                 {"extra_dirs": [str(extra)], "disabled_dirs": ["/not/configured"]}):
        refused = api.post("/settings/agent-dirs", json=body)
        assert refused.status_code == 400, (body, refused.text)
    assert api.post("/settings/agent-dirs", json={"extra_dirs": "a,b"}).status_code == 422
    assert (cao_home / "dirs.json").read_text() == before  # nothing half-saved


def test_skill_dirs_are_kept_and_searched(api, cao_home, tmp_path):
    folder = tmp_path / "skills"
    (folder / "team-guide").mkdir(parents=True)
    guide = "---\nname: team-guide\ndescription: d\n---\nHow we work\n"
    (folder / "team-guide" / "SKILL.md").write_text(guide)
    empty = {"skills_dir": str(cao_home / "skills"), "extra_dirs": []}
    assert api.get("/settings/skill-dirs").json() == empty
    assert api.get("/skills/team-guide").status_code == 404
    saved = api.post("/settings/skill-dirs", json={"extra_dirs": [str(folder)]}).json()
    assert saved["extra_dirs"] == [str(folder)]
    assert api.get("/skills/team-guide").json()["content"] == "How we work\n"
    for bad in ("nope", "/", str(tmp_path / "missing")):
        assert api.post("/settings/skill-dirs", json={"extra_dirs": [bad]}).status_code == 400
    assert api.get("/settings/skill-dirs").json()["extra_dirs"] == [str(folder)]
