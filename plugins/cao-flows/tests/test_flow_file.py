"""Flow files, the prompt template and the gate's answer: what upstream writes is read as it means,
and anything else is refused with a message that names the problem, never with a crash."""

from __future__ import annotations

import string

import pytest
from cao_flows.cron import check_cron, latest_by, next_after
from cao_flows.flow_file import FlowError, flow_text, parse_flow
from cao_flows.gate import decode
from cao_flows.template import render
from hypothesis import given
from hypothesis import strategies as st

# Upstream's format as its users write it (five-field cron, quoted; provider and script optional).
UPSTREAM = """---
name: morning-news
schedule: "0 8 * * 1-5"
agent_profile: developer
provider: kiro_cli
script: ./fetch.sh
---
Summarise these headlines for the team: [[headlines]]
"""


def test_an_upstream_flow_file_is_read_as_written():
    flow = parse_flow(UPSTREAM, "/flows/morning.flow.md")
    assert (flow.name, flow.schedule, flow.agent_profile, flow.provider, flow.script) == (
        "morning-news", "0 8 * * 1-5", "developer", "kiro_cli", "./fetch.sh")
    assert flow.prompt_template == "Summarise these headlines for the team: [[headlines]]\n"
    assert flow.catch_up == "once" and flow.timezone is None and flow.engine is None


def test_caos_own_keys_and_their_defaults():
    own = "catch_up: skip\ntimezone: Europe/Paris\nworking_directory: ../p"
    text = UPSTREAM.replace("script: ./fetch.sh", own)
    flow = parse_flow(text, "/a/b/flow.md")
    assert (flow.catch_up, flow.timezone, flow.working_directory) == ("skip", "Europe/Paris", "/a/p")


@pytest.mark.parametrize(("change", "problem"), [
    (("name: morning-news", "name: ../x"), "invalid flow name '../x'"),
    (("name: morning-news\n", ""), "has no 'name'"),
    (('schedule: "0 8 * * 1-5"', "schedule: '0 8 * *'"), "invalid schedule '0 8 * *'"),
    (('schedule: "0 8 * * 1-5"', "schedule: '0 99 * * *'"), "invalid schedule"),
    (('schedule: "0 8 * * 1-5"', "schedule: '*/5 * * * * 10'"), "five fields"),
    (("provider: kiro_cli", "provider: kiro_cli\ncolour: red"), "unknown key(s) 'colour'"),
    (("provider: kiro_cli", "provider: kiro_cli\ncatch_up: always"), "catch_up must be 'once' or 'skip'"),
    (("provider: kiro_cli", "provider: kiro_cli\ntimezone: Mars/Olympus"), "unknown time zone"),
    (("Summarise these headlines for the team: [[headlines]]", "  "), "the body"),
    (("---\nname", "name"), "must start with a '---' line"),
    (("---\nSummarise", "Summarise"), "is not closed"),
    (("agent_profile: developer", "agent_profile: [a, b]"), "'agent_profile' must be text"),
])
def test_a_bad_flow_file_is_refused_naming_the_problem(change, problem):
    with pytest.raises(FlowError, match=None) as caught:
        parse_flow(UPSTREAM.replace(*change, 1), "/flows/x.md")
    assert problem in str(caught.value) and "/flows/x.md" in str(caught.value)


@given(st.text(max_size=400))
def test_any_text_is_a_flow_or_a_named_refusal(text):
    try:
        flow = parse_flow(text, "/f.md")
    except FlowError as exc:
        assert str(exc).startswith("flow file /f.md: ")
    else:
        assert flow.name and flow.prompt_template.strip()


@given(name=st.text(string.ascii_letters + string.digits + "-_", min_size=1, max_size=64),
       prompt=st.text(min_size=1).filter(lambda t: t.strip() and "\x00" not in t))
def test_a_flow_written_from_upstreams_fields_reads_back(name, prompt):
    text = flow_text(name=name, schedule="*/5 * * * *", agent_profile="developer", prompt=prompt)
    flow = parse_flow(text, "/f.md")
    assert (flow.name, flow.schedule) == (name, "*/5 * * * *")
    assert flow.prompt_template.strip() == prompt.strip() or prompt.strip().startswith("---")


@given(values=st.dictionaries(st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True),
                              st.text(string.ascii_letters + " ", max_size=10), max_size=5),
       hole=st.booleans())
def test_every_placeholder_is_filled_or_the_missing_ones_are_named(values, hole):
    values.pop("absent", None)
    template = " ".join(f"[[{key}]]" for key in values) + (" [[absent]]" if hole else "")
    if hole:
        with pytest.raises(FlowError, match=r"no value for \[\[absent\]\]"):
            render(template, values)
    else:
        assert render(template, values) == " ".join(values.values())
    assert render("a [[x]] b [[x]]", {"x": 1}) == "a 1 b 1"


@given(st.text(max_size=200))
def test_any_script_output_is_a_gate_or_a_named_refusal(stdout):
    try:
        gate = decode(stdout, "gate.sh")
    except FlowError as exc:
        assert "script gate.sh" in str(exc)
    else:
        assert isinstance(gate.execute, bool) and isinstance(gate.output, dict)


def test_schedules_in_a_time_zone():
    # 08:00 in Paris on a Monday in winter is 07:00 UTC.
    monday = 1_772_409_600.0  # 2026-03-02 00:00 UTC
    assert next_after("0 8 * * 1", monday, "Europe/Paris") == monday + 7 * 3600
    assert latest_by("0 8 * * 1", monday + 7 * 3600, "Europe/Paris") == monday + 7 * 3600
    assert check_cron("*/5 * * * *") == "*/5 * * * *"
