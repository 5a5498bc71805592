"""Security by default, as ASGI middleware around the whole app (plugin routes included).

Outermost first:

1. Host allow-list: the Host header must name a loopback host, the bound host, or one listed in
   ``CAO_ALLOWED_HOSTS`` (``*`` disables the check); otherwise 400. This stops DNS rebinding: a web page
   whose name resolves to 127.0.0.1 still sends its own name as Host.
2. CORS, only when ``CAO_CORS_ORIGINS`` lists origins: answers their preflights and marks responses.
3. Origin check on POST/PUT/PATCH/DELETE: a request with no Origin (CLI, MCP server, curl) passes, so
   does a same-origin one (Origin host:port equal to Host) and one from a listed origin; any other,
   ``null`` included, gets 403 "Cross-origin request blocked". Reads always pass (the browser keeps
   their answers from other origins).
4. Token, on loopback too: ``Authorization: Bearer <token>`` or 401, with the token from the owner's
   cao home (``api-token``, mode 0600), so no other local user can drive the owner's agents. ``GET
   /health`` stays open so monitors can probe liveness, and so do the GET routes a plugin marks public
   (pages and assets that hold no data).
5. A browser's session cookie (:mod:`cao_server.logins`) stands for the token. Cookies go with every
   request a browser makes, whichever page starts it, so a cookie-carried POST/PUT/PATCH/DELETE also
   needs the session's ``X-CAO-CSRF`` header, and a cookie-carried WebSocket needs the server's own
   Origin: both are what only the server's own pages have.
"""

from __future__ import annotations

import hmac
import json
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import urlsplit

from .logins import CSRF_HEADER, SESSION_COOKIE, Logins
from .settings import LOOPBACK_HOSTS, ServerSettings

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Receive, Scope, Send

UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
OPEN_ROUTES = frozenset({("GET", "/health"), ("HEAD", "/health")})


# A Host header is a name or an address, then an optional port; anything else (user info, a path, a
# second colon) names no host, so it matches no allowed one.
_HOST_RE = re.compile(r"^(?:\[([0-9a-f:.]+)\]|([a-z0-9._-]+))(?::\d{1,5})?\Z")


def host_name(header: str) -> str:
    """The host part of a Host header value, lowercased (``[::1]:9889`` -> ``::1``); empty when the
    value is not a plain host and port (``127.0.0.1:1@evil.example``)."""
    found = _HOST_RE.match(header.strip().lower())
    if found is None:
        return ""
    return found.group(1) or found.group(2)


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers") or ():
        if key.lower() == name:
            return value.decode("latin-1")
    return None


def _cookie(scope: Scope, name: str) -> str | None:
    raw = _header(scope, b"cookie")
    if not raw:
        return None
    from starlette.requests import cookie_parser

    return cookie_parser(raw).get(name)


async def refuse_websocket(send: Send) -> None:
    """Close a WebSocket before accepting it: the client gets HTTP 403 and no connection."""
    await send({"type": "websocket.close", "code": 1008})


async def send_error(
    send: Send, status: int, detail: str, error: str, headers: Iterable[tuple[str, str]] = ()
) -> None:
    """Answer with cao's error JSON from inside middleware."""
    body = json.dumps({"detail": detail, "error": error}).encode()
    raw = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    raw += [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


class HostGuard:
    """Refuse requests whose Host header is not an allowed name (400)."""

    def __init__(self, app: ASGIApp, settings: ServerSettings) -> None:
        self.app = app
        bound = settings.host.strip().strip("[]").lower()
        extra = {host_name(h) or h.strip().strip("[]").lower() for h in settings.allowed_hosts}
        self.any_host = "*" in settings.allowed_hosts
        self.allowed = frozenset(LOOPBACK_HOSTS | {bound} | extra) - {""}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket") and not self.any_host:
            if host_name(_header(scope, b"host") or "") not in self.allowed:
                if scope["type"] == "websocket":
                    await refuse_websocket(send)
                    return
                await send_error(send, 400, "Invalid host header", "InvalidInput")
                return
        await self.app(scope, receive, send)


class Credential(NamedTuple):
    """What let a request in. ``csrf`` is the value a browser session's writes must echo in
    ``X-CAO-CSRF``; None for the token, or when no token is required."""

    csrf: str | None = None


class RequestGuard:
    """Refuse cross-origin state changes (403) and, when required, requests without the token (401)."""

    def __init__(
        self, app: ASGIApp, settings: ServerSettings, logins: Logins | None = None,
        public: Iterable[re.Pattern[str]] = (),
    ) -> None:
        self.app = app
        self.origins = frozenset(o.rstrip("/").lower() for o in settings.cors_origins)
        self.any_origin = "*" in self.origins
        self.token = (settings.token or "").encode() if settings.token_required else None
        self.logins = logins
        self.public = tuple(public)

    def _credential(self, scope: Scope) -> Credential | None:
        """What lets the request in (the token, a browser session, or nothing needed), or None."""
        if self.token is None:
            return Credential()
        scheme, _, value = (_header(scope, b"authorization") or "").partition(" ")
        if scheme.lower() == "bearer" and hmac.compare_digest(value.strip().encode(), self.token):
            return Credential()
        session = _cookie(scope, SESSION_COOKIE) if self.logins is not None else None
        csrf = self.logins.csrf_of(session) if self.logins is not None and session else None
        return Credential(csrf=csrf) if csrf else None

    def _is_public(self, method: str, path: str) -> bool:
        return (method, path) in OPEN_ROUTES or (
            method in ("GET", "HEAD") and any(p.match(path) for p in self.public)
        )

    def origin_allowed(self, origin: str, host: str) -> bool:
        origin = origin.strip().rstrip("/").lower()
        if self.any_origin or origin in self.origins:
            return True
        parts = urlsplit(origin)
        # Opaque origins ("null", file:, data:) are never the server's own.
        return (
            parts.scheme in ("http", "https") and bool(parts.netloc) and parts.netloc == host.strip().lower()
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            # A WebSocket changes state like a POST and a browser opens one from any page: the same
            # Origin rule, and the token.
            origin = _header(scope, b"origin")
            foreign = origin is not None and not self.origin_allowed(origin, _header(scope, b"host") or "")
            credential = self._credential(scope)
            if foreign or credential is None or (credential.csrf is not None and origin is None):
                await refuse_websocket(send)
                return
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        method = scope["method"]
        if method in UNSAFE_METHODS:
            origin = _header(scope, b"origin")
            if origin is not None and not self.origin_allowed(origin, _header(scope, b"host") or ""):
                await send_error(send, 403, "Cross-origin request blocked", "Forbidden")
                return
        if self._is_public(method, scope["path"]):
            await self.app(scope, receive, send)
            return
        credential = self._credential(scope)
        if credential is not None and credential.csrf is not None and method in UNSAFE_METHODS:
            if not Logins.csrf_matches(credential.csrf, _header(scope, CSRF_HEADER.encode())):
                await send_error(
                    send, 403, "missing or wrong X-CAO-CSRF header: a browser session must echo its "
                    "cao_csrf cookie on every request that changes state", "Forbidden",
                )
                return
        if credential is None:
            await send_error(
                send,
                401,
                "missing or wrong API token: send 'Authorization: Bearer <token>' with the token "
                "in the api-token file of the server's cao home (CAO_HOME_DIR, default "
                "~/.aws/cli-agent-orchestrator); the cao command and agents' MCP servers read it "
                "themselves when they share that home",
                "Unauthorized",
                headers=[("www-authenticate", "Bearer")],
            )
            return
        await self.app(scope, receive, send)


def middleware(
    settings: ServerSettings, logins: Logins | None = None, public: Iterable[re.Pattern[str]] = ()
) -> list[Any]:
    """Starlette ``Middleware`` entries for every guard, outermost first; ``logins`` holds the browser
    sessions whose cookie stands for the token, ``public`` the paths served without a credential."""
    from starlette.middleware import Middleware

    stack = [Middleware(HostGuard, settings=settings)]
    if settings.cors_origins:
        from starlette.middleware.cors import CORSMiddleware

        stack.append(
            Middleware(
                CORSMiddleware,
                allow_origins=list(settings.cors_origins),
                allow_methods=["*"],
                allow_headers=["*"],
                allow_credentials="*" not in settings.cors_origins,
            )
        )
    stack.append(Middleware(RequestGuard, settings=settings, logins=logins, public=public))
    return stack


__all__ = ["HostGuard", "RequestGuard", "host_name", "middleware", "send_error"]
