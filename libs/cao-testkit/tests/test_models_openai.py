"""The scripted Responses API server, driven over real HTTP on 127.0.0.1 (the wire Codex speaks)."""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cao_testkit.models.openai import (
    OpenAIServer,
    conversation_of,
    fit_schema,
    offered_namespaces,
    wire_name,
)
from cao_testkit.models.script import (
    EXHAUSTED_TEXT,
    Script,
    ScriptError,
    call_tool,
    fail,
    hold,
    reply,
    respond,
    think,
)

SEND_MESSAGE = {"type": "function", "name": "send_message", "strict": False,
                "parameters": {"type": "object", "properties": {"receiver_id": {"type": "string"},
                                                                "message": {"type": "string"}}}}
TOOLS = [
    {"type": "function", "name": "exec_command", "parameters": {"type": "object", "properties": {}}},
    {"type": "namespace", "name": "mcp__cao", "description": "Tools in the mcp__cao namespace.",
     "tools": [SEND_MESSAGE]},
    {"type": "web_search"},
]


def codex_body(*items: dict[str, Any], tools: list[dict[str, Any]] | None = None, stream: bool = True,
               **extra: Any) -> dict[str, Any]:
    """A request shaped like the ones Codex 0.169 sends (prompt and context as messages)."""
    return {
        "model": "scripted",
        "instructions": "",
        "input": [
            {"type": "message", "role": "developer",
             "content": [{"type": "input_text", "text": "You are a scripted test agent."}]},
            {"type": "message", "role": "user",
             "content": [{"type": "input_text",
                          "text": "<environment_context>\n  <cwd>/w</cwd>\n</environment_context>"}]},
            *items,
        ],
        "tools": TOOLS if tools is None else tools,
        "tool_choice": "auto",
        "parallel_tool_calls": True,
        "store": False,
        "stream": stream,
        **extra,
    }


def user(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def post(server: OpenAIServer, body: Any, *, path: str = "/v1/responses",
         headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = urllib.request.Request(server.url + path, data=data, method="POST",
                                     headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def get(server: OpenAIServer, path: str) -> tuple[int, Any]:
    try:
        with urllib.request.urlopen(server.url + path, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def events(raw: bytes) -> list[tuple[str, dict[str, Any]]]:
    """Parse a server-sent-events body into (event name, decoded data); comments are skipped."""
    parsed = []
    for frame in raw.decode().split("\n\n"):
        name, data = "", []
        for line in frame.split("\n"):
            if line.startswith("event: "):
                name = line[len("event: "):]
            elif line.startswith("data: "):
                data.append(line[len("data: "):])
        if data:
            parsed.append((name, json.loads("\n".join(data))))
    return parsed


@pytest.fixture
def serve():
    servers: list[OpenAIServer] = []

    def start(*turns: Any, **kwargs: Any) -> OpenAIServer:
        server = OpenAIServer(Script(*turns), **kwargs).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.close()


def test_streamed_reply_is_a_complete_responses_event_sequence(serve):
    server = serve(reply("Hello from the script, in pieces."))
    status, headers, raw = post(server, codex_body(user("say hello")))
    assert status == 200 and headers["Content-Type"] == "text/event-stream"
    stream = events(raw)
    names = [name for name, _ in stream]
    assert names[:2] == ["response.created", "response.in_progress"]
    assert names[-1] == "response.completed"
    assert [name for name, data in stream] == [data["type"] for _, data in stream]
    assert [data["sequence_number"] for _, data in stream] == list(range(len(stream)))
    deltas = [data["delta"] for name, data in stream if name == "response.output_text.delta"]
    assert len(deltas) == 3 and "".join(deltas) == "Hello from the script, in pieces."
    done = [data["item"] for name, data in stream if name == "response.output_item.done"]
    assert done == [{"type": "message", "id": done[0]["id"], "role": "assistant", "status": "completed",
                     "content": [{"type": "output_text", "text": "Hello from the script, in pieces.",
                                  "annotations": []}]}]
    completed = stream[-1][1]["response"]
    assert completed["status"] == "completed" and completed["output"] == done
    assert completed["id"] == stream[0][1]["response"]["id"]
    usage = completed["usage"]
    assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"]

    (recorded,) = server.requests
    assert recorded.kind == "turn" and recorded.path == "/v1/responses"
    assert recorded.conversation.last_user_text == "say hello"
    assert recorded.conversation.system == "You are a scripted test agent."
    server.assert_healthy()
    server.script.assert_done()


def test_mcp_tool_call_goes_out_namespaced_and_comes_back_as_the_same_name(serve):
    server = serve(call_tool("mcp__cao__send_message", {"receiver_id": "abcd1234", "message": "hi"},
                             text="Sending.", call_id="call_1"),
                   respond(lambda conv: reply(f"tool said {conv.last_tool_result.output}")))
    _, _, raw = post(server, codex_body(user("message abcd1234")))
    stream = events(raw)
    items = [data["item"] for name, data in stream if name == "response.output_item.done"]
    assert [item["type"] for item in items] == ["message", "function_call"]
    call = items[1]
    assert (call["namespace"], call["name"], call["call_id"]) == ("mcp__cao", "send_message", "call_1")
    assert json.loads(call["arguments"]) == {"receiver_id": "abcd1234", "message": "hi"}
    arg_deltas = [data["delta"] for name, data in stream if name == "response.function_call_arguments.delta"]
    assert "".join(arg_deltas) == call["arguments"]
    added = [data["item"] for name, data in stream if name == "response.output_item.added"]
    assert added[1]["arguments"] == "" and added[1]["namespace"] == "mcp__cao"

    # The agent runs the tool and sends the whole conversation back with the result.
    follow_up = codex_body(user("message abcd1234"), items[0], call,
                           {"type": "function_call_output", "call_id": "call_1", "output": "Output:\nsent"})
    _, _, raw = post(server, follow_up)
    assert events(raw)[-1][1]["response"]["output"][0]["content"][0]["text"] == "tool said Output:\nsent"
    conversation = server.turns()[1].conversation
    assistant = conversation.messages[-2]
    assert assistant.role == "assistant" and assistant.text == "Sending."
    assert [(c.name, dict(c.arguments), c.call_id) for c in assistant.tool_calls] == [
        ("mcp__cao__send_message", {"receiver_id": "abcd1234", "message": "hi"}, "call_1")]
    assert conversation.tool_call("call_1").name == "mcp__cao__send_message"
    assert "mcp__cao__send_message" in conversation.tools and "exec_command" in conversation.tools
    server.script.assert_done()


def test_a_tool_the_request_does_not_offer_goes_out_under_its_plain_name(serve):
    server = serve(call_tool("mcp__other__thing", {"x": 1}))
    _, _, raw = post(server, codex_body(user("go")))
    (call,) = [data["item"] for name, data in events(raw) if name == "response.output_item.done"]
    assert call["name"] == "mcp__other__thing" and "namespace" not in call


def test_title_side_request_gets_schema_json_and_consumes_no_turn(serve):
    server = serve(reply("the real answer"))
    schema = {"type": "object", "properties": {"title": {"type": "string", "minLength": 1, "maxLength": 5}},
              "required": ["title"], "additionalProperties": False}
    side = codex_body(user("Generate a concise title"), tools=[],
                      text={"format": {"type": "json_schema", "strict": True, "schema": schema,
                                       "name": "codex_output_schema"}})
    server.script.side = "Scripted title"
    _, _, raw = post(server, side)
    text = events(raw)[-1][1]["response"]["output"][0]["content"][0]["text"]
    assert json.loads(text) == {"title": "Scri"[:5] + "p"}
    assert server.requests[0].kind == "side" and server.script.remaining == 1
    _, _, raw = post(server, codex_body(user("now the turn")))
    assert events(raw)[-1][1]["response"]["output"][0]["content"][0]["text"] == "the real answer"
    server.script.assert_done()


def test_json_side_answers_are_left_alone(serve):
    server = serve()
    server.script.side = '{"title": "Given"}'
    side = codex_body(user("title please"), tools=[],
                      text={"format": {"type": "json_schema", "schema": {"type": "object"}}})
    _, _, raw = post(server, side)
    assert events(raw)[-1][1]["response"]["output"][0]["content"][0]["text"] == '{"title": "Given"}'


def test_thinking_keeps_the_stream_alive_with_progress_events(serve):
    server = serve(think(1.2, "after a while"))
    started = time.monotonic()
    _, _, raw = post(server, codex_body(user("think")))
    assert time.monotonic() - started >= 1.2
    names = [name for name, _ in events(raw)]
    assert names.count("response.in_progress") >= 2
    last_progress = max(i for i, n in enumerate(names) if n == "response.in_progress")
    assert names.index("response.output_item.added") > last_progress


def test_held_turn_answers_when_the_test_releases_it(serve):
    gate = threading.Event()
    server = serve(hold(gate, "released"))
    result: list[bytes] = []
    worker = threading.Thread(target=lambda: result.append(post(server, codex_body(user("wait")))[2]))
    worker.start()
    time.sleep(0.3)
    assert not result
    gate.set()
    worker.join(5)
    assert events(result[0])[-1][1]["response"]["output"][0]["content"][0]["text"] == "released"


def test_failure_is_an_http_error_in_the_api_shape(serve):
    server = serve(fail(400, "scripted refusal", kind="invalid_request_error"))
    status, headers, raw = post(server, codex_body(user("fail")))
    assert status == 400 and headers["x-request-id"].startswith("req_")
    assert json.loads(raw) == {"error": {"message": "scripted refusal", "type": "invalid_request_error",
                                         "param": None, "code": None}}
    assert server.requests[0].status == 400 and server.requests[0].kind == "turn"


def test_non_streaming_request_gets_one_json_response(serve):
    server = serve(call_tool("exec_command", {"cmd": "true"}, text="Running."))
    status, headers, raw = post(server, codex_body(user("run"), stream=False))
    response = json.loads(raw)
    assert status == 200 and headers["Content-Type"] == "application/json"
    assert response["object"] == "response" and response["status"] == "completed"
    assert [item["type"] for item in response["output"]] == ["message", "function_call"]
    assert response["output"][1]["name"] == "exec_command" and "namespace" not in response["output"][1]


def test_models_listing_and_unknown_paths(serve):
    server = serve(models=("scripted", "other"))
    status, listing = get(server, "/v1/models")
    assert status == 200 and [m["id"] for m in listing["data"]] == ["scripted", "other"]
    status, error = get(server, "/v1/nothing-here")
    assert status == 404 and "no route for GET /v1/nothing-here" in error["error"]["message"]
    assert [r.kind for r in server.requests] == ["models", "other"]


@pytest.mark.parametrize("body", [b"not json", json.dumps({"model": "x"}).encode(), json.dumps([1]).encode()])
def test_bad_request_bodies_get_a_clear_400_and_consume_nothing(serve, body):
    server = serve(reply("unused"))
    status, _, raw = post(server, body)
    assert status == 400 and "input: field required" in json.loads(raw)["error"]["message"]
    assert server.requests[0].kind == "invalid" and server.script.remaining == 1


def test_compressed_bodies_are_refused_and_reported(serve):
    server = serve(reply("unused"))
    status, _, raw = post(server, b"\x28\xb5\x2f\xfd", headers={"Content-Encoding": "zstd"})
    assert status == 415 and "zstd" in json.loads(raw)["error"]["message"]
    with pytest.raises(ScriptError, match="zstd"):
        server.assert_healthy()


def test_requests_after_the_script_ends_are_answered_and_reported(serve):
    server = serve()
    _, _, raw = post(server, codex_body(user("one too many")))
    assert events(raw)[-1][1]["response"]["output"][0]["content"][0]["text"] == EXHAUSTED_TEXT
    with pytest.raises(ScriptError, match="one too many"):
        server.assert_healthy()


def test_base_url_is_the_v1_root(serve):
    server = serve()
    assert server.base_url == f"http://127.0.0.1:{server.port}/v1"


# -- normalising what Codex sends ---------------------------------------------------------------


def test_conversation_groups_items_like_a_messages_conversation():
    body = codex_body(
        user("first question"),
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Looking."}]},
        {"type": "reasoning", "summary": []},
        {"type": "function_call", "name": "exec_command", "arguments": "{\"cmd\": \"ls\"}", "call_id": "c1"},
        {"type": "function_call", "name": "send_message", "namespace": "mcp__cao", "arguments": "{}",
         "call_id": "c2"},
        {"type": "function_call_output", "call_id": "c1",
         "output": [{"type": "input_text", "text": "a.txt"}]},
        {"type": "function_call_output", "call_id": "c2", "output": {"content": "refused", "success": False}},
        {"type": "custom_tool_call", "name": "apply_patch", "input": "*** Begin Patch", "call_id": "c3"},
        {"type": "custom_tool_call_output", "call_id": "c3", "output": "Done!"},
        user("# AGENTS.md instructions for /w\n\n<INSTRUCTIONS>x</INSTRUCTIONS>"),
        user("second question"),
        instructions="Base instructions.",
    )
    conversation = conversation_of(body)
    assert conversation.system == "Base instructions.\n\nYou are a scripted test agent."
    assert [(m.role, m.text) for m in conversation.messages] == [
        ("user", "first question"), ("assistant", "Looking."), ("user", ""), ("assistant", ""), ("user", ""),
        ("user", "second question"),
    ]
    calls = conversation.messages[1].tool_calls
    assert [(c.name, dict(c.arguments)) for c in calls] == [("exec_command", {"cmd": "ls"}),
                                                            ("mcp__cao__send_message", {})]
    results = conversation.messages[2].tool_results
    assert [(r.call_id, r.output, r.is_error) for r in results] == [("c1", "a.txt", False),
                                                                     ("c2", "refused", True)]
    assert dict(conversation.messages[3].tool_calls[0].arguments) == {"input": "*** Begin Patch"}
    assert conversation.last_user_text == "second question"
    assert conversation.tools == ("exec_command", "mcp__cao__send_message", "web_search")
    assert conversation.stream is True


def test_string_input_is_one_user_message():
    assert conversation_of({"input": "just text"}).messages[0].text == "just text"


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda children: (st.lists(children, max_size=4)
                      | st.dictionaries(st.text(max_size=8), children, max_size=4)),
    max_leaves=20,
)
item_like = st.fixed_dictionaries(
    {"type": st.sampled_from(["message", "function_call", "function_call_output", "custom_tool_call",
                              "reasoning", "namespace", "other"])},
    optional={"role": st.sampled_from(["user", "assistant", "developer", "system", "tool"]) | json_values,
              "content": json_values, "name": json_values, "namespace": json_values, "arguments": json_values,
              "output": json_values, "call_id": json_values, "input": json_values, "tools": json_values},
)


@settings(max_examples=100, deadline=None)
@given(st.one_of(json_values, st.fixed_dictionaries(
    {}, optional={"input": st.lists(item_like, max_size=6) | json_values,
                  "tools": st.lists(item_like, max_size=4) | json_values,
                  "instructions": json_values, "model": json_values, "stream": json_values})))
def test_conversation_of_never_raises_on_any_json(body):
    conversation = conversation_of(body)
    assert all(m.role for m in conversation.messages)
    offered_namespaces(body)


names = st.text(alphabet=st.characters(categories=["Ll", "Nd"], include_characters="_-"),
                min_size=1, max_size=12)


@given(server=names, tool=names, other=st.lists(names, max_size=3))
def test_wire_name_round_trips_through_a_recorded_call(server, tool, other):
    namespaces = {f"mcp__{server}": frozenset([tool, *other])}
    scripted = f"mcp__{server}__{tool}"
    namespace, name = wire_name(scripted, namespaces)
    assert (namespace, name) == (f"mcp__{server}", tool)
    body = {"input": [{"type": "function_call", "name": name, "namespace": namespace, "arguments": "{}",
                       "call_id": "c"}]}
    assert conversation_of(body).messages[0].tool_calls[0].name == scripted
    assert wire_name(scripted, {}) == (None, scripted)


@given(text=st.text(max_size=60), limit=st.integers(min_value=1, max_value=40))
def test_fit_schema_respects_string_limits(text, limit):
    schema = {"type": "object", "required": ["title"],
              "properties": {"title": {"type": "string", "maxLength": limit}, "n": {"type": "integer"}}}
    value = fit_schema(text, schema)
    assert set(value) == {"title"}
    assert 1 <= len(value["title"]) <= limit
    assert value["title"] == (text or "scripted")[:limit]


def test_fit_schema_other_types():
    schema = {"type": "object", "properties": {
        "a": {"type": "array"}, "b": {"type": ["null", "boolean"]}, "c": {"type": "number"},
        "d": {"enum": ["x", "y"]}, "e": {"type": "object", "properties": {"f": {"type": "null"}}},
    }}
    assert fit_schema("t", schema) == {"a": [], "b": False, "c": 0, "d": "x", "e": {"f": None}}
