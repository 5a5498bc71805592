"""The assign example on real agent CLIs (Claude Code, Codex, Qwen Code, Hermes Agent, Grok Build, pi,
Oh My Pi), each on a scripted model server.

The example runs as a user runs it (``python examples/run_example.py assign --provider P``), with the
model API passed through the runner's ``--env``. One scripted server per wire format answers all five
agents of a run (the supervisor, three data analysts, the report generator), telling them apart by the
first line of their profile's instructions, which the CLI sends in every request's system prompt. What
each role's model does is what the profile asks of it, computed from the conversation the CLI sent, so
the run depends on what the CLI really passed along: the tasks with their callback lines, the handoff's
answer read from the worker's screen, the results typed into the supervisor's terminal. The models, the
CLIs and the run are the test kit's (``cao_testkit.live_example``), which bench/live.py times.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cao_kernel.orchestration import assign_suffix
from cao_testkit.live import callback_target, tool_payload
from cao_testkit.live_example import CAO_TOOLS, CLIS, AssignModels, expected_report, run_assign, short_name

pytestmark = [pytest.mark.live_cli, pytest.mark.tmux, pytest.mark.slow, pytest.mark.timeout(240)]

ROOT = Path(__file__).resolve().parents[1]
#: Gemini CLI runs in bench/live.py but not here: a task typed while the CLI is still busy finishing its
#: start-up can stay in its input box (the Enter becomes a newline), and cao does not notice, so the
#: example fails in about one run of three.
PROVIDERS = [name for name in sorted(CLIS) if name != "gemini_cli"]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_assign_example_on_a_real_cli_writes_the_exact_report(
    provider: str, tmp_path: Path, record_property: Callable[[str, Any], None]
) -> None:
    models = AssignModels(ROOT)
    roles = models.roles()
    cli = CLIS[provider](tmp_path, roles)
    server = cli.server
    try:
        run = run_assign(ROOT, provider, cli, tmp_path)
        problems = "\n".join(p[:2000] for p in server.problems)
        assert run.done.returncode == 0, (f"the example failed:\n{run.done.stdout}\n{run.done.stderr}\n"
                                          f"model server: {problems}")
        timeline = run.timeline
        assert timeline["final_answer"] == expected_report(ROOT, provider), timeline["final_answer"]
        server.assert_healthy()
    finally:
        server.close()

    (sup,) = [t for t in timeline["terminals"] if t["profile"] == "analysis_supervisor"]
    analysts = [t for t in timeline["terminals"] if t["profile"] == "data_analyst"]
    (generator,) = [t for t in timeline["terminals"] if t["profile"] == "report_generator"]
    assert len(analysts) == 3 and all(t["caller_id"] == sup["id"] for t in [*analysts, generator]), timeline
    # The handoff removed its worker; the supervisor deleted each analyst once it had its result.
    assert generator["removed"] is not None and all(t["removed"] is not None for t in analysts), timeline

    # Each analyst got its task with the callback line naming the supervisor, and every call of a cao tool
    # worked.
    by_dataset = _by_dataset(roles.turns(server, "data_analyst"))
    assert sorted(by_dataset) == ["A", "B", "C"], by_dataset
    for turns in by_dataset.values():
        assert callback_target(turns[0].conversation) == sup["id"], turns[0].conversation.last_user_text
        assert turns[0].conversation.last_user_text.rstrip().endswith(assign_suffix(sup["id"]))
    for request in server.turns():
        conversation = request.conversation
        result = conversation.last_tool_result if conversation is not None else None
        call = conversation.tool_call(result.call_id) if result is not None else None
        if call is not None and short_name(call.name) in CAO_TOOLS:
            assert not result.is_error and tool_payload(conversation).get("success") is True, result
    results = [m for m in timeline["messages"]
               if m["kind"] == "send_message" and m["receiver_id"] == sup["id"]]
    assert sorted(m["sender_id"] for m in results) == sorted(t["id"] for t in analysts), results
    assert all(m["states"][-1][0] == "delivered" for m in results), results
    # Requests sent while cao's MCP server was still connecting, despite the readiness gate (the model then
    # waited for the tools with the CLI's tool search): kept in the report to follow how often it happens.
    record_property("requests_before_cao_tools", len(models.still_connecting))
    print(f"requests sent before cao's tools were connected: {models.still_connecting}")


def _by_dataset(turns: list[Any]) -> dict[str, list[Any]]:
    """Analysts' requests grouped by the dataset of their task (one analyst per dataset)."""
    grouped: dict[str, list[Any]] = {}
    for turn in turns:
        texts = [m.text for m in turn.conversation.messages if m.role == "user"]
        found = next(filter(None, (re.search(r"Analyze dataset (\w+)", text) for text in texts)), None)
        assert found is not None, texts
        grouped.setdefault(found.group(1), []).append(turn)
    return grouped
