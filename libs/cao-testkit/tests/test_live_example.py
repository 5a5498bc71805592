"""The live assign example's parts that need no agent CLI (``cao_testkit.live_example``): the phases read
from a run's timeline, and the model time the roles take."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cao_kernel.orchestration import assign_suffix
from cao_testkit.live_example import MARKERS, PHASES, AssignModels, phases, short_name
from cao_testkit.models import Conversation, Message, ToolCall

ROOT = Path(__file__).resolve().parents[3]
T0 = 1_700_000_000.0


def _events(*pairs: tuple[str, float]) -> list[dict[str, Any]]:
    return [{"name": name, "at": T0 + at, "detail": {}} for name, at in pairs]


def _run(*, supervisor_events: list[dict[str, Any]] | None = None,
         generator_events: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """A runner timeline of one run: the supervisor created at T0 and last busy until T0 + 30, the report
    generator created at T0 + 6, ready at 9, working at 9.5, done at 11 and removed at 12; the kernel's
    events when given."""
    sup = {"id": "aaaa0001", "profile": "analysis_supervisor", "caller_id": None, "created": T0,
           "removed": None,
           "statuses": [["idle", T0 + 4.0], ["processing", T0 + 4.5], ["completed", T0 + 30.0]]}
    gen = {"id": "aaaa0002", "profile": "report_generator", "caller_id": "aaaa0001", "created": T0 + 6.0,
           "removed": T0 + 12.0,
           # Typing /exit to dismiss it makes it busy once more after its answer.
           "statuses": [["idle", T0 + 9.0], ["processing", T0 + 9.5], ["completed", T0 + 11.0],
                        ["processing", T0 + 11.1]]}
    analyst = {"id": "aaaa0003", "profile": "data_analyst", "caller_id": "aaaa0001", "created": T0 + 5.0,
               "removed": T0 + 20.0, "statuses": [], "timeline": _events(("requested", 4.9))}
    if supervisor_events is not None:
        sup["timeline"] = supervisor_events
    if generator_events is not None:
        gen["timeline"] = generator_events
    return {"example": "assign", "supervisor": "aaaa0001", "terminals": [sup, analyst, gen], "messages": []}


def test_a_run_with_the_kernels_timeline_gives_every_phase():
    supervisor = _events(("terminal_created", 0.0), ("cli_ready", 3.0), ("gate_open", 3.5),
                         ("task_typed", 3.6))
    generator = _events(("requested", 5.9), ("terminal_created", 6.0), ("process_started", 6.1),
                        ("mcp_started", 7.0), ("mcp_initialized", 7.2), ("tools_listed", 7.5),
                        ("cli_ready", 8.0), ("gate_open", 8.5), ("task_typed", 8.6), ("first_output", 8.7),
                        ("task_typed", 9.9), ("answer_ready", 10.8), ("answer_read", 11.0),
                        ("handoff_returned", 11.4), ("terminal_gone", 11.5))
    got = phases(_run(supervisor_events=supervisor, generator_events=generator))
    assert list(got) == list(PHASES)
    assert got == pytest.approx({
        "launch → supervisor ready": 3.5,
        "handoff (report generator) total": 5.5,
        "  requested → task typed": 2.7,
        "  created → CLI ready": 2.0,
        "  CLI ready → task typed": 0.6,  # the first input typed, not a later one
        "  MCP started → tools listed": 0.5,
        "  answer ready → handoff returned": 0.6,
        "whole example": 30.0,
        "supervisor created → first ready (statuses)": 4.0,
        "report generator created → removed (statuses)": 6.0,
        "  created → first ready": 3.0,
        "  first ready → working": 0.5,
        "  working → completed": 1.5,
        "  completed → removed": 1.0,
    })


def test_a_supervisor_with_no_readiness_gate_is_ready_when_its_cli_is():
    supervisor = _events(("terminal_created", 0.0), ("cli_ready", 2.5), ("task_typed", 2.6))
    assert phases(_run(supervisor_events=supervisor))["launch → supervisor ready"] == pytest.approx(2.5)


def test_without_the_kernels_timeline_only_the_runners_phases_are_given():
    got = phases(_run())
    assert [p for p, value in got.items() if value is not None] == [
        "whole example", "supervisor created → first ready (statuses)",
        "report generator created → removed (statuses)", "  created → first ready", "  first ready → working",
        "  working → completed", "  completed → removed"]
    assert got["whole example"] == pytest.approx(30.0)


def test_a_phase_whose_events_are_missing_is_none():
    generator = _events(("requested", 5.9), ("terminal_created", 6.0), ("cli_ready", 8.0))
    got = phases(_run(generator_events=generator))
    assert got["  created → CLI ready"] == pytest.approx(2.0)
    assert got["handoff (report generator) total"] is None
    assert got["  CLI ready → task typed"] is None
    assert phases({"terminals": []}) == dict.fromkeys(PHASES)


def _asked(role: str, text: str, *, tools: tuple[str, ...] = (),
           calls: tuple[ToolCall, ...] = ()) -> Conversation:
    messages = [Message(role="user", text=text)]
    if calls:
        messages.append(Message(role="assistant", tool_calls=calls))
    return Conversation(system=f"{MARKERS[role]}\n\nInstructions.", messages=messages, tools=tools)


def test_analysts_think_before_their_first_answer_only_and_the_report_generator_before_its_answer():
    models = AssignModels(ROOT, analyst_think=3.0, report_think=2.0)
    task = "Analyze dataset A: [1, 2, 3]. Compute n, the mean." + assign_suffix("abcd1234")
    send = "mcp__cao__send_message"
    first = models.data_analyst(_asked("data_analyst", task, tools=(send,)))
    assert first.delay == 3.0 and first.tool_calls[0].name == send
    sent = ToolCall(name=send, arguments={"receiver_id": "abcd1234"})
    assert models.data_analyst(_asked("data_analyst", task, tools=(send,), calls=(sent,))).delay == 0.0
    template = models.report_generator(_asked("report_generator", "Template for Dataset A: [1, 2, 3]."))
    assert template.delay == 2.0 and template.text.startswith("DATA ANALYSIS REPORT")
    # The test's models answer at once.
    assert AssignModels(ROOT).data_analyst(_asked("data_analyst", task, tools=(send,))).delay == 0.0


@pytest.mark.parametrize("offered", ["mcp__cao-mcp-server__send_message", "mcp_cao-mcp-server_send_message"])
def test_an_analyst_finds_caos_tool_under_each_clis_name_for_it(offered: str):
    # Claude Code and Codex join server and tool with "__", Gemini CLI with "_", and names hold "_" too.
    task = "Analyze dataset A: [1, 2, 3]. Compute n, the mean." + assign_suffix("abcd1234")
    tools = (offered, "mcp_cao-mcp-server_answer_user_prompt", "read_file")
    answer = AssignModels(ROOT).data_analyst(_asked("data_analyst", task, tools=tools))
    assert [call.name for call in answer.tool_calls] == [offered]
    assert short_name(offered) == "send_message" and short_name("read_file") == "read_file"
