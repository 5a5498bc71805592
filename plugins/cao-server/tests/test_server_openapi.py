"""The OpenAPI document describes every route the server serves, and fuzzing every route with values
derived from that document never yields a 500."""

from __future__ import annotations

import json
import os
from urllib.parse import quote

import httpx
import pytest
from cao_server.endpoints import ENDPOINTS
from cao_testkit.openapi import check_schema
from cao_testkit.serve import serve_in_thread
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.routing import Route

pytestmark = pytest.mark.tmux

# Installing from a URL would reach out to the network: never fuzzed.
NOT_FUZZED = {"install_profile", "openapi"}


@pytest.fixture(scope="module")
def fuzz_server(tmp_path_factory):
    """One server for the whole module, with one real idle terminal to aim requests at."""
    from cao_hookspecs import AgentProfile
    from cao_kernel.kernel import Kernel
    from cao_kernel.plugins import LoadPolicy
    from cao_testkit.tmux import private_tmux_socket

    home = tmp_path_factory.mktemp("fuzz-home")
    workdir = tmp_path_factory.mktemp("fuzz-project")
    with private_tmux_socket() as tmux:
        kernel = Kernel(
            policy=LoadPolicy(only=("tmux", "mock_cli", "inbox_sqlite")),
            home=home,
            settings={**tmux.settings, "CAO_DEFAULT_PROVIDER": "mock_cli", "CAO_HOME_DIR": str(home)},
        )
        # A plain mock agent: this kernel serves no MCP tools, so a profile asking for them is refused.
        kernel.add_profile(AgentProfile(name="fuzzer", provider="mock_cli"))
        with (
            serve_in_thread(kernel) as running,
            httpx.Client(base_url=running.url, trust_env=False, timeout=30) as http,
        ):
            created = http.post(
                "/sessions",
                json={
                    "agent_profile": "fuzzer",
                    "session_name": "fuzz",
                    "working_directory": str(workdir),
                },
            )
            assert created.status_code == 201, created.text
            running.terminal_id = created.json()["id"]  # type: ignore[attr-defined]
            running.http = http  # type: ignore[attr-defined]
            yield running


def test_document_lists_exactly_the_served_routes(fuzz_server):
    document = fuzz_server.document
    served = {
        (route.path, method)
        for route in fuzz_server.app.routes
        if isinstance(route, Route)
        for method in route.methods - {"HEAD"}
    }
    described = {(path, method.upper()) for path, item in document["paths"].items() for method in item}
    assert served == described
    ids = [op["operationId"] for item in document["paths"].values() for op in item.values()]
    assert len(ids) == len(set(ids))
    text = json.dumps(document)
    for name in document["components"]["schemas"]:
        assert f'"#/components/schemas/{name}"' in text or name in ("Error",), f"schema {name} unused"
    for path, item in document["paths"].items():
        for op in item.values():
            declared = [p["name"] for p in op.get("parameters", ()) if p["in"] == "path"]
            assert sorted(declared) == sorted(part[1:-1] for part in path.split("/") if part.startswith("{"))
    assert fuzz_server.http.get("/openapi.json").json() == document


def test_every_documented_schema_reference_resolves(fuzz_server):
    document = fuzz_server.document

    def walk(node):
        if isinstance(node, dict):
            if "$ref" in node:
                assert node["$ref"].rsplit("/", 1)[-1] in document["components"]["schemas"], node["$ref"]
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(document)


def _text(max_size: int = 24) -> st.SearchStrategy[str]:
    return st.text(st.characters(codec="utf-8"), max_size=max_size)


def _query_value(name: str, schema: dict) -> st.SearchStrategy[str]:
    if name == "timeout":  # waits on a real terminal must stay short
        return st.floats(0, 0.3).map(repr) | _text(6)
    kind = schema.get("type")
    typed: st.SearchStrategy[str]
    if "enum" in schema:
        typed = st.sampled_from(schema["enum"])
    elif kind == "boolean":
        typed = st.sampled_from(["true", "false", "1", "0", "maybe"])
    elif kind == "integer":
        typed = st.integers(-5, 2000).map(str)
    elif kind == "number":
        typed = st.floats(allow_nan=True).map(repr)
    else:
        typed = _text()
    return typed | _text()


def _json_value(name: str, schema: dict) -> st.SearchStrategy[object]:
    if name == "timeout":
        return st.floats(0, 0.3) | _text(4) | st.none()
    anything = (
        st.none()
        | st.booleans()
        | st.integers()
        | st.floats(allow_nan=False, allow_infinity=False)
        | _text()
        | st.lists(_text(8), max_size=3)
        | st.dictionaries(_text(8), _text(8) | st.integers(), max_size=2)
    )
    return _query_value(name, schema) | anything


def _requests(path: str, method: str, operation: dict, terminal_id: str) -> st.SearchStrategy[dict]:
    params = operation.get("parameters", [])
    path_values = {
        p["name"]: st.sampled_from([terminal_id, "0badf00d", "cao-fuzz", "fuzz", "developer"])
        | _text(16).filter(bool)
        for p in params
        if p["in"] == "path"
    }
    query = {p["name"]: _query_value(p["name"], p["schema"]) for p in params if p["in"] == "query"}
    body_schema = (
        operation.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema", {})
    )
    body = {name: _json_value(name, schema) for name, schema in body_schema.get("properties", {}).items()}
    return st.fixed_dictionaries(
        {
            "path": st.fixed_dictionaries(path_values),
            "query": st.fixed_dictionaries({}, optional=query),
            "body": st.none() | st.fixed_dictionaries({}, optional=body) if body else st.none(),
            # Now and then a body that is not a JSON object at all (or not JSON).
            "raw": st.none()
            | st.sampled_from([b"[1]", b"NaN", b'{"timeout": Infinity}', b"\xff\xfe", b'{"a":'])
            | st.binary(max_size=16),
        }
    )


# CAO_FUZZ_EXAMPLES=500 explores fresh random cases; by default the same 25 per route run every time.
EXAMPLES = int(os.environ.get("CAO_FUZZ_EXAMPLES") or 25)
OPERATIONS = [(e.path, e.method) for e in ENDPOINTS if e.name not in NOT_FUZZED]


@pytest.mark.parametrize(("path", "method"), OPERATIONS, ids=[f"{m} {p}" for p, m in OPERATIONS])
def test_fuzzed_requests_never_fail_with_500(fuzz_server, path, method):
    document = fuzz_server.document
    operation = document["paths"][path][method.lower()]
    http = fuzz_server.http

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        derandomize=EXAMPLES == 25,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(_requests(path, method, operation, fuzz_server.terminal_id))
    def check(request):
        url = path
        for name, value in request["path"].items():
            url = url.replace("{" + name + "}", quote(value, safe=""))
        kwargs: dict = {"params": request["query"]}
        if request["body"] is not None:
            kwargs["json"] = request["body"]
        elif request["raw"] is not None and method != "GET":
            kwargs["content"] = request["raw"]
        response = http.request(method, url, **kwargs)
        assert response.status_code != 500, (method, url, request, response.text)
        kind = response.headers.get("content-type", "")
        if response.status_code < 400 and not kind.startswith("application/json"):
            # A route answering text (or nothing) says so in the document.
            declared = operation["responses"][str(response.status_code)].get("content", {})
            assert response.status_code == 204 or any(kind.startswith(t) for t in declared), (url, kind)
            return
        data = response.json()
        if response.status_code >= 400:
            assert set(data) == {"detail", "error"} and data["detail"], data
        else:
            declared = operation["responses"][str(response.status_code)]
            check_schema(document, declared["content"]["application/json"]["schema"], data)

    check()
    # The server is still healthy.
    assert http.get("/health").status_code == 200
