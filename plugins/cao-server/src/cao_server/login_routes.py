"""``GET /login`` and ``POST /login-links``: a browser's way in (see :mod:`cao_server.logins`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .logins import CSRF_COOKIE, SESSION_COOKIE, SESSION_SECONDS, Logins

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

# The page holds no script: a refresh moves the browser on, as a same-site navigation that carries the
# new SameSite=Strict cookies. The code must not leak through a Referer or a cache.
_HEADERS = {
    "cache-control": "no-store",
    "referrer-policy": "no-referrer",
    "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
    "x-content-type-options": "nosniff",
}
_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">{refresh}<title>cao</title></head>
<body style="font-family: sans-serif; margin: 3em"><h1>cao</h1><p>{text}</p></body></html>
"""
_REFUSED = (
    "This login link was already used, has expired, or is not one of this server's. "
    "Get a new one with <code>cao console --web</code> (it prints a link that works once, for ten "
    "minutes)."
)


def login_link(base_url: str, logins: Logins) -> tuple[str, float]:
    """A one-time login URL under ``base_url`` (``http://host:port``) and when it expires."""
    code, expires = logins.issue_code()
    return f"{base_url.rstrip('/')}/login?code={code}", expires


def login_routes(logins: Logins) -> list[Any]:
    """The two routes, as Starlette routes over ``logins``."""
    from starlette.responses import HTMLResponse, JSONResponse
    from starlette.routing import Route

    async def login(request: Request) -> Response:
        pair = logins.redeem(request.query_params.get("code") or "")
        if pair is None:
            page = _PAGE.format(refresh="", text=_REFUSED)
            return HTMLResponse(page, status_code=401, headers=_HEADERS)
        session, csrf = pair
        page = _PAGE.format(
            refresh='<meta http-equiv="refresh" content="0; url=/">',
            text='Logged in. <a href="/">Open the console</a>.',
        )
        response = HTMLResponse(page, headers=_HEADERS)
        age = int(SESSION_SECONDS)
        response.set_cookie(SESSION_COOKIE, session, max_age=age, path="/", httponly=True, samesite="strict")
        # Readable by the page's script, which echoes it in X-CAO-CSRF.
        response.set_cookie(CSRF_COOKIE, csrf, max_age=age, path="/", httponly=False, samesite="strict")
        return response

    async def login_links(request: Request) -> Response:
        base = f"{request.url.scheme}://{request.url.netloc}"
        url, expires = login_link(base, logins)
        return JSONResponse({"url": url, "expires_at": expires}, status_code=201, headers=_HEADERS)

    return [
        Route("/login", login, methods=["GET"], name="login"),
        Route("/login-links", login_links, methods=["POST"], name="login_links"),
    ]


__all__ = ["login_link", "login_routes"]
