"""A scripted Anthropic Messages API, for running Claude Code (or any Messages client) offline.

``AnthropicServer(script)`` answers ``POST /v1/messages`` from a :class:`~.script.Script`, streamed as
server-sent events (``message_start``, ``content_block_*`` with text and ``tool_use`` blocks,
``message_delta``, ``message_stop``, ``ping`` while a turn "thinks") or as one JSON message when the
client does not ask for a stream. ``/v1/messages/count_tokens`` gets an estimate; any other path a
client probes at start-up gets an empty JSON object, so nothing waits on a network that is not there.

Which requests consume turns: Claude Code sends the agent's own steps with its tools attached, and
makes small tool-less calls on the side (session titles, topic checks, quota probes). Requests that
offer tools are turns; the rest are side requests, answered by ``script.side``. Pass
``is_turn=lambda conversation: ...`` to classify differently.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable
from typing import Any

from .script import (Answer, Conversation, Failure, Incoming, Message, Script, ScriptedServer, ToolCall,
                     ToolResult, estimate_tokens, offers_tools, split_text)

__all__ = ["FAKE_API_KEY", "AnthropicServer", "conversation_of"]

#: An API key in the real format that no account has: clients accept it, the scripted server ignores it.
FAKE_API_KEY = "sk-ant-api03-" + "cao0scripted0model0" * 4 + "AA"

# Text blocks Claude Code adds to user messages for the model's benefit (reminders, context); they
# are kept in the recorded body but left out of ``Message.text`` so tests see what the user typed.
_INJECTED_PREFIXES = ("<system-reminder>", "<command-name>", "<local-command-stdout>", "<command-message>")


def _text_of(content: Any) -> str:
    """Text of a content value: a plain string, or the text blocks of a block list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text":
                parts.append(str(block.get("text", "")))
        return "\n".join(parts)
    return ""


def _message_of(raw: Any) -> Message:
    if not isinstance(raw, dict):
        return Message(role="user")
    role = str(raw.get("role", "user"))
    content = raw.get("content", "")
    if isinstance(content, str):
        return Message(role=role, text=content)
    texts: list[str] = []
    calls: list[ToolCall] = []
    results: list[ToolResult] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            text = str(block.get("text", ""))
            if not text.lstrip().startswith(_INJECTED_PREFIXES):
                texts.append(text)
        elif kind == "tool_use":
            arguments = block.get("input") if isinstance(block.get("input"), dict) else {}
            calls.append(ToolCall(name=str(block.get("name", "")), arguments=arguments,
                                  call_id=str(block.get("id", ""))))
        elif kind == "tool_result":
            results.append(ToolResult(call_id=str(block.get("tool_use_id", "")),
                                      output=_text_of(block.get("content", "")),
                                      is_error=bool(block.get("is_error", False))))
    return Message(role=role, text="\n".join(t for t in texts if t), tool_calls=calls, tool_results=results)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def conversation_of(body: Any) -> Conversation:
    """Normalise a Messages API request body (never raises: odd bodies give an empty conversation)."""
    if not isinstance(body, dict):
        return Conversation()
    system = body.get("system", "")
    tools = [str(t.get("name", "")) for t in _list(body.get("tools")) if isinstance(t, dict)]
    return Conversation(
        model=str(body.get("model", "")),
        system=_text_of(system),
        messages=[_message_of(m) for m in _list(body.get("messages"))],
        tools=tools,
        stream=bool(body.get("stream", False)),
    )


class AnthropicServer(ScriptedServer):
    """The Messages API on 127.0.0.1, answering from ``script``; ``.url`` goes in ``ANTHROPIC_BASE_URL``."""

    def __init__(self, script: Script | None = None, *, host: str = "127.0.0.1",
                 is_turn: Callable[[Conversation], bool] = offers_tools) -> None:
        super().__init__(script, host=host)
        self.is_turn = is_turn

    def client_env(self) -> dict[str, str]:
        """Environment that points an Anthropic client (Claude Code) at this server."""
        return {"ANTHROPIC_BASE_URL": self.url, "ANTHROPIC_API_KEY": FAKE_API_KEY}

    def handle(self, request: Incoming) -> None:
        path = request.path.rstrip("/")
        if request.method == "POST" and path.endswith("/v1/messages"):
            self._messages(request)
        elif request.method == "POST" and path.endswith("/v1/messages/count_tokens"):
            self.record(request, kind="count_tokens", conversation=conversation_of(request.body), status=200)
            request.send_json(200, {"input_tokens": estimate_tokens(request.body)})
        else:
            # Start-up probes (account, settings, feature flags): an empty answer means "nothing special".
            self.record(request, kind="other", status=200)
            request.send_json(200, {})

    def _messages(self, request: Incoming) -> None:
        conversation = conversation_of(request.body)
        if not isinstance(request.body, dict) or not isinstance(request.body.get("messages"), list):
            failure = Failure(status=400, message="messages: field required")
            self.record(request, kind="invalid", conversation=conversation, answer=failure, status=400)
            self._send_failure(request, failure)
            return
        kind, answer = self.take_turn(conversation, self.is_turn)
        # Recorded before the last byte goes out: a client that has read its answer finds it recorded.
        if isinstance(answer, Failure):
            if answer.delay:
                time.sleep(answer.delay)
            self.record(request, kind=kind, conversation=conversation, answer=answer, status=answer.status)
            self._send_failure(request, answer)
        elif conversation.stream:
            self._stream(request, conversation, answer,
                         lambda: self.record(request, kind=kind, conversation=conversation, answer=answer))
        else:
            if answer.delay:
                time.sleep(answer.delay)
            self.record(request, kind=kind, conversation=conversation, answer=answer, status=200)
            request.send_json(200, self._message_json(request.body, conversation, answer))

    # -- wire format -------------------------------------------------------------------------------

    @staticmethod
    def _blocks(answer: Answer) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = []
        if answer.text:
            blocks.append({"type": "text", "text": answer.text})
        for call in answer.tool_calls:
            blocks.append({"type": "tool_use", "id": call.call_id, "name": call.name,
                           "input": dict(call.arguments)})
        return blocks

    @staticmethod
    def _usage(body: Any, output_tokens: int) -> dict[str, int]:
        return {"input_tokens": estimate_tokens(body), "output_tokens": output_tokens,
                "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}

    def _message_json(self, body: Any, conversation: Conversation, answer: Answer) -> dict[str, Any]:
        blocks = self._blocks(answer)
        return {
            "id": "msg_" + secrets.token_hex(12),
            "type": "message",
            "role": "assistant",
            "model": conversation.model or "scripted",
            "content": blocks,
            "stop_reason": "tool_use" if answer.tool_calls else "end_turn",
            "stop_sequence": None,
            "usage": self._usage(body, max(1, len(json.dumps(blocks)) // 4)),
        }

    def _send_failure(self, request: Incoming, failure: Failure) -> None:
        payload = {"type": "error", "error": {"type": failure.kind, "message": failure.message}}
        request.send_json(failure.status, payload,
                          headers={"request-id": "req_" + secrets.token_hex(12),
                                   "x-should-retry": "true" if failure.retry else "false"})

    def _stream(self, request: Incoming, conversation: Conversation, answer: Answer,
                before_end: Callable[[], None]) -> None:
        message = self._message_json(request.body, conversation, answer)
        final_usage = message["usage"]
        start = dict(message, content=[], stop_reason=None, usage=dict(final_usage, output_tokens=1))
        request.start_events(headers={"request-id": "req_" + secrets.token_hex(12)})
        request.send_event("message_start", {"type": "message_start", "message": start})
        request.send_event("ping", {"type": "ping"})
        if answer.delay:
            self.sleep_streaming(request, answer.delay,
                                 lambda: request.send_event("ping", {"type": "ping"}))
        index = 0
        if answer.text:
            request.send_event("content_block_start", {"type": "content_block_start", "index": index,
                                                       "content_block": {"type": "text", "text": ""}})
            for piece in split_text(answer.text, answer.chunks):
                request.send_event("content_block_delta", {"type": "content_block_delta", "index": index,
                                                           "delta": {"type": "text_delta", "text": piece}})
            request.send_event("content_block_stop", {"type": "content_block_stop", "index": index})
            index += 1
        for call in answer.tool_calls:
            request.send_event("content_block_start", {
                "type": "content_block_start", "index": index,
                "content_block": {"type": "tool_use", "id": call.call_id, "name": call.name, "input": {}},
            })
            for piece in split_text(json.dumps(dict(call.arguments)), 2):
                delta = {"type": "input_json_delta", "partial_json": piece}
                request.send_event("content_block_delta",
                                   {"type": "content_block_delta", "index": index, "delta": delta})
            request.send_event("content_block_stop", {"type": "content_block_stop", "index": index})
            index += 1
        request.send_event("message_delta", {
            "type": "message_delta",
            "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
            "usage": {"output_tokens": final_usage["output_tokens"]},
        })
        before_end()
        request.send_event("message_stop", {"type": "message_stop"})
        request.end_events()
