"""Every built-in route, success and error paths, on a real server over real tmux with the mock agent.

Requests use upstream's wire style (query parameters) unless a test is about JSON bodies; the ``api``
client checks every answer against the server's OpenAPI document.
"""

from __future__ import annotations

import httpx
import pytest
from cao_provider_mock.contract import reply_payload

pytestmark = pytest.mark.tmux

MISSING_ID = "0badf00d"


def test_health_and_unknown_routes(api):
    health = api.get("/health")
    assert health.status_code == 200
    assert health.json()["status"] == "ok" and health.json()["terminal_backend"] == "tmux"
    missing = api.get("/no/such/route")
    assert missing.status_code == 404 and missing.json()["error"] == "NotFound"
    wrong_method = api.request("PUT", "/sessions")
    assert wrong_method.status_code == 405 and "detail" in wrong_method.json()


def test_wrong_methods_and_options_name_every_method_of_the_path(server):
    # Two routes share /sessions (GET and POST): the 405 names both, not only the first route's.
    with httpx.Client(base_url=server.url, trust_env=False, timeout=10) as http:
        wrong = http.delete("/sessions")
        assert wrong.status_code == 405 and wrong.headers["allow"] == "GET, HEAD, OPTIONS, POST"
        assert wrong.json() == {"detail": "Method Not Allowed", "error": "InvalidInput"}
        options = http.options(f"/terminals/{MISSING_ID}")
        assert options.status_code == 204 and options.headers["allow"] == "DELETE, GET, HEAD, OPTIONS"
        assert not options.content
        assert http.options("/openapi.json").headers["allow"] == "GET, HEAD, OPTIONS"
        assert http.options("/no/such/route").status_code == 404


def test_session_lifecycle_upstream_style(api, workdir):
    created = api.post(
        "/sessions",
        params={
            "agent_profile": "developer",
            "session_name": "life",
            "working_directory": workdir,
            "allowed_tools": "fs_read, execute_bash",
        },
    )
    assert created.status_code == 201, created.text
    term = created.json()
    assert term["session_name"] == "cao-life" and term["status"] == "idle" and term["provider"] == "mock_cli"
    assert term["allowed_tools"] == ["fs_read", "execute_bash"] and term["caller_id"] is None
    assert term["name"].startswith("developer-") and term["working_directory"] == workdir

    sessions = api.get("/sessions").json()
    assert {
        "id": "cao-life",
        "name": "cao-life",
        "status": "detached",
        "working_directory": workdir,
        "agent_profile": "developer",
    } in sessions

    worker = api.post(
        "/sessions/cao-life/terminals",
        params={"agent_profile": "reviewer", "caller_id": term["id"], "working_directory": workdir},
    )
    assert worker.status_code == 201, worker.text
    assert worker.json()["caller_id"] == term["id"] and worker.json()["agent_profile"] == "reviewer"

    detail = api.get("/sessions/life").json()
    assert detail["session"]["name"] == "cao-life"
    assert [t["id"] for t in detail["terminals"]] == [term["id"], worker.json()["id"]]
    assert detail["terminals"][0]["tmux_session"] == "cao-life"
    listed = api.get("/sessions/cao-life/terminals").json()
    assert [t["id"] for t in listed] == [term["id"], worker.json()["id"]]

    one = api.get(f"/terminals/{worker.json()['id']}").json()
    assert one["status"] == "idle" and one["last_active"]
    assert api.delete(f"/terminals/{worker.json()['id']}").json() == {"success": True}
    assert api.get(f"/terminals/{worker.json()['id']}").status_code == 404

    deleted = api.delete("/sessions/cao-life").json()
    assert deleted == {"success": True, "deleted": [term["id"]], "errors": []}
    assert api.get("/sessions/cao-life").status_code == 404
    assert api.delete("/sessions/cao-life").status_code == 404
    assert all(s["name"] != "cao-life" for s in api.get("/sessions").json())


def test_session_creation_errors(api, make_terminal, workdir):
    make_terminal("dup")
    cases = [
        ({}, 422, "agent_profile"),
        ({"agent_profile": "developer", "session_name": "bad.name"}, 400, "session name"),
        (
            {"agent_profile": "developer", "session_name": "dup", "working_directory": workdir},
            409,
            "already exists",
        ),
        ({"agent_profile": "no-such-profile", "working_directory": workdir}, 404, "no-such-profile"),
        ({"agent_profile": "developer", "working_directory": workdir + "/missing"}, 400, "does not exist"),
        ({"agent_profile": "developer", "working_directory": "/etc"}, 400, "system folder"),
        ({"agent_profile": "developer", "working_directory": workdir, "model": "bad model!"}, 400, "model"),
        ({"agent_profile": "developer", "working_directory": workdir, "yolo": "perhaps"}, 422, "boolean"),
        ({"agent_profile": "developer", "working_directory": workdir, "provider": "nope"}, 404, "provider"),
    ]
    for params, status, needle in cases:
        response = api.post("/sessions", params=params)
        assert response.status_code == status, (params, response.text)
        assert needle in response.json()["detail"], (params, response.json())
    # JSON bodies: wrong types are 422s, env_vars only travel in the body.
    assert api.post("/sessions", json={"agent_profile": 5}).status_code == 422
    assert api.post("/sessions", json={"agent_profile": "developer", "env_vars": {"A": 1}}).status_code == 422
    assert (
        api.post(
            "/sessions",
            json={"agent_profile": "developer", "env_vars": {"1BAD": "x"}, "working_directory": workdir},
        ).status_code
        == 400
    )
    assert (
        api.post("/sessions", content=b"{not json", headers={"content-type": "application/json"}).status_code
        == 422
    )
    assert api.post("/sessions", json=["a list"]).status_code == 422
    # Nothing was left behind by any refused request.
    assert [s["name"] for s in api.get("/sessions").json()] == ["cao-dup"]


def test_terminal_creation_errors(api, make_terminal, workdir):
    term = make_terminal("errs")
    base = {"agent_profile": "developer", "working_directory": workdir}
    assert api.post("/sessions/bad.name/terminals", params=base).status_code == 400
    missing = api.post("/sessions/nosuch/terminals", params=base)
    assert missing.status_code == 404 and "nosuch" in missing.json()["detail"]
    assert api.post("/sessions/errs/terminals", params={**base, "caller_id": "XYZ"}).status_code == 422
    assert api.post("/sessions/errs/terminals", params={**base, "caller_id": MISSING_ID}).status_code == 404
    assert api.post("/sessions/errs/terminals", params={"working_directory": workdir}).status_code == 422
    assert [t["id"] for t in api.get("/sessions/errs/terminals").json()] == [term["id"]]
    assert api.get("/sessions/bad.name").status_code == 400
    assert api.get("/sessions/bad.name/terminals").status_code == 400
    assert api.delete("/sessions/bad.name").status_code == 400


def test_deferred_start_and_initial_message(api, make_terminal, workdir, poll):
    term = make_terminal("defer")
    deferred = api.post(
        "/sessions/defer/terminals",
        params={"agent_profile": "developer", "defer_init": "true", "working_directory": workdir},
    )
    assert deferred.status_code == 201 and deferred.json()["status"] not in ("idle", "completed")
    waited = api.get(f"/terminals/{deferred.json()['id']}/wait", params={"status": "idle", "timeout": 15})
    assert waited.status_code == 200 and waited.json()["status"] == "idle"

    greeted = api.post(
        "/sessions",
        json={
            "agent_profile": "developer",
            "working_directory": workdir,
            "initial_message": "hello from the start",
        },
    )
    assert greeted.status_code == 201
    gid = greeted.json()["id"]
    done = api.get(f"/terminals/{gid}/wait", params={"status": "completed", "timeout": 15})
    assert done.status_code == 200, done.text
    assert (
        api.get(f"/terminals/{gid}/output", params={"mode": "last"}).json()["output"]
        == "hello from the start"
    )
    inbox = api.get(f"/terminals/{gid}/inbox/messages").json()
    assert [(m["sender_id"], m["message"], m["status"]) for m in inbox] == [
        ("user", "hello from the start", "delivered")
    ]
    blank = api.post("/sessions", json={"agent_profile": "developer", "initial_message": "  "})
    assert blank.status_code == 400
    assert term["id"] != gid


def test_input_output_status_and_wait(api, make_terminal, workdir):
    term = make_terminal()
    tid = term["id"]
    assert api.post(f"/terminals/{tid}/input", params={"message": "hello world"}).json() == {"success": True}
    done = api.get(f"/terminals/{tid}/wait", params={"status": "completed", "timeout": 10})
    assert done.status_code == 200 and done.json()["status"] == "completed" and done.json()["evidence"]
    status = api.get(f"/terminals/{tid}/status").json()
    assert status["terminal_id"] == tid and status["status"] == "completed" and status["since"]
    assert api.get(f"/terminals/{tid}/output", params={"mode": "last"}).json() == {
        "output": "hello world",
        "mode": "last",
    }
    full = api.get(f"/terminals/{tid}/output").json()
    assert (
        full["mode"] == "full"
        and "MockCli ready." in full["output"]
        and "> MOCK: hello world" in full["output"]
    )
    # JSON body, with the upstream extras, and text a query string would mangle.
    tricky = "a & b = c; 100% ünïcode ✓ ?x=#"
    assert (
        api.post(
            f"/terminals/{tid}/input",
            json={"message": tricky, "sender_id": "me", "orchestration_type": "send_message"},
        ).status_code
        == 200
    )
    api.get(f"/terminals/{tid}/wait", params={"status": "completed", "timeout": 10})
    assert api.get(f"/terminals/{tid}/output", params={"mode": "last"}).json()["output"] == reply_payload(
        tricky
    )
    assert api.get(f"/terminals/{tid}/working-directory").json() == {"working_directory": workdir}

    assert api.get(f"/terminals/{tid}/output", params={"mode": "middle"}).status_code == 422
    assert api.post(f"/terminals/{tid}/input").status_code == 422
    assert (
        api.post(f"/terminals/{tid}/input", params={"message": "x", "orchestration_type": "nope"}).status_code
        == 422
    )
    assert api.get(f"/terminals/{tid}/wait", params={"status": "sleeping"}).status_code == 422
    assert api.get(f"/terminals/{tid}/wait", params={"status": ""}).status_code == 400
    assert api.get(f"/terminals/{tid}/wait", params={"timeout": "-1"}).status_code == 422
    slow = api.post(f"/terminals/{tid}/input", params={"message": "__mock_sleep_3"})
    assert slow.status_code == 200
    timed_out = api.get(f"/terminals/{tid}/wait", params={"status": "completed", "timeout": 0.3})
    assert timed_out.status_code == 504 and timed_out.json()["error"] == "Timeout", timed_out.text


def test_keys_exit_and_input_refused_in_error(api, make_terminal):
    tid = make_terminal()["id"]
    assert api.post(f"/terminals/{tid}/key", params={"key": "Enter"}).json() == {"success": True}
    assert api.post(f"/terminals/{tid}/key", params={"key": "C-c"}).status_code == 200
    bad = api.post(f"/terminals/{tid}/key", params={"key": "Enter; rm -rf"})
    assert bad.status_code == 400 and "invalid key" in bad.json()["detail"]
    assert api.post(f"/terminals/{tid}/key").status_code == 422
    assert api.post(f"/terminals/{tid}/exit").json() == {"success": True}
    failed = api.get(f"/terminals/{tid}/wait", params={"status": "error", "timeout": 10})
    assert failed.status_code == 200 and "exited" in failed.json()["evidence"]
    refused = api.post(f"/terminals/{tid}/input", params={"message": "anyone?"})
    assert refused.status_code == 409 and refused.json()["error"] == "Conflict"
    assert api.post(f"/terminals/{tid}/exit").status_code == 409
    # Waiting for a ready status on a failed agent reports the failure, not a timeout.
    gone = api.get(f"/terminals/{tid}/wait", params={"status": "idle", "timeout": 5})
    assert gone.status_code == 502 and gone.json()["error"] == "AgentFailed"


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/terminals/{}"),
        ("DELETE", "/terminals/{}"),
        ("POST", "/terminals/{}/input?message=x"),
        ("POST", "/terminals/{}/key?key=Enter"),
        ("GET", "/terminals/{}/output"),
        ("POST", "/terminals/{}/exit"),
        ("GET", "/terminals/{}/working-directory"),
        ("GET", "/terminals/{}/status"),
        ("GET", "/terminals/{}/wait"),
        ("POST", "/terminals/{}/inbox/messages?sender_id=u&message=x"),
        ("GET", "/terminals/{}/inbox/messages"),
        ("POST", "/terminals/{}/handoff?agent_profile=developer&message=x"),
        ("POST", "/terminals/{}/assign?agent_profile=developer&message=x"),
        ("POST", "/terminals/{}/send_message?message=x"),
        ("POST", "/terminals/{}/answer?answer=x"),
    ],
)
def test_terminal_ids_malformed_422_unknown_404(api, method, path):
    malformed = api.request(method, path.format("ABCDEF12"))
    assert malformed.status_code == 422, malformed.text
    assert "8 lowercase hex" in malformed.json()["detail"]
    unknown = api.request(method, path.format(MISSING_ID))
    if path.endswith("/inbox/messages"):
        # Listing an unknown terminal's inbox is empty, as upstream; posting to it is a 404.
        assert unknown.status_code == (200 if method == "GET" else 404), unknown.text
    elif "/send_message" in path:
        # Any text may send a message; without a receiver, an unknown sender has no caller to answer.
        assert unknown.status_code == 400 and "no caller" in unknown.json()["detail"]
    else:
        assert unknown.status_code == 404, unknown.text
        assert unknown.json()["error"] == "NotFound"


def test_size_limits(api, make_terminal):
    tid = make_terminal()["id"]
    big = "x" * (1024 * 1024 + 1)
    for path, field in (
        (f"/terminals/{tid}/input", "message"),
        (f"/terminals/{tid}/answer", "answer"),
        (f"/terminals/{tid}/inbox/messages", "message"),
    ):
        response = api.post(path, json={field: big, "sender_id": "u"})
        assert response.status_code == 413, path
        assert "limit is 1048576" in response.json()["detail"]
    huge = api.post(
        f"/terminals/{tid}/input",
        content=b'{"message": "' + b"y" * (9 * 1024 * 1024) + b'"}',
        headers={"content-type": "application/json"},
    )
    assert huge.status_code == 413 and huge.json()["error"] == "TooLarge"
    # Exactly the limit goes through; upstream-style query strings may exceed h11's usual 16 KiB line.
    assert api.post(f"/terminals/{tid}/input", json={"message": "z" * (1024 * 1024)}).status_code == 200
    api.get(f"/terminals/{tid}/wait", params={"status": "completed", "timeout": 30})
    assert api.post(f"/terminals/{tid}/input", params={"message": "q" * 60000}).status_code == 200


def test_inbox_routes(api, make_terminal, poll):
    tid = make_terminal("inbox")["id"]
    queued = api.post(
        f"/terminals/{tid}/inbox/messages", params={"sender_id": "operator", "message": "ping one"}
    )
    assert queued.status_code == 200, queued.text
    body = queued.json()
    assert body["success"] and body["message_id"] == body["id"] and body["receiver_id"] == tid
    assert body["sender_id"] == "operator" and body["created_at"]
    poll(lambda: api.get(f"/terminals/{tid}/inbox/messages", params={"status": "delivered"}).json())
    api.get(f"/terminals/{tid}/wait", params={"status": "completed", "timeout": 10})
    assert api.get(f"/terminals/{tid}/output", params={"mode": "last"}).json()["output"] == "ping one"
    listed = api.get(f"/terminals/{tid}/inbox/messages", params={"limit": 5}).json()
    assert [(m["id"], m["message"], m["status"]) for m in listed] == [(body["id"], "ping one", "delivered")]
    assert api.get(f"/terminals/{tid}/inbox/messages", params={"status": "pending"}).json() == []
    assert api.get(f"/terminals/{tid}/inbox/messages", params={"status": "bogus"}).status_code == 400
    assert api.get(f"/terminals/{tid}/inbox/messages", params={"limit": 0}).status_code == 422
    assert api.get(f"/terminals/{tid}/inbox/messages", params={"limit": "ten"}).status_code == 422
    assert api.post(f"/terminals/{tid}/inbox/messages", params={"message": "no sender"}).status_code == 422
    assert (
        api.post(f"/terminals/{tid}/inbox/messages", params={"sender_id": "u", "message": " "}).status_code
        == 400
    )
    again = api.post(
        f"/terminals/{tid}/inbox/messages",
        json={"sender_id": "u", "message": "once", "idempotency_key": "k-1"},
    ).json()
    twice = api.post(
        f"/terminals/{tid}/inbox/messages",
        json={"sender_id": "u", "message": "once", "idempotency_key": "k-1"},
    ).json()
    assert again["id"] == twice["id"]


def test_handoff_assign_send_message_and_answer(api, make_terminal, workdir, poll):
    sup = make_terminal("orch")["id"]
    result = api.post(
        f"/terminals/{sup}/handoff",
        json={"agent_profile": "developer", "message": "summarise the design in one line", "timeout": 30},
    )
    assert result.status_code == 200, result.text
    handed = result.json()
    assert handed["success"] and handed["kind"] == "handoff" and handed["caller_id"] == sup
    assert handed["output"] == "summarise the design in one line"
    # The worker is dismissed once its answer went back.
    poll(lambda: [t["id"] for t in api.get("/sessions/orch/terminals").json()] == [sup])

    assigned = api.post(
        f"/terminals/{sup}/assign", params={"agent_profile": "developer", "message": "analyse A"}
    )
    assert assigned.status_code == 200, assigned.text
    worker = assigned.json()["terminal_id"]
    assert assigned.json()["success"] and assigned.json()["kind"] == "assign"
    assert api.get(f"/terminals/{worker}").json()["caller_id"] == sup
    api.get(f"/terminals/{worker}/wait", params={"status": "completed", "timeout": 15})
    assert "analyse A" in api.get(f"/terminals/{worker}/output").json()["output"]

    # The worker replies to its caller without naming it.
    sent = api.post(f"/terminals/{worker}/send_message", json={"receiver_id": None, "message": "results: 42"})
    assert sent.status_code == 200, sent.text
    assert sent.json()["receiver_id"] == sup and sent.json()["sender_id"] == worker
    poll(lambda: "results: 42" in api.get(f"/terminals/{sup}/output").json()["output"])
    assert api.post(f"/terminals/{sup}/send_message", params={"message": "who?"}).status_code == 400
    assert (
        api.post(f"/terminals/{sup}/send_message", json={"receiver_id": "nope", "message": "x"}).status_code
        == 422
    )
    assert (
        api.post(f"/terminals/{sup}/send_message", json={"receiver_id": sup, "message": "me"}).status_code
        == 400
    )

    not_waiting = api.post(f"/terminals/{sup}/answer", params={"answer": "yes"})
    assert not_waiting.status_code == 409 and "not waiting" in not_waiting.json()["detail"]
    assert api.post(f"/terminals/{sup}/answer", params={"answer": " "}).status_code == 400

    assert (
        api.post(
            f"/terminals/{sup}/handoff", json={"agent_profile": "developer", "message": "x", "timeout": 0}
        ).status_code
        == 422
    )
    assert (
        api.post(f"/terminals/{sup}/handoff", json={"agent_profile": "nobody", "message": "x"}).status_code
        == 404
    )
    assert (
        api.post(f"/terminals/{sup}/assign", json={"agent_profile": "developer", "message": ""}).status_code
        == 400
    )
    slow = api.post(
        f"/terminals/{sup}/handoff",
        json={"agent_profile": "developer", "message": "__mock_sleep_5", "timeout": 1},
    ).json()
    assert not slow["success"] and "timed out" in slow["message"] and slow["terminal_id"]


def test_handoff_without_caller_starts_a_session(api, workdir, monkeypatch):
    monkeypatch.chdir(workdir)  # the worker starts where the server process is (no caller to inherit from)
    result = api.post(
        "/handoff", json={"caller_id": None, "agent_profile": "developer", "message": "solo task"}
    )
    assert result.status_code == 200, result.text
    assert result.json()["success"] and result.json()["output"] == "solo task"
    assert result.json()["caller_id"] is None
    assert (
        api.post(
            "/handoff", json={"caller_id": "zz", "agent_profile": "developer", "message": "x"}
        ).status_code
        == 422
    )


def test_profiles_and_providers(api, cao_home):
    profiles = api.get("/agents/profiles").json()
    names = {p["name"] for p in profiles}
    assert {"developer", "reviewer", "code_supervisor"} <= names
    assert all(p["loadable"] for p in profiles)
    developer = api.get("/agents/profiles/developer").json()
    assert developer["name"] == "developer" and "# Developer" in developer["system_prompt"]
    assert "provider" not in developer  # unset fields are dropped, as upstream
    assert api.get("/agents/profiles/nosuch").status_code == 404
    assert api.get("/agents/profiles/bad.name").status_code == 400
    providers = api.get("/agents/providers").json()
    mock = next(p for p in providers if p["name"] == "mock_cli")
    assert mock["installed"] is True and mock["binary"] == "mock_cli"

    installed = api.post(
        "/agents/profiles/install", json={"source": "reviewer", "env_vars": {"TEAM": "core"}}
    )
    assert installed.status_code == 200, installed.text
    assert installed.json()["agent_name"] == "reviewer" and installed.json()["success"]
    assert (cao_home / "agent-store" / "reviewer.md").exists()
    assert "TEAM=core" in (cao_home / ".env").read_text()
    for source in ("/etc/passwd", "../x.md", "~/profile.md", "file:///etc/passwd", "http://example.com/p.md"):
        refused = api.post("/agents/profiles/install", json={"source": source})
        assert refused.status_code == 400, (source, refused.text)
    assert api.post("/agents/profiles/install", json={"source": "nosuch"}).status_code == 404
    assert api.post("/agents/profiles/install", json={}).status_code == 422


def test_initial_delivery_is_reported_as_upstream_clients_expect(api, workdir):
    """Upstream's `cao launch` waits for initial_delivery.state == delivered before following the task."""
    import time as _time

    created = api.post("/sessions", params={"agent_profile": "developer", "provider": "mock_cli",
                                            "working_directory": workdir},
                       json={"initial_message": "first task"})
    assert created.status_code == 201, created.text
    terminal = created.json()
    assert terminal["initial_delivery"] == {"state": "pending"}
    deadline = _time.monotonic() + 15
    state = None
    while _time.monotonic() < deadline:
        state = api.get(f"/terminals/{terminal['id']}").json().get("initial_delivery", {}).get("state")
        if state == "delivered":
            break
        _time.sleep(0.05)
    assert state == "delivered"
    plain = api.post("/sessions", params={"agent_profile": "developer", "provider": "mock_cli",
                                          "working_directory": workdir})
    assert "initial_delivery" not in api.get(f"/terminals/{plain.json()['id']}").json()
