"""``cao_register_routes``: plugin routes are served behind the same guards as built-in ones."""

from __future__ import annotations

import logging
import socket as socket_module

import httpx
import pytest
from cao_hookspecs import NotFound, RouteSpec, hookimpl
from cao_server.api_token import ensure_token
from cao_testkit.openapi import ApiClient
from cao_testkit.serve import serve_in_thread
from starlette.responses import PlainTextResponse

pytestmark = pytest.mark.tmux


class CountingPlugin:
    """A real plugin object contributing routes of every kind a plugin may return."""

    def __init__(self) -> None:
        self.posts: list[str] = []

    @hookimpl
    def cao_register_routes(self):
        async def count(request, kernel):
            return {"sessions": len(await kernel.list_sessions())}

        async def note(request, kernel):
            self.posts.append(request.path_params["word"])
            return PlainTextResponse(f"noted {request.path_params['word']}", status_code=202)

        def sync_value(request, kernel):
            return ["plain", "value"]

        async def missing(request, kernel):
            raise NotFound("nothing here")

        async def broken(request, kernel):
            raise RuntimeError("plugin bug")

        return [
            RouteSpec(name="count", path="/stats/sessions", endpoint=count, description="how many sessions"),
            RouteSpec(name="note", path="/stats/notes/{word}", endpoint=note, methods=("POST",)),
            RouteSpec(name="sync", path="/stats/sync", endpoint=sync_value),
            RouteSpec(name="missing", path="/stats/missing", endpoint=missing),
            RouteSpec(name="broken", path="/stats/broken", endpoint=broken),
            # Refused: collides with a built-in route (whatever its parameter is called).
            RouteSpec(name="shadow", path="/terminals/{tid}", endpoint=count),
            RouteSpec(name="nopath", path="stats", endpoint=count),
            RouteSpec(name="badverb", path="/stats/verb", endpoint=count, methods=("FETCH",)),
        ]


def test_hook_cao_register_routes(make_kernel, register_plugin, cao_home, workdir, caplog):
    """Routes from cao_register_routes are served, described in the OpenAPI document, refused when they
    collide or are malformed, and guarded like built-in routes."""
    caplog.set_level(logging.WARNING)
    kernel = make_kernel()
    plugin = CountingPlugin()
    with register_plugin(kernel, plugin, name="counting"):
        routes = list(kernel.routes.values())
        assert {r.name for r in routes} >= {"count", "note", "shadow"}
        with serve_in_thread(kernel, extra_routes=routes) as running:
            api = ApiClient(running)
            try:
                assert api.get("/stats/sessions").json() == {"sessions": 0}
                api.post("/sessions", params={"agent_profile": "developer", "working_directory": workdir})
                assert api.get("/stats/sessions").json() == {"sessions": 1}
                noted = api.post("/stats/notes/hello")
                assert (noted.status_code, noted.text, plugin.posts) == (202, "noted hello", ["hello"])
                assert api.get("/stats/sync").json() == ["plain", "value"]
                assert api.get("/stats/missing").json() == {"detail": "nothing here", "error": "NotFound"}
                broken = api.get("/stats/broken")
                assert broken.status_code == 500 and "plugin bug" not in broken.text
                # The built-in route kept its path.
                assert api.get("/terminals/0badf00d").json()["error"] == "NotFound"
                # Guards apply to plugin routes too.
                assert (
                    api.post("/stats/notes/x", headers={"Origin": "http://evil.example"}).status_code == 403
                )
                assert api.get("/stats/sessions", headers={"Host": "evil.example"}).status_code == 400
                assert plugin.posts == ["hello"]
                document = api.get("/openapi.json").json()
                assert document["paths"]["/stats/sessions"]["get"]["summary"] == "how many sessions"
                assert "post" in document["paths"]["/stats/notes/{word}"]
                assert "/stats/verb" not in document["paths"] and "stats" not in document["paths"]
            finally:
                api.close()
        warnings = " ".join(r.getMessage() for r in caplog.records if r.name == "cao_server")
        assert "'shadow' refused" in warnings and "built-in" in warnings
        assert "'nopath' refused" in warnings and "'badverb' refused" in warnings

        # Off loopback, a plugin route needs the token like every other route.
        token = ensure_token(cao_home)
        with serve_in_thread(kernel, host="0.0.0.0", token=token, extra_routes=routes) as running:
            with httpx.Client(base_url=running.url, trust_env=False) as http:
                assert http.get("/stats/sessions").status_code == 401
                ok = http.get("/stats/sessions", headers={"Authorization": f"Bearer {token}"})
                assert ok.status_code == 200 and ok.json() == {"sessions": 1}


def test_two_plugins_claiming_one_path_keep_the_first(caplog):
    from cao_server.app import plugin_routes

    async def endpoint(request, kernel):
        return {}

    first = RouteSpec(name="first", path="/x/{a}", endpoint=endpoint, methods=("GET", "POST"))
    second = RouteSpec(name="second", path="/x/{b}", endpoint=endpoint, methods=("POST",))
    third = RouteSpec(name="third", path="/x/{b}", endpoint=endpoint, methods=("DELETE",))
    caplog.set_level(logging.WARNING)
    assert [r.name for r in plugin_routes([first, second, third], set())] == ["first", "third"]
    assert "'second' refused: POST /x/{b} is already served by plugin route 'first'" in caplog.text


class EchoSocket:
    """A plugin WebSocket route: it echoes text frames upper-cased, then says who served it."""

    @hookimpl
    def cao_register_routes(self):
        async def echo(websocket, kernel):
            await websocket.accept()
            text = await websocket.receive_text()
            await websocket.send_text(text.upper())
            await websocket.send_bytes(b"sessions: %d" % len(await kernel.list_sessions()))
            await websocket.close()

        async def broken(websocket, kernel):
            await websocket.accept()
            raise RuntimeError("plugin bug")

        return [RouteSpec(name="echo", path="/echo/ws", endpoint=echo, websocket=True),
                RouteSpec(name="broken_ws", path="/broken/ws", endpoint=broken, websocket=True)]


def test_a_plugin_websocket_route_is_served_behind_the_same_guards(make_kernel, register_plugin, cao_home):
    from websockets.exceptions import ConnectionClosedError, InvalidStatus
    from websockets.sync.client import connect

    kernel = make_kernel()
    token = ensure_token(cao_home)
    with register_plugin(kernel, EchoSocket(), name="echo"), \
            serve_in_thread(kernel, token=token, extra_routes=list(kernel.routes.values())) as running:
        url = f"ws://127.0.0.1:{running.port}"
        owner = {"Authorization": f"Bearer {token}"}
        with connect(url + "/echo/ws", additional_headers=owner, open_timeout=10) as socket:
            socket.send("hello")
            assert socket.recv(timeout=10) == "HELLO"
            assert socket.recv(timeout=10) == b"sessions: 0"
        refusals = [
            {},  # no token
            {"Authorization": "Bearer wrong"},
            {**owner, "Origin": "http://evil.example"},  # a page elsewhere
        ]
        for headers in refusals:
            with pytest.raises(InvalidStatus) as refused:
                connect(url + "/echo/ws", additional_headers=headers, open_timeout=10)
            assert refused.value.response.status_code == 403, headers
        # DNS rebinding: a name that resolved to this machine, sent as the Host.
        with socket_module.create_connection(("127.0.0.1", running.port), timeout=10) as raw:
            with pytest.raises(InvalidStatus) as refused:
                connect(f"ws://evil.example:{running.port}/echo/ws", sock=raw, additional_headers=owner,
                        open_timeout=10)
            assert refused.value.response.status_code == 403
        # A same-origin page passes the Origin check.
        same_origin = {**owner, "Origin": f"http://127.0.0.1:{running.port}"}
        with connect(url + "/echo/ws", additional_headers=same_origin, open_timeout=10) as socket:
            socket.send("same")
            assert socket.recv(timeout=10) == "SAME"
        with connect(url + "/broken/ws", additional_headers=owner, open_timeout=10) as socket:
            with pytest.raises(ConnectionClosedError) as closed:
                socket.recv(timeout=10)
            assert closed.value.rcvd.code == 1011
