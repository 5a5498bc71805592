"""Downloading a profile from an ``https://`` URL, under strict rules.

- https only (plain http is refused), no user name/password, no query string, no fragment;
- the host must be ``github.com``, ``raw.githubusercontent.com`` or listed in the comma-separated
  ``CAO_PROFILE_ALLOWED_HOSTS`` (an entry ``host:port`` allows that port only);
- the path ends ``.md`` and every segment is made of ``A-Z a-z 0-9 . _ ~ + @ -`` (no ``.``/``..``
  segments, no percent-encoding);
- redirects are refused, not followed; the body is capped at 256 KiB while it streams (a larger
  ``Content-Length`` is refused before reading);
- the whole download (connecting, the TLS handshake, headers, body) has one deadline,
  ``CAO_PROFILE_DOWNLOAD_TIMEOUT`` seconds (default 20). A timeout per socket call is not enough: a
  host sending a byte now and then never trips it. So a watchdog shuts the socket down when the
  deadline passes, which ends whatever call is blocked on it; only the name lookup before connecting
  cannot be interrupted (the system resolver's own timeouts bound it).

A ``github.com/<owner>/<repo>/blob/<ref>/<path>.md`` page address is rewritten to the same file on
``raw.githubusercontent.com`` (GitHub would answer it with HTML or a redirect).
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import socket
import threading
import time
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..errors import InvalidInput, NotFound
from .validate import MAX_PROFILE_BYTES

if TYPE_CHECKING:
    import ssl

ALLOWED_HOSTS_VAR = "CAO_PROFILE_ALLOWED_HOSTS"
DEFAULT_ALLOWED_HOSTS = ("github.com", "raw.githubusercontent.com")
TIMEOUT_VAR = "CAO_PROFILE_DOWNLOAD_TIMEOUT"
DEFAULT_TIMEOUT = 20.0
# Names the threads a download runs on, so they can be told apart from the kernel's own.
THREAD_PREFIX = "cao-download"
_SEGMENT_RE = re.compile(r"^[A-Za-z0-9._~+@-]+\Z")
_CHUNK = 64 * 1024


def allowed_hosts(environ: Mapping[str, str] | None = None) -> frozenset[str]:
    """The default hosts plus those in ``CAO_PROFILE_ALLOWED_HOSTS`` (lowercased)."""
    env = os.environ if environ is None else environ
    extra = (h.strip().lower() for h in (env.get(ALLOWED_HOSTS_VAR) or "").split(","))
    return frozenset(DEFAULT_ALLOWED_HOSTS) | {h for h in extra if h}


def download_timeout(environ: Mapping[str, object] | None = None) -> float:
    """The deadline for one download in seconds: ``CAO_PROFILE_DOWNLOAD_TIMEOUT``, default 20."""
    env = os.environ if environ is None else environ
    value = str(env.get(TIMEOUT_VAR) or "").strip()
    if not value:
        return DEFAULT_TIMEOUT
    try:
        seconds = float(value)
    except ValueError:
        seconds = math.nan
    if not (0 < seconds < math.inf):
        raise InvalidInput(f"{TIMEOUT_VAR}={value!r} is not a number of seconds above 0")
    return seconds


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
    timeout: float | None = None,
    max_bytes: int = MAX_PROFILE_BYTES,
) -> tuple[str, bytes]:
    """Check ``url`` and download it. Returns ``(final_url, body)``.

    :param ssl_context: certificate checks to use; default ``ssl.create_default_context()`` (which
        honours ``SSL_CERT_FILE``).
    :param timeout: the deadline for the whole download in seconds; default ``download_timeout()``.
    :raises InvalidInput: a refused URL, a redirect, a body over ``max_bytes``, a network failure
        or the deadline passing; ``NotFound`` for HTTP 404.
    """
    import http.client
    import ssl

    target = check_url(url, hosts)
    timeout = download_timeout() if timeout is None else timeout
    context = ssl_context or ssl.create_default_context()
    watchdog = _Watchdog(timeout)
    try:
        body = _download(target, context, watchdog, max_bytes)
        if watchdog.expired:
            raise TimeoutError  # the socket was shut down under a read: the body may be cut short
        return target, body
    except (OSError, http.client.HTTPException, InvalidInput) as exc:
        # Whatever the shut-down socket made the HTTP client raise, the deadline is the reason.
        if watchdog.expired or isinstance(exc, TimeoutError):
            raise InvalidInput(
                f"{target}: the download did not finish within its {timeout:g} s deadline") from None
        raise
    finally:
        watchdog.close()


class _Watchdog:
    """Shuts a download's sockets down when its deadline passes, ending any call blocked on them."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.expired = False
        self._ends = time.monotonic() + timeout
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self._timer = threading.Timer(timeout, self._expire)
        self._timer.name = f"{THREAD_PREFIX}-deadline"
        self._timer.daemon = True
        self._timer.start()

    def connect(self, address: tuple[str, int], timeout: float | None = None,
                source_address: tuple[str, int] | None = None) -> socket.socket:
        """``socket.create_connection`` for ``http.client``, with the new socket watched. Connecting
        may take the time left, no more: the socket is watched only once it is connected."""
        left = self._ends - time.monotonic()
        if left <= 0:
            raise TimeoutError
        sock = socket.create_connection(address, min(left, timeout or left), source_address)
        with self._lock:
            if self.expired:
                sock.close()
                raise TimeoutError
            # A duplicate: TLS takes the original's descriptor over, and a shutdown through either
            # reaches the one connection they share.
            self._sockets.append(sock.dup())
        return sock

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            for sock in self._sockets:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        self._timer.cancel()
        self._timer.join()
        with self._lock:
            for sock in self._sockets:
                sock.close()
            self._sockets.clear()


def _download(target: str, context: ssl.SSLContext, watchdog: _Watchdog, max_bytes: int) -> bytes:
    import http.client
    import urllib.error
    import urllib.request

    class Connection(http.client.HTTPSConnection):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._create_connection = watchdog.connect

    class Handler(urllib.request.HTTPSHandler):
        def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
            return self.do_open(Connection, req, context=context)

    # No redirect handler at all: a 3xx reaches the error handler and is refused below.
    opener = urllib.request.OpenerDirector()
    for handler in (
        urllib.request.ProxyHandler(),
        Handler(),
        urllib.request.HTTPDefaultErrorHandler(),
        urllib.request.HTTPErrorProcessor(),
    ):
        opener.add_handler(handler)
    request = urllib.request.Request(target, headers={"User-Agent": "cao-profile-install", "Accept": "*/*"})
    try:
        # The timeout per socket call only bounds connecting; the watchdog ends everything else.
        with opener.open(request, timeout=watchdog.timeout) as response:
            if response.status != 200:
                raise InvalidInput(f"{target}: download failed: HTTP {response.status}")
            declared = response.headers.get("Content-Length")
            if declared and declared.isdigit() and int(declared) > max_bytes:
                raise InvalidInput(f"{target}: file is {int(declared)} bytes; the limit is {max_bytes}")
            body = bytearray()
            while chunk := response.read1(_CHUNK):
                body += chunk
                if len(body) > max_bytes:
                    raise InvalidInput(f"{target}: file is larger than the {max_bytes} byte limit")
            return bytes(body)
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
        if isinstance(exc.reason, TimeoutError):
            raise exc.reason from None
        raise InvalidInput(f"{target}: download failed: {_one_line(exc.reason)}") from None
    except TimeoutError:
        raise
    except (OSError, http.client.HTTPException) as exc:
        raise InvalidInput(f"{target}: download failed: {_one_line(exc) or type(exc).__name__}") from None


def _one_line(value: object) -> str:
    return " ".join(str(value).split())
