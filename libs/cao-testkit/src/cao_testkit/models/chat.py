"""A scripted OpenAI Chat Completions API, for agent CLIs that speak it (Qwen Code, Crush, Aider, and
most OpenAI-compatible clients).

``ChatServer(script)`` answers ``POST .../chat/completions`` from a :class:`~.script.Script`: streamed
as server-sent ``chat.completion.chunk`` events when the request asks for a stream (the role first, the
text in pieces, each tool call's name and then its arguments in pieces, a last chunk with the finish
reason, usage when ``stream_options.include_usage`` asks for it, then ``data: [DONE]``), or as one
``chat.completion`` object. While a turn "thinks", an open stream gets SSE comments so it stays open.
``GET .../models`` lists ``models``; any other path is a 404 in the API's error shape. Paths are matched
by their ending, so ``/v1/chat/completions`` and ``/chat/completions`` both work: give a client
``base_url = server.url + "/v1"``.

A user message that is only a ``<user_query>`` block (Grok Build's wrapping of what the user typed)
is read as the text inside it.

Which requests consume turns: those that offer tools (the agent's own steps); a request without tools
(a title, a summary, a commit message some CLIs ask for on the side) gets ``script.side``. Pass
``is_turn=`` to classify differently: a CLI that never offers tools (Aider, which has no tool calling and
no MCP client) would otherwise have every request read as a side request and never get a scripted turn,
so its tests pass ``is_turn=lambda conversation: True`` (with commits and summaries switched off, each of
its requests is a turn).
"""

from __future__ import annotations

import json
import re
import secrets
import time
from collections.abc import Callable, Mapping
from typing import Any

from .openai import OpenAIFamily
from .script import (Answer, Conversation, Failure, Incoming, Message, ToolCall, ToolResult, estimate_tokens,
                     split_text)

__all__ = ["FAKE_API_KEY", "ChatServer", "conversation_of"]

#: The key :meth:`ChatServer.client_env` hands a client (the server accepts any).
FAKE_API_KEY = "sk-cao-scripted-model-key"

#: A user message holding only what the user typed, in the tag Grok Build wraps it in: the text inside
#: is what the user said (``last_user_text`` compares it with what was typed).
_USER_QUERY = re.compile(r"\A\s*<user_query>\n?(?P<text>.*?)\n?</user_query>\s*\Z", re.DOTALL)


def _text(content: Any) -> str:
    """Text of a message's content: a string, or the text parts of a list of parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(part["text"] for part in content
                         if isinstance(part, dict) and isinstance(part.get("text"), str))
    return ""


def _arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str) and raw.strip():
        try:
            decoded = json.loads(raw)
        except ValueError:
            return {"input": raw}
        return decoded if isinstance(decoded, dict) else {"input": decoded}
    return {}


def _calls(raw: Any) -> list[ToolCall]:
    calls = []
    for item in raw if isinstance(raw, list) else []:
        function = item.get("function") if isinstance(item, dict) else None
        if isinstance(function, dict):
            calls.append(ToolCall(name=str(function.get("name") or ""),
                                  arguments=_arguments(function.get("arguments")),
                                  call_id=str(item.get("id") or "")))
    return calls


def conversation_of(body: Any) -> Conversation:
    """Normalise a Chat Completions request body (never raises: odd bodies give an empty conversation).

    ``system`` joins the system and developer messages; consecutive tool messages make one user message
    holding their results, as a Messages API conversation groups them.
    """
    if not isinstance(body, dict):
        return Conversation()
    system: list[str] = []
    messages: list[Message] = []
    results: list[ToolResult] = []

    def flush_results() -> None:
        if results:
            messages.append(Message(role="user", tool_results=tuple(results)))
            results.clear()

    for item in body.get("messages") if isinstance(body.get("messages"), list) else []:
        if not isinstance(item, dict):
            continue
        role = str(item.get("role") or "user")
        if role in ("system", "developer"):
            text = _text(item.get("content"))
            if text:
                system.append(text)
            continue
        if role == "tool":
            results.append(ToolResult(call_id=str(item.get("tool_call_id") or ""),
                                      output=_text(item.get("content"))))
            continue
        flush_results()
        text = _text(item.get("content"))
        typed = _USER_QUERY.match(text) if role == "user" else None
        messages.append(Message(role=role, text=typed.group("text") if typed else text,
                                tool_calls=tuple(_calls(item.get("tool_calls")))))
    flush_results()
    offered = body.get("tools") if isinstance(body.get("tools"), list) else []
    tools = [str(tool["function"].get("name") or "") for tool in offered
             if isinstance(tool, dict) and isinstance(tool.get("function"), dict)]
    return Conversation(model=str(body.get("model") or ""), system="\n\n".join(system), messages=messages,
                        tools=tools, stream=bool(body.get("stream", False)))


class ChatServer(OpenAIFamily):
    """Chat Completions on 127.0.0.1, answering from ``script``; ``.base_url`` is ``url + "/v1"``."""

    def client_env(self) -> dict[str, str]:
        """The variables OpenAI-compatible clients read their API's address and key from (Qwen Code's
        OpenAI sign-in, the OpenAI SDKs)."""
        return {"OPENAI_BASE_URL": self.base_url, "OPENAI_API_KEY": FAKE_API_KEY}

    def handle(self, request: Incoming) -> None:
        path = request.path.split("?", 1)[0].rstrip("/")
        if request.method == "POST" and path.endswith("/chat/completions"):
            self._completions(request)
        else:
            self.answer_other(request, path)

    def _completions(self, request: Incoming) -> None:
        body = request.body
        conversation = conversation_of(body)
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list) or not body["messages"]:
            failure = Failure(status=400, message="messages: a non-empty list is required")
            self.reply_json(request, 400, self._error_body(failure.message, failure.kind), kind="invalid",
                        conversation=conversation, answer=failure)
            return
        kind, answer = self.take_turn(conversation, self.is_turn)
        if isinstance(answer, Failure):
            if answer.delay:
                time.sleep(answer.delay)
            self.reply_json(request, answer.status, self._error_body(answer.message, answer.kind), kind=kind,
                        conversation=conversation, answer=answer)
            return
        model = str(body.get("model") or (self.models[0] if self.models else "scripted"))
        if conversation.stream:
            self._stream(request, body, answer, model,
                         lambda: self.record(request, kind=kind, conversation=conversation, answer=answer))
            return
        if answer.delay:
            time.sleep(answer.delay)
        self.reply_json(request, 200, _completion(body, answer, model), kind=kind, conversation=conversation,
                    answer=answer)

    def _stream(self, request: Incoming, body: dict[str, Any], answer: Answer, model: str,
                record: Callable[[], None]) -> None:
        ident, created = "chatcmpl-" + secrets.token_hex(12), int(time.time())

        def chunk(delta: Mapping[str, Any], finish: str | None = None, **extra: Any) -> None:
            request.send_event(None, {"id": ident, "object": "chat.completion.chunk", "created": created,
                                      "model": model, "choices": [{"index": 0, "delta": dict(delta),
                                                                   "finish_reason": finish}], **extra})

        request.start_events()
        chunk({"role": "assistant", "content": ""})
        if answer.delay:
            self.sleep_streaming(request, answer.delay, lambda: request.send_comment())
        for piece in split_text(answer.text, answer.chunks) if answer.text else []:
            chunk({"content": piece})
        for index, call in enumerate(answer.tool_calls):
            chunk({"tool_calls": [{"index": index, "id": call.call_id, "type": "function",
                                   "function": {"name": call.name, "arguments": ""}}]})
            for piece in split_text(json.dumps(dict(call.arguments)), 2):
                chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
        chunk({}, "tool_calls" if answer.tool_calls else "stop")
        options = body.get("stream_options")
        if isinstance(options, dict) and options.get("include_usage"):
            request.send_event(None, {"id": ident, "object": "chat.completion.chunk", "created": created,
                                      "model": model, "choices": [], "usage": _usage(body, answer)})
        record()
        request.send_event(None, "[DONE]")
        request.end_events()


def _completion(body: Any, answer: Answer, model: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": answer.text or None}
    if answer.tool_calls:
        message["tool_calls"] = [
            {"id": call.call_id, "type": "function",
             "function": {"name": call.name, "arguments": json.dumps(dict(call.arguments))}}
            for call in answer.tool_calls]
    return {"id": "chatcmpl-" + secrets.token_hex(12), "object": "chat.completion",
            "created": int(time.time()), "model": model, "usage": _usage(body, answer),
            "choices": [{"index": 0, "message": message,
                         "finish_reason": "tool_calls" if answer.tool_calls else "stop"}]}


def _usage(body: Any, answer: Answer) -> dict[str, int]:
    prompt = estimate_tokens(body)
    completion = max(1, estimate_tokens([answer.text, [dict(c.arguments) for c in answer.tool_calls]]))
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
