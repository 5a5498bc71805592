"""The script's side of the wire: where the server is, who the run is, the API token, and the one
POST a step makes. Everything is read when a step is called, never at import, so importing the module
(a linter, a test) needs no environment.

The token is read from the cao home the way cao's own clients read it (``<home>/api-token``); the
runner passes the home's path, never the token, so no secret sits in an environment listing or on a
command line.
"""

from __future__ import annotations

import json
import os
import re
import threading
import urllib.error
import urllib.request
from typing import Any

from .errors import ShimHTTPError, ShimIdentityError, ShimTransportError

RUN_VARIABLE = "CAO_WORKFLOW_RUN_ID"
GENERATION_VARIABLE = "CAO_WORKFLOW_GENERATION"
STEP_VARIABLE = "CAO_WORKFLOW_STEP_ID"
URL_VARIABLE = "CAO_API_BASE_URL"
HOME_VARIABLE = "CAO_HOME_DIR"
# cao's default home and token file, restated: this module imports nothing of cao.
DEFAULT_HOME = "~/.aws/cli-agent-orchestrator"
TOKEN_FILE = "api-token"
TOKEN_RE = re.compile(r"^[A-Za-z0-9_-]{32,256}\Z")
RUN_STEP_PATH = "/terminals/run-step"
# The server answers when the worker does; the socket waits that long plus this margin.
DEFAULT_STEP_TIMEOUT = 600.0
SOCKET_MARGIN = 30.0

_counter_lock = threading.Lock()
_counter = 0


def next_call_key() -> str:
    """``call-1``, ``call-2``, ... in call order within this process: the same on every attempt of a
    run whose steps are called one after another (parallel callers must name their steps)."""
    global _counter
    with _counter_lock:
        _counter += 1
        return f"call-{_counter}"


def identity(surface: str) -> tuple[str, str, str]:
    """(run id, generation, server URL) from the environment; ``ShimIdentityError`` naming what is
    missing (never a value that is present)."""
    names = (RUN_VARIABLE, GENERATION_VARIABLE, URL_VARIABLE)
    values = [os.environ.get(name) for name in names]
    missing = [name for name, value in zip(names, values) if not value]
    if missing:
        raise ShimIdentityError(f"{surface}() needs {', '.join(missing)}: run the script with "
                                f"'cao workflow run', which sets them")
    run_id, generation, url = values
    assert run_id and generation and url
    return run_id, generation, url.rstrip("/")


def read_token() -> str | None:
    """The API token of the cao home named by ``CAO_HOME_DIR`` (None when there is none)."""
    home = os.path.expanduser(os.environ.get(HOME_VARIABLE) or DEFAULT_HOME)
    try:
        with open(os.path.join(home, TOKEN_FILE), encoding="ascii") as file:
            text = file.read().strip()
    except (OSError, UnicodeDecodeError):
        return None
    return text if TOKEN_RE.match(text) else None


# No proxy from the environment may see this traffic: it carries the token (cao's clients do the same).
_opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def post_step(url: str, body: dict[str, Any], timeout: float | None) -> dict[str, Any]:
    """POST ``body`` to the server's run-step route and return its JSON answer."""
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    token = read_token()
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url + RUN_STEP_PATH, data=json.dumps(body).encode(), headers=headers,
                                     method="POST")
    wait = (timeout if timeout is not None else DEFAULT_STEP_TIMEOUT) + SOCKET_MARGIN
    try:
        with _opener.open(request, timeout=wait) as response:
            text = response.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        text = exc.read().decode("utf-8", "replace")
        raise ShimHTTPError(exc.code, text, _detail(text)) from None
    except (OSError, ValueError) as exc:  # URLError, a reset or a timeout
        raise ShimTransportError(f"run-step at {url} failed: {exc}") from exc
    try:
        answer = json.loads(text)
    except ValueError:
        raise ShimTransportError(f"run-step at {url} answered something that is not JSON") from None
    if not isinstance(answer, dict):
        raise ShimTransportError(f"run-step at {url} answered JSON that is not an object")
    return answer


def _detail(text: str) -> str:
    """The message in an error body (``{"detail": "..."}`` or ``{"detail": {"message": ...}}``)."""
    try:
        detail = json.loads(text).get("detail")
    except (ValueError, AttributeError):
        return text[:300]
    if isinstance(detail, dict):
        detail = detail.get("message")
    return str(detail)[:300] if detail else ""
