"""The OpenAPI document states the rules the server and the kernel enforce (patterns, enums, what may
be null), so generated clients and fuzzers know them; and each documented pattern accepts exactly the
values the validator behind it accepts."""

from __future__ import annotations

import re
import string
from typing import Any

import pytest
from cao_hookspecs.errors import InvalidInput
from cao_hookspecs.names import (
    KEY_RE,
    MAX_ANSWER_CHARS,
    PROFILE_NAME_RE,
    SESSION_ARG_RE,
    TEXT_RE,
    json_pattern,
)
from cao_server import validation
from cao_tmux import checks as tmux_checks
from cao_server.endpoints import ENDPOINTS, check_path
from cao_server.errors import BadParameter
from cao_server.openapi import build_document
from cao_server.params import read_params
from cao_server.schemas import MESSAGE_STATES
from hypothesis import example, given
from hypothesis import strategies as st

from cao_kernel import validate as kernel_validate
from cao_kernel.delivery import validate_message

DOCUMENT = build_document(ENDPOINTS)
OPERATIONS = {op["operationId"]: op for item in DOCUMENT["paths"].values() for op in item.values()}
NAMEISH = st.text(st.sampled_from(string.ascii_letters + string.digits + "_-. \n\t:/"), max_size=70)
TEXT = st.text(max_size=8) | NAMEISH | st.sampled_from(
    ["", " ", "\n", "\x1c", "\u3000", "cao-", "C-c", "Up", "a\x00", "\x00", "C-M-S-Up", "S-M-S-S-BSpace"])


def _body(operation: str, name: str) -> dict[str, Any]:
    body = OPERATIONS[operation]["requestBody"]["content"]["application/json"]["schema"]
    return body["properties"][name]


def _parameter(operation: str, name: str, where: str) -> dict[str, Any]:
    parameters = OPERATIONS[operation]["parameters"]
    return next(p["schema"] for p in parameters if p["in"] == where and p["name"] == name)


def _documented(schema: dict[str, Any], value: str) -> bool:
    # JSON Schema searches with an ECMAScript pattern, whose final `$` matches only at the very end.
    pattern = schema["pattern"]
    assert pattern.endswith("$"), pattern
    return re.search(pattern[:-1] + r"\Z", value) is not None


def _accepts(check: Any, value: str) -> bool:
    try:
        check(value)
    except (InvalidInput, BadParameter):
        return False
    return True


def test_the_document_carries_the_validators_rules():
    assert _body("create_session", "agent_profile")["pattern"] == json_pattern(PROFILE_NAME_RE)
    assert _body("assign", "agent_profile")["pattern"] == json_pattern(PROFILE_NAME_RE)
    assert _body("send_key", "key")["pattern"] == json_pattern(KEY_RE)
    for operation, name in [("send_input", "message"), ("post_inbox", "message"), ("answer", "answer"),
                            ("create_terminal", "initial_message")]:
        assert _body(operation, name)["pattern"] == json_pattern(TEXT_RE), (operation, name)
    assert _body("answer", "answer")["maxLength"] == MAX_ANSWER_CHARS
    assert _parameter("list_inbox", "status", "query")["enum"] == list(MESSAGE_STATES)
    assert _parameter("get_session", "session_name", "path")["pattern"] == json_pattern(SESSION_ARG_RE)
    assert "pattern" in _body("create_session", "model")
    assert "pattern" in _body("create_session", "session_name")
    assert "pattern" in _parameter("wait_status", "status", "query")
    assert "pattern" in _body("install_profile", "source")
    # The server reads null in a body as "not given" for any optional parameter.
    assert _body("create_terminal", "caller_id")["nullable"] is True
    assert "nullable" not in _body("create_terminal", "agent_profile")
    # A key sent to a terminal whose agent has exited is a 409.
    assert "409" in OPERATIONS["send_key"]["responses"]


@given(TEXT)
@example("a" * 60)
@example("a" * 61)
@example("cao-" + "a" * 60)
def test_documented_session_names_are_the_kernels(value):
    def kernel(name: str) -> None:
        check_path({"session_name": name})
        kernel_validate.session_name(name)

    assert _documented(_parameter("get_session", "session_name", "path"), value) == _accepts(kernel, value)
    # In a body an empty name asks for a generated one.
    documented = _documented(_body("create_session", "session_name"), value)
    assert documented == (value == "" or _accepts(kernel, value))


@given(TEXT)
def test_documented_names_models_and_keys_are_the_kernels(value):
    assert _documented(_body("create_session", "agent_profile"), value) == _accepts(
        kernel_validate.profile_name, value)
    # An empty model means the profile's own.
    assert _documented(_body("create_session", "model"), value) == (
        value == "" or _accepts(kernel_validate.model, value))
    assert _documented(_body("send_key", "key"), value) == _accepts(validation.key, value)


@given(TEXT)
def test_documented_texts_are_the_kernels(value):
    def kernel(text: str) -> None:
        validate_message(text)
        kernel_validate.input_text(text)

    assert _documented(_body("send_input", "message"), value) == _accepts(kernel, value)


@given(TEXT)
def test_every_documented_key_reaches_the_terminal(value):
    # The contract's rule must not let through a key the tmux backend then refuses (a 400 for valid input).
    if _documented(_body("send_key", "key"), value):
        assert tmux_checks.key(value) == value


@given(st.lists(st.sampled_from([*MESSAGE_STATES[:2], "idle", "completed", "bogus", "", " "]), max_size=3)
       .map(",".join))
def test_documented_status_lists_are_what_wait_takes(value):
    endpoint = next(e for e in ENDPOINTS if e.name == "wait_status")

    def server(raw: str) -> None:
        if not read_params(endpoint.params, {"status": raw}, {})["status"]:
            raise InvalidInput("name at least one status to wait for")

    assert _documented(_parameter("wait_status", "status", "query"), value) == _accepts(server, value)


@pytest.mark.parametrize(("source", "taken"), [("developer", True), (" HTTPS://example.com/a.md ", True),
                                               ("/etc/passwd", False), ("../x", False), ("", False)])
def test_documented_install_sources(source, taken):
    assert _documented(_body("install_profile", "source"), source) == taken
