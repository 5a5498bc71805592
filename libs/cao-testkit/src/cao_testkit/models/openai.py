"""A scripted OpenAI Responses API, for running Codex (or any Responses client) offline.

``OpenAIServer(script)`` answers ``POST /v1/responses`` from a :class:`~.script.Script`, streamed as
server-sent events the way the Responses API streams (``response.created``, ``response.in_progress``
while a turn "thinks", ``response.output_item.added``/``done`` around each output item, text as
``response.output_text.delta`` events, tool-call arguments as ``response.function_call_arguments.*``,
``response.completed`` with usage), or as one JSON response when the client does not ask for a
stream. ``GET /v1/models`` lists ``models``; any other path gets a 404 error in the API's shape.

Give a Codex custom model provider ``base_url = server.url + "/v1"`` with ``wire_api = "responses"``.

Tool names: a script calls a tool by the name the model sees. Codex offers MCP tools grouped in
``namespace`` tools (namespace ``mcp__<server>``, holding ``<tool>``); a scripted call named
``mcp__<server>__<tool>`` is sent as a namespaced call when the request offers that namespace, and
calls recorded in a conversation are named the same way, so one spelling works both ways.
``Conversation.tools`` lists namespaced tools as ``<namespace>__<tool>`` too.

Which requests consume turns: the agent's own steps carry its tools; side requests (Codex asks for a
thread title with no tools and a JSON schema for the answer) consume nothing and get
``script.side``. When a side request asks for JSON matching a schema and the side answer is plain
text, the text is fitted into the schema (each required string property gets it), so the agent's
parser is satisfied. Pass ``is_turn=lambda conversation: ...`` to classify differently.

HTTP errors (``fail()``) are answered at once; Codex retries 429 and 5xx responses a few times
before it reports them, so a test that wants an error on screen quickly scripts a 4xx.
"""

from __future__ import annotations

import json
import re
import secrets
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .script import (Answer, Conversation, Failure, Incoming, Message, Script, ScriptedServer, ToolCall,
                     ToolResult, estimate_tokens, offers_tools, split_text)

__all__ = ["OpenAIFamily", "OpenAIServer", "conversation_of", "fit_schema", "fit_side_answer",
           "offered_namespaces", "wire_name"]

# Context blocks Codex adds to the conversation as user messages (working folder, AGENTS.md, shell
# output it ran for the user...). They stay in the recorded body but are not what the user typed.
_CONTEXT_BLOCK = re.compile(r"\A\s*<(?P<tag>[A-Za-z_][\w -]*)>.*</(?P=tag)>\s*\Z", re.DOTALL)
_CONTEXT_PREFIXES = ("# AGENTS.md instructions",)

_ASSISTANT_ITEMS = frozenset({"function_call", "custom_tool_call", "local_shell_call", "reasoning"})
_RESULT_ITEMS = frozenset({"function_call_output", "custom_tool_call_output", "local_shell_call_output"})


# -- reading requests -------------------------------------------------------------------------------


def _flatten(content: Any) -> str:
    """Text of a content value: a plain string, or the text parts of a content list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
            elif isinstance(part, str):
                parts.append(part)
        return "\n".join(parts)
    if isinstance(content, dict) and isinstance(content.get("text"), str):
        return content["text"]
    return ""


def _is_context(text: str) -> bool:
    return bool(_CONTEXT_BLOCK.match(text)) or text.lstrip().startswith(_CONTEXT_PREFIXES)


def _user_text(content: Any) -> str:
    if isinstance(content, str):
        return "" if _is_context(content) else content
    parts = []
    for part in content if isinstance(content, list) else []:
        text = _flatten([part])
        if text and not _is_context(text):
            parts.append(text)
    return "\n".join(parts)


def _arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            decoded = json.loads(raw) if raw.strip() else {}
        except ValueError:
            return {"input": raw}
        return decoded if isinstance(decoded, dict) else {"input": decoded}
    return {}


def _call_of(item: dict[str, Any]) -> ToolCall:
    name = str(item.get("name") or item.get("type") or "")
    namespace = item.get("namespace")
    if isinstance(namespace, str) and namespace:
        name = f"{namespace}__{name}"
    raw = item.get("arguments") if "arguments" in item else item.get("input", item.get("action"))
    call_id = str(item.get("call_id") or item.get("id") or "")
    return ToolCall(name=name, arguments=_arguments(raw), call_id=call_id)


def _result_of(item: dict[str, Any]) -> ToolResult:
    output = item.get("output")
    if isinstance(output, dict) and "content" in output:
        # An older shape: {"content": ..., "success": bool}.
        success = output.get("success")
        return ToolResult(call_id=str(item.get("call_id", "")), output=_flatten(output.get("content")),
                          is_error=success is False)
    return ToolResult(call_id=str(item.get("call_id", "")), output=_flatten(output))


def _messages_of(items: Iterable[Any]) -> tuple[list[Message], list[str]]:
    """Conversation messages and developer texts from a Responses ``input`` list.

    Consecutive assistant-side items (text, tool calls) make one assistant message and consecutive tool
    outputs one user message, the way a Messages API conversation groups them.
    """
    messages: list[Message] = []
    developer: list[str] = []
    pending: dict[str, Any] | None = None  # the message being built: role, texts, calls, results

    def flush() -> None:
        nonlocal pending
        if pending is not None:
            text = "\n".join(t for t in pending["texts"] if t)
            if text or pending["calls"] or pending["results"]:
                messages.append(Message(role=pending["role"], text=text, tool_calls=pending["calls"],
                                        tool_results=pending["results"]))
        pending = None

    def into(role: str, grouping: str) -> dict[str, Any]:
        nonlocal pending
        if pending is None or pending["grouping"] != grouping:
            flush()
            pending = {"role": role, "grouping": grouping, "texts": [], "calls": [], "results": []}
        return pending

    for item in items:
        if not isinstance(item, dict):
            continue
        kind = item.get("type", "message" if "role" in item else None)
        if kind == "message":
            role = str(item.get("role", "user"))
            if role in ("developer", "system"):
                text = _flatten(item.get("content"))
                if text:
                    developer.append(text)
            elif role == "assistant":
                into("assistant", "assistant")["texts"].append(_flatten(item.get("content")))
            else:
                text = _user_text(item.get("content"))
                if text:
                    into(role, "user")["texts"].append(text)
        elif kind in _ASSISTANT_ITEMS:
            if kind != "reasoning":
                into("assistant", "assistant")["calls"].append(_call_of(item))
        elif kind in _RESULT_ITEMS:
            into("user", "results")["results"].append(_result_of(item))
    flush()
    return messages, developer


def offered_namespaces(body: Any) -> dict[str, frozenset[str]]:
    """The namespace tools a request offers: namespace name -> names of the tools inside it."""
    found: dict[str, frozenset[str]] = {}
    if not isinstance(body, dict) or not isinstance(body.get("tools"), list):
        return found
    for tool in body["tools"]:
        if isinstance(tool, dict) and tool.get("type") == "namespace" and isinstance(tool.get("name"), str):
            inner = tool.get("tools") if isinstance(tool.get("tools"), list) else []
            found[tool["name"]] = frozenset(str(t.get("name")) for t in inner if isinstance(t, dict))
    return found


def _tool_names(body: dict[str, Any]) -> list[str]:
    names: list[str] = []
    for tool in body.get("tools") if isinstance(body.get("tools"), list) else []:
        if not isinstance(tool, dict):
            continue
        if tool.get("type") == "namespace":
            inner = tool.get("tools") if isinstance(tool.get("tools"), list) else []
            names.extend(f"{tool.get('name')}__{t.get('name')}" for t in inner if isinstance(t, dict))
        else:
            names.append(str(tool.get("name") or tool.get("type") or ""))
    return names


def conversation_of(body: Any) -> Conversation:
    """Normalise a Responses API request body (never raises: odd bodies give an empty conversation).

    ``system`` joins ``instructions`` and the developer messages (Codex sends its prompt and a
    profile's developer instructions that way); ``messages`` leaves out context blocks Codex injects.
    """
    if not isinstance(body, dict):
        return Conversation()
    raw_input = body.get("input")
    if isinstance(raw_input, str):
        raw_input = [{"type": "message", "role": "user", "content": raw_input}]
    messages, developer = _messages_of(raw_input if isinstance(raw_input, list) else [])
    instructions = body.get("instructions")
    system = [instructions] if isinstance(instructions, str) and instructions else []
    return Conversation(
        model=str(body.get("model") or ""),
        system="\n\n".join(system + developer),
        messages=messages,
        tools=_tool_names(body),
        stream=bool(body.get("stream", False)),
    )


def wire_name(name: str, namespaces: Mapping[str, frozenset[str]]) -> tuple[str | None, str]:
    """How a scripted tool name goes on the wire: ``(namespace, name)`` for a tool inside an offered
    namespace (``mcp__cao__send_message`` -> ``("mcp__cao", "send_message")``), else ``(None, name)``."""
    for namespace in sorted(namespaces, key=len, reverse=True):
        prefix = namespace + "__"
        if name.startswith(prefix) and name[len(prefix):] in namespaces[namespace]:
            return namespace, name[len(prefix):]
    return None, name


def _schema_format(body: Any) -> dict[str, Any] | None:
    if not isinstance(body, dict) or not isinstance(body.get("text"), dict):
        return None
    fmt = body["text"].get("format")
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema" and isinstance(fmt.get("schema"), dict):
        return fmt["schema"]
    return None


def fit_side_answer(answer: Answer, schema: Mapping[str, Any] | None) -> Answer:
    """A side request's plain-text answer fitted into the JSON ``schema`` it asked for (unchanged when it
    asked for none, when the answer calls tools, or when it is JSON already)."""
    if schema is None or answer.tool_calls:
        return answer
    try:
        json.loads(answer.text)
        return answer
    except ValueError:
        fitted = json.dumps(fit_schema(answer.text, schema))
        return Answer(text=fitted, delay=answer.delay, chunks=answer.chunks)


def fit_schema(text: str, schema: Mapping[str, Any]) -> Any:
    """A value of JSON ``schema`` built around ``text``: strings get the text (cut to ``maxLength``,
    at least one character), other types a neutral value; objects fill their required properties."""
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or (kind is None and "properties" in schema):
        properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        required = schema.get("required") if isinstance(schema.get("required"), list) else list(properties)
        return {name: fit_schema(text, properties.get(name) or {}) for name in required}
    if kind == "array":
        return []
    if kind in ("integer", "number"):
        return 0
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    value = text or "scripted"
    limit = schema.get("maxLength")
    return value[:limit] if isinstance(limit, int) and limit > 0 else value


# -- the server -------------------------------------------------------------------------------------


class _Stream:
    """Numbered Responses events on one open SSE stream."""

    def __init__(self, request: Incoming) -> None:
        self.request = request
        self.sequence = 0

    def send(self, kind: str, **fields: Any) -> None:
        self.request.send_event(kind, {"type": kind, "sequence_number": self.sequence, **fields})
        self.sequence += 1


class OpenAIFamily(ScriptedServer):
    """What OpenAI's APIs share on 127.0.0.1: the base URL (``url + "/v1"``), ``GET .../models``, the
    error shape, and which requests are the agent's turns (``is_turn``)."""

    def __init__(self, script: Script | None = None, *, host: str = "127.0.0.1",
                 is_turn: Callable[[Conversation], bool] = offers_tools,
                 models: Iterable[str] = ("scripted",)) -> None:
        super().__init__(script, host=host)
        self.is_turn = is_turn
        self.models = tuple(models)

    @property
    def base_url(self) -> str:
        """What an OpenAI client takes as its base URL (``.../v1``)."""
        return self.url + "/v1"

    def answer_other(self, request: Incoming, path: str) -> None:
        """``GET .../models`` lists ``models``; anything else is a 404 in the API's error shape."""
        if request.method == "GET" and path.endswith("/models"):
            created = int(time.time())
            listed = [{"id": model, "object": "model", "created": created, "owned_by": "cao-tests"}
                      for model in self.models]
            self.reply_json(request, 200, {"object": "list", "data": listed}, kind="models")
        else:
            self.reply_json(request, 404, self._error_body(f"no route for {request.method} {request.path}",
                                                           "invalid_request_error"), kind="other")

    @staticmethod
    def _error_body(message: str, kind: str) -> dict[str, Any]:
        return {"error": {"message": message, "type": kind, "param": None, "code": None}}


class OpenAIServer(OpenAIFamily):
    """The Responses API on 127.0.0.1, answering from ``script``; ``.url + "/v1"`` is the base URL."""

    def handle(self, request: Incoming) -> None:
        path = request.path.rstrip("/")
        if request.method == "POST" and path.endswith("/responses"):
            self._responses(request)
        else:
            self.answer_other(request, path)

    def _refuse(self, request: Incoming, failure: Failure, *, kind: str,
                conversation: Conversation | None = None) -> None:
        self.reply_json(request, failure.status, self._error_body(failure.message, failure.kind), kind=kind,
                         conversation=conversation, answer=failure,
                         headers={"x-request-id": "req_" + secrets.token_hex(12)})

    def _responses(self, request: Incoming) -> None:
        encoding = request.headers.get("content-encoding", "identity").lower()
        if encoding not in ("", "identity"):
            message = (f"request bodies encoded with {encoding!r} are not supported by the scripted server; "
                       "turn request compression off")
            failure = Failure(status=415, message=message)
            self.problems.append(failure.message)
            self._refuse(request, failure, kind="invalid")
            return
        body = request.body
        conversation = conversation_of(body)
        if not isinstance(body, dict) or not isinstance(body.get("input"), list | str):
            failure = Failure(status=400, message="input: field required (a list of items or a string)")
            self._refuse(request, failure, kind="invalid", conversation=conversation)
            return
        kind, answer = self.take_turn(conversation, self.is_turn)
        if isinstance(answer, Answer) and kind == "side":
            answer = self._fit_side_answer(body, answer)
        if isinstance(answer, Failure):
            if answer.delay:
                time.sleep(answer.delay)
            self._refuse(request, answer, kind=kind, conversation=conversation)
        elif conversation.stream:
            def record() -> None:
                self.record(request, kind=kind, conversation=conversation, answer=answer)

            self._stream(request, body, answer, record)
        else:
            if answer.delay:
                time.sleep(answer.delay)
            self.reply_json(request, 200, self._response_json(body, answer, status="completed"), kind=kind,
                             conversation=conversation, answer=answer)

    @staticmethod
    def _fit_side_answer(body: dict[str, Any], answer: Answer) -> Answer:
        return fit_side_answer(answer, _schema_format(body))

    # -- wire format -------------------------------------------------------------------------------

    @staticmethod
    def _items(body: Any, answer: Answer) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        if answer.text:
            items.append({
                "type": "message", "id": "msg_" + secrets.token_hex(12), "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": answer.text, "annotations": []}],
            })
        namespaces = offered_namespaces(body)
        for call in answer.tool_calls:
            namespace, name = wire_name(call.name, namespaces)
            item = {"type": "function_call", "id": "fc_" + secrets.token_hex(12), "call_id": call.call_id,
                    "name": name, "arguments": json.dumps(dict(call.arguments)), "status": "completed"}
            if namespace is not None:
                item["namespace"] = namespace
            items.append(item)
        return items

    def _response_json(self, body: Any, answer: Answer | None, *, status: str, response_id: str | None = None,
                       items: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        output = items if items is not None else (self._items(body, answer) if answer is not None else [])
        model = body.get("model") if isinstance(body, dict) else None
        response: dict[str, Any] = {
            "id": response_id or "resp_" + secrets.token_hex(12),
            "object": "response",
            "created_at": int(time.time()),
            "status": status,
            "model": model or (self.models[0] if self.models else "scripted"),
            "output": output,
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "usage": None,
        }
        if status == "completed":
            input_tokens = estimate_tokens(body)
            output_tokens = estimate_tokens(output) if output else 1
            response["usage"] = {
                "input_tokens": input_tokens, "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": output_tokens, "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": input_tokens + output_tokens,
            }
        return response

    def _stream(self, request: Incoming, body: dict[str, Any], answer: Answer,
                record: Callable[[], None]) -> None:
        response_id = "resp_" + secrets.token_hex(12)
        stream = _Stream(request)
        request.start_events(headers={"x-request-id": "req_" + secrets.token_hex(12)})
        in_progress = self._response_json(body, None, status="in_progress", response_id=response_id)
        stream.send("response.created", response=in_progress)
        stream.send("response.in_progress", response=in_progress)
        if answer.delay:
            # Events, not comments, keep the agent's idle-stream timer from firing while the model "thinks".
            self.sleep_streaming(request, answer.delay,
                                 lambda: stream.send("response.in_progress", response=in_progress))
        items = self._items(body, answer)
        for index, item in enumerate(items):
            if item["type"] == "message":
                self._stream_message(stream, index, item, answer.chunks)
            else:
                self._stream_call(stream, index, item)
        stream.send("response.completed",
                    response=self._response_json(body, answer, status="completed", response_id=response_id,
                                                 items=items))
        record()
        request.end_events()

    @staticmethod
    def _stream_message(stream: _Stream, index: int, item: dict[str, Any], chunks: int) -> None:
        text = item["content"][0]["text"]
        item_id = item["id"]
        stream.send("response.output_item.added", output_index=index,
                    item=dict(item, status="in_progress", content=[]))
        empty_part = {"type": "output_text", "text": "", "annotations": []}
        stream.send("response.content_part.added", item_id=item_id, output_index=index, content_index=0,
                    part=empty_part)
        for piece in split_text(text, chunks):
            stream.send("response.output_text.delta", item_id=item_id, output_index=index, content_index=0,
                        delta=piece, logprobs=[])
        stream.send("response.output_text.done", item_id=item_id, output_index=index, content_index=0,
                    text=text, logprobs=[])
        stream.send("response.content_part.done", item_id=item_id, output_index=index, content_index=0,
                    part=dict(empty_part, text=text))
        stream.send("response.output_item.done", output_index=index, item=item)

    @staticmethod
    def _stream_call(stream: _Stream, index: int, item: dict[str, Any]) -> None:
        item_id = item["id"]
        stream.send("response.output_item.added", output_index=index,
                    item=dict(item, arguments="", status="in_progress"))
        for piece in split_text(item["arguments"], 2):
            stream.send("response.function_call_arguments.delta", item_id=item_id, output_index=index,
                        delta=piece)
        stream.send("response.function_call_arguments.done", item_id=item_id, output_index=index,
                    arguments=item["arguments"])
        stream.send("response.output_item.done", output_index=index, item=item)
