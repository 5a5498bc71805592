"""Slack payloads: the incoming-webhook shape (``text`` plus blocks) per event kind, escaping, limits."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cao_hookspecs import DelegationResult
from cao_notify_core.events import LEVELS, Notice, describe
from cao_notify_core.text import units
from cao_notify_slack.payload import (
    EMOJI,
    FIELD_TEXT_MAX,
    FIELDS_MAX,
    HEADER_MAX,
    SECTION_TEXT_MAX,
    TEXT_MAX,
    build_payload,
    escape,
    fit_mrkdwn,
)
from cao_testkit.notify import strategies
from cao_testkit.notify.examples import example_notices

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
    for notice in example_notices(AT).values():
        payload = build_payload(notice)
        _check_limits(payload)
        context = payload["blocks"][-1]["elements"][0]["text"]
        assert context.startswith(f"cao · {notice.kind} · <!date^1700000000^")
        if notice.kind == "waiting_user_answer":
            assert payload["blocks"][0]["text"]["text"] == f"{EMOJI['warn']} developer-3c4d needs your answer"


def test_session_created_payload_exactly() -> None:
    # The supervisor 0a1b2c3d (supervisor-1a2b, mock_cli, ~/projects/demo) starts session cao-demo.
    payload = build_payload(example_notices(AT)["session_created"])
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


def test_every_level_has_its_emoji() -> None:
    assert set(EMOJI) == set(LEVELS)


# '&' and '<' become entities: escaping makes a text longer, and a cut must not split one.
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(notice=strategies.notices(alphabet="😀&<é\n a", max_fields=20, field_value_size=3000))
def test_any_notice_fits_slacks_limits(notice: Notice) -> None:
    _check_limits(build_payload(notice))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(notices=strategies.described_records())
def test_any_record_renders(notices: list[Notice]) -> None:
    for notice in notices:
        _check_limits(build_payload(notice))
