"""The console against a fake server whose every answer and event the test controls: when it reads,
what it does after the stream breaks, and where input, answers and stops go."""

from __future__ import annotations

import copy
from typing import Any

DEV, BOSS, REVIEWER = "e5f6a7b8", "a1b2c3d4", "0c0d0e0f"


def screens(server: Any, terminal_id: str) -> int:
    return server.calls.count(("screen", terminal_id))


def test_the_screen_is_read_on_selection_status_change_and_key_never_on_a_timer(fake: Any, helpers: Any):
    from cao_console.app import ConsoleApp

    server = fake()
    app = ConsoleApp(server, team=server.snapshots[0])

    async def scenario(pilot: Any) -> None:
        until = helpers.until
        await until(pilot, lambda: "live" in helpers.plain(app, "#state"), "the event stream")
        await until(pilot, lambda: "42 passed" in helpers.plain(app, "#screen"), "the first screen")
        await pilot.pause(0.2)
        settled = screens(server, BOSS)
        await pilot.pause(1.5)  # nothing happens: nothing is read
        assert screens(server, BOSS) == settled

        # Another terminal's status: its row changes, the screen shown is not read again.
        server.push({"event": "status", "terminal_id": REVIEWER, "session_name": "cao-demo",
                     "status": "error",
                     "evidence": "crashed", "since": 1_767_268_999})
        await until(pilot, lambda: " error " in app._tree_nodes[REVIEWER].label.plain, "the reviewer's row")
        await pilot.pause(0.2)
        assert screens(server, BOSS) == settled
        assert screens(server, REVIEWER) == 0

        # The shown terminal's status: read again, once.
        server.push({"event": "status", "terminal_id": BOSS, "session_name": "cao-demo",
                     "status": "completed",
                     "evidence": "answer shown", "since": 1_767_269_000})
        await until(pilot, lambda: screens(server, BOSS) == settled + 1, "a read on the status change")
        details = helpers.plain(app, "#details")
        assert "completed" in details and "answer shown" in details

        await pilot.press("r")
        await until(pilot, lambda: screens(server, BOSS) == settled + 2, "a read on r")
        await pilot.pause(0.5)
        assert screens(server, BOSS) == settled + 2

    helpers.drive(app, scenario)


def later_team(team: dict[str, Any]) -> dict[str, Any]:
    """``team`` after a while: the reviewer gone, a tester started, the developer at work."""
    later = copy.deepcopy(team)
    demo = later["sessions"][0]
    demo["terminals"] = [t for t in demo["terminals"] if t["id"] != REVIEWER]
    demo["terminals"][1]["status"] = "processing"
    demo["terminals"].append({**demo["terminals"][1], "id": "12121212", "name": "tester-9z9z",
                              "status": "idle", "waiting_for": [], "pending_messages": 0})
    return later


def test_an_overflow_or_a_lost_stream_reads_the_team_again(fake: Any, helpers: Any):
    from cao_console.app import ConsoleApp

    first = fake().snapshots[0]
    server = fake([first, later_team(first)])
    app = ConsoleApp(server, team=first)

    async def scenario(pilot: Any) -> None:
        until = helpers.until
        await until(pilot, lambda: "live" in helpers.plain(app, "#state"), "the event stream")
        assert server.calls.count(("team",)) == 1 and REVIEWER in app._tree_nodes
        # The server drops a reader that fell behind: an overflow line, then the end of the stream.
        server.push({"event": "overflow", "reason": "this subscriber read too slowly"})
        server.push(None)
        await until(pilot, lambda: "trying again" in helpers.plain(app, "#state"), "the retry")
        assert app.connected is False
        await until(pilot, lambda: server.subscriptions == 2 and "live" in helpers.plain(app, "#state"),
                    "the new subscription")
        assert server.calls.count(("team",)) == 2
        assert REVIEWER not in app._tree_nodes and "tester-9z9z" in helpers.tree_text(app)
        assert " processing " in app._tree_nodes[DEV].label.plain

    helpers.drive(app, scenario)


def test_a_server_lost_mid_session_is_said_and_retried(fake: Any, helpers: Any):
    from cao_console.app import ConsoleApp
    from cao_server.errors import ServerNotRunning

    class Lost(fake):
        async def events(self, session: str | None = None) -> Any:
            self.subscriptions += 1
            raise ServerNotRunning(f"no cao-server is running at {self.url}; start it with `cao server`")
            yield  # an async generator, as the real stream

    server = Lost()
    app = ConsoleApp(server, team=server.snapshots[0])

    async def scenario(pilot: Any) -> None:
        await helpers.until(pilot, lambda: server.subscriptions >= 2, "a second try")
        state = helpers.plain(app, "#state")
        assert "no cao-server is running at http://127.0.0.1:9889" in state and "trying again" in state
        assert app.is_running and BOSS in app._tree_nodes  # what was read stays on screen

    helpers.drive(app, scenario)


def test_input_and_answers_go_to_the_selected_terminal(fake: Any, helpers: Any):
    from cao_console.app import ConsoleApp

    server = fake()
    app = ConsoleApp(server, team=server.snapshots[0])

    async def scenario(pilot: Any) -> None:
        until = helpers.until
        await until(pilot, lambda: "live" in helpers.plain(app, "#state"), "the event stream")
        await pilot.press("down")
        await until(pilot, lambda: app.selected == DEV, "the developer")
        await pilot.press("a", "1", "enter")
        await until(pilot, lambda: ("answer", DEV, "1") in server.calls, "the answer")
        await pilot.press("escape", "up", "i", *"go on", "enter")
        await until(pilot, lambda: ("send", BOSS, "go on") in server.calls, "the input")
        assert not [call for call in server.calls if call[0] in ("answer", "send") and call[2] in ("a", "i")]
        await pilot.press("enter")  # nothing typed, nothing sent
        await pilot.pause(0.2)
        assert len([call for call in server.calls if call[0] in ("answer", "send")]) == 2

    helpers.drive(app, scenario)


def test_stopping_asks_first_and_stops_what_is_selected(fake: Any, helpers: Any):
    from cao_console.app import ConsoleApp

    server = fake()
    app = ConsoleApp(server, team=server.snapshots[0])

    def stops() -> list[tuple[str, ...]]:
        return [call for call in server.calls if call[0].startswith("stop")]

    async def scenario(pilot: Any) -> None:
        until = helpers.until
        await until(pilot, lambda: "live" in helpers.plain(app, "#state"), "the event stream")
        await pilot.press("X")
        await until(pilot, lambda: type(app.screen).__name__ == "Confirm", "the question")
        assert "Stop session cao-demo and its 3 terminals?" in app.screen.question.plain
        await pilot.press("escape")
        await pilot.press("down", "down", "down")  # the second session's heading
        await pilot.press("x")  # no terminal under the cursor: nothing to stop, nothing asked
        await pilot.pause(0.2)
        assert type(app.screen).__name__ != "Confirm"
        await pilot.press("up", "x")
        await until(pilot, lambda: type(app.screen).__name__ == "Confirm", "the question")
        assert "Stop terminal reviewer-5e6f (0c0d0e0f)" in app.screen.question.plain
        await pilot.press("n")
        await pilot.pause(0.2)
        assert stops() == []
        await pilot.press("down")
        await pilot.press("X", "y")
        await until(pilot, lambda: stops(), "the stop")
        assert stops() == [("stop_session", "cao-docs")]

    helpers.drive(app, scenario)


def test_attach_without_a_terminal_to_hand_over_says_so(fake: Any, helpers: Any):
    from cao_console.app import ConsoleApp

    server = fake()
    app = ConsoleApp(server, team=server.snapshots[0])  # the real attach step: run_test cannot suspend

    async def scenario(pilot: Any) -> None:
        await helpers.until(pilot, lambda: "live" in helpers.plain(app, "#state"), "the event stream")
        await pilot.press("t")
        await helpers.until(pilot, lambda: "Cannot attach" in helpers.plain(app, "#state"), "the problem")
        assert "tmux attach-session -t cao-demo:supervisor-1a2b" in helpers.plain(app, "#state")
        assert app.is_running

    helpers.drive(app, scenario)


def test_an_empty_server_then_a_session_that_starts(fake: Any, helpers: Any):
    from cao_console.app import ConsoleApp

    empty = {"at": 1.0, "sessions": []}
    server = fake([empty])
    app = ConsoleApp(server, team=empty)
    record = {"id": "34343434", "name": "developer-aaaa", "session_name": "cao-new", "provider": "mock_cli",
              "agent_profile": "developer", "caller_id": None, "created_at": 5.0, "status": "unknown"}

    async def scenario(pilot: Any) -> None:
        until = helpers.until
        await until(pilot, lambda: "live" in helpers.plain(app, "#state"), "the event stream")
        assert "no terminals yet" in helpers.plain(app, "#details") and helpers.tree_text(app) == ""
        server.push({"event": "terminal_created", "terminal": record})
        await until(pilot, lambda: app.selected == "34343434", "the new terminal, shown")
        rows = helpers.tree_text(app).splitlines()
        assert rows == ["cao-new  1 terminal", "developer-aaaa mock_cli unknown"]
        assert "developer-aaaa (34343434)" in helpers.plain(app, "#details")
        await until(pilot, lambda: "42 passed" in helpers.plain(app, "#screen"), "its screen")
        server.push({"event": "terminal_removed", "terminal": record})
        await until(pilot, lambda: helpers.tree_text(app) == "", "the tree emptied")
        assert "terminal 34343434 was removed" in helpers.plain(app, "#details")
        assert helpers.plain(app, "#screen") == ""

    helpers.drive(app, scenario)


def test_a_prompt_is_shown_and_answered_by_its_number_and_a_refusal_is_said(fake: Any, helpers: Any):
    from cao_console.app import ConsoleApp

    server = fake()
    app = ConsoleApp(server, team=server.snapshots[0])

    def answers() -> list[tuple[Any, ...]]:
        return [call for call in server.calls if call[0] == "answer_prompt"]

    async def scenario(pilot: Any) -> None:
        until = helpers.until
        await until(pilot, lambda: "live" in helpers.plain(app, "#state"), "the event stream")
        await pilot.press("3")  # the supervisor waits on no prompt: nothing is answered
        await pilot.pause(0.1)
        await pilot.press("down")
        await until(pilot, lambda: app.selected == DEV, "the developer")
        details = helpers.plain(app, "#details")
        assert "prompt e5f6a7b8-1 (permission)  Edit file: Allow writing to /work/demo/setup.py?" in details
        assert "Write  file_path: /work/demo/setup.py" in details
        assert "1 Yes  (default)" in details and "2 No, and tell Codex what to do  (takes text)" in details
        await pilot.press("3")  # no such option
        await pilot.press("1")
        await until(pilot, lambda: answers(), "the answer")
        assert answers() == [("answer_prompt", DEV, "e5f6a7b8-1", 1, None)]
        assert "answered prompt e5f6a7b8-1 with option 1" in helpers.plain(app, "#state")

        # An option that takes text: the input line takes the text, then one answer carries both.
        await pilot.press("2")
        assert app.focused is app.query_one("#input")
        assert "text for option 2 (No, and tell Codex what to do)" in app.query_one("#input").placeholder
        await pilot.press(*"use the fixture", "enter")
        await until(pilot, lambda: len(answers()) == 2, "the answer with text")
        assert answers()[1] == ("answer_prompt", DEV, "e5f6a7b8-1", 2, "use the fixture")
        await pilot.press("escape")

        # Answered elsewhere meanwhile: the server refuses, the console says so.
        server.stale.add("e5f6a7b8-1")
        await pilot.press("1")
        await until(pilot, lambda: "Not answered" in helpers.plain(app, "#state"), "the refusal")
        assert "prompt e5f6a7b8-1 was answered already" in helpers.plain(app, "#state")

        # The events: answered by someone else, closed (it leaves the details), another one opened.
        record = server.snapshots[0]["sessions"][0]["terminals"][1]["prompt"]
        event = {"event": "prompt", "terminal_id": DEV, "session_name": "cao-demo", "prompt": record}
        server.push({**event, "kind": "answered", "by": "person:ops", "option": 1, "text": None})
        server.push({**event, "kind": "closed"})
        await until(pilot, lambda: "prompt e5f6a7b8-1 (" not in helpers.plain(app, "#details"), "it closed")
        assert "prompt e5f6a7b8-1 answered by person:ops: 1. Yes" in helpers.plain(app, "#details")
        following = {**record, "id": "e5f6a7b8-2",
                     "prompt": {**record["prompt"], "question": "Allow writing to /work/demo/setup.cfg?"}}
        server.push({**event, "kind": "opened", "prompt": following})
        await until(pilot, lambda: "setup.cfg?" in helpers.plain(app, "#details"), "the next prompt")
        assert "answered by person:ops" not in helpers.plain(app, "#details")
        await pilot.press("1")
        await until(pilot, lambda: len(answers()) == 4, "the answer to the next one")
        assert answers()[3] == ("answer_prompt", DEV, "e5f6a7b8-2", 1, None)

    helpers.drive(app, scenario)
