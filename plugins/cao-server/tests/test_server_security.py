"""Security by default: Host allow-list, Origin check, API token off loopback, the token file, logs.

Off-loopback binding is tested for real: the server binds the wildcard address 0.0.0.0 (what a user
does to share it) and the test calls it through 127.0.0.1, which that socket also serves. The token rule
depends on where the server is bound, not on where a caller comes from, so this is the real case.
Traffic never leaves the machine.
"""

from __future__ import annotations

import logging
import os
import stat

import httpx
import pytest
from cao_hookspecs.errors import CaoError
from cao_server.api_token import ensure_token, read_token, token_path
from cao_testkit.openapi import ApiClient
from cao_testkit.serve import serve_in_thread


def _client(url: str, **headers: str) -> httpx.Client:
    return httpx.Client(base_url=url, headers=headers, trust_env=False, timeout=30)


# -- Host header -----------------------------------------------------------------------------------


@pytest.mark.tmux
def test_foreign_host_headers_are_refused_and_change_nothing(api, server, workdir):
    port = server.port
    for host in (
        "evil.example",
        "127.0.0.1.evil.example",
        "localhost.",
        "10.0.0.1",
        f"evil.example:{port}",
        "",
    ):
        response = api.get("/health", headers={"Host": host})
        assert response.status_code == 400, host
        assert response.json() == {"detail": "Invalid host header", "error": "InvalidInput"}
    refused = api.post(
        "/sessions",
        params={"agent_profile": "developer", "working_directory": workdir},
        headers={"Host": "rebind.example"},
    )
    assert refused.status_code == 400
    assert api.get("/sessions").json() == []
    for host in (
        "localhost",
        f"localhost:{port}",
        f"127.0.0.1:{port}",
        f"[::1]:{port}",
        "LOCALHOST",
        "[::1]",
    ):
        assert api.get("/health", headers={"Host": host}).status_code == 200, host


@pytest.mark.tmux
def test_allowed_hosts_setting_extends_the_list(make_kernel):
    with (
        serve_in_thread(make_kernel(CAO_ALLOWED_HOSTS="cao.internal, build-box")) as running,
        _client(running.url) as http,
    ):
        assert http.get("/health", headers={"Host": "cao.internal:80"}).status_code == 200
        assert http.get("/health", headers={"Host": "BUILD-BOX"}).status_code == 200
        assert http.get("/health", headers={"Host": "other.internal"}).status_code == 400
    with serve_in_thread(make_kernel(CAO_ALLOWED_HOSTS="*")) as running, _client(running.url) as http:
        assert http.get("/health", headers={"Host": "anything.example"}).status_code == 200


# -- Origin ----------------------------------------------------------------------------------------


@pytest.mark.tmux
def test_cross_origin_writes_are_blocked_same_origin_and_no_origin_pass(api, server, workdir):
    create = {"agent_profile": "developer", "working_directory": workdir}
    for origin in (
        "http://evil.example",
        "null",
        f"http://localhost:{server.port}",
        "file://",
        "https://127.0.0.1",
    ):
        blocked = api.post("/sessions", params=create, headers={"Origin": origin})
        assert blocked.status_code == 403, origin
        assert blocked.json() == {"detail": "Cross-origin request blocked", "error": "Forbidden"}
    assert api.get("/sessions").json() == []
    same = api.post(
        "/sessions",
        params={**create, "session_name": "same"},
        headers={"Origin": f"http://127.0.0.1:{server.port}"},
    )
    assert same.status_code == 201, same.text
    plain = api.post("/sessions", params={**create, "session_name": "plain"})
    assert plain.status_code == 201
    assert api.delete("/sessions/same", headers={"Origin": "http://evil.example"}).status_code == 403
    assert {s["name"] for s in api.get("/sessions").json()} == {"cao-same", "cao-plain"}
    # Reads pass (the browser hides their answers from other origins: no CORS headers are sent).
    read = api.get("/sessions", headers={"Origin": "http://evil.example"})
    assert read.status_code == 200 and "access-control-allow-origin" not in read.headers


@pytest.mark.tmux
def test_cors_origins_setting_allows_listed_origins(make_kernel):
    with (
        serve_in_thread(make_kernel(CAO_CORS_ORIGINS="http://localhost:5173")) as running,
        _client(running.url) as http,
    ):
        allowed = http.post("/terminals/0badf00d/exit", headers={"Origin": "http://localhost:5173"})
        assert allowed.status_code == 404  # through the guard, to the route
        assert allowed.headers["access-control-allow-origin"] == "http://localhost:5173"
        preflight = http.options(
            "/sessions", headers={"Origin": "http://localhost:5173", "Access-Control-Request-Method": "POST"}
        )
        assert preflight.status_code == 200
        assert preflight.headers["access-control-allow-origin"] == "http://localhost:5173"
        assert (
            http.post("/terminals/0badf00d/exit", headers={"Origin": "http://evil.example"}).status_code
            == 403
        )


# -- token -----------------------------------------------------------------------------------------


@pytest.mark.tmux
def test_off_loopback_server_requires_the_token(make_kernel, cao_home, workdir):
    token = ensure_token(cao_home)
    with serve_in_thread(make_kernel(), host="0.0.0.0", token=token) as running:
        assert not running.settings.loopback and running.settings.token_required
        with _client(running.url) as http:
            missing = http.get("/sessions")
            assert missing.status_code == 401 and missing.headers["www-authenticate"] == "Bearer"
            assert missing.json()["error"] == "Unauthorized"
            for value in ("Bearer wrong", f"Basic {token}", "Bearer", f"Bearer {token}x"):
                assert http.get("/sessions", headers={"Authorization": value}).status_code == 401, value
            refused = http.post(
                "/sessions", params={"agent_profile": "developer", "working_directory": workdir}
            )
            assert refused.status_code == 401
            assert http.get("/health").status_code == 200  # liveness stays open
            assert http.get("/openapi.json").status_code == 401
        client = ApiClient(running, token=token)
        try:
            assert client.get("/sessions").json() == []
            assert (
                client.post(
                    "/sessions", params={"agent_profile": "developer", "working_directory": workdir}
                ).status_code
                == 201
            )
        finally:
            client.close()


@pytest.mark.tmux
def test_off_loopback_server_will_not_run_without_a_token(make_kernel):
    with (
        pytest.raises(ValueError, match="needs an API token"),
        serve_in_thread(make_kernel(), host="0.0.0.0"),
    ):
        pass


@pytest.mark.tmux
def test_loopback_server_ignores_authorization(api):
    assert api.get("/sessions", headers={"Authorization": "Bearer whatever"}).status_code == 200


def test_token_file_is_private_stable_and_repaired(cao_home):
    assert read_token(cao_home) is None
    token = ensure_token(cao_home)
    path = token_path(cao_home)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and len(token) >= 32
    assert ensure_token(cao_home) == token == read_token(cao_home)
    assert not [p for p in os.listdir(cao_home) if p.startswith(".api-token")]  # no temporary left
    os.chmod(path, 0o644)
    assert ensure_token(cao_home) == token
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    path.write_text("not a token\n")
    with pytest.raises(CaoError, match="does not hold a valid API token"):
        ensure_token(cao_home)
    assert read_token(cao_home) is None


def test_token_is_created_in_a_missing_home(tmp_path):
    home = tmp_path / "new" / "home"
    token = ensure_token(home)
    assert read_token(home) == token
    assert stat.S_IMODE(home.stat().st_mode) == 0o700


# -- logs ------------------------------------------------------------------------------------------


@pytest.mark.tmux
def test_message_bodies_never_reach_the_logs(api, make_terminal, caplog):
    caplog.set_level(logging.INFO)
    tid = make_terminal()["id"]
    marker = "secret-body-7f3a9c"
    api.post(f"/terminals/{tid}/input", params={"message": f"{marker} in the query"})
    api.post(f"/terminals/{tid}/input", json={"message": f"{marker} in the body"})
    api.post(f"/terminals/{tid}/inbox/messages", params={"sender_id": "u", "message": f"{marker} inbox"})
    api.get(f"/terminals/{tid}/wait", params={"status": "completed", "timeout": 10})
    # (The test's own httpx client logs its URLs; that is the caller's log, not the server's.)
    lines = [record.getMessage() for record in caplog.records if record.name != "httpx"]
    assert any(f"POST /terminals/{tid}/input 200" in line for line in lines), lines
    assert not [line for line in lines if marker in line]
