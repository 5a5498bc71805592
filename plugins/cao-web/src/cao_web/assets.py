"""The console's page and its assets, served from the files shipped inside the package.

Every file is read from the package's ``static`` folder, whose listing is taken once: a request names a
file of that listing or gets a 404, so no path a client sends reaches the file system. The page and its
assets hold no data (everything comes from the API, behind the token or a session cookie), so they are
public routes. Each answer carries a content security policy that allows nothing from elsewhere: no
inline script, no other origin, no framing.
"""

from __future__ import annotations

import functools
from importlib import resources
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; "
    "form-action 'self'"
)
HEADERS = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    # Assets change with the package: the browser asks again (a 304 when nothing changed).
    "cache-control": "no-cache",
}
TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".txt": "text/plain; charset=utf-8",
    ".json": "application/json",
}


@functools.cache
def listing() -> dict[str, bytes]:
    """Every shipped file by its path under ``static`` (``vendor/xterm/xterm.mjs``), with its bytes."""
    found: dict[str, bytes] = {}

    def walk(folder: resources.abc.Traversable, prefix: str) -> None:
        for entry in folder.iterdir():
            name = f"{prefix}{entry.name}"
            if entry.is_dir():
                walk(entry, name + "/")
            elif entry.suffix in TYPES:
                found[name] = entry.read_bytes()

    walk(resources.files("cao_web") / "static", "")
    return found


@functools.cache
def _etag(name: str) -> str:
    """A shipped file's validator: its files never change while the server runs, so it is hashed once."""
    import hashlib

    return '"' + hashlib.sha256(listing()[name]).hexdigest()[:32] + '"'


def asset_response(name: str, request: Request) -> Response:
    """The file ``name`` with its type, validators and headers; 404 when the package has no such file."""
    from starlette.responses import PlainTextResponse, Response

    body = listing().get(name)
    if body is None:
        return PlainTextResponse("no such file", status_code=404, headers=HEADERS)
    etag = _etag(name)
    headers = {**HEADERS, "etag": etag}
    if request.headers.get("if-none-match") == etag:
        return Response(status_code=304, headers=headers)
    suffix = name[name.rfind("."):]
    return Response(body, media_type=TYPES[suffix], headers=headers)


async def page(request: Request, kernel: object) -> Response:
    return asset_response("index.html", request)


async def asset(request: Request, kernel: object) -> Response:
    return asset_response(request.path_params["name"], request)
