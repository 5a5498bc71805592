"""``POST /terminals/run-step``: upstream's one-request handoff, answered with upstream's fields and codes
(the worker's answer; 502 when it failed, 504 when it ran long), and refused clearly where cao's handoff
cannot do what was asked."""

from __future__ import annotations

import secrets


def _step(api, sup: dict, prompt: str, **extra):
    body = {"provider": sup["provider"], "agent": "developer", "prompt": prompt, "caller_id": sup["id"],
            "session_name": sup["session_name"], "teardown": True, "timeout": 30.0,
            "job_id": secrets.token_hex(16), "description": "compat", **extra}
    return api.post("/terminals/run-step", json=body)


def test_run_step_hands_off_and_answers_upstreams_fields(api, make_terminal, poll):
    sup = make_terminal("orch")
    answer = _step(api, sup, "name the three parts")
    assert answer.status_code == 200, answer.text
    data = answer.json()
    assert data["last_message"] == "name the three parts"
    assert data["status"] == "completed" and data["replayed"] is False
    worker = data["terminal_id"]
    assert worker != sup["id"]
    # Made and removed as cao's own handoff does: the worker is gone once its answer went back.
    poll(lambda: [t["id"] for t in api.get("/sessions/orch/terminals").json()] == [sup["id"]])


def test_run_step_failures_answer_502_and_504_with_the_worker(api, make_terminal):
    sup = make_terminal("orch")
    slow = _step(api, sup, "__mock_sleep_5", timeout=1)
    assert slow.status_code == 504, slow.text
    detail = slow.json()["detail"]
    assert detail["kind"] == "timeout" and "timed out" in detail["message"]
    # The worker is kept for inspection, as upstream keeps it.
    assert api.get(f"/terminals/{detail['terminal_id']}").status_code == 200

    crashed = _step(api, sup, "__mock_error__")
    assert crashed.status_code == 502, crashed.text
    detail = crashed.json()["detail"]
    assert detail["kind"] == "error" and detail["terminal_id"]


def test_run_step_on_an_existing_worker_keeps_it(api, make_terminal):
    """Upstream's ``cao agent handoff`` makes the worker first, then runs the step on it."""
    sup = make_terminal("orch")
    worker = make_terminal("made-first")
    answer = _step(api, sup, "check the build", reuse_terminal_id=worker["id"], teardown=False)
    assert answer.status_code == 200, answer.text
    assert answer.json()["terminal_id"] == worker["id"]
    assert answer.json()["last_message"] == "check the build"
    assert api.get(f"/terminals/{worker['id']}").status_code == 200
    slow = _step(api, sup, "__mock_sleep_5", reuse_terminal_id=worker["id"], teardown=False, timeout=1)
    assert slow.status_code == 504 and slow.json()["detail"]["terminal_id"] == worker["id"], slow.text


def test_run_step_refuses_what_it_cannot_honour(api, make_terminal):
    sup = make_terminal("orch")
    before = {t["id"] for t in api.get("/sessions/orch/terminals").json()}
    cases = [
        ({"reuse_terminal_id": sup["id"], "provider": "codex"}, 400, "provider"),
        ({"reuse_terminal_id": "0000aaaa"}, 404, "0000aaaa"),
        ({"teardown": False}, 400, "teardown"),
        ({"use_worktree": True, "reuse_terminal_id": sup["id"]}, 400, "use_worktree"),
        ({"model": "gpt-x", "reuse_terminal_id": sup["id"]}, 400, "'model' chooses how a worker starts"),
        # Passed on to the handoff, which refuses them here: no git repository, a mock that takes no model.
        ({"use_worktree": True}, 400, "git"),
        ({"model": "gpt-x"}, 400, "'mock_cli' cannot choose its model"),
        ({"working_directory": "/"}, 400, "working_directory"),
        ({"provider": "codex"}, 400, "provider"),
        ({"provider": "no-such-cli"}, 400, "unknown provider"),
        ({"session_name": "cao-elsewhere"}, 400, "session"),
        ({"env_vars": {"CAO_WORKFLOW_RUN_ID": "r1", "CAO_WORKFLOW_GENERATION": "g"}}, 400, "cao-workflows"),
        ({"agent": "nobody"}, 404, "nobody"),
        ({"job_id": "not-hex"}, 422, "job_id"),
        ({"caller_id": "zz"}, 422, "caller_id"),
        ({"timeout": 0}, 422, "timeout"),
        ({"timeout": 7200}, 400, "timeout"),
        ({"colour": "red"}, 422, "unknown run-step field(s): colour"),
    ]
    for extra, status, named in cases:
        answer = _step(api, sup, "x", **extra)
        assert answer.status_code == status, (extra, answer.text)
        assert named in str(answer.json()["detail"]), (extra, answer.text)
    missing = api.post("/terminals/run-step", json={"agent": "developer", "prompt": "x"})
    assert missing.status_code == 422 and "provider" in missing.json()["detail"]
    # Nothing was started by a refused request.
    assert {t["id"] for t in api.get("/sessions/orch/terminals").json()} == before


def test_run_step_is_in_the_openapi_document(api):
    operation = api.get("/openapi.json").json()["paths"]["/terminals/run-step"]["post"]
    assert {"502", "504", "422"} <= set(operation["responses"])
    fields = operation["requestBody"]["content"]["application/json"]["schema"]["properties"]
    assert fields["job_id"]["pattern"] == "^[0-9a-f]{32}$"
    assert {"provider", "agent", "prompt", "caller_id", "timeout", "env_vars"} <= set(fields)
