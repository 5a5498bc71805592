"""The real Gemini CLI, run by the kernel in real tmux, against a scripted Gemini API server."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from cao_hookspecs import TerminalStatus, hookimpl
from cao_testkit.live_terminal import failed_start, run_turn, start_idle
from cao_testkit.models import reply, think

pytestmark = [pytest.mark.live_cli, pytest.mark.tmux, pytest.mark.slow, pytest.mark.timeout(120)]

READY = {TerminalStatus.IDLE, TerminalStatus.COMPLETED}


class _StatusLog:
    """Every status change of the kernel's terminals, with the time it came (shown when a check fails)."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.changes: list[str] = []

    @hookimpl
    def cao_after_status_changed(self, terminal, new) -> None:
        self.changes.append(f"{time.monotonic() - self.started:6.2f}s {new.status.value}: {new.evidence}")

    def __str__(self) -> str:
        return "status changes:\n" + "\n".join(self.changes)


async def test_launch_reaches_idle_and_turns_complete_with_their_answers(live_gemini, workdir):
    answer = "All done: the build passes and 3 files changed."
    live_gemini.script.add(think(1.0, answer), reply("Second answer, on its own."))
    log = _StatusLog()
    async with live_gemini.kernel() as kernel:
        kernel.register_plugin(log, name="status_log")
        kernel.add_profile(live_gemini.profile())
        term = await start_idle(kernel, workdir, "coder")
        report = await run_turn(kernel, term.id, "Run the build and report.", timeout=30)
        assert "Run the build and report." in report.evidence
        assert await kernel.get_output(term.id, "last") == answer, log

        # The request carried what was typed, the profile's body (after Gemini CLI's own prompt) and model.
        [turn] = live_gemini.server.turns()
        assert turn.conversation.last_user_text == "Run the build and report."
        system = turn.conversation.system
        assert system.find("You are a careful developer.") > 1000, system[:300]
        assert turn.path == "/v1beta/models/gemini-2.5-pro:streamGenerateContent"

        await kernel.send_input(term.id, "And again.")
        await kernel.wait_for_status(term.id, {TerminalStatus.COMPLETED}, timeout=30)
        assert await kernel.get_output(term.id, "last") == "Second answer, on its own.", log
        live_gemini.script.assert_done()

        # Gemini CLI ran on its private home: nothing was written into the (sandboxed) user's own.
        assert not (live_gemini.sandbox.home / ".gemini").exists()
        private = live_gemini.cao_home / "runtime" / "terminals" / term.id / "gemini-home" / ".gemini"
        assert json.loads((private / "settings.json").read_text())["security"]["auth"]["selectedType"] == \
            "gemini-api-key"

        await kernel.exit_terminal(term.id)
        exited = await kernel.wait_for_status(term.id, {TerminalStatus.ERROR}, timeout=15)
        assert "exited" in exited.evidence


async def test_a_cli_that_refuses_its_command_line_is_an_error_within_two_seconds(live_gemini, workdir):
    async with live_gemini.kernel() as kernel:
        kernel.add_profile(live_gemini.profile(name="odd", permission_mode="autopilot"))
        # Usage printed, the CLI's dying words: the moment the kernel's 2 s start from.
        failed = await failed_start(kernel, workdir, "odd", tmux_socket=live_gemini.tmux_socket,
                                    sign="Show help")
        # Gemini CLI needs a few seconds to load before it prints its usage and exits; from then on the
        # kernel has 2 s to report it.
        message = failed.message
        if failed.seen_at is None:
            # The kernel reported and removed the window before the watcher's next look (a loaded machine
            # makes its rounds slow): the report came within one round, and its last screen shows why.
            assert "Show help" in message, message
        else:
            assert failed.raised_at - failed.seen_at < 2.0
        assert "--- last screen ---" in message
        assert 'Given: "autopilot"' in message and "Show help" in message
        assert not await kernel.list_sessions()


def test_startup_dialogs_are_answered_by_their_keys(live_gemini, private_tmux, tmp_path):
    """Without the sign-in choice and the trust the launch normally provides, Gemini CLI asks three
    questions; each matches exactly one of the provider's dialogs, and that dialog's keys answer it.
    """
    import re

    from cao_hookspecs import LaunchContext, Terminal, TerminalLaunch
    from cao_provider_gemini_cli.provider import gemini_cli_provider
    from cao_testkit.startup_dialogs import ScreenClock
    from cao_tmux.backend import TmuxBackend

    provider = gemini_cli_provider()
    workdir = live_gemini.sandbox.home / "project"
    workdir.mkdir()
    terminal = Terminal(id="0000d1a1", name="fresh-0001", session_name="cao-dialogs", provider=provider.name,
                        agent_profile="fresh")
    runtime = tmp_path / "runtime"
    plan = provider.launch(LaunchContext(terminal=terminal, profile=None, working_directory=str(workdir),
                                         runtime_dir=str(runtime), model="gemini-2.5-pro"))
    for name, content in plan.files.items():
        if name.endswith("settings.json"):
            settings = json.loads(content)
            del settings["security"]["auth"]
            content = json.dumps(settings)
        (runtime / name).parent.mkdir(parents=True, exist_ok=True)
        (runtime / name).write_text(content, encoding="utf-8")
    env = {k: v for k, v in plan.env.items() if k != "GEMINI_CLI_TRUST_WORKSPACE"}
    backend = TmuxBackend(home_dir=tmp_path / "cao-home", socket_path=private_tmux.socket_path,
                          config_file=private_tmux.config_file)
    backend.create_terminal(TerminalLaunch(terminal_id=terminal.id, session_name=terminal.session_name,
                                           window_name=terminal.name, working_directory=str(workdir),
                                           argv=plan.argv, env=env))
    backend.watch(terminal.id, lambda event: None)
    # Answered the way the kernel answers: once the dialog has been drawn for half a second, and again
    # only if it is still the live dialog 2 s later (a key that came too early is dropped).
    answered: list[str] = []
    answered_at = 0.0
    clock = ScreenClock(lambda: backend.capture(terminal.id), timeout=60)
    try:
        for screen in clock:
            report = provider.detect_status(screen)
            if report.status == TerminalStatus.IDLE and "API key confirmation" in answered:
                break
            # The trust dialog stays on screen after its answer restarts the CLI: the detector's
            # evidence names the live one.
            live = [d for d in provider.startup_dialogs if re.search(d.pattern, screen, re.MULTILINE)
                    and report.evidence == f"start-up dialog: {d.name}"]
            repeat = bool(live) and bool(answered) and answered[-1] == live[0].name
            settled = clock.still >= 0.5
            if live and settled and (not repeat or time.monotonic() - answered_at >= 2.0):
                assert report.status == TerminalStatus.WAITING_USER_ANSWER, report
                answered.append(live[0].name)
                answered_at = time.monotonic()
                assert answered.count(live[0].name) <= 2, f"{live[0].name} not accepted:\n{screen}"
                backend.send_keys(terminal.id, list(live[0].keys))
        else:
            raise AssertionError(f"not ready after answering {answered}:\n{clock.last}")
    finally:
        backend.unwatch(terminal.id)
        backend.kill_terminal(terminal.id)
        backend.close()
    expected = ["trust folder", "sign-in method", "API key confirmation"]
    assert list(dict.fromkeys(answered)) == expected, answered
    # What the answers were: the CLI recorded them in its (private) home.
    private = runtime / "gemini-home" / ".gemini"
    assert json.loads((private / "settings.json").read_text())["security"]["auth"]["selectedType"] == \
        "gemini-api-key"
    trusted = json.loads((private / "trustedFolders.json").read_text())
    assert trusted == {str(Path(workdir)): "TRUST_FOLDER"}
