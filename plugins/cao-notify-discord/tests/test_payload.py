"""Discord payloads: the execute-webhook shape per event kind, and Discord's length limits."""

from __future__ import annotations

import json
from datetime import datetime

from hypothesis import HealthCheck, given, settings

from cao_hookspecs import DelegationResult
from cao_notify_core.events import LEVELS, Notice, describe
from cao_notify_core.text import units
from cao_notify_discord.payload import (
    COLORS,
    DESCRIPTION_MAX,
    EMBED_TOTAL_MAX,
    FIELD_NAME_MAX,
    FIELD_VALUE_MAX,
    FIELDS_MAX,
    TITLE_MAX,
    build_payload,
    embed_units,
)
from cao_testkit.notify import strategies
from cao_testkit.notify.examples import example_notices

AT = 1_700_000_000.5


def _payload(kind: str, **args: object) -> dict:
    return build_payload(describe(kind, args, AT), username="cao")


def test_every_kind_renders_with_its_kind_in_the_footer() -> None:
    for notice in example_notices(AT).values():
        payload = build_payload(notice, username="cao")
        assert set(payload) == {"username", "embeds", "allowed_mentions"}
        (embed,) = payload["embeds"]
        assert embed["footer"]["text"] == f"cao · {notice.kind}"
        assert embed["title"] and embed["color"] in COLORS.values()
        json.dumps(payload)


def test_session_created_payload_exactly() -> None:
    # The supervisor 0a1b2c3d (supervisor-1a2b, mock_cli, ~/projects/demo) starts session cao-demo.
    payload = build_payload(example_notices(AT)["session_created"], username="cao")
    assert payload == {
        "username": "cao",
        "embeds": [{
            "title": "Session started: cao-demo",
            "description": "supervisor (mock_cli) runs in terminal 0a1b2c3d.",
            "color": COLORS["good"],
            "fields": [
                {"name": "Terminal", "value": "0a1b2c3d", "inline": True},
                {"name": "Profile", "value": "supervisor", "inline": True},
                {"name": "Provider", "value": "mock_cli", "inline": True},
                {"name": "Directory", "value": "~/projects/demo", "inline": True},
            ],
            "timestamp": "2023-11-14T22:13:20.500+00:00",
            "footer": {"text": "cao · session_created"},
        }],
        "allowed_mentions": {"parse": []},
    }
    assert datetime.fromisoformat(payload["embeds"][0]["timestamp"]).timestamp() == AT


def test_handoff_outcome_sets_title_colour_and_carries_the_answer() -> None:
    ok = DelegationResult(kind="handoff", success=True, message="Successfully handed off",
                          agent_profile="dev", terminal_id="4e5f6a7b", output="42", duration=2.04)
    failed = DelegationResult(kind="handoff", success=False, message="Handoff timed out", agent_profile="dev")
    good = _payload("handoff_finished", result=ok)["embeds"][0]
    bad = _payload("handoff_finished", result=failed)["embeds"][0]
    assert good["title"] == "Handoff finished: dev" and good["color"] == COLORS["good"]
    assert good["description"] == "Successfully handed off\n\n42"
    assert {"name": "Duration", "value": "2.0 s", "inline": True} in good["fields"]
    assert bad["title"] == "Handoff failed: dev" and bad["color"] == COLORS["bad"]
    assert bad["description"] == "Handoff timed out"
    # Empty values are left out rather than shown blank (Discord refuses empty field values).
    assert "Worker" not in [f["name"] for f in bad["fields"]]


def test_terminal_text_is_cleaned_and_mentions_are_off() -> None:
    result = DelegationResult(kind="handoff", success=True, message="done", agent_profile="dev",
                              output="\x1b[1;32m@everyone\x1b[0m look\x07 here\x00")
    payload = _payload("handoff_finished", result=result)
    assert payload["embeds"][0]["description"] == "done\n\n@everyone look here"
    assert payload["allowed_mentions"] == {"parse": []}


def test_long_text_is_cut_with_an_ellipsis() -> None:
    result = DelegationResult(kind="handoff", success=True, message="m", agent_profile="p" * 300,
                              output="x" * 10_000)
    embed = _payload("handoff_finished", result=result)["embeds"][0]
    assert units(embed["title"]) == TITLE_MAX and embed["title"].endswith("…")
    assert units(embed["description"]) == DESCRIPTION_MAX and embed["description"].endswith("…")
    assert embed_units(embed) <= EMBED_TOTAL_MAX


def test_every_level_has_its_colour() -> None:
    assert set(COLORS) == set(LEVELS)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(notice=strategies.notices(max_fields=40, field_value_size=2000))
def test_any_notice_fits_discords_limits(notice: Notice) -> None:
    payload = build_payload(notice, username="cao")
    (embed,) = payload["embeds"]
    assert 0 < units(embed["title"]) <= TITLE_MAX and embed["title"].strip()
    assert units(embed.get("description", "")) <= DESCRIPTION_MAX
    assert len(embed.get("fields", [])) <= FIELDS_MAX
    for field in embed.get("fields", []):
        assert 0 < units(field["name"]) <= FIELD_NAME_MAX and 0 < units(field["value"]) <= FIELD_VALUE_MAX
        assert field["name"].strip() and field["value"].strip()
    assert embed_units(embed) <= EMBED_TOTAL_MAX
    assert embed["color"] in COLORS.values()
    json.loads(json.dumps(payload))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(notices=strategies.described_records())
def test_any_record_renders(notices: list[Notice]) -> None:
    for notice in notices:
        (embed,) = build_payload(notice, username="cao")["embeds"]
        assert embed_units(embed) <= EMBED_TOTAL_MAX
