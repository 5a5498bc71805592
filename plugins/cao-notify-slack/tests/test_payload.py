"""Slack payloads: the incoming-webhook shape (``text`` plus blocks) per event kind, escaping, limits."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cao_hookspecs import DelegationResult, SessionInfo, Terminal
from cao_kernel.testing import strategies as cst
from cao_notify_slack.events import EVENT_KINDS, Notice, describe
from cao_notify_slack.payload import (
    EMOJI,
    FIELD_TEXT_MAX,
    FIELDS_MAX,
    HEADER_MAX,
    SECTION_TEXT_MAX,
    TEXT_MAX,
    build_payload,
    escape,
    fit,
    fit_mrkdwn,
    units,
)
from cao_notify_slack.testing import example_hook_calls

AT = 1_700_000_000.5
BLOCK_TYPES = {"header", "section", "context"}


def _payload(kind: str, **args: object) -> dict:
    return build_payload(describe(kind, args, AT))


def _check_limits(payload: dict) -> None:
    assert set(payload) == {"text", "blocks"}
    assert 0 < units(payload["text"]) <= TEXT_MAX and payload["text"].strip()
    blocks = payload["blocks"]
    assert blocks[0]["type"] == "header" and blocks[-1]["type"] == "context"
    assert {b["type"] for b in blocks} <= BLOCK_TYPES and len(blocks) <= 50
    header = blocks[0]["text"]
    assert header["type"] == "plain_text" and 0 < units(header["text"]) <= HEADER_MAX
    for block in blocks[1:-1]:
        if "text" in block:
            assert block["text"]["type"] == "mrkdwn"
            assert 0 < units(block["text"]["text"]) <= SECTION_TEXT_MAX and block["text"]["text"].strip()
        if "fields" in block:
            assert 0 < len(block["fields"]) <= FIELDS_MAX
            for field in block["fields"]:
                assert field["type"] == "mrkdwn" and 0 < units(field["text"]) <= FIELD_TEXT_MAX
    assert len(blocks[-1]["elements"]) == 1
    json.loads(json.dumps(payload))


def test_every_kind_renders_with_its_kind_in_the_context_line() -> None:
    calls = example_hook_calls()
    assert {kind for _, _, kind in calls} == set(EVENT_KINDS)
    for hook, kwargs, kind in calls:
        args = dict(kwargs)
        if hook == "cao_after_status_changed":
            args = {"terminal": kwargs["terminal"], "report": kwargs["new"]}
        payload = build_payload(describe(kind, args, AT))
        _check_limits(payload)
        assert payload["blocks"][-1]["elements"][0]["text"].startswith(f"cao · {kind} · <!date^1700000000^")


def test_session_created_payload_exactly() -> None:
    terminal = Terminal(id="0a1b2c3d", name="supervisor-1a2b", session_name="cao-demo", provider="mock_cli",
                        agent_profile="supervisor", working_directory="~/projects/demo")
    payload = _payload("session_created", session=SessionInfo(name="cao-demo"), terminal=terminal)
    assert payload == {
        "text": "Session started: cao-demo: supervisor (mock_cli) runs in terminal 0a1b2c3d.",
        "blocks": [
            {"type": "header", "text": {
                "type": "plain_text", "text": ":large_green_circle: Session started: cao-demo",
                "emoji": True}},
            {"type": "section", "text": {
                "type": "mrkdwn", "text": "supervisor (mock_cli) runs in terminal 0a1b2c3d."}},
            {"type": "section", "fields": [
                {"type": "mrkdwn", "text": "*Terminal*\n0a1b2c3d"},
                {"type": "mrkdwn", "text": "*Profile*\nsupervisor"},
                {"type": "mrkdwn", "text": "*Provider*\nmock_cli"},
                {"type": "mrkdwn", "text": "*Directory*\n~/projects/demo"},
            ]},
            {"type": "context", "elements": [{
                "type": "mrkdwn",
                "text": "cao · session_created · "
                        "<!date^1700000000^{date_short_pretty} {time_secs}|2023-11-14 22:13:20 UTC>",
            }]},
        ],
    }


def test_handoff_outcome_and_answer() -> None:
    ok = DelegationResult(kind="handoff", success=True, message="Successfully handed off",
                          agent_profile="dev", terminal_id="4e5f6a7b", output="42 <is> the answer & more")
    failed = DelegationResult(kind="handoff", success=False, message="Handoff timed out", agent_profile="dev")
    good = _payload("handoff_finished", result=ok)["blocks"]
    bad = _payload("handoff_finished", result=failed)["blocks"]
    assert good[0]["text"]["text"] == f"{EMOJI['good']} Handoff finished: dev"
    assert good[3]["text"] == {"type": "mrkdwn", "text": "42 &lt;is&gt; the answer &amp; more"}
    assert bad[0]["text"]["text"] == f"{EMOJI['bad']} Handoff failed: dev"
    assert [b["type"] for b in bad] == ["header", "section", "section", "context"]


def test_agent_text_cannot_mention_or_link() -> None:
    result = DelegationResult(kind="handoff", success=True, message="<!channel> see <https://x.example|here>",
                              agent_profile="dev", output="\x1b[31m<@U123>\x1b[0m\x00")
    payload = _payload("handoff_finished", result=result)
    text = json.dumps(payload)
    assert "<!channel>" not in text and "<@U123>" not in text and "<https" not in text
    assert payload["blocks"][3]["text"]["text"] == "&lt;@U123&gt;"


def test_cutting_never_leaves_half_an_entity() -> None:
    assert fit_mrkdwn("ab&cd", 4) == "ab…"
    assert fit_mrkdwn("ab&cd", 8) == "ab&amp;…"
    assert fit_mrkdwn("a<b", 5) == "a…"
    assert fit("😀😀😀", 4) == "😀…"


@given(text=st.text(alphabet=st.sampled_from("ab&<> é😀\n"), max_size=80), limit=st.integers(1, 80))
def test_fit_mrkdwn_is_escaped_and_bounded(text: str, limit: int) -> None:
    out = fit_mrkdwn(text, limit)
    assert units(out) <= limit
    assert "<" not in out and ">" not in out
    body = out.removesuffix("…")
    # Every '&' starts a whole entity.
    assert body.replace("&amp;", "").replace("&lt;", "").replace("&gt;", "").count("&") == 0
    if units(escape(text)) <= limit:
        assert out == (escape(text) if text.strip() else "")


long_text = st.text(max_size=9000) | st.text(alphabet="😀&<é\n a", min_size=1000, max_size=9000)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(title=long_text, summary=long_text, body=long_text,
       fields=st.lists(st.tuples(st.text(max_size=400), st.text(max_size=3000)), max_size=20),
       level=st.sampled_from([*EMOJI, "strange"]), at=cst.timestamps)
def test_any_notice_fits_slacks_limits(title: str, summary: str, body: str, fields: list, level: str,
                                       at: float) -> None:
    notice = Notice(kind="session_created", title=title, summary=summary, fields=tuple(fields), level=level,
                    at=at, body=body)
    _check_limits(build_payload(notice))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(result=cst.delegation_results, terminal=cst.terminals, message=cst.messages, reason=cst.texts)
def test_any_record_renders(result: DelegationResult, terminal: Terminal, message: object,
                            reason: str) -> None:
    for kind, args in (("handoff_finished", {"result": result}), ("assign_finished", {"result": result}),
                       ("terminal_created", {"terminal": terminal}),
                       ("message_dead", {"message": message, "reason": reason})):
        _check_limits(_payload(kind, **args))
