"""A scripted Gemini API (``generativelanguage`` v1beta), for running Gemini CLI offline.

``GeminiServer(script)`` answers ``POST /v1beta/models/<model>:generateContent`` with one JSON
response and ``POST /v1beta/models/<model>:streamGenerateContent?alt=sse`` as server-sent events, each
event a complete ``GenerateContentResponse`` chunk: the text in a few pieces, then each tool call as a
``functionCall`` part, and the last chunk with ``finishReason`` and usage. ``:countTokens`` gets an
estimate, ``GET /v1beta/models`` lists ``models``; any other path gets a 404 in the API's error shape.

Point Gemini CLI at it with :meth:`GeminiServer.client_env` (``GOOGLE_GEMINI_BASE_URL`` and a
``GEMINI_API_KEY``); the CLI accepts plain http only for loopback addresses.

Streams carry data events only: the SDK's stream parser expects every frame to start with
``data:``, so a comment line (the usual keep-alive) would stall it. While a turn "thinks" the stream
stays open and silent.

Which requests consume turns: the agent's own steps carry its function declarations; side requests
(Gemini CLI's model router asks for a JSON complexity score, without tools) consume nothing and get
``script.side``. When a side request asks for JSON matching a schema and the side answer is plain
text, the text is fitted into the schema (each required string property gets it, as the Responses server
does; Gemini's upper-case type names are lowered first). Pass
``is_turn=lambda conversation: ...`` to classify differently.

Errors (``fail()``) are answered with the HTTP status and ``{"error": {"code", "message",
"status"}}``; a ``kind`` that is not a Google status name (``INVALID_ARGUMENT``...) is replaced by
the one that goes with the HTTP status. Gemini CLI retries 429 and 5xx answers with a backoff, so a
test that wants an error on screen quickly scripts a 4xx.
"""

from __future__ import annotations

import json
import re
import secrets
import time
from collections.abc import Callable, Iterable
from typing import Any

from .openai import fit_side_answer
from .script import (Answer, Conversation, Failure, Incoming, Message, Script, ScriptedServer, ToolCall,
                     ToolResult, estimate_tokens, offers_tools, split_text)

__all__ = ["FAKE_API_KEY", "GeminiServer", "conversation_of", "google_status", "parse_path"]

#: An API key in the real format (``AIza`` + 35 characters) that no project has.
FAKE_API_KEY = "AIzaSyCaoScriptedModel00000000000000000"

# Context Gemini CLI puts in front of the conversation as user text (date, folder listing...); it
# stays in the recorded body but is not what the user typed.
_CONTEXT_BLOCK = re.compile(r"\A\s*<(?P<tag>[A-Za-z_][\w-]*)>.*</(?P=tag)>\s*\Z", re.DOTALL)
_PATH = re.compile(r"^/(?P<version>v\d\w*)/(?:models|tunedModels)/(?P<model>[^:/]+):(?P<method>\w+)$")

#: HTTP status -> the Google RPC status name the API uses in error bodies.
_STATUS_NAMES = {
    400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
    409: "ABORTED", 429: "RESOURCE_EXHAUSTED", 499: "CANCELLED", 500: "INTERNAL", 501: "NOT_IMPLEMENTED",
    503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED",
}
_GOOGLE_STATUS = re.compile(r"^[A-Z][A-Z_]+$")


def google_status(status: int, kind: str = "") -> str:
    """The ``status`` word of an error body: ``kind`` when it is already a Google status name."""
    if _GOOGLE_STATUS.match(kind or ""):
        return kind
    return _STATUS_NAMES.get(status, "INTERNAL" if status >= 500 else "FAILED_PRECONDITION")


def parse_path(path: str) -> tuple[str, str, str] | None:
    """``(api version, model, method)`` of a model call path, or None for any other path."""
    found = _PATH.match(path)
    if found is None:
        return None
    return found.group("version"), found.group("model"), found.group("method")


# -- reading requests -------------------------------------------------------------------------------


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _text_of(content: Any) -> str:
    """Text parts of a ``Content`` (or a bare list of parts), thoughts left out."""
    parts = content.get("parts") if isinstance(content, dict) else content
    texts = []
    for part in _list(parts):
        if isinstance(part, dict) and isinstance(part.get("text"), str) and not part.get("thought"):
            texts.append(part["text"])
        elif isinstance(part, str):
            texts.append(part)
    return "\n".join(texts)


def _output_of(response: Any) -> tuple[str, bool]:
    """A ``functionResponse.response`` flattened to text, and whether it reports an error."""
    if isinstance(response, dict):
        if "error" in response and "output" not in response:
            error = response["error"]
            return (error if isinstance(error, str) else json.dumps(error)), True
        output = response.get("output")
        if isinstance(output, str) and len(response) == 1:
            return output, False
        return json.dumps(response), False
    if isinstance(response, str):
        return response, False
    return json.dumps(response), False


def _message_of(raw: Any) -> Message | None:
    if not isinstance(raw, dict):
        return None
    role = "assistant" if raw.get("role") == "model" else str(raw.get("role") or "user")
    texts: list[str] = []
    calls: list[ToolCall] = []
    results: list[ToolResult] = []
    for part in _list(raw.get("parts")):
        if not isinstance(part, dict):
            continue
        if isinstance(part.get("text"), str):
            text = part["text"]
            if not part.get("thought") and not (role == "user" and _CONTEXT_BLOCK.match(text)):
                texts.append(text)
        call = part.get("functionCall")
        if isinstance(call, dict):
            arguments = call.get("args") if isinstance(call.get("args"), dict) else {}
            name = str(call.get("name") or "")
            calls.append(ToolCall(name=name, arguments=arguments, call_id=str(call.get("id") or name)))
        answer = part.get("functionResponse")
        if isinstance(answer, dict):
            output, is_error = _output_of(answer.get("response"))
            call_id = str(answer.get("id") or answer.get("name") or "")
            results.append(ToolResult(call_id=call_id, output=output, is_error=is_error))
    if not (texts or calls or results):
        return None
    return Message(role=role, text="\n".join(texts), tool_calls=calls, tool_results=results)


def _tool_names(body: dict[str, Any]) -> list[str]:
    names: list[str] = []
    for tool in _list(body.get("tools")):
        if not isinstance(tool, dict):
            continue
        for declaration in _list(tool.get("functionDeclarations")):
            if isinstance(declaration, dict):
                names.append(str(declaration.get("name") or ""))
    return names


def conversation_of(body: Any, *, model: str = "", stream: bool = False) -> Conversation:
    """Normalise a ``generateContent`` request body (never raises: odd bodies give an empty
    conversation). The model and whether the answer streams come from the path, not the body."""
    if not isinstance(body, dict):
        return Conversation(model=model, stream=stream)
    messages = [m for m in (_message_of(raw) for raw in _list(body.get("contents"))) if m is not None]
    system = body.get("systemInstruction")
    if isinstance(system, dict | list):
        system = _text_of(system)
    return Conversation(
        model=model,
        system=system if isinstance(system, str) else "",
        messages=messages,
        tools=_tool_names(body),
        stream=stream,
    )


def _json_schema(body: Any) -> dict[str, Any] | None:
    """The JSON schema a request wants its answer to follow, with Gemini's upper-case type names
    lowered (``OBJECT`` -> ``object``); None when it wants plain text."""
    config = body.get("generationConfig") if isinstance(body, dict) else None
    if not isinstance(config, dict):
        return None
    schema = config.get("responseJsonSchema") or config.get("responseSchema")
    return _lower_types(schema) if isinstance(schema, dict) else None


def _lower_types(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: (item.lower() if key == "type" and isinstance(item, str) else _lower_types(item))
                for key, item in value.items()}
    if isinstance(value, list):
        return [_lower_types(item) for item in value]
    return value


# -- the server -------------------------------------------------------------------------------------


class GeminiServer(ScriptedServer):
    """The Gemini API on 127.0.0.1, answering from ``script``; ``.url`` is the base URL."""

    def __init__(self, script: Script | None = None, *, host: str = "127.0.0.1",
                 is_turn: Callable[[Conversation], bool] = offers_tools,
                 models: Iterable[str] = ("gemini-2.5-pro", "gemini-2.5-flash")) -> None:
        super().__init__(script, host=host)
        self.is_turn = is_turn
        self.models = tuple(models)

    def client_env(self) -> dict[str, str]:
        """Environment that points Gemini CLI (API-key sign-in) at this server."""
        return {"GOOGLE_GEMINI_BASE_URL": self.url, "GEMINI_API_KEY": FAKE_API_KEY}

    def handle(self, request: Incoming) -> None:
        call = parse_path(request.path)
        if request.method == "POST" and call is not None and call[2] in ("generateContent",
                                                                         "streamGenerateContent"):
            self._generate(request, model=call[1], stream=call[2] == "streamGenerateContent")
        elif request.method == "POST" and call is not None and call[2] == "countTokens":
            counted = {"totalTokens": estimate_tokens(request.body)}
            self.reply_json(request, 200, counted, kind="count_tokens")
        elif request.method == "GET" and re.fullmatch(r"/v\d\w*/models", request.path.rstrip("/")):
            methods = ["generateContent", "countTokens"]
            listed = [{"name": f"models/{model}", "displayName": model, "supportedGenerationMethods": methods}
                      for model in self.models]
            self.reply_json(request, 200, {"models": listed}, kind="models")
        else:
            failure = Failure(status=404, message=f"no route for {request.method} {request.path}")
            self.reply_json(request, 404, self._error_body(failure), kind="other")

    def _generate(self, request: Incoming, *, model: str, stream: bool) -> None:
        body = request.body
        conversation = conversation_of(body, model=model, stream=stream)
        if not isinstance(body, dict) or not isinstance(body.get("contents"), list) or not body["contents"]:
            failure = Failure(status=400,
                              message="* GenerateContentRequest.contents: contents is not specified")
            self.reply_json(request, 400, self._error_body(failure), kind="invalid",
                             conversation=conversation, answer=failure)
            return
        kind, answer = self.take_turn(conversation, self.is_turn)
        if isinstance(answer, Answer) and kind == "side":
            answer = self._fit_side_answer(body, answer)
        if isinstance(answer, Failure):
            if answer.delay:
                time.sleep(answer.delay)
            self.reply_json(request, answer.status, self._error_body(answer), kind=kind,
                             conversation=conversation, answer=answer)
        elif stream:
            self._stream(request, body, model, answer,
                         lambda: self.record(request, kind=kind, conversation=conversation, answer=answer))
        else:
            if answer.delay:
                time.sleep(answer.delay)
            self.reply_json(request, 200, self._response_json(body, model, self._parts(answer), final=True),
                             kind=kind, conversation=conversation, answer=answer)

    @staticmethod
    def _fit_side_answer(body: dict[str, Any], answer: Answer) -> Answer:
        return fit_side_answer(answer, _json_schema(body))

    # -- wire format -------------------------------------------------------------------------------

    @staticmethod
    def _error_body(failure: Failure) -> dict[str, Any]:
        return {"error": {"code": failure.status, "message": failure.message,
                          "status": google_status(failure.status, failure.kind)}}

    @staticmethod
    def _call_part(call: ToolCall) -> dict[str, Any]:
        return {"functionCall": {"id": call.call_id, "name": call.name, "args": dict(call.arguments)}}

    def _parts(self, answer: Answer) -> list[dict[str, Any]]:
        parts: list[dict[str, Any]] = [{"text": answer.text}] if answer.text else []
        return parts + [self._call_part(call) for call in answer.tool_calls]

    def _response_json(self, body: Any, model: str, parts: list[dict[str, Any]], *, final: bool,
                       response_id: str | None = None, output_tokens: int = 1) -> dict[str, Any]:
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
        response: dict[str, Any] = {"candidates": [candidate], "modelVersion": model or "scripted",
                                    "responseId": response_id or secrets.token_urlsafe(16)}
        if final:
            candidate["finishReason"] = "STOP"
            prompt = estimate_tokens(body)
            output = max(output_tokens, estimate_tokens(parts) if parts else 1)
            response["usageMetadata"] = {"promptTokenCount": prompt, "candidatesTokenCount": output,
                                         "totalTokenCount": prompt + output}
        return response

    def _stream(self, request: Incoming, body: dict[str, Any], model: str, answer: Answer,
                record: Callable[[], None]) -> None:
        response_id = secrets.token_urlsafe(16)
        request.start_events()
        if answer.delay:
            # Silent: the SDK's parser would stall on a comment line, and an empty chunk is an answer.
            time.sleep(answer.delay)
        chunks: list[list[dict[str, Any]]] = [[{"text": piece}]
                                              for piece in split_text(answer.text, answer.chunks)]
        calls = [self._call_part(call) for call in answer.tool_calls]
        if calls:
            # Function calls arrive whole, in the chunk that ends the answer.
            chunks.append(calls)
        everything = [part for chunk in chunks for part in chunk]
        for index, parts in enumerate(chunks):
            final = index == len(chunks) - 1
            if final:
                record()
            response = self._response_json(body, model, parts, final=final, response_id=response_id,
                                           output_tokens=estimate_tokens(everything))
            request.send_event(None, response)
        request.end_events()
