"""A browser's way in: a one-time login link, a session cookie that stands for the token, the CSRF
header every cookie-carried write needs, and the public routes a plugin's pages are served from."""

from __future__ import annotations

import httpx
import pytest
from cao_hookspecs import RouteSpec, hookimpl
from cao_server.api_token import ensure_token
from cao_server.logins import CODE_SECONDS, MAX_CODES, Logins
from cao_testkit.serve import serve_in_thread
from hypothesis import given
from hypothesis import strategies as st

pytestmark = pytest.mark.tmux


class Pages:
    """A plugin with a public page, a public asset route and a private data route."""

    @hookimpl
    def cao_register_routes(self):
        async def page(request, kernel):
            from starlette.responses import HTMLResponse

            return HTMLResponse("<p>console</p>")

        async def asset(request, kernel):
            return {"asset": request.path_params["name"]}

        async def data(request, kernel):
            return {"sessions": len(await kernel.list_sessions())}

        return [
            RouteSpec(name="page", path="/", endpoint=page, public=True),
            RouteSpec(name="asset", path="/assets/{name}", endpoint=asset, methods=("GET", "POST"), public=True),
            RouteSpec(name="data", path="/data", endpoint=data),
        ]


@pytest.fixture
def running(make_kernel, register_plugin, cao_home):
    kernel = make_kernel()
    token = ensure_token(cao_home)
    with register_plugin(kernel, Pages(), name="pages"), \
            serve_in_thread(kernel, token=token, extra_routes=list(kernel.routes.values())) as server:
        server.token = token
        yield server


def _browser(server) -> httpx.Client:
    return httpx.Client(base_url=server.url, timeout=10)


def _log_in(server, browser: httpx.Client) -> str:
    """Ask for a link with the token, follow it as a browser; return the page's CSRF value."""
    link = httpx.post(f"{server.url}/login-links", headers={"Authorization": f"Bearer {server.token}"})
    assert link.status_code == 201, link.text
    url = link.json()["url"]
    assert url.startswith(f"{server.url}/login?code=")
    landed = browser.get(url)
    assert landed.status_code == 200 and 'url=/"' in landed.text
    return browser.cookies["cao_csrf"]


def test_a_login_link_works_once_and_sets_strict_cookies(running):
    assert httpx.post(f"{running.url}/login-links").status_code == 401
    with _browser(running) as browser:
        link = httpx.post(f"{running.url}/login-links", headers={"Authorization": f"Bearer {running.token}"})
        url = link.json()["url"]
        landed = browser.get(url)
        cookies = {c.split("=", 1)[0]: c.lower() for c in landed.headers.get_list("set-cookie")}
        assert "httponly" in cookies["cao_session"] and "samesite=strict" in cookies["cao_session"]
        assert "httponly" not in cookies["cao_csrf"] and "samesite=strict" in cookies["cao_csrf"]
        assert landed.headers["referrer-policy"] == "no-referrer"
        assert landed.headers["cache-control"] == "no-store"
        # The same link again, from any browser: refused, and it says how to get another.
        with _browser(running) as other:
            again = other.get(url)
            assert again.status_code == 401 and "cao console --web" in again.text
            assert "cao_session" not in other.cookies
            assert other.get("/sessions").status_code == 401
        assert browser.get("/sessions").status_code == 200
        assert browser.get("/data").json() == {"sessions": 0}


def test_unknown_codes_are_refused(running):
    with _browser(running) as browser:
        for code in ("", "x", "A" * 43, "../../etc/passwd"):
            refused = browser.get("/login", params={"code": code})
            assert refused.status_code == 401, code
        assert browser.get("/login").status_code == 401
        assert browser.get("/sessions").status_code == 401


def test_cookie_writes_need_the_csrf_header(running):
    with _browser(running) as browser:
        csrf = _log_in(running, browser)
        # A write through the guard reaches the route (404: no such terminal), only with the header.
        assert browser.post("/terminals/0badf00d/exit").status_code == 403
        wrong = browser.post("/terminals/0badf00d/exit", headers={"X-CAO-CSRF": csrf + "x"})
        assert wrong.status_code == 403 and "X-CAO-CSRF" in wrong.json()["detail"]
        assert browser.post("/terminals/0badf00d/exit", headers={"X-CAO-CSRF": csrf}).status_code == 404
        # A page of another origin is refused before the CSRF check, whatever it sends.
        evil = {"X-CAO-CSRF": csrf, "Origin": "http://evil.example"}
        assert browser.post("/terminals/0badf00d/exit", headers=evil).status_code == 403
        # The token still works alone, with no CSRF header (the CLI and agents).
        owner = {"Authorization": f"Bearer {running.token}"}
        assert httpx.post(f"{running.url}/terminals/0badf00d/exit", headers=owner).status_code == 404


def test_a_forged_session_cookie_is_no_credential(running):
    with _browser(running) as browser:
        browser.cookies.set("cao_session", "forged")
        browser.cookies.set("cao_csrf", "forged")
        assert browser.get("/sessions").status_code == 401
        assert browser.post("/terminals/0badf00d/exit", headers={"X-CAO-CSRF": "forged"}).status_code == 401


def test_public_routes_need_no_credential_for_reads_only(running):
    with _browser(running) as browser:
        assert browser.get("/").text == "<p>console</p>"
        assert browser.get("/assets/app.js").json() == {"asset": "app.js"}
        assert browser.post("/assets/app.js").status_code == 401  # public means GET and HEAD
        assert browser.get("/data").status_code == 401
        assert browser.get("/openapi.json").status_code == 401


def test_a_cookie_websocket_needs_the_servers_own_origin(make_kernel, register_plugin, cao_home):
    from websockets.exceptions import InvalidStatus
    from websockets.sync.client import connect

    class Socket:
        @hookimpl
        def cao_register_routes(self):
            async def hello(websocket, kernel):
                await websocket.accept()
                await websocket.send_text("hello")
                await websocket.close()

            return [RouteSpec(name="hello", path="/hello/ws", endpoint=hello, websocket=True)]

    kernel = make_kernel()
    token = ensure_token(cao_home)
    with register_plugin(kernel, Socket(), name="socket"), \
            serve_in_thread(kernel, token=token, extra_routes=list(kernel.routes.values())) as server:
        server.token = token
        with _browser(server) as browser:
            _log_in(server, browser)
            cookie = {"Cookie": f"cao_session={browser.cookies['cao_session']}"}
        url = f"ws://127.0.0.1:{server.port}/hello/ws"
        own = {**cookie, "Origin": f"http://127.0.0.1:{server.port}"}
        with connect(url, additional_headers=own, open_timeout=10) as socket:
            assert socket.recv(timeout=10) == "hello"
        for headers in (cookie, {**cookie, "Origin": "http://127.0.0.1:1"}):
            with pytest.raises(InvalidStatus) as refused:
                connect(url, additional_headers=headers, open_timeout=10)
            assert refused.value.response.status_code == 403, headers


def test_the_ready_line_carries_a_working_login_link_when_a_page_is_served(running):
    from cao_server.serve import _ready_line

    class App:
        state = running.app.state

    line = _ready_line(App(), running.url)
    first, console = line.splitlines()
    assert first == f"cao-server listening on {running.url}"
    link = console.split()[1]
    with _browser(running) as browser:
        assert browser.get(link).status_code == 200
        assert browser.get("/sessions").status_code == 200


def test_codes_expire_and_the_tables_stay_bounded():
    logins = Logins()
    now = [1000.0]
    logins._now = lambda: now[0]
    code, expires = logins.issue_code()
    assert expires == 1000.0 + CODE_SECONDS
    now[0] += CODE_SECONDS + 1
    assert logins.redeem(code) is None
    codes = [logins.issue_code()[0] for _ in range(MAX_CODES + 5)]
    assert logins.redeem(codes[0]) is None  # the oldest went first
    session, csrf = logins.redeem(codes[-1])
    assert logins.csrf_of(session) == csrf
    now[0] += 24 * 3600 + 1
    assert logins.csrf_of(session) is None


@given(st.text(max_size=64))
def test_no_guessed_code_or_session_gets_in(guess):
    logins = Logins()
    logins.issue_code()
    assert logins.redeem(guess) is None
    assert logins.csrf_of(guess) is None
