"""Downloading a profile from an ``https://`` URL, under strict rules.

- https only (plain http is refused), no user name/password, no query string, no fragment;
- the host must be ``github.com``, ``raw.githubusercontent.com`` or listed in the comma-separated
  ``CAO_PROFILE_ALLOWED_HOSTS`` (an entry ``host:port`` allows that port only);
- the path ends ``.md`` and every segment is made of ``A-Z a-z 0-9 . _ ~ + @ -`` (no ``.``/``..``
  segments, no percent-encoding);
- redirects are refused, not followed; the body is capped at 256 KiB while it streams (a larger
  ``Content-Length`` is refused before reading); the whole download has a deadline.

A ``github.com/<owner>/<repo>/blob/<ref>/<path>.md`` page address is rewritten to the same file on
``raw.githubusercontent.com`` (GitHub would answer it with HTML or a redirect).
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from ..errors import InvalidInput, NotFound
from .validate import MAX_PROFILE_BYTES

if TYPE_CHECKING:
    import ssl

ALLOWED_HOSTS_VAR = "CAO_PROFILE_ALLOWED_HOSTS"
DEFAULT_ALLOWED_HOSTS = ("github.com", "raw.githubusercontent.com")
DEFAULT_TIMEOUT = 20.0
_SEGMENT_RE = re.compile(r"^[A-Za-z0-9._~+@-]+\Z")
_CHUNK = 64 * 1024


def allowed_hosts(environ: Mapping[str, str] | None = None) -> frozenset[str]:
    """The default hosts plus those in ``CAO_PROFILE_ALLOWED_HOSTS`` (lowercased)."""
    env = os.environ if environ is None else environ
    extra = (h.strip().lower() for h in (env.get(ALLOWED_HOSTS_VAR) or "").split(","))
    return frozenset(DEFAULT_ALLOWED_HOSTS) | {h for h in extra if h}


def check_url(url: str, hosts: Iterable[str] | None = None) -> str:
    """Return the URL to download (after the GitHub page rewrite) or raise ``InvalidInput``."""
    allowed = frozenset(h.lower() for h in hosts) if hosts is not None else allowed_hosts()
    if any(ord(ch) <= 0x20 or ord(ch) == 0x7F for ch in url):
        raise InvalidInput(f"URL {url!r} contains whitespace or control characters")
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        raise InvalidInput(f"refused {url}: not a valid URL ({exc})") from None
    scheme = parts.scheme.lower()
    if scheme == "http":
        raise InvalidInput(f"refused {url}: plain http is not allowed, use https")
    if scheme != "https":
        raise InvalidInput(f"refused {url}: only https URLs can be installed")
    if "@" in parts.netloc:
        raise InvalidInput(f"refused {url}: URLs with a user name or password are not allowed")
    if "?" in url:
        raise InvalidInput(f"refused {url}: URLs with a query string are not allowed")
    if "#" in url:
        raise InvalidInput(f"refused {url}: URLs with a fragment are not allowed")
    host = (parts.hostname or "").lower()
    try:
        port = parts.port
    except ValueError:
        raise InvalidInput(f"refused {url}: invalid port") from None
    if not host:
        raise InvalidInput(f"refused {url}: no host")
    if host not in allowed and f"{host}:{port}" not in allowed:
        raise InvalidInput(
            f"refused {url}: host {host!r} is not allowed (allowed: {', '.join(sorted(allowed))};"
            f" add hosts to {ALLOWED_HOSTS_VAR})"
        )
    segments = parts.path.split("/")[1:]
    if not parts.path.startswith("/") or not segments:
        raise InvalidInput(f"refused {url}: no file path")
    for segment in segments:
        if segment in ("", ".", "..") or not _SEGMENT_RE.match(segment):
            raise InvalidInput(
                f"refused {url}: unsafe path segment {segment!r} (use letters, digits and . _ ~ + @ -)"
            )
    if not segments[-1].endswith(".md") or segments[-1] == ".md":
        raise InvalidInput(f"refused {url}: the path must end with a .md file name")
    if host == "github.com" and port is None and len(segments) >= 5 and segments[2] in ("blob", "raw"):
        owner, repo, _, *rest = segments
        return "https://raw.githubusercontent.com/" + "/".join([owner, repo, *rest])
    return url


def fetch_profile(
    url: str,
    *,
    hosts: Iterable[str] | None = None,
    ssl_context: ssl.SSLContext | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    max_bytes: int = MAX_PROFILE_BYTES,
) -> tuple[str, bytes]:
    """Check ``url`` and download it. Returns ``(final_url, body)``.

    :param ssl_context: certificate checks to use; default ``ssl.create_default_context()`` (which
        honours ``SSL_CERT_FILE``).
    :raises InvalidInput: a refused URL, a redirect, a body over ``max_bytes``, a network failure
        or the deadline passing; ``NotFound`` for HTTP 404.
    """
    import http.client
    import ssl
    import urllib.error
    import urllib.request

    target = check_url(url, hosts)
    context = ssl_context or ssl.create_default_context()
    # No redirect handler at all: a 3xx reaches the error handler and is refused below.
    opener = urllib.request.OpenerDirector()
    for handler in (
        urllib.request.ProxyHandler(),
        urllib.request.HTTPSHandler(context=context),
        urllib.request.HTTPDefaultErrorHandler(),
        urllib.request.HTTPErrorProcessor(),
    ):
        opener.add_handler(handler)
    request = urllib.request.Request(target, headers={"User-Agent": "cao-profile-install", "Accept": "*/*"})
    deadline = time.monotonic() + timeout
    try:
        with opener.open(request, timeout=timeout) as response:
            if response.status != 200:
                raise InvalidInput(f"{target}: download failed: HTTP {response.status}")
            declared = response.headers.get("Content-Length")
            if declared and declared.isdigit() and int(declared) > max_bytes:
                raise InvalidInput(f"{target}: file is {int(declared)} bytes; the limit is {max_bytes}")
            body = bytearray()
            while True:
                if time.monotonic() > deadline:
                    raise InvalidInput(f"{target}: download took longer than {timeout:g} s")
                chunk = response.read1(_CHUNK)
                if not chunk:
                    break
                body += chunk
                if len(body) > max_bytes:
                    raise InvalidInput(f"{target}: file is larger than the {max_bytes} byte limit")
            return target, bytes(body)
    except urllib.error.HTTPError as exc:
        with exc:
            if 300 <= exc.code < 400:
                location = _one_line(exc.headers.get("Location") or "?")[:200]
                raise InvalidInput(
                    f"{target}: refused redirect (HTTP {exc.code} to {location}); redirects are not followed"
                ) from None
            if exc.code == 404:
                raise NotFound(f"{target}: not found (HTTP 404)") from None
            raise InvalidInput(
                f"{target}: download failed: HTTP {exc.code} {_one_line(exc.reason)}"
            ) from None
    except urllib.error.URLError as exc:
        reason = exc.reason
        if isinstance(reason, TimeoutError):
            raise InvalidInput(f"{target}: timed out after {timeout:g} s") from None
        raise InvalidInput(f"{target}: download failed: {_one_line(reason)}") from None
    except TimeoutError:
        raise InvalidInput(f"{target}: timed out after {timeout:g} s") from None
    except (OSError, http.client.HTTPException) as exc:
        raise InvalidInput(f"{target}: download failed: {_one_line(exc) or type(exc).__name__}") from None


def _one_line(value: object) -> str:
    return " ".join(str(value).split())
