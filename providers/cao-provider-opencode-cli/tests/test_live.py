"""The real OpenCode, run by the kernel in real tmux, against a scripted Anthropic server."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from cao_hookspecs import AgentProfile, CreateTerminalRequest, LaunchContext, Terminal, TerminalStatus
from cao_kernel.errors import AgentFailed
from cao_testkit.live_terminal import run_turn, start_idle
from cao_testkit.models import reply, think

pytestmark = [pytest.mark.live_cli, pytest.mark.tmux, pytest.mark.slow, pytest.mark.timeout(120)]


def _profile(kernel, name="developer", **fields):
    kernel.add_profile(AgentProfile(name=name, provider="opencode_cli",
                                    system_prompt="You are a careful developer.", **fields))
    return kernel


async def test_launch_reaches_idle_and_a_turn_completes_with_its_answer(make_kernel, workdir,
                                                                         live_sandbox, model_server):
    answer = "All done: the build passes and 3 files changed."
    model_server.script.add(think(1.0, answer), reply("Second answer, on its own."))
    user_config = live_sandbox.config_file.read_text(encoding="utf-8")
    async with _profile(make_kernel()) as kernel:
        term = await start_idle(kernel, workdir, within=60)
        # Typed as soon as the terminal is ready: the inline interface takes it at once.
        report = await run_turn(kernel, term.id, "Run the build and report.", busy_within=10, timeout=60)
        assert "Run the build and report." in report.evidence
        assert await kernel.get_output(term.id, "last") == answer

        # The request carried what the user typed, OpenCode's own prompt and the profile's, added to it.
        [turn] = model_server.turns()
        assert turn.conversation.last_user_text == "Run the build and report."
        assert "You are a careful developer." in turn.conversation.system
        assert "OpenCode" in turn.conversation.system

        await kernel.send_input(term.id, "And again.")
        second = await kernel.wait_for_status(term.id, {TerminalStatus.COMPLETED}, timeout=60)
        assert "And again." in second.evidence
        assert await kernel.get_output(term.id, "last") == "Second answer, on its own."
        model_server.script.assert_done()

        # The conversation stays in tmux's scrollback (the inline interface, not the full-screen one).
        full = await kernel.get_output(term.id, "full")
        assert full.index("Run the build and report.") < full.index("And again.")

        await kernel.exit_terminal(term.id)
        await kernel.wait_for_status(term.id, {TerminalStatus.ERROR}, timeout=30)

    # Nothing of the user's was written: neither their config nor the project folder.
    assert live_sandbox.config_file.read_text(encoding="utf-8") == user_config
    assert not any(Path(workdir).iterdir())


async def test_a_broken_user_config_is_reported_within_two_seconds_of_the_exit(
        make_kernel, workdir, live_sandbox, opencode_cli, tmp_path, monkeypatch):
    live_sandbox.write_user_config('{"model": "anthropic/claude-sonnet-4-5",\n')
    # The real OpenCode, run by a shell that notes the moment it exits (even when the kernel has
    # already closed the terminal: the shell ignores the hangup).
    exited = tmp_path / "exited-at"
    timed = tmp_path / "opencode-timed"
    timed.write_text(f'#!/bin/sh\ntrap "" HUP TERM\n"{opencode_cli.binary}" "$@"\nstatus=$?\n'
                     f'date +%s.%N > "{exited}.tmp" && mv "{exited}.tmp" "{exited}"\nexit $status\n',
                     encoding="utf-8")
    timed.chmod(0o755)
    monkeypatch.setenv("CAO_OPENCODE_CLI_BIN", str(timed))
    async with _profile(make_kernel()) as kernel:
        await kernel.start()
        with pytest.raises(AgentFailed) as failed:
            await kernel.create_session(CreateTerminalRequest(
                agent_profile="developer", working_directory=workdir))
        reported_at = time.time()
    message = str(failed.value)
    assert "is not valid JSON" in message and "--- last screen ---" in message
    deadline = time.monotonic() + 15
    while not exited.exists() and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    # Reported no later than 2 s after OpenCode exited (the error on screen is often read before that).
    assert reported_at - float(exited.read_text()) < 2.0


def test_opencode_reads_the_generated_config_as_meant(live_sandbox, opencode_cli, workdir, tmp_path):
    """OpenCode itself resolves the terminal's config: the agent's rules come last (so a project's own
    ``permission`` block cannot make it ask), MCP entries keep their environment, and the profile's
    instructions join the project's."""
    from cao_provider_opencode_cli.provider import opencode_provider

    project = Path(workdir)
    (project / "opencode.json").write_text(json.dumps({"permission": {"bash": "ask"},
                                                       "instructions": ["CONTRIBUTING.md"]}))
    cao_entry = {"command": "cao-mcp-server", "args": [],
                 "env": {"CAO_TERMINAL_ID": "0a1b2c3d", "CAO_API_PORT": "9889"}}
    terminal = Terminal(id="0a1b2c3d", name="developer-1a2b", session_name="cao-x", provider="opencode_cli",
                        agent_profile="developer")
    runtime = tmp_path / "runtime"
    profile = AgentProfile(name="developer", system_prompt="Be careful.", allowed_tools=("@builtin", "fs_*"))
    plan = opencode_provider().launch(LaunchContext(
        terminal=terminal, profile=profile, working_directory=workdir, runtime_dir=str(runtime),
        mcp_servers={"cao-mcp-server": cao_entry}, allowed_tools=profile.allowed_tools))
    runtime.mkdir()
    for name, content in plan.files.items():
        (runtime / name).write_text(content, encoding="utf-8")
    env = {**{k: v for k, v in live_sandbox.env.items() if not k.startswith("CAO_")}, **plan.env}

    def debug(*args: str) -> dict:
        done = subprocess.run([str(opencode_cli.binary), "debug", *args], cwd=workdir, env=env,
                              capture_output=True, text=True, timeout=90, stdin=subprocess.DEVNULL,
                              check=False)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    agent = debug("agent", "cao-developer")
    rules = [(rule["permission"], rule["action"]) for rule in agent["permission"]]
    assert ("bash", "ask") in rules  # the project's rule is there...
    ours = rules[rules.index(("*", "allow"), rules.index(("bash", "ask"))):]
    assert ours[:2] == [("*", "allow"), ("cao-mcp-server_*", "deny")]  # ...and ours come after it

    config = debug("config")
    assert config["mcp"]["cao-mcp-server"]["environment"] == cao_entry["env"]
    # OpenCode joins the lists: the terminal's file is read before the project's.
    assert config["instructions"] == [str(runtime / "system-prompt.md"), "CONTRIBUTING.md"]
    assert config["autoupdate"] is False
    assert os.path.exists(runtime / "system-prompt.md")
