"""The background sender: a bounded queue drained by one thread that posts to the webhook with httpx.

The kernel's observers only call ``submit``, which appends to the queue (or counts a drop when it is
full) and returns; formatting, network and waiting all happen on the sender thread. Per notification:

- 2xx: sent.
- 429: wait as long as the service says (``retry_after``: the ``Retry-After`` header, or what the
  service reads instead), then try again; a notification that is rate-limited ``MAX_RATE_LIMITED``
  times is dropped. After a 2xx, ``pause_after`` (when given) may hold the next post.
- 408, 5xx and transport errors (timeouts included): retried ``retries`` times with doubling backoff,
  then dropped.
- any other status: the webhook refused the payload; dropped at once (the first time for each
  status is logged with the service's explanation).

``close(timeout)`` stops taking notifications, posts what is queued until ``timeout`` runs out, and
drops (and counts) the rest. Counters are available from ``stats()``.
"""

from __future__ import annotations

import collections
import json
import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .redact import RedactFilter, Secret, scrub, secret_forms

if TYPE_CHECKING:
    from .service import Service

BACKOFF_BASE = 0.5
BACKOFF_MAX = 8.0
MAX_RATE_LIMITED = 5
#: How long close() waits past its deadline for the thread before writing off what is left.
JOIN_MARGIN = 0.25
#: How often a full queue may log (the count of drops in between is in the next line).
DROP_LOG_INTERVAL = 60.0

#: What the sender thread's queue read returns once it should stop.
_DONE = object()

COUNTERS = ("submitted", "sent", "retried", "rate_limited", "dropped_full", "dropped_failed",
            "dropped_rejected", "dropped_shutdown")


def backoff(failures: int) -> float:
    """Seconds before retry number ``failures`` (1-based): 0.5, 1, 2, 4, then 8."""
    return min(BACKOFF_MAX, BACKOFF_BASE * 2 ** max(0, failures - 1))


class WebhookSender:
    """Posts rendered notifications to one webhook from its own thread.

    :param url: the webhook (kept secret).
    :param render: turns a queued item into the JSON body; runs on the sender thread.
    :param queue_size: queued notifications beyond this are dropped and counted.
    :param timeout: seconds allowed for each request.
    :param retries: extra attempts after a 408, 5xx or transport error.
    :param service: how the service answers a 429 (and a 2xx), and the names of the thread, the
        ``User-Agent`` and the logger.
    """

    def __init__(
        self, *, url: Secret, render: Callable[[Any], dict[str, Any]], queue_size: int, timeout: float,
        retries: int, service: Service,
    ) -> None:
        self._url = url
        self._render = render
        self._queue_size = queue_size
        self._timeout = timeout
        self._retries = retries
        self._service = service
        self._name = name = service.distribution
        self._log = logging.getLogger(service.logger)
        self._user_agent = service.user_agent()
        self._items: collections.deque[Any] = collections.deque()
        self._cond = threading.Condition()
        self._wake = threading.Event()
        self._closing = False
        self._inflight = False
        self._deadline: float | None = None
        self._pause_until = 0.0
        self._counts = dict.fromkeys(COUNTERS, 0)
        self._warned_statuses: set[int] = set()
        self._last_drop_log = -DROP_LOG_INTERVAL
        self._drops_since_log = 0
        self._secrets = secret_forms(url.reveal())
        self._redact = RedactFilter(self._secrets)
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def __repr__(self) -> str:
        state = "closing" if self._closing else "running"
        return f"<WebhookSender {self._name} {state} queued={len(self._items)}>"

    # -- the event-path side ------------------------------------------------------------------------

    def start(self) -> None:
        self._redact.install()
        self._thread.start()

    def submit(self, item: Any) -> bool:
        """Queue ``item`` for posting. Never blocks; returns False when it was dropped."""
        with self._cond:
            if self._closing:
                self._counts["dropped_shutdown"] += 1
                return False
            if len(self._items) >= self._queue_size:
                self._counts["dropped_full"] += 1
                self._drops_since_log += 1
                now = time.monotonic()
                report = now - self._last_drop_log >= DROP_LOG_INTERVAL
                if report:
                    self._last_drop_log, dropped, self._drops_since_log = now, self._drops_since_log, 0
            else:
                self._items.append(item)
                self._counts["submitted"] += 1
                self._cond.notify()
                return True
        if report:
            self._log.warning("%s: the queue is full (%d notifications waiting); dropped %d "
                              "notification(s)", self._name, self._queue_size, dropped)
        return False

    def stats(self) -> dict[str, int]:
        """A snapshot of the counters, plus ``queued`` (waiting right now)."""
        with self._cond:
            return {**self._counts, "queued": len(self._items)}

    def close(self, timeout: float) -> dict[str, int]:
        """Stop accepting, flush for at most ``timeout`` seconds, drop the rest. Returns ``stats()``."""
        with self._cond:
            if self._deadline is None:
                self._deadline = time.monotonic() + timeout
            self._closing = True
            deadline = self._deadline
            self._cond.notify_all()
        self._wake.set()
        if self._thread.is_alive():
            # Requests started after close() are cut to the deadline; one started before may hang on.
            self._thread.join(max(0.0, deadline - time.monotonic()) + JOIN_MARGIN)
        if self._thread.is_alive():
            with self._cond:
                lost = len(self._items) + int(self._inflight)
                self._counts["dropped_shutdown"] += lost
                self._items.clear()
                self._inflight = False
            self._log.warning("%s: the webhook did not answer within the flush time; dropped %d "
                              "notification(s)", self._name, lost)
        self._redact.uninstall()
        return self.stats()

    # -- the sender thread --------------------------------------------------------------------------

    def _count(self, counter: str) -> None:
        with self._cond:
            self._counts[counter] += 1

    def _settle(self, outcome: str) -> None:
        """Record how the notification in flight ended (unless close() already wrote it off)."""
        with self._cond:
            if self._inflight:
                self._inflight = False
                self._counts[outcome] += 1

    def _next(self) -> Any:
        with self._cond:
            while not self._items:
                if self._closing:
                    return _DONE
                self._cond.wait()
            if self._deadline is not None and time.monotonic() >= self._deadline:
                return _DONE
            self._inflight = True
            return self._items.popleft()

    def _run(self) -> None:
        client = None
        try:
            import httpx

            client = httpx.Client(headers={"User-Agent": self._user_agent}, follow_redirects=False)
            while True:
                item = self._next()
                if item is _DONE:
                    break
                try:
                    self._send(client, item)
                except Exception as exc:  # noqa: BLE001 - one bad notification must not stop the sender
                    self._settle("dropped_failed")
                    self._log.warning("%s: dropped a notification after an unexpected error: %s",
                                      self._name, self._describe(exc))
        except Exception as exc:  # noqa: BLE001 - e.g. httpx missing: say so once, then stay quiet
            self._log.warning("%s: the sender stopped: %s", self._name, self._describe(exc))
        finally:
            if client is not None:
                client.close()
            with self._cond:
                self._counts["dropped_shutdown"] += len(self._items)
                self._items.clear()
                self._closing = True

    def _describe(self, exc: BaseException) -> str:
        return scrub(f"{type(exc).__name__}: {exc}", self._secrets)[:300]

    def _send(self, client: Any, item: Any) -> None:
        import httpx

        try:
            body = json.dumps(self._render(item), ensure_ascii=False).encode("utf-8")
        except Exception as exc:  # noqa: BLE001
            self._settle("dropped_failed")
            self._log.warning("%s: could not format a notification: %s", self._name, self._describe(exc))
            return
        failures = 0
        limited = 0
        while True:
            if not self._sleep_until(self._pause_until):
                self._settle("dropped_shutdown")
                return
            timeout = self._request_timeout()
            if timeout is None:
                self._settle("dropped_shutdown")
                return
            try:
                response = client.post(self._url.reveal(), content=body, timeout=timeout,
                                       headers={"Content-Type": "application/json"})
            except httpx.HTTPError as exc:
                problem = self._describe(exc)
            else:
                status = response.status_code
                if 200 <= status < 300:
                    if self._service.pause_after is not None:
                        self._pause_until = time.monotonic() + self._service.pause_after(response.headers)
                    self._settle("sent")
                    return
                if status == 429:
                    limited += 1
                    self._count("rate_limited")
                    wait = self._service.retry_after(response.headers, response.content)
                    self._pause_until = time.monotonic() + wait
                    if limited >= MAX_RATE_LIMITED:
                        self._settle("dropped_failed")
                        self._log.warning("%s: dropped a notification rate-limited %d times in a row",
                                          self._name, limited)
                        return
                    self._log.info("%s: rate-limited; waiting %.2f s as %s asks", self._name, wait,
                                   self._service.title)
                    continue
                if status != 408 and status < 500:
                    self._rejected(status, response.text)
                    return
                problem = f"HTTP {status}"
            failures += 1
            if failures > self._retries:
                self._settle("dropped_failed")
                self._log.warning("%s: dropped a notification after %d attempt(s); last problem: %s",
                                  self._name, failures, problem)
                return
            self._count("retried")
            if not self._sleep_until(time.monotonic() + backoff(failures)):
                self._settle("dropped_shutdown")
                return

    def _rejected(self, status: int, text: str) -> None:
        self._settle("dropped_rejected")
        if status in self._warned_statuses:
            return
        self._warned_statuses.add(status)
        detail = scrub(" ".join(text.split()), self._secrets)[:200]
        hint = " (is the webhook deleted, or its URL mistyped?)" if status in (401, 403, 404) else ""
        self._log.warning("%s: the webhook refused a notification with HTTP %d%s: %s", self._name, status,
                          hint, detail or "no detail")

    def _request_timeout(self) -> float | None:
        deadline = self._deadline
        if deadline is None:
            return self._timeout
        left = deadline - time.monotonic()
        return None if left <= 0.01 else min(self._timeout, left)

    def _sleep_until(self, when: float) -> bool:
        """Wait until the monotonic time ``when``. False when shutting down leaves no time for it."""
        while True:
            now = time.monotonic()
            if now >= when:
                return True
            deadline = self._deadline
            if deadline is not None:
                if when > deadline:
                    return False
                time.sleep(when - now)
                return True
            # Woken early by close(): loop to weigh the wait against the new deadline.
            self._wake.wait(when - now)

