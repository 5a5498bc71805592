"""How a browser gets in: a one-time login link, traded for a session cookie.

A browser cannot send ``Authorization: Bearer``, and the token must not sit in a page or a URL that
stays in the history. So the token's holder asks for a link (``POST /login-links``, or the line
``cao server`` prints); the link's code is good once and for ``CODE_SECONDS``; ``GET /login?code=``
trades it for two cookies:

- ``cao_session``: HttpOnly, SameSite=Strict, the credential itself (the page's script never sees it);
- ``cao_csrf``: SameSite=Strict and readable by the page, which echoes it in ``X-CAO-CSRF`` on every
  request that changes state. A page of another origin (another port on the same host shares cookies)
  cannot read it, so it cannot forge such a request.

Sessions live in the server's memory: a restarted server asks for a new link. Both tables are bounded,
the oldest entry going first.
"""

from __future__ import annotations

import hmac
import secrets
import threading
import time
from collections import OrderedDict

SESSION_COOKIE = "cao_session"
CSRF_COOKIE = "cao_csrf"
CSRF_HEADER = "x-cao-csrf"
CODE_SECONDS = 600.0
SESSION_SECONDS = 24 * 3600.0
MAX_CODES = 100
MAX_SESSIONS = 1000


class Logins:
    """The server's outstanding login codes and browser sessions (thread-safe)."""

    def __init__(self) -> None:
        self._now = time.time
        self._lock = threading.Lock()
        self._codes: OrderedDict[str, float] = OrderedDict()  # code -> expiry
        self._sessions: OrderedDict[str, tuple[str, float]] = OrderedDict()  # session -> (csrf, expiry)

    def issue_code(self) -> tuple[str, float]:
        """A fresh single-use code and when it expires."""
        code, expires = secrets.token_urlsafe(32), self._now() + CODE_SECONDS
        with self._lock:
            self._codes[code] = expires
            while len(self._codes) > MAX_CODES:
                self._codes.popitem(last=False)
        return code, expires

    def redeem(self, code: str) -> tuple[str, str] | None:
        """Trade a valid code for a new ``(session, csrf)`` pair; the code is spent either way."""
        with self._lock:
            expires = self._codes.pop(code, None)
            if expires is None or expires < self._now():
                return None
            session, csrf = secrets.token_urlsafe(32), secrets.token_urlsafe(24)
            self._sessions[session] = (csrf, self._now() + SESSION_SECONDS)
            while len(self._sessions) > MAX_SESSIONS:
                self._sessions.popitem(last=False)
        return session, csrf

    def csrf_of(self, session: str) -> str | None:
        """The CSRF value of a live session, or None when ``session`` is unknown or expired."""
        with self._lock:
            # A constant-time scan would cost a compare per session; the dictionary lookup leaks
            # nothing an attacker can use, since the keys are 256-bit random values.
            entry = self._sessions.get(session)
            if entry is None:
                return None
            if entry[1] < self._now():
                del self._sessions[session]
                return None
            return entry[0]

    @staticmethod
    def csrf_matches(expected: str, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(expected.encode(), given.encode())
