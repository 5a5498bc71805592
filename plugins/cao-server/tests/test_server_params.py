"""Parameter reading (query strings and JSON bodies), path checks and the wire form of records."""

from __future__ import annotations

import json
import math
import string

import attrs
import pytest
from cao_hookspecs import AgentProfile, DelegationResult, Message, SessionInfo, StatusReport, Terminal
from cao_hookspecs.errors import InvalidInput
from cao_server import validation, wire
from cao_server.converter import to_json
from cao_server.errors import BadParameter, TooLarge
from cao_server.params import Param, read_params
from hypothesis import given
from hypothesis import strategies as st

from cao_kernel import validate as kernel_validate
from cao_kernel.testing import strategies as cs

FLAG = Param("flag", type="boolean", default=False)
COUNT = Param("count", type="integer", default=10, minimum=1, maximum=100)
RATIO = Param("ratio", type="number", minimum=0, maximum=10)
TOOLS = Param("tools", type="list")
ENV = Param("env", type="map", body_only=True)
NAME = Param("name", required=True)
ID = Param("id", pattern="^[a-f0-9]{8}$", nullable=True)
TEXT = Param("text", max_bytes=16)
KIND = Param("kind", enum=("a", "b"))


@given(st.booleans(), st.sampled_from([str.lower, str.upper, str.title]))
def test_booleans_read_like_fastapi(value, case):
    spellings = ["true", "1", "yes", "on"] if value else ["false", "0", "no", "off"]
    for spelling in spellings:
        assert read_params((FLAG,), {"flag": case(spelling)}, {})["flag"] is value
    assert read_params((FLAG,), {}, {"flag": value})["flag"] is value


@given(st.integers(1, 100))
def test_integers_from_query_and_body(n):
    assert read_params((COUNT,), {"count": str(n)}, {})["count"] == n
    assert read_params((COUNT,), {"count": "5"}, {"count": n})["count"] == n  # the body wins


@given(st.text(max_size=30))
def test_any_query_text_is_either_read_or_refused_with_422(raw):
    for param in (FLAG, COUNT, RATIO, KIND, ID):
        try:
            value = read_params((param,), {param.name: raw}, {})[param.name]
        except BadParameter as exc:
            assert param.name in str(exc)
            continue
        if param is RATIO:
            assert math.isfinite(value) and 0 <= value <= 10
        elif param is COUNT:
            assert 1 <= value <= 100
        elif param is KIND:
            assert value in ("a", "b")
        elif param is ID:
            assert validation.TERMINAL_ID_RE.match(value)


@given(st.lists(st.text(alphabet=string.ascii_letters + "_", min_size=1, max_size=8), max_size=5))
def test_lists_are_comma_separated_in_queries_and_arrays_in_bodies(items):
    assert read_params((TOOLS,), {"tools": " , ".join(items)}, {})["tools"] == items
    assert read_params((TOOLS,), {}, {"tools": items})["tools"] == items


@given(
    st.one_of(
        st.integers(),
        st.floats(),
        st.booleans(),
        st.lists(st.integers(), max_size=2),
        st.dictionaries(st.text(), st.integers(), max_size=2),
    )
)
def test_wrong_json_types_are_422(value):
    with pytest.raises(BadParameter, match="'name' must be"):
        read_params((NAME,), {}, {"name": value})


def test_missing_null_sizes_maps_and_unicode():
    with pytest.raises(BadParameter, match="missing required parameter 'name'"):
        read_params((NAME,), {}, {})
    with pytest.raises(BadParameter, match="missing required parameter 'name'"):
        read_params((NAME,), {}, {"name": None})
    assert read_params((ID,), {}, {"id": None}) == {"id": None}
    assert read_params((COUNT, FLAG), {}, {}) == {"count": 10, "flag": False}
    with pytest.raises(TooLarge, match="text is 17 bytes; the limit is 16"):
        read_params((TEXT,), {"text": "é" * 8 + "x"}, {})
    assert read_params((ENV,), {"env": "ignored"}, {}) == {"env": None}  # maps travel in bodies only
    assert read_params((ENV,), {}, {"env": {"A": "1"}}) == {"env": {"A": "1"}}
    with pytest.raises(BadParameter):
        read_params((ENV,), {}, {"env": {"A": 1}})
    with pytest.raises(BadParameter, match="not valid Unicode"):
        read_params((NAME,), {}, json.loads('{"name": "\\ud800"}'))
    for bad in ("nan", "inf", "-1", "11", "1e400"):
        with pytest.raises(BadParameter):
            read_params((RATIO,), {"ratio": bad}, {})


@given(st.text(max_size=80))
def test_server_and_kernel_agree_on_every_name_rule(value):
    pairs = [
        (validation.TERMINAL_ID_RE, kernel_validate.TERMINAL_ID_RE),
        (validation.SESSION_NAME_RE, kernel_validate.SESSION_NAME_RE),
        (validation.PROFILE_NAME_RE, kernel_validate.PROFILE_NAME_RE),
        (validation.KEY_RE, kernel_validate.KEY_RE),
    ]
    for ours, theirs in pairs:
        assert bool(ours.match(value)) == bool(theirs.match(value)), (ours.pattern, value)
    assert validation.MAX_INPUT_BYTES == kernel_validate.MAX_INPUT_BYTES


def test_path_checks_answer_like_upstream():
    with pytest.raises(BadParameter):
        validation.terminal_id("ABCDEF12")
    with pytest.raises(InvalidInput) as caught:
        validation.session_name("-leading")
    assert caught.value.http_status == 400


def _roundtrip(data):
    return json.loads(json.dumps(data))


def _close(a: float | None, b: float | None) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and abs(a - b) < 1e-5)


@given(cs.terminals)
def test_terminals_survive_the_wire(terminal: Terminal):
    back = wire.terminal_from_json(_roundtrip(wire.terminal_json(terminal)))
    assert _close(back.created_at, terminal.created_at)
    assert attrs.evolve(back, created_at=terminal.created_at) == terminal


@given(cs.messages)
def test_messages_survive_the_wire(message: Message):
    back = wire.message_from_json(_roundtrip(wire.message_json(message)))
    for name in (
        "id",
        "sender_id",
        "receiver_id",
        "body",
        "state",
        "orchestration_type",
        "attempts",
        "last_error",
        "idempotency_key",
    ):
        assert getattr(back, name) == getattr(message, name), name
    for name in ("created_at", "updated_at", "not_before"):
        assert _close(getattr(back, name), getattr(message, name)), name


@given(cs.status_reports)
def test_status_reports_survive_the_wire(report: StatusReport):
    back = wire.report_from_json(_roundtrip(wire.report_json("0badf00d", report)))
    assert (back.status, back.evidence) == (report.status, report.evidence) and _close(
        back.since, report.since
    )


@given(cs.delegation_results)
def test_delegation_results_survive_the_wire(result: DelegationResult):
    assert wire.delegation_from_json(_roundtrip(wire.delegation_json(result))) == result


@given(cs.agent_profiles)
def test_profiles_survive_the_wire(profile: AgentProfile):
    assert wire.profile_from_json(_roundtrip(wire.profile_json(profile))) == profile


@given(cs.session_infos)
def test_sessions_survive_the_wire(info: SessionInfo):
    assert wire.session_from_json(_roundtrip(wire.session_json(info))) == info


def test_to_json_turns_yaml_values_into_json():
    import datetime

    value = {"when": datetime.date(2026, 1, 2), "items": (1, frozenset([2])), "other": object}
    out = to_json(value)
    assert out["when"] == "2026-01-02" and out["items"] == [1, [2]] and isinstance(out["other"], str)
    json.dumps(out)
