"""The scripted Anthropic Messages server: wire format, turn scripts and request recording."""

from __future__ import annotations

import json
import threading
import time

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cao_testkit.models import Script, ScriptError, call_tool, fail, hold, reply, respond, think
from cao_testkit.models.anthropic import FAKE_API_KEY, AnthropicServer, conversation_of
from cao_testkit.models.script import EXHAUSTED_TEXT, Answer

TOOLS = [{"name": "Bash", "input_schema": {"type": "object"}}]


def body(text: str = "hi", *, stream: bool = True, tools=TOOLS, messages=None) -> dict:
    payload = {"model": "claude-test", "max_tokens": 100, "stream": stream,
               "messages": messages or [{"role": "user", "content": text}]}
    if tools:
        payload["tools"] = tools
    return payload


def events(response: httpx.Response) -> list[tuple[str, dict]]:
    """Parse a server-sent-events body into (event, data) pairs."""
    found = []
    for frame in response.text.split("\n\n"):
        name, data = None, []
        for line in frame.splitlines():
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                data.append(line[6:])
        if name:
            found.append((name, json.loads("\n".join(data))))
    return found


def assemble(pairs: list[tuple[str, dict]]) -> list[dict]:
    """Rebuild the content blocks a client would, from the stream's deltas."""
    blocks: dict[int, dict] = {}
    partial: dict[int, str] = {}
    for name, data in pairs:
        if name == "content_block_start":
            blocks[data["index"]] = dict(data["content_block"])
        elif name == "content_block_delta":
            delta = data["delta"]
            if delta["type"] == "text_delta":
                blocks[data["index"]]["text"] += delta["text"]
            else:
                partial[data["index"]] = partial.get(data["index"], "") + delta["partial_json"]
    for index, text in partial.items():
        blocks[index]["input"] = json.loads(text)
    return [blocks[i] for i in sorted(blocks)]


@pytest.fixture
def server():
    with AnthropicServer(Script()) as srv:
        yield srv
        srv.assert_healthy()


def post(srv: AnthropicServer, payload, path: str = "/v1/messages", **kw) -> httpx.Response:
    return httpx.post(srv.url + path, json=payload, headers={"x-api-key": FAKE_API_KEY}, timeout=10, **kw)


def test_streamed_text_answer_has_the_full_event_sequence(server):
    server.script.add(reply("Hello from the script."))
    response = post(server, body())
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream"
    pairs = events(response)
    names = [name for name, _ in pairs]
    assert names[0] == "message_start" and names[-2:] == ["message_delta", "message_stop"]
    assert pairs[0][1]["message"]["role"] == "assistant" and pairs[0][1]["message"]["model"] == "claude-test"
    assert assemble(pairs) == [{"type": "text", "text": "Hello from the script."}]
    assert pairs[-2][1]["delta"]["stop_reason"] == "end_turn"
    assert server.script.remaining == 0


def test_streamed_tool_call_reassembles_to_the_scripted_arguments(server):
    arguments = {"receiver_id": "0123abcd", "message": "multi\nline \"quoted\" é"}
    tool = "mcp__cao-mcp-server__send_message"
    server.script.add(call_tool(tool, arguments, text="Sending.", call_id="toolu_1"))
    pairs = events(post(server, body()))
    assert assemble(pairs) == [
        {"type": "text", "text": "Sending."},
        {"type": "tool_use", "id": "toolu_1", "name": tool, "input": arguments},
    ]
    assert pairs[-2][1]["delta"]["stop_reason"] == "tool_use"


def test_non_streaming_request_gets_one_message(server):
    server.script.add(call_tool("Bash", {"command": "ls"}, call_id="toolu_9"))
    response = post(server, body(stream=False))
    message = response.json()
    assert message["type"] == "message" and message["stop_reason"] == "tool_use"
    assert message["content"] == [{"type": "tool_use", "id": "toolu_9", "name": "Bash",
                                   "input": {"command": "ls"}}]
    assert message["usage"]["input_tokens"] > 0


def test_requests_are_recorded_with_their_conversation(server):
    server.script.add(call_tool("Bash", {"command": "ls"}, call_id="toolu_a"), reply("done"))
    post(server, body("list files"))
    messages = [
        {"role": "user", "content": [
            {"type": "text", "text": "<system-reminder>\ninternal\n</system-reminder>"},
            {"type": "text", "text": "list files"},
        ]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_a", "name": "Bash",
                                           "input": {"command": "ls"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_a",
                                      "content": [{"type": "text", "text": "a.txt\nb.txt"}]}]},
    ]
    post(server, body(messages=messages))
    first, second = server.turns()
    assert first.conversation.last_user_text == "list files"
    assert first.headers["x-api-key"] == FAKE_API_KEY
    conv = second.conversation
    assert conv.last_user_text == "list files"  # the reminder block is left out of the text
    assert conv.last_tool_result is not None and conv.last_tool_result.output == "a.txt\nb.txt"
    assert conv.tool_call("toolu_a").arguments == {"command": "ls"}
    assert conv.tools == ("Bash",)
    assert second.answer == reply("done")
    server.script.assert_done()


def test_respond_decides_from_the_conversation(server):
    server.script.add(respond(lambda conv: reply(conv.last_user_text.upper())),
                      respond(lambda conv: "plain text works too"))
    assert assemble(events(post(server, body("shout this"))))[0]["text"] == "SHOUT THIS"
    assert assemble(events(post(server, body("x"))))[0]["text"] == "plain text works too"


def test_side_requests_consume_no_turn(server):
    server.script.add(reply("the real turn"))
    side = post(server, body("title please", tools=None, stream=False)).json()
    assert side["content"][0]["text"] == "OK"
    assert assemble(events(post(server, body())))[0]["text"] == "the real turn"
    assert [r.kind for r in server.requests] == ["side", "turn"]


def test_think_keeps_the_stream_alive_then_answers(server):
    server.script.add(think(1.3, "thought about it"))
    started = time.monotonic()
    pairs = events(post(server, body()))
    assert time.monotonic() - started >= 1.3
    pings = [name for name, _ in pairs if name == "ping"]
    assert len(pings) >= 2  # the opening ping plus at least one while thinking
    assert assemble(pairs)[0]["text"] == "thought about it"


def test_hold_answers_only_once_the_gate_opens(server):
    gate = threading.Event()
    server.script.add(hold(gate, reply("released")))
    result: list[httpx.Response] = []
    worker = threading.Thread(target=lambda: result.append(post(server, body())))
    worker.start()
    worker.join(0.5)
    assert worker.is_alive() and not result
    gate.set()
    worker.join(5)
    assert assemble(events(result[0]))[0]["text"] == "released"


def test_failure_is_an_api_error_with_a_retry_hint(server):
    server.script.add(fail(529, "Overloaded", kind="overloaded_error"), fail(500, "try later", retry=True))
    response = post(server, body())
    assert response.status_code == 529
    error = {"type": "overloaded_error", "message": "Overloaded"}
    assert response.json() == {"type": "error", "error": error}
    assert response.headers["x-should-retry"] == "false"
    assert post(server, body()).headers["x-should-retry"] == "true"
    assert [r.status for r in server.turns()] == [529, 500]


def test_count_tokens_and_unknown_paths(server):
    counted = post(server, body(stream=False), path="/v1/messages/count_tokens").json()
    assert counted["input_tokens"] > 0
    other = httpx.get(server.url + "/api/whatever", timeout=5)
    assert other.status_code == 200 and other.json() == {}
    assert [r.kind for r in server.requests] == ["count_tokens", "other"]
    assert server.script.remaining == 0


def test_a_bad_body_is_refused_and_consumes_nothing(server):
    server.script.add(reply("kept"))
    response = post(server, {"model": "x"})
    assert response.status_code == 400
    assert response.json()["error"]["message"] == "messages: field required"
    assert server.script.remaining == 1
    server.script.add()  # nothing: still one turn left for the next request
    assert assemble(events(post(server, body())))[0]["text"] == "kept"


def test_exhausted_script_answers_and_reports():
    with AnthropicServer(Script(reply("only one"))) as srv:
        post(srv, body())
        assert assemble(events(post(srv, body("one too many"))))[0]["text"] == EXHAUSTED_TEXT
        with pytest.raises(ScriptError, match="one too many"):
            srv.assert_healthy()
        with pytest.raises(ScriptError, match="after the script ran out"):
            srv.script.assert_done()


def test_unused_turns_fail_assert_done():
    script = Script(reply("a"), reply("b"))
    with pytest.raises(ScriptError, match="2 scripted turn"):
        script.assert_done()


def test_connection_is_reused_across_streams(server):
    server.script.add(reply("one"), reply("two"), reply("three"))
    with httpx.Client(base_url=server.url, timeout=10) as client:
        texts = [assemble(events(client.post("/v1/messages", json=body())))[0]["text"] for _ in range(3)]
    assert texts == ["one", "two", "three"]


def test_wait_for_turns_and_wait_for(server):
    server.script.add(think(0.3, "late"))
    threading.Thread(target=lambda: post(server, body("waited for")), daemon=True).start()
    [turn] = server.wait_for_turns(1, timeout=5)
    assert turn.conversation.last_user_text == "waited for"
    assert server.wait_for(lambda r: r.kind == "turn").answer.text == "late"
    with pytest.raises(AssertionError, match="no matching request"):
        server.wait_for(lambda r: r.kind == "never", timeout=0.1)


def test_client_env_points_at_the_server(server):
    env = server.client_env()
    assert env == {"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": FAKE_API_KEY}
    assert server.url.startswith("http://127.0.0.1:")


def test_script_rejects_what_is_not_a_turn():
    with pytest.raises(ScriptError, match="not a turn"):
        Script(42)
    with pytest.raises(ValueError, match="needs text"):
        Answer()
    with pytest.raises(ValueError, match="delay"):
        reply("x", delay=-1)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
blocks = st.fixed_dictionaries({"type": st.sampled_from(["text", "tool_use", "tool_result", "image", "x"])},
                               optional={"text": json_values, "input": json_values, "id": json_values,
                                         "tool_use_id": json_values, "content": json_values,
                                         "name": json_values, "is_error": json_values})
messages = st.lists(st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant", "system"])},
                                          optional={"content": st.text() | st.lists(blocks | json_values)}))


@given(st.one_of(json_values, st.fixed_dictionaries({}, optional={
    "messages": messages | json_values, "system": json_values, "tools": st.lists(json_values) | json_values,
    "model": json_values, "stream": json_values})))
def test_conversation_of_never_raises(payload):
    conv = conversation_of(payload)
    assert isinstance(conv.last_user_text, str)
    assert all(isinstance(r.output, str) for r in conv.tool_results)


@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(text=st.text(min_size=1, max_size=300), chunks=st.integers(1, 7))
def test_any_text_survives_streaming(server, text, chunks):
    server.script.add(Answer(text=text, chunks=chunks))
    assert assemble(events(post(server, body())))[0]["text"] == text
