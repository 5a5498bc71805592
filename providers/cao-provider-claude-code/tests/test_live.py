"""The real Claude Code, run by the kernel in real tmux, against a scripted Anthropic server."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from cao_hookspecs import AgentProfile, CreateTerminalRequest, TerminalStatus
from cao_kernel.errors import AgentFailed
from cao_testkit.live_terminal import failed_start, run_turn, start_idle
from cao_testkit.models import reply, think

pytestmark = [pytest.mark.live_cli, pytest.mark.tmux, pytest.mark.slow, pytest.mark.timeout(90)]

READY = {TerminalStatus.IDLE, TerminalStatus.COMPLETED}


async def _settled(kernel, terminal_id: str, quiet: float = 2.5, timeout: float = 15.0) -> None:
    """Return once the screen has not changed for ``quiet`` seconds."""
    import asyncio

    deadline = time.monotonic() + timeout
    last, since = None, time.monotonic()
    while time.monotonic() < deadline:
        screen = await kernel.get_output(terminal_id, "full")
        if screen != last:
            last, since = screen, time.monotonic()
        elif time.monotonic() - since >= quiet:
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"screen still changing after {timeout:g} s:\n{last}")


def _profile(kernel, name="developer", **fields):
    kernel.add_profile(AgentProfile(name=name, provider="claude_code",
                                    system_prompt="You are a careful developer.", **fields))
    return kernel


async def test_launch_reaches_idle_and_a_turn_completes_with_its_answer(make_kernel, workdir, live_sandbox,
                                                                         model_server):
    answer = "All done: the build passes and 3 files changed."
    model_server.script.add(think(1.0, answer), reply("Second answer, on its own."))
    async with _profile(make_kernel()) as kernel:
        term = await start_idle(kernel, workdir)
        report = await run_turn(kernel, term.id, "Run the build and report.")
        assert report.evidence
        assert await kernel.get_output(term.id, "last") == answer

        # The request carried what the user typed and the profile's system prompt.
        [turn] = model_server.turns()
        assert turn.conversation.last_user_text == "Run the build and report."
        assert "You are a careful developer." in turn.conversation.system

        # The next turn is not mistaken for the previous one's answer. Claude Code keeps redrawing hints
        # for a moment after a turn; the kernel takes a ready reading of any changed screen after input
        # as the answer, so wait for the screen to settle first (see the provider's README).
        await _settled(kernel, term.id)
        await kernel.send_input(term.id, "And again.")
        await kernel.wait_for_status(term.id, {TerminalStatus.COMPLETED}, timeout=20)
        assert await kernel.get_output(term.id, "last") == "Second answer, on its own."
        model_server.script.assert_done()

        # The user's own files were never touched: the CLI ran with a private config folder.
        runtime = Path(os.environ["CAO_HOME_DIR"])
        assert not (live_sandbox.home / ".claude.json").exists()
        assert any(runtime.rglob("claude-config/.claude.json"))

        await kernel.exit_terminal(term.id)
        await kernel.wait_for_status(term.id, {TerminalStatus.ERROR}, timeout=10)


async def test_explicit_bypass_mode_as_root_without_sandbox_is_an_error_with_its_screen(
        make_kernel, workdir, live_sandbox, monkeypatch):
    monkeypatch.delenv("IS_SANDBOX")
    async with _profile(make_kernel()) as kernel:
        await kernel.start()
        started = time.monotonic()
        if os.geteuid() != 0:
            # Not root: the same request starts normally in bypass mode.
            term = await kernel.create_session(CreateTerminalRequest(
                agent_profile="developer", working_directory=workdir, yolo=True))
            assert term.status in READY
            assert "bypass permissions on" in await kernel.get_output(term.id, "full")
            return
        with pytest.raises(AgentFailed) as failed:
            await kernel.create_session(CreateTerminalRequest(
                agent_profile="developer", working_directory=workdir, yolo=True))
        # The CLI refuses within a fraction of a second; the kernel must report it within 2 s of that.
        assert time.monotonic() - started < 2.5
        message = str(failed.value)
        assert "cannot be used with root/sudo privileges" in message
        assert "--- last screen ---" in message


async def test_a_bad_permission_mode_is_reported_within_two_seconds_of_the_exit(make_kernel, workdir,
                                                                                 live_sandbox):
    async with _profile(make_kernel(), name="planner", permission_mode="noSuchMode") as kernel:
        failed = await failed_start(kernel, workdir, "planner")
        assert failed.raised_at - failed.started_at < 2.5
        assert "noSuchMode" in failed.message and "is invalid" in failed.message
        assert "--- last screen ---" in failed.message




def test_startup_dialogs_are_accepted_by_their_keys(live_sandbox, model_server, private_tmux, tmp_path):
    """With none of the seeded answers, Claude Code shows its start-up dialogs one after the other; each
    matches exactly one of the provider's dialogs, and that dialog's keys accept it.

    The keys are sent once the dialog has been on screen, unchanged, for half a second: Claude Code
    2.1 drops keys that arrive in the first few tenths of a second after it draws a dialog.
    """
    from cao_hookspecs import LaunchContext, Terminal, TerminalLaunch
    from cao_provider_claude_code.provider import claude_code_provider
    from cao_testkit.startup_dialogs import accept_startup_dialogs
    from cao_tmux.backend import TmuxBackend

    provider = claude_code_provider()
    workdir = live_sandbox.home / "project"
    workdir.mkdir()
    terminal = Terminal(id="0000d1a1", name="fresh-0001", session_name="cao-dialogs", provider=provider.name,
                        agent_profile="fresh")
    runtime = tmp_path / "runtime"
    plan = provider.launch(LaunchContext(terminal=terminal, profile=None, working_directory=str(workdir),
                                         runtime_dir=str(runtime)))
    for name, content in plan.files.items():
        if name.endswith(".claude.json"):
            config = json.loads(content)
            for key in ("projects", "bypassPermissionsModeAccepted", "customApiKeyResponses"):
                config.pop(key)
            content = json.dumps(config)
        (runtime / name).parent.mkdir(parents=True, exist_ok=True)
        (runtime / name).write_text(content, encoding="utf-8")
    backend = TmuxBackend(home_dir=tmp_path / "cao-home", socket_path=private_tmux.socket_path,
                          config_file=private_tmux.config_file)
    backend.create_terminal(TerminalLaunch(terminal_id=terminal.id, session_name=terminal.session_name,
                                           window_name=terminal.name, working_directory=str(workdir),
                                           argv=plan.argv, env=dict(plan.env)))
    backend.watch(terminal.id, lambda event: None)
    try:
        answered, _ = accept_startup_dialogs(provider, lambda: backend.capture(terminal.id),
                                             lambda keys: backend.send_keys(terminal.id, keys), timeout=40)
    finally:
        backend.unwatch(terminal.id)
        backend.kill_terminal(terminal.id)
        backend.close()
    expected = ["API key confirmation", "bypass permissions confirmation", "trust folder"]
    assert sorted(set(answered)) == expected
    assert len(answered) == 3, answered  # each accepted at the first try
    # What the answers were: the CLI recorded them in its (private) config.
    config = json.loads((runtime / "claude-config" / ".claude.json").read_text())
    assert config["projects"][str(workdir)]["hasTrustDialogAccepted"] is True
    assert os.environ["ANTHROPIC_API_KEY"][-20:] in config["customApiKeyResponses"]["approved"]
