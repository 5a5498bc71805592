"""docs/upstream.md's table of upstream's routes names exactly the routes the released upstream package
answers (read from its own app, in its own environment), leaving out the families the page leaves out."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "upstream.md"
METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
# The families the page leaves out, as it says in one line: memory, AG-UI, graph, outcomes and the
# framework's own documentation pages.
LEFT_OUT = re.compile(r"^/(?:memory|internal/memory|agui|graph|outcomes|docs|redoc|openapi\.json)(?:/|$)")
_SPAN = re.compile(r"`([^`]+)`")


def table_pairs(text: str) -> set[tuple[str, str]]:
    """The (method, path) of each table row: a code span with the method and one with the path, or one
    span holding both (`GET /health`)."""
    pairs = set()
    for line in text.splitlines():
        if not line.lstrip().startswith("|"):
            continue
        spans = _SPAN.findall(line)
        for index, span in enumerate(spans):
            parts = span.split()
            if len(parts) == 2 and parts[0] in METHODS and parts[1].startswith("/"):
                pairs.add((parts[0], parts[1]))
                break
            if span in METHODS and index + 1 < len(spans) and spans[index + 1].startswith("/"):
                pairs.add((span, spans[index + 1]))
                break
    return pairs


def _shape(path: str) -> str:
    # Parameter names may differ between the page and the code; the routes are the same.
    return re.sub(r"{[^}]*}", "{}", path)


def test_the_table_reader_takes_both_row_styles():
    text = "| `GET` | `/health` | yes |\n| `POST /terminals/{id}/input` | yes |\n| text | `x` |\n"
    assert table_pairs(text) == {("GET", "/health"), ("POST", "/terminals/{id}/input")}


def test_docs_table_lists_every_upstream_route(upstream, tmp_path):
    from cao_testkit.upstream import upstream_routes

    if not PAGE.exists():
        pytest.skip("docs/upstream.md (the table of upstream's routes) is not written yet")
    answered = {(m, _shape(p)) for m, p in upstream_routes(upstream, tmp_path)}
    wanted = {(m, p) for m, p in answered if not LEFT_OUT.match(p)}
    listed = {(m, _shape(p)) for m, p in table_pairs(PAGE.read_text(encoding="utf-8"))}
    assert not wanted - listed, f"upstream routes missing from the table: {sorted(wanted - listed)}"
    # A row for a left-out family does no harm; a row upstream does not answer is a mistake.
    assert not listed - answered, f"rows naming no upstream route: {sorted(listed - answered)}"
