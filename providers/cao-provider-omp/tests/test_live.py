"""The real Oh My Pi, run by the kernel in real tmux, against a scripted Chat Completions server."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from cao_hookspecs import AgentProfile, TerminalStatus
from cao_testkit.live_terminal import Transitions, failed_start, start_idle, wait_for_evidence
from cao_testkit.models import fail, reply, think

from .conftest import MODEL

pytestmark = [pytest.mark.live_cli, pytest.mark.tmux, pytest.mark.slow, pytest.mark.timeout(90)]

#: An MCP server another tool's config names: Oh My Pi must not offer its tools to a cao terminal.
FOREIGN = {"mcpServers": {"foreign": {"command": "foreign-mcp-server"}}}


def _kernel(make_kernel, name="developer", **fields):
    kernel = make_kernel()
    kernel.add_profile(AgentProfile(name=name, provider="omp", model=MODEL,
                                    system_prompt="You are a careful developer.", **fields))
    transitions = Transitions()
    kernel.register_plugin(transitions, name="transitions")
    return kernel, transitions


def _foreign_configs(home: Path, project: Path) -> None:
    """Other tools' MCP configs, in the user's home and in the project, as a user may have them."""
    for path in (home / ".claude.json", home / ".cursor" / "mcp.json", project / ".mcp.json",
                 project / ".cursor" / "mcp.json", project / ".omp" / "mcp.json"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(FOREIGN), encoding="utf-8")


async def test_turns_end_on_the_extension_signal_with_the_models_own_answer(make_kernel, workdir,
                                                                            live_sandbox, model_server):
    _foreign_configs(live_sandbox.home, Path(workdir))
    first = "All done: the build passes and 3 files changed."
    # Markdown the screen draws otherwise: the answer returned is the model's own text, from the signal.
    second = "Result:\n\n- **bold** item\n- `code` item"
    model_server.script.add(think(1.0, first), reply(second))
    kernel, transitions = _kernel(make_kernel)
    async with kernel:
        term = await start_idle(kernel, workdir)
        sent = time.time()
        await kernel.send_input(term.id, "Run the build and report.")
        confirmed = await wait_for_evidence(kernel, term.id, "native: agent_start", timeout=5)
        assert confirmed.status == TerminalStatus.PROCESSING
        await kernel.wait_for_status(term.id, {TerminalStatus.COMPLETED}, timeout=20)
        # Oh My Pi draws the answer and its prompt a tenth of a second before the loop's end reaches the
        # extension: the screen may report the turn first, the signal then confirms it.
        ended = await wait_for_evidence(kernel, term.id, "native: agent_end", timeout=5)
        assert ended.status == TerminalStatus.COMPLETED, transitions.describe(sent)
        assert await kernel.get_output(term.id, "last") == first
        [turn] = model_server.turns()
        # The profile's prompt follows Oh My Pi's own; the user's text arrives as typed.
        assert "You are a careful developer." in turn.conversation.system
        assert turn.conversation.last_user_text.endswith("Run the build and report.")
        # No MCP server reached the model: the profile has none, and other tools' configs are kept out.
        assert not [tool for tool in turn.conversation.tools if "foreign" in tool or tool.startswith("mcp")]

        await kernel.send_input(term.id, "Once more, as a list.")
        await wait_for_evidence(kernel, term.id, "native: agent_start", timeout=5)
        await wait_for_evidence(kernel, term.id, "native: agent_end", timeout=20)
        assert await kernel.get_output(term.id, "last") == second
        # One request per turn: no title or side request.
        assert len(model_server.requests) == 2
        model_server.script.assert_done()

        # A private agent folder that never checks for updates; the user's own was never written.
        assert sorted(p.name for p in (live_sandbox.home / ".omp" / "agent").iterdir()) == ["models.yml"]
        [settings] = Path(os.environ["CAO_HOME_DIR"]).rglob("omp-agent/config.yml")
        assert json.loads(settings.read_text())["startup"]["checkUpdate"] is False

        await kernel.exit_terminal(term.id)
        await kernel.wait_for_status(term.id, {TerminalStatus.ERROR}, timeout=10)


async def test_a_model_error_is_reported_as_an_error_with_its_message(make_kernel, workdir, live_sandbox,
                                                                       model_server):
    # A 400 is shown at once (a 429 or a 5xx is retried first).
    model_server.script.add(fail(400, "model scripted-model is not served here",
                                 kind="invalid_request_error"))
    kernel, _ = _kernel(make_kernel)
    async with kernel:
        term = await start_idle(kernel, workdir)
        await kernel.send_input(term.id, "Please fail.")
        report = await kernel.wait_for_status(term.id, {TerminalStatus.ERROR}, timeout=20)
        assert "model scripted-model is not served here" in report.evidence


async def test_settings_oh_my_pi_cannot_read_are_reported_at_once(make_kernel, workdir, live_sandbox,
                                                                  tmux_socket):
    # The user's own config.yml is passed to Oh My Pi as it is; a broken one stops it at start.
    broken = live_sandbox.home / ".omp" / "agent" / "config.yml"
    broken.write_text("tools: [\n  bad: {\n", encoding="utf-8")
    kernel, _ = _kernel(make_kernel)
    async with kernel:
        failed = await failed_start(kernel, workdir, tmux_socket=tmux_socket, sign="Failed to parse config")
    if failed.seen_at is not None:
        assert failed.raised_at - failed.seen_at < 2.0
    assert failed.raised_at - failed.started_at < 15.0
    assert "bad settings" in failed.message and "--- last screen ---" in failed.message, failed.message
