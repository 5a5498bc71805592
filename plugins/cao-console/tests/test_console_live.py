"""``cao console`` under Textual's pilot against a real ``cao server`` running mock agents.

Every test starts the app as the command does (the server from the settings, the token from the cao
home, the team read first) and watches what the screen shows as the server's events arrive.
"""

from __future__ import annotations

import asyncio
import subprocess
import time
from typing import Any

import pytest

pytestmark = [pytest.mark.tmux, pytest.mark.slow]


async def start_session(live: Any, *workers: str) -> tuple[Any, list[Any]]:
    """A session with a mock conductor and ``workers`` (profiles) it started; the terminal records."""
    from cao_hookspecs import CreateTerminalRequest

    async with live.client() as api:
        boss = await api.create_session(CreateTerminalRequest(
            agent_profile="developer", provider="mock_cli", working_directory=live.workdir))
        started = [await api.create_terminal(CreateTerminalRequest(
            agent_profile=profile, provider="mock_cli", session_name=boss.session_name, caller_id=boss.id,
            working_directory=live.workdir)) for profile in workers]
    return boss, started


async def stop_session(live: Any, name: str) -> None:
    from cao_hookspecs.errors import NotFound

    async with live.client() as api:
        try:
            await api.delete_session(name)
        except NotFound:
            pass


def console(live: Any, session: str, **kwargs: Any) -> Any:
    """The app as ``cao console --session NAME`` builds it, after the same first read of the team."""
    from cao_console.app import ConsoleApp
    from cao_console.server import connect

    async def first_read() -> dict[str, Any]:
        server = connect(live.settings)
        try:
            return await server.team(session)
        finally:
            await server.aclose()

    team = asyncio.run(first_read())
    assert [s["name"] for s in team["sessions"]] == [session]
    return ConsoleApp(connect(live.settings), team=team, session=session, **kwargs)


def row(app: Any, terminal_id: str) -> str:
    """The tree row of a terminal, or '' when it is not in the tree."""
    node = app._tree_nodes.get(terminal_id)
    return node.label.plain if node is not None else ""


def test_select_a_terminal_send_input_and_watch_status_and_screen(live: Any, helpers: Any):
    boss, (worker,) = asyncio.run(start_session(live, "reviewer"))
    app = console(live, boss.session_name)
    seen: list[str] = []

    async def scenario(pilot: Any) -> None:
        until = helpers.until
        await until(pilot, lambda: "live" in helpers.plain(app, "#state"), "the event stream")
        assert app.selected == boss.id  # the console opens on the first terminal
        await pilot.press("down")  # the worker, nested under the conductor that started it
        await until(pilot, lambda: app.selected == worker.id, "the worker to be selected")
        await until(pilot, lambda: "MockCli ready." in helpers.plain(app, "#screen"), "the worker's screen")
        assert " idle " in row(app, worker.id) + " "
        assert f"{worker.name} (" in helpers.plain(app, "#details")

        await pilot.press("i")
        assert app.focused is app.query_one("#input")
        await pilot.press(*"__mock_sleep_1", "enter")

        def status() -> bool:
            label = row(app, worker.id) + " "
            for name in ("processing", "completed"):
                if f" {name} " in label and seen[-1:] != [name]:
                    seen.append(name)
            return "completed" in seen

        await until(pilot, status, "the worker to answer")
        # The answer arrives a second after the input: only a read made on the status change shows it.
        await until(pilot, lambda: "> MOCK: slept 1s" in helpers.plain(app, "#screen"),
                    "the answer on screen")
        assert seen == ["processing", "completed"]
        assert "completed" in helpers.plain(app, "#details")

        # What an agent prints is shown as text: markup in it stays as typed.
        await pilot.press(*"[bold]x[/bold]", "enter")
        await until(pilot, lambda: "> MOCK: [bold]x[/bold]" in helpers.plain(app, "#screen"), "the echo")

    try:
        helpers.drive(app, scenario)
    finally:
        asyncio.run(stop_session(live, boss.session_name))


def test_stop_a_terminal_after_confirming_and_see_it_leave_the_tree(live: Any, helpers: Any):
    from cao_hookspecs.errors import NotFound

    boss, (worker, other) = asyncio.run(start_session(live, "reviewer", "developer"))
    app = console(live, boss.session_name)

    async def scenario(pilot: Any) -> None:
        until = helpers.until
        await until(pilot, lambda: "live" in helpers.plain(app, "#state"), "the event stream")
        await pilot.press("down")
        await until(pilot, lambda: app.selected == worker.id, "the worker to be selected")
        await pilot.press("x")
        await until(pilot, lambda: app.screen.__class__.__name__ == "Confirm", "the question")
        await pilot.press("n")  # a no leaves it running
        await pilot.pause(0.3)
        assert worker.id in app._tree_nodes
        await pilot.press("x")
        await until(pilot, lambda: app.screen.__class__.__name__ == "Confirm", "the question again")
        await pilot.press("y")
        await until(pilot, lambda: worker.id not in app._tree_nodes, "the worker to leave the tree")
        assert worker.name not in helpers.tree_text(app)
        assert boss.name in helpers.tree_text(app) and other.name in helpers.tree_text(app)
        assert "1 terminal" not in helpers.tree_text(app) and "2 terminals" in helpers.tree_text(app)
        assert app.selected != worker.id

    try:
        helpers.drive(app, scenario)

        async def gone() -> None:
            async with live.client() as api:
                with pytest.raises(NotFound):
                    await api.get_terminal(worker.id)
                assert (await api.get_terminal(other.id)).id == other.id

        asyncio.run(gone())
    finally:
        asyncio.run(stop_session(live, boss.session_name))


def test_the_attach_step_gets_an_argv_that_shows_the_selected_terminal(live: Any, helpers: Any):
    boss, (worker,) = asyncio.run(start_session(live, "reviewer"))
    attached: list[list[str]] = []
    app = console(live, boss.session_name, attach=lambda _app, argv: attached.append(argv))

    async def marks() -> None:
        async with live.client() as api:
            await api.send_input(boss.id, "boss-mark")
            await api.send_input(worker.id, "worker-mark")

    async def scenario(pilot: Any) -> None:
        await helpers.until(pilot, lambda: "live" in helpers.plain(app, "#state"), "the event stream")
        await pilot.press("down")
        await helpers.until(pilot, lambda: app.selected == worker.id, "the worker to be selected")
        await pilot.press("t")
        await helpers.until(pilot, lambda: attached, "the attach step")

    try:
        asyncio.run(marks())
        helpers.drive(app, scenario)
        (argv,) = attached
        # Run as a person's terminal would: it shows the worker's screen, not its conductor's.
        screen = run_in_terminal(argv, until=b"MOCK: worker-mark")
        assert b"MOCK: worker-mark" in screen and b"boss-mark" not in screen
    finally:
        asyncio.run(stop_session(live, boss.session_name))


def run_in_terminal(argv: list[str], until: bytes, timeout: float = 10.0) -> bytes:
    """What ``argv`` draws in a terminal of its own, read until ``until`` shows; then it is detached
    (tmux's default prefix, C-b d) and, if that does not end it, killed."""
    import os
    import pty
    import select
    import signal
    import time

    env = {k: v for k, v in os.environ.items() if k != "TMUX"}
    env["TERM"] = "xterm-256color"
    master, slave = pty.openpty()
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True)
    os.close(slave)
    seen = b""
    try:
        deadline = time.monotonic() + timeout
        while until not in seen and time.monotonic() < deadline:
            if select.select([master], [], [], 0.2)[0]:
                try:
                    seen += os.read(master, 65536)
                except OSError:
                    break
        os.write(master, b"\x02d")
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)
    finally:
        os.close(master)
    return seen


def test_message_bodies_and_agent_text_are_shown_as_text(live: Any, helpers: Any):
    boss, _ = asyncio.run(start_session(live))
    body = "[bold]not bold[/bold] \x1b[31mnot red\x1b[0m [link=x]y[/link]"
    app = console(live, boss.session_name)

    async def busy_then_message() -> None:
        async with live.client() as api:
            await api.send_input(boss.id, "__mock_sleep_3")
            await api.send_message("user", boss.id, body)  # waits in the inbox while it is busy

    async def scenario(pilot: Any) -> None:
        until = helpers.until
        await until(pilot, lambda: "live" in helpers.plain(app, "#state"), "the event stream")
        await busy_then_message()
        await until(pilot, lambda: "1 message" in row(app, boss.id), "the pending message in the tree")
        await until(pilot, lambda: "from user" in helpers.plain(app, "#details"),
                    "the message in the details")
        details = app.query_one("#details").content
        shown = details.plain
        assert "[bold]not bold[/bold] \\x1b[31mnot red\\x1b[0m [link=x]y[/link]" in shown
        assert "\x1b" not in shown
        start = shown.index("not bold")
        # No style reaches the body's characters but the plain text style of the line.
        assert not [span for span in details.spans if span.start <= start < span.end and span.style]
        # Delivered once the agent is ready: the count goes, and the agent's echo shows the escape as text.
        await until(pilot, lambda: "message" not in row(app, boss.id), "the delivery", timeout=20)
        await pilot.press("r")
        echo = "> MOCK: [bold]not bold[/bold] ^[[31mnot red"
        await until(pilot, lambda: echo in helpers.plain(app, "#screen"), "the echo of the message")

    try:
        helpers.drive(app, scenario)
    finally:
        asyncio.run(stop_session(live, boss.session_name))


def test_a_workers_prompt_is_answered_by_its_number_and_a_stale_answer_is_refused(live: Any, helpers: Any):
    from cao_hookspecs import CreateTerminalRequest

    async def start() -> Any:
        async with live.client() as api:
            return await api.create_session(CreateTerminalRequest(
                agent_profile="careful", provider="mock_cli", working_directory=live.workdir))

    careful = asyncio.run(start())
    app = console(live, careful.session_name)

    async def last_answer() -> str:
        async with live.client() as api:
            try:
                return await api.get_output(careful.id, "last")
            except Exception:  # no answer yet while the turn runs
                return ""

    async def scenario(pilot: Any) -> None:
        until = helpers.until
        await until(pilot, lambda: "live" in helpers.plain(app, "#state"), "the event stream")
        async with live.client() as api:
            await api.send_input(careful.id, "run: make clean")
        await until(pilot, lambda: f"prompt {careful.id}-1 (permission)" in helpers.plain(app, "#details"),
                    "the prompt in the details")
        details = helpers.plain(app, "#details")
        assert "Allow Bash(make clean)?" in details and "Bash  command: make clean" in details
        assert "3 No, and tell the agent what to do differently  (takes text)" in details
        await pilot.press("3", *"not now", "enter")
        answered, deadline = "", time.monotonic() + 20
        while not answered.startswith("Did not run") and time.monotonic() < deadline:
            await pilot.pause(0.1)
            answered = await last_answer()
        assert answered == "Did not run make clean.\nReason: not now"
        await until(pilot, lambda: f"prompt {careful.id}-1 answered by person:console" in
                    helpers.plain(app, "#details"), "who answered")

        # The next prompt, answered from the command line first: the console's answer is refused.
        await pilot.press("escape")
        async with live.client() as api:
            await api.send_input(careful.id, "run: make test")
        await until(pilot, lambda: app.team.find(careful.id).prompt is not None, "the second prompt")
        stale = app.team.find(careful.id).prompt
        async with live.client() as api:
            await api.answer_prompt(careful.id, option=1, prompt_id=stale.id, by="person:cli")
        await until(pilot, lambda: "answered by person:cli: 1. Yes" in helpers.plain(app, "#details"),
                    "who answered")
        await until(pilot, lambda: app.team.find(careful.id).prompt is None, "the prompt closed")
        # A console that has not heard yet still holds the prompt: put it back, as such a console would.
        app.team.find(careful.id).prompt = stale
        await pilot.press("1")
        await until(pilot, lambda: "Not answered" in helpers.plain(app, "#state"), "the refusal")
        assert f"terminal {careful.id} has no prompt to answer" in helpers.plain(app, "#state")
        assert await last_answer() == "Ran make test."

    try:
        helpers.drive(app, scenario)
    finally:
        asyncio.run(stop_session(live, careful.session_name))
