"""The real Kimi CLI, run by the kernel in real tmux, against a scripted OpenAI Responses server."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest

from cao_hookspecs import AgentProfile, CreateTerminalRequest, TerminalStatus
from cao_testkit.live_terminal import failed_start, run_turn, start_idle
from cao_testkit.models import call_tool, reply, think

pytestmark = [pytest.mark.live_cli, pytest.mark.tmux, pytest.mark.slow, pytest.mark.timeout(90)]


def _profile(kernel, name="developer", **fields):
    fields.setdefault("system_prompt", "You are a careful developer.")
    kernel.add_profile(AgentProfile(name=name, provider="kimi_cli", **fields))
    return kernel


async def test_launch_reaches_idle_and_turns_complete_with_their_answers(make_kernel, workdir, live_sandbox,
                                                                           model_server):
    answer = "All done: the build passes and 3 files changed."
    second = "I listed the folder.\n\nNothing else needs doing."
    model_server.script.add(think(1.0, answer), call_tool("Shell", {"command": "ls"}), reply(second))
    async with _profile(make_kernel()) as kernel:
        term = await start_idle(kernel, workdir)
        report = await run_turn(kernel, term.id, "Run the build and report.")
        assert "Run the build and report." in report.evidence
        assert await kernel.get_output(term.id, "last") == answer

        # The request carried what the user typed and the profile's prompt inside Kimi's own.
        [turn] = model_server.turns()
        assert turn.conversation.last_user_text == "Run the build and report."
        assert "You are a careful developer." in turn.conversation.system
        assert "You are Kimi Code CLI" in turn.conversation.system

        # The next turn (a tool call, then an answer) is not mistaken for the previous one's answer.
        await kernel.send_input(term.id, "Look around.")
        report = await kernel.wait_for_status(term.id, {TerminalStatus.COMPLETED}, timeout=20)
        assert "Look around." in report.evidence
        assert await kernel.get_output(term.id, "last") == second
        model_server.script.assert_done()
        ran = model_server.turns()[2].conversation.last_tool_result
        assert ran is not None and not ran.is_error

        # The user's own Kimi folder was never written: the CLI ran with a private share folder.
        share = live_sandbox.home / ".kimi"
        assert sorted(p.name for p in share.iterdir()) == ["config.toml"]
        assert any(Path(os.environ["CAO_HOME_DIR"]).rglob("kimi-share/sessions"))

        await kernel.exit_terminal(term.id)
        await kernel.wait_for_status(term.id, {TerminalStatus.ERROR}, timeout=10)


async def test_a_refused_config_is_an_error_within_two_seconds_of_its_screen(make_kernel, workdir,
                                                                               live_sandbox, tmux_socket):
    broken = AgentProfile(name="broken", provider="kimi_cli", extra={"kimiConfig": {"default_model": "nope"}})
    async with make_kernel() as kernel:
        kernel.add_profile(broken)
        failed = await failed_start(kernel, workdir, "broken", tmux_socket=tmux_socket,
                                    sign="Invalid configuration file")
    # Kimi needs a few seconds of its own to import itself and refuse; the kernel must report the refusal
    # within 2 s of it showing.
    message = failed.message
    if failed.seen_at is None:
        # The kernel reported and removed the window before the watcher's next look (a loaded machine
        # makes its rounds slow): the report came within one round of the refusal, which the error's
        # last screen must then show.
        assert "Invalid configuration file" in message, message
    else:
        assert failed.raised_at - failed.seen_at < 2.0
    assert "Default model nope not found in models" in message
    assert "--- last screen ---" in message


async def test_a_restricted_profile_offers_only_its_tools_and_a_refused_key_is_an_error(
        make_kernel, workdir, live_sandbox, model_server):
    from cao_testkit.models import fail

    model_server.script.add(fail(401, "Invalid API key", kind="invalid_api_key"))
    async with _profile(make_kernel(), name="reader", allowed_tools=("fs_read", "fs_list")) as kernel:
        term = await kernel.create_session(CreateTerminalRequest(
            agent_profile="reader", working_directory=workdir))
        await kernel.send_input(term.id, "Hello?")
        report = await kernel.wait_for_status(term.id, {TerminalStatus.ERROR}, timeout=20)
        assert "Authorization failed" in report.evidence
        with pytest.raises(Exception, match="no answer"):
            await kernel.get_output(term.id, "last")
    # Kimi itself enforced the allowed tools: the model was never offered the others.
    [turn] = model_server.turns()
    offered = set(turn.conversation.tools)
    assert {"ReadFile", "Grep", "Glob"} <= offered
    assert not offered & {"Shell", "WriteFile", "StrReplaceFile", "FetchURL", "SearchWeb", "Agent"}


def test_the_tools_cao_maps_are_the_tools_of_kimis_default_agent(kimi_cli):
    """Every tool the allowed-tools mapping can exclude is one Kimi's default agent has."""
    import yaml

    from cao_provider_kimi_cli.launch import NATIVE_TOOLS

    [agent_yaml] = kimi_cli.prefix.glob("lib/python3*/site-packages/kimi_cli/agents/default/agent.yaml")
    tools = set(yaml.safe_load(agent_yaml.read_text(encoding="utf-8"))["agent"]["tools"])
    mapped = {path for paths in NATIVE_TOOLS.values() for path in paths} | {"kimi_cli.tools.agent:Agent"}
    assert mapped <= tools, mapped - tools


def test_the_deprecation_stub_release_is_refused_before_it_starts(tmp_path, monkeypatch):
    """kimi-cli 1.52.0 is only a notice; the provider names the release to install instead."""
    from cao_hookspecs import LaunchContext, Terminal
    from cao_testkit.models.cli import install_pypi_cli
    from cao_provider_kimi_cli.launch import INSTALL_HINT
    from cao_provider_kimi_cli.provider import kimi_cli_provider
    from cao_provider_kimi_cli.screen import detect_status

    stub = install_pypi_cli("kimi-cli", "1.52.0", "kimi", python=">=3.12", exclude_newer="2026-09-23")
    monkeypatch.setenv("CAO_KIMI_CLI_BIN", str(stub.binary))
    monkeypatch.setenv("HOME", str(tmp_path))
    provider = kimi_cli_provider()
    terminal = Terminal(id="0000a1b2", name="dev-0001", session_name="cao-x", provider="kimi_cli",
                        agent_profile="dev")
    ctx = LaunchContext(terminal=terminal, profile=None, working_directory=str(tmp_path),
                        runtime_dir=str(tmp_path / "rt"))
    with pytest.raises(ValueError, match=r"kimi-cli 1\.52\.0.*" + re.escape(INSTALL_HINT)):
        provider.launch(ctx)
    # What the stub prints when it is started anyway reads as an error, not as a prompt to wait on.
    import subprocess

    done = subprocess.run([str(stub.binary), "--yolo"], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "KIMI_SHARE_DIR": str(tmp_path / "share")}, check=False)
    report = detect_status(done.stdout + done.stderr)
    assert report.status == TerminalStatus.ERROR, (done.stdout, report)
    assert "deprecation notice" in report.evidence


def test_start_up_gates_are_passed_with_their_keys(live_sandbox, private_tmux, tmp_path):
    """With the update check's caches in place, Kimi stops at its gates; each matches exactly one of the
    provider's dialogs, and that dialog's key gets past it to the prompt.

    Kimi runs in a network namespace of its own: with the update check on, it would reach out.
    """
    import json
    import shutil

    from cao_hookspecs import LaunchContext, Terminal, TerminalLaunch
    from cao_provider_kimi_cli.provider import kimi_cli_provider
    from cao_testkit.startup_dialogs import ScreenClock
    from cao_tmux.backend import TmuxBackend

    if shutil.which("unshare") is None:
        pytest.fail("unshare (util-linux) is needed to keep Kimi's update check off the network")
    provider = kimi_cli_provider()
    tips = {"enabled": True, "message": {"en": "kimi-cli is no longer maintained."},
            "migration": {"version": "2.0.0", "min_cli_version": "0.0.0"}}
    seeds = {"update gate": {"latest_version.txt": "9.9.9\n"},
             "migration gate": {"kimi_code_tips.json": json.dumps(tips)}}
    workdir = live_sandbox.home / "project"
    workdir.mkdir()
    backend = TmuxBackend(home_dir=tmp_path / "cao-home", socket_path=private_tmux.socket_path,
                          config_file=private_tmux.config_file)
    try:
        for number, (expected, seed) in enumerate(seeds.items(), 1):
            terminal = Terminal(id=f"0000ca0{number}", name=f"gate-{number}", agent_profile="gate",
                                session_name=f"cao-gate{number}", provider=provider.name)
            runtime = tmp_path / f"runtime-{number}"
            plan = provider.launch(LaunchContext(terminal=terminal, profile=None,
                                                 working_directory=str(workdir), runtime_dir=str(runtime)))
            for name, content in {**plan.files, **{f"kimi-share/{k}": v for k, v in seed.items()}}.items():
                (runtime / name).parent.mkdir(parents=True, exist_ok=True)
                (runtime / name).write_text(content, encoding="utf-8")
            backend.create_terminal(TerminalLaunch(
                terminal_id=terminal.id, session_name=terminal.session_name, window_name=terminal.name,
                working_directory=str(workdir), argv=["unshare", "--net", "--", *plan.argv],
                env={**plan.env, "KIMI_CLI_NO_AUTO_UPDATE": ""}))
            backend.watch(terminal.id, lambda event: None)
            try:
                # Answered the way the kernel answers: once the dialog has shown for half a second, and
                # again two seconds later if it is still there (Kimi drops keys sent before it reads one).
                answered: list[float] = []
                clock = ScreenClock(lambda: backend.capture(terminal.id), timeout=40)
                for screen in clock:
                    report = provider.detect_status(screen)
                    if report.status == TerminalStatus.IDLE:
                        break
                    matching = [d for d in provider.startup_dialogs
                                if re.search(d.pattern, screen, re.MULTILINE)]
                    assert len(matching) <= 1, [d.name for d in matching]
                    due = not answered or time.monotonic() - answered[-1] >= 2.0
                    if matching and due and clock.still >= 0.5:
                        assert matching[0].name == expected
                        assert report.status == TerminalStatus.WAITING_USER_ANSWER, report
                        assert report.evidence == f"start-up dialog: {expected}"
                        assert len(answered) < 2, f"{expected} not passed by its key:\n{screen}"
                        answered.append(time.monotonic())
                        backend.send_keys(terminal.id, list(matching[0].keys))
                else:
                    raise AssertionError(f"not at the prompt after answering {expected}:\n{clock.last}")
                assert answered, f"{expected} never matched"
                # Past the gate, it stays on screen above the prompt but no longer matches.
                assert not [d for d in provider.startup_dialogs if re.search(d.pattern, screen, re.MULTILINE)]
            finally:
                backend.unwatch(terminal.id)
                backend.kill_terminal(terminal.id)
    finally:
        backend.close()
