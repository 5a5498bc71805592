"""The scripted Chat Completions server, driven over real HTTP on 127.0.0.1: whole answers and
streamed chunks put back together, tool calls and their results, side requests, errors, and any body."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cao_testkit.models.chat import ChatServer, conversation_of
from cao_testkit.models.script import Script, call_tool, fail, reply, think

TOOLS = [{"type": "function", "function": {"name": "send_message", "parameters": {"type": "object"}}}]


def body(*messages: dict[str, Any], tools: list | None = TOOLS, stream: bool = False, **extra: Any) -> dict:
    return {"model": "scripted", "messages": [{"role": "system", "content": "Be brief."}, *messages],
            **({"tools": tools} if tools else {}), "stream": stream, **extra}


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def streamed(response: httpx.Response) -> tuple[str, list[dict], dict | None, str | None]:
    """Text, tool calls, usage and finish reason put back together from a stream's chunks."""
    text, calls, usage, finish, done = "", {}, None, None, False
    for line in response.iter_lines():
        if not line.startswith("data: "):
            continue
        data = line[len("data: "):]
        if data == "[DONE]":
            done = True
            continue
        chunk = json.loads(data)
        assert chunk["object"] == "chat.completion.chunk"
        usage = chunk.get("usage") or usage
        for choice in chunk["choices"]:
            delta = choice["delta"]
            text += delta.get("content") or ""
            for call in delta.get("tool_calls") or []:
                entry = calls.setdefault(call["index"], {"id": "", "name": "", "arguments": ""})
                entry["id"] = call.get("id") or entry["id"]
                entry["name"] += call.get("function", {}).get("name") or ""
                entry["arguments"] += call.get("function", {}).get("arguments") or ""
            finish = choice["finish_reason"] or finish
    assert done, "the stream must end with [DONE]"
    return text, [calls[i] for i in sorted(calls)], usage, finish


@pytest.fixture
def server():
    with ChatServer(Script()) as running:
        yield running


def test_a_whole_answer_and_a_streamed_one(server):
    server.script.add(reply("Hello there."), think(0.2, "Thought it over."))
    with httpx.Client(base_url=server.base_url, timeout=10) as http:
        whole = http.post("/chat/completions", json=body(user("hi"))).json()
        assert whole["object"] == "chat.completion"
        assert whole["choices"][0]["message"] == {"role": "assistant", "content": "Hello there."}
        assert whole["choices"][0]["finish_reason"] == "stop" and whole["usage"]["total_tokens"] > 0
        with http.stream("POST", "/chat/completions",
                         json=body(user("again"), stream=True, stream_options={"include_usage": True})) as r:
            assert r.headers["content-type"] == "text/event-stream"
            text, calls, usage, finish = streamed(r)
    assert (text, calls, finish) == ("Thought it over.", [], "stop") and usage["prompt_tokens"] > 0
    first, second = server.turns()
    assert first.conversation.system == "Be brief." and first.conversation.last_user_text == "hi"
    assert second.conversation.stream and second.conversation.tools == ("send_message",)
    server.script.assert_done()


def test_a_tool_call_and_its_result_round_trip(server):
    server.script.add(call_tool("send_message", {"receiver_id": "abcd1234", "message": "done"}, call_id="c1"),
                      reply("Sent."))
    with httpx.Client(base_url=server.base_url, timeout=10) as http:
        with http.stream("POST", "/chat/completions", json=body(user("tell them"), stream=True)) as r:
            _, calls, _, finish = streamed(r)
        assert finish == "tool_calls"
        assert calls == [{"id": "c1", "name": "send_message",
                          "arguments": json.dumps({"receiver_id": "abcd1234", "message": "done"})}]
        assistant = {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "send_message",
                                                          "arguments": calls[0]["arguments"]}}]}
        result = {"role": "tool", "tool_call_id": "c1", "content": "queued as message 7"}
        answer = http.post("/chat/completions", json=body(user("tell them"), assistant, result)).json()
    assert answer["choices"][0]["message"]["content"] == "Sent."
    conversation = server.turns()[1].conversation
    assert conversation.tool_call("c1").arguments == {"receiver_id": "abcd1234", "message": "done"}
    assert conversation.last_tool_result.output == "queued as message 7"


def test_side_requests_errors_and_other_paths(server):
    server.script.side = "A short title"
    server.script.add(fail(429, "slow down", kind="rate_limit_error"))
    with httpx.Client(base_url=server.url, timeout=10) as http:
        side = http.post("/chat/completions", json=body(user("name this"), tools=None)).json()
        assert side["choices"][0]["message"]["content"] == "A short title"
        refused = http.post("/v1/chat/completions", json=body(user("go")))
        assert refused.status_code == 429 and refused.json()["error"]["message"] == "slow down"
        assert http.post("/v1/chat/completions", json={"model": "x", "messages": []}).status_code == 400
        assert http.get("/v1/models").json()["data"][0]["id"] == "scripted"
        assert http.get("/v1/embeddings").status_code == 404
    assert [r.kind for r in server.requests] == ["side", "turn", "invalid", "models", "other"]


def test_a_user_query_block_reads_as_what_the_user_typed():
    wrapped = {"messages": [{"role": "user", "content": "<user_query>\nHello there\n</user_query>"},
                            {"role": "user", "content": "<user_query>x</user_query> and more"}]}
    assert [m.text for m in conversation_of(wrapped).messages] == ["Hello there",
                                                                   "<user_query>x</user_query> and more"]


json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=20),
                           lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(st.text(max_size=10), inner, max_size=4), max_leaves=20)


@given(st.dictionaries(st.sampled_from(["messages", "tools", "model", "stream"]), json_values)
       | json_values)
def test_any_body_reads_as_a_conversation_without_raising(raw):
    conversation = conversation_of(raw)
    assert isinstance(conversation.messages, tuple) and isinstance(conversation.tools, tuple)
