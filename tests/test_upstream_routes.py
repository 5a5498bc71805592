"""docs/upstream.md keeps its word: every upstream route it marks answered is served by cao-server's app
with every installed plugin loaded, every gap has a reason and is really not served (so a route added
later must be moved to answered), and the table has one well-formed row per route-and-method pair."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "upstream.md"
ROW = re.compile(r"^\|\s*`(?P<method>[A-Z]+)`\s*\|\s*`(?P<path>/[^`]*)`\s*\|\s*(?P<state>[a-z]+)\s*\|"
                 r"\s*(?P<what>.*?)\s*\|\s*$")
METHODS = {"GET", "POST", "PUT", "PATCH", "DELETE", "WEBSOCKET"}
# A value for each path parameter upstream uses, well-formed for cao's checks.
SAMPLES = {"terminal_id": "0badf00d", "receiver_id": "0badf00d", "session_name": "cao-sample",
           "name": "sample", "category": "sample", "job_id": "1", "run_id": "run-1", "step_id": "step-1"}


def table() -> list[dict[str, str]]:
    rows = []
    for number, line in enumerate(PAGE.read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("| `"):
            match = ROW.match(line)
            assert match, f"docs/upstream.md line {number} is not a table row of the stated format: {line}"
            rows.append({**match.groupdict(), "line": str(number)})
    return rows


ROWS = table()


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory):
    """cao-server's app over a kernel with every installed plugin, never started (only routing is read)."""
    from cao_kernel.kernel import Kernel
    from cao_server.app import create_app

    kernel = Kernel(home=tmp_path_factory.mktemp("home"))
    return create_app(kernel, extra_routes=list(dict(getattr(kernel, "routes", None) or {}).values()))


def served(app, method: str, path: str) -> bool:
    """Whether the app has a route taking ``method`` at ``path`` with sample values in it (anything else
    would answer 404 or 405)."""
    from starlette.routing import Match

    concrete = re.sub(r"{([^}:]+)(?::[^}]*)?}", lambda m: SAMPLES.get(m.group(1), "sample"), path)
    websocket = method == "WEBSOCKET"
    scope = {"type": "websocket" if websocket else "http", "path": concrete, "root_path": "",
             "method": "GET" if websocket else method, "headers": [], "query_string": b""}
    literal = {r.path for r in app.router.routes if "{" not in getattr(r, "path", "{")}
    for route in app.router.routes:
        match, _ = route.matches(scope)
        if match is Match.FULL:
            # A template route never takes a path another route spells out (cao_server.methods.shadowed).
            return not ("{" in getattr(route, "path", "") and concrete in literal)
    return False


def test_the_table_is_well_formed_and_complete_in_its_rows():
    assert len(ROWS) >= 80, "docs/upstream.md lost its table"
    pairs = [(row["method"], row["path"]) for row in ROWS]
    assert len(pairs) == len(set(pairs)), "a route-and-method pair is listed twice"
    for row in ROWS:
        where = f"docs/upstream.md line {row['line']}"
        assert row["method"] in METHODS, where
        assert row["state"] in ("answered", "gap"), f"{where}: state must be 'answered' or 'gap'"
        assert len(row["what"]) >= 8, f"{where}: say what cao answers it with, or why it is a gap"
        assert not re.match(r"^/(memory|internal/memory|agui|graph|outcomes|docs|redoc)\b", row["path"]), (
            f"{where}: the page leaves these routes out")


def shape(path: str) -> str:
    return re.sub(r"{[^}]*}", "{}", path)


def has_route(app, method: str, path: str) -> bool:
    """Whether the app declares a route of this shape for ``method`` (a gap may still reach a template
    route, `GET /agents/profiles/templates` is `/agents/profiles/{name}` with a name, and answer 404)."""
    for route in app.router.routes:
        methods = {"WEBSOCKET"} if not hasattr(route, "methods") else (route.methods or METHODS)
        if shape(getattr(route, "path", "")) == shape(path) and method in methods:
            return True
    return False


@pytest.mark.parametrize("row", ROWS, ids=[f"{r['method']} {r['path']}" for r in ROWS])
def test_each_row_says_what_cao_serves(app, row):
    pair = f"{row['method']} {row['path']}"
    if row["state"] == "answered":
        assert served(app, row["method"], row["path"]), f"{pair} is marked answered, but cao answers 404/405"
    else:
        assert not has_route(app, row["method"], row["path"]), f"{pair} is served now: mark it answered"


def test_a_route_cao_does_not_serve_is_seen_as_such(app):
    # The check above can tell: an unknown path and a wrong method are not served.
    assert not served(app, "GET", "/no/such/route")
    assert not served(app, "DELETE", "/health")
    assert not served(app, "DELETE", "/agents/profiles/search")
    assert served(app, "GET", "/agents/profiles/search")
