"""The scripted Gemini API server: wire format, turn scripts and request recording."""

from __future__ import annotations

import json
import re
import threading
import time

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cao_testkit.models import Script, ScriptError, call_tool, fail, hold, reply, respond, think
from cao_testkit.models.gemini import (
    FAKE_API_KEY,
    GeminiServer,
    conversation_of,
    google_status,
    parse_path,
)
from cao_testkit.models.script import EXHAUSTED_TEXT, Answer

TOOLS = [{"functionDeclarations": [
    {"name": "run_shell_command", "parametersJsonSchema": {"type": "object"}},
    {"name": "mcp_cao_send_message", "parametersJsonSchema": {"type": "object"}},
]}]
MODEL = "gemini-2.5-pro"
# How the Gemini SDK cuts a stream into responses: one "data:" line, then a blank line.
SDK_FRAME = re.compile(r"^\s*data: (.*)(?:\n\n|\r\r|\r\n\r\n)")


def body(text: str = "hi", *, tools=TOOLS, contents=None, **extra) -> dict:
    payload = {"contents": contents or [{"role": "user", "parts": [{"text": text}]}],
               "systemInstruction": {"role": "user", "parts": [{"text": "You are a scripted test."}]},
               **extra}
    if tools:
        payload["tools"] = tools
    return payload


def post(srv: GeminiServer, payload, *, stream: bool = True, model: str = MODEL,
         client=None) -> httpx.Response:
    method = "streamGenerateContent" if stream else "generateContent"
    url = f"{srv.url}/v1beta/models/{model}:{method}" + ("?alt=sse" if stream else "")
    sender = client or httpx
    return sender.post(url, json=payload, headers={"x-goog-api-key": FAKE_API_KEY}, timeout=10)


def chunks(response: httpx.Response) -> list[dict]:
    """The responses of a stream, parsed exactly as the Gemini SDK parses them."""
    buffer, found = response.text, []
    while match := SDK_FRAME.match(buffer):
        found.append(json.loads(match.group(1)))
        buffer = buffer[match.end():]
    assert not buffer.strip(), f"bytes the SDK would never parse: {buffer[:200]!r}"
    return found


def parts(responses: list[dict]) -> tuple[str, list[dict]]:
    """Text and function calls of a streamed answer, put together as a client does."""
    text, calls = "", []
    for response in responses:
        for part in response["candidates"][0]["content"]["parts"]:
            text += part.get("text", "")
            if "functionCall" in part:
                calls.append(part["functionCall"])
    return text, calls


@pytest.fixture
def server():
    with GeminiServer(Script()) as srv:
        yield srv
        srv.assert_healthy()


def test_streamed_text_answer_is_sdk_frames_ending_with_the_finish_reason(server):
    server.script.add(reply("Hello from the script."))
    response = post(server, body())
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream"
    responses = chunks(response)
    assert len(responses) == 3
    assert parts(responses) == ("Hello from the script.", [])
    assert [r["candidates"][0].get("finishReason") for r in responses] == [None, None, "STOP"]
    assert all(r["candidates"][0]["content"]["role"] == "model" for r in responses)
    assert responses[-1]["usageMetadata"]["totalTokenCount"] > 0 and responses[-1]["modelVersion"] == MODEL
    assert len({r["responseId"] for r in responses}) == 1
    assert server.script.remaining == 0


def test_streamed_function_call_arrives_whole_with_its_id(server):
    arguments = {"receiver_id": "0123abcd", "message": "multi\nline \"quoted\" é"}
    server.script.add(call_tool("mcp_cao_send_message", arguments, text="Sending.", call_id="call_1"))
    text, calls = parts(chunks(post(server, body())))
    assert text == "Sending."
    assert calls == [{"id": "call_1", "name": "mcp_cao_send_message", "args": arguments}]


def test_non_streaming_request_gets_one_response(server):
    server.script.add(call_tool("run_shell_command", {"command": "ls"}, call_id="call_9"))
    response = post(server, body(), stream=False)
    assert response.headers["content-type"] == "application/json"
    candidate = response.json()["candidates"][0]
    assert candidate["finishReason"] == "STOP"
    assert candidate["content"]["parts"] == [
        {"functionCall": {"id": "call_9", "name": "run_shell_command", "args": {"command": "ls"}}}]


def test_requests_are_recorded_with_their_conversation(server):
    server.script.add(call_tool("run_shell_command", {"command": "ls"}, call_id="call_a"), reply("done"))
    context = "<session_context>\nThis is the Gemini CLI.\n</session_context>"
    post(server, body(contents=[{"role": "user", "parts": [{"text": context}, {"text": "list files"}]}]))
    contents = [
        {"role": "user", "parts": [{"text": context}, {"text": "list files"}]},
        {"role": "model", "parts": [{"text": "thinking it over", "thought": True},
                                    {"functionCall": {"id": "call_a", "name": "run_shell_command",
                                                      "args": {"command": "ls"}},
                                     "thoughtSignature": "skip_thought_signature_validator"}]},
        {"role": "user", "parts": [{"functionResponse": {"id": "call_a", "name": "run_shell_command",
                                                         "response": {"output": "a.txt\nb.txt"}}}]},
    ]
    post(server, body(contents=contents))
    first, second = server.turns()
    assert first.conversation.last_user_text == "list files"  # the context block is left out of the text
    assert first.headers["x-goog-api-key"] == FAKE_API_KEY
    assert first.query == {"alt": "sse"} and first.conversation.stream
    conv = second.conversation
    assert conv.model == MODEL and conv.system == "You are a scripted test."
    assert [m.role for m in conv.messages] == ["user", "assistant", "user"]
    assert conv.messages[1].text == ""  # thoughts are not what the model said
    assert conv.last_tool_result is not None and conv.last_tool_result.output == "a.txt\nb.txt"
    assert conv.tool_call("call_a").arguments == {"command": "ls"}
    assert conv.tools == ("run_shell_command", "mcp_cao_send_message")
    assert second.answer == reply("done")
    server.script.assert_done()


def test_function_errors_and_structured_results_are_flattened():
    contents = [
        {"role": "model", "parts": [{"functionCall": {"name": "read_file", "args": {}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "read_file",
                                                         "response": {"error": "no such file"}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "read_file",
                                                         "response": {"output": "x", "lines": 3}}}]},
    ]
    conv = conversation_of({"contents": contents})
    failed, structured = conv.tool_results
    assert failed.is_error and failed.output == "no such file" and failed.call_id == "read_file"
    assert json.loads(structured.output) == {"output": "x", "lines": 3} and not structured.is_error
    assert conv.tool_call("read_file") is not None  # calls without ids are found by name


def test_respond_decides_from_the_conversation(server):
    server.script.add(respond(lambda conv: reply(conv.last_user_text.upper())),
                      respond(lambda conv: "plain text works too"))
    assert parts(chunks(post(server, body("shout this"))))[0] == "SHOUT THIS"
    assert parts(chunks(post(server, body("x"))))[0] == "plain text works too"


def test_side_requests_consume_no_turn_and_fit_their_schema(server):
    server.script.add(reply("the real turn"))
    schema = {"type": "OBJECT", "properties": {"complexity_reasoning": {"type": "STRING"},
                                               "complexity_score": {"type": "INTEGER"}},
              "required": ["complexity_reasoning", "complexity_score"]}
    router = body("route this", tools=None, generationConfig={"responseMimeType": "application/json",
                                                              "responseJsonSchema": schema})
    side = post(server, router, stream=False).json()
    assert json.loads(side["candidates"][0]["content"]["parts"][0]["text"]) == {
        "complexity_reasoning": "OK", "complexity_score": 0}
    plain = post(server, body("title?", tools=None), stream=False).json()
    assert plain["candidates"][0]["content"]["parts"] == [{"text": "OK"}]
    assert parts(chunks(post(server, body())))[0] == "the real turn"
    assert [r.kind for r in server.requests] == ["side", "side", "turn"]


def test_think_holds_a_silent_stream_then_answers(server):
    server.script.add(think(1.2, "thought about it"))
    started = time.monotonic()
    with httpx.stream("POST", f"{server.url}/v1beta/models/{MODEL}:streamGenerateContent?alt=sse",
                      json=body(), timeout=10) as response:
        assert response.status_code == 200
        opened = time.monotonic() - started
        received = b"".join(response.iter_bytes())
    assert opened < 1.0  # headers go out at once: the connection is alive while the model "thinks"
    assert time.monotonic() - started >= 1.2
    assert received.startswith(b"data: ")  # nothing (no comment line) before the first response
    assert parts(chunks(httpx.Response(200, content=received)))[0] == "thought about it"


def test_hold_answers_only_once_the_gate_opens(server):
    gate = threading.Event()
    server.script.add(hold(gate, reply("released")))
    result: list[httpx.Response] = []
    worker = threading.Thread(target=lambda: result.append(post(server, body())))
    worker.start()
    server.wait_for_arrivals(1)
    worker.join(0.3)
    assert worker.is_alive() and not result
    gate.set()
    worker.join(5)
    assert parts(chunks(result[0]))[0] == "released"


def test_failures_use_the_apis_error_shape_and_status_names(server):
    server.script.add(fail(400, "API key not valid."), fail(429, "Quota exceeded", kind="RESOURCE_EXHAUSTED"),
                      fail(503, "busy", kind="overloaded_error"))
    first = post(server, body())
    assert first.status_code == 400
    error = {"code": 400, "message": "API key not valid.", "status": "INVALID_ARGUMENT"}
    assert first.json() == {"error": error}
    assert post(server, body()).json()["error"]["status"] == "RESOURCE_EXHAUSTED"
    assert post(server, body(), stream=False).json()["error"]["status"] == "UNAVAILABLE"
    assert [r.status for r in server.turns()] == [400, 429, 503]


def test_count_tokens_models_and_unknown_paths(server):
    counted = httpx.post(f"{server.url}/v1beta/models/{MODEL}:countTokens", json=body(), timeout=5).json()
    assert counted["totalTokens"] > 0
    listed = httpx.get(f"{server.url}/v1beta/models", timeout=5).json()
    assert [m["name"] for m in listed["models"]] == ["models/gemini-2.5-pro", "models/gemini-2.5-flash"]
    other = httpx.get(server.url + "/v1beta/whatever", timeout=5)
    assert other.status_code == 404 and other.json()["error"]["status"] == "NOT_FOUND"
    assert [r.kind for r in server.requests] == ["count_tokens", "models", "other"]
    assert server.script.remaining == 0


def test_a_bad_body_is_refused_and_consumes_nothing(server):
    server.script.add(reply("kept"))
    response = post(server, {"contents": []})
    assert response.status_code == 400 and "contents" in response.json()["error"]["message"]
    assert server.script.remaining == 1
    assert parts(chunks(post(server, body())))[0] == "kept"


def test_exhausted_script_answers_and_reports():
    with GeminiServer(Script(reply("only one"))) as srv:
        post(srv, body())
        assert parts(chunks(post(srv, body("one too many"))))[0] == EXHAUSTED_TEXT
        with pytest.raises(ScriptError, match="one too many"):
            srv.assert_healthy()


def test_connection_is_reused_across_streams(server):
    server.script.add(reply("one"), reply("two"), reply("three"))
    with httpx.Client(timeout=10) as client:
        texts = [parts(chunks(post(server, body(), client=client)))[0] for _ in range(3)]
    assert texts == ["one", "two", "three"]


def test_client_env_points_gemini_cli_at_the_server(server):
    env = server.client_env()
    assert env == {"GOOGLE_GEMINI_BASE_URL": server.url, "GEMINI_API_KEY": FAKE_API_KEY}
    assert re.fullmatch(r"AIza[0-9A-Za-z_-]{35}", FAKE_API_KEY)
    assert server.url.startswith("http://127.0.0.1:")


def test_paths_and_status_names():
    assert parse_path("/v1beta/models/gemini-2.5-pro:streamGenerateContent") == (
        "v1beta", "gemini-2.5-pro", "streamGenerateContent")
    assert parse_path("/v1/tunedModels/mine:generateContent") == ("v1", "mine", "generateContent")
    assert parse_path("/v1beta/models") is None and parse_path("/models/x:generateContent") is None
    assert google_status(404) == "NOT_FOUND" and google_status(418) == "FAILED_PRECONDITION"
    assert google_status(599) == "INTERNAL" and google_status(400, "OUT_OF_RANGE") == "OUT_OF_RANGE"


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
gemini_parts = st.fixed_dictionaries({}, optional={
    "text": json_values, "thought": json_values, "functionCall": json_values | st.fixed_dictionaries(
        {"name": json_values}, optional={"args": json_values, "id": json_values}),
    "functionResponse": json_values | st.fixed_dictionaries(
        {"name": json_values}, optional={"response": json_values, "id": json_values})})
contents = st.lists(st.fixed_dictionaries({}, optional={
    "role": st.sampled_from(["user", "model", "function"]) | json_values,
    "parts": st.lists(gemini_parts | json_values) | json_values}))


@given(st.one_of(json_values, st.fixed_dictionaries({}, optional={
    "contents": contents | json_values, "systemInstruction": json_values | st.fixed_dictionaries(
        {}, optional={"parts": st.lists(gemini_parts)}),
    "tools": st.lists(json_values | st.fixed_dictionaries({"functionDeclarations": json_values}))
    | json_values,
    "generationConfig": json_values})))
def test_conversation_of_never_raises(payload):
    conv = conversation_of(payload, model="m")
    assert isinstance(conv.last_user_text, str) and isinstance(conv.system, str)
    assert all(isinstance(r.output, str) for r in conv.tool_results)
    assert all(isinstance(name, str) for name in conv.tools)


@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(text=st.text(min_size=1, max_size=300), pieces=st.integers(1, 7))
def test_any_text_survives_streaming(server, text, pieces):
    server.script.add(Answer(text=text, chunks=pieces))
    assert parts(chunks(post(server, body())))[0] == text
