"""The console's screen: the team tree, the selected terminal, an input line.

Nothing runs on a timer. One worker follows ``GET /events``: each event updates the team in place and
redraws only the rows it changed; the start of the stream (and every reconnection, after an overflow
or a restart) reads the team again, while the events that follow wait in the stream, so nothing that
happened in between is lost. The selected terminal's screen is read when it is selected, when its
status changes, after input is sent to it, and on ``r``.

Prompts. The details of a terminal that waits on a prompt show it (question, tool, options by number);
a digit key answers it with that option, naming the prompt's id, so an answer meant for a prompt that
was answered or replaced meanwhile is refused by the server (and said on the state line) instead of
landing on the next one. An option that takes text opens the input line for its text first.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from cao_hookspecs.errors import CaoError
from rich.text import Text
from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, ScrollableContainer, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Footer, Input, Static, Tree

from .render import details_text, member_label, screen_text, session_label
from .server import PENDING_LIMIT
from .team import Member, Overflow, StatusChanged, Subscribed, Team, decode_event

if TYPE_CHECKING:
    from cao_hookspecs import Message
    from textual.widgets.tree import TreeNode

    from .server import ConsoleServer

#: Seconds between attempts to reach the event stream again, doubling up to the second figure.
RETRY_FIRST, RETRY_MAX = 0.5, 10.0

Attach = Callable[[App[Any], list[str]], None]


def attach_in_terminal(app: App[Any], argv: list[str]) -> None:
    """Hand the terminal to ``argv`` (tmux attach) until it ends, then take it back."""
    env = dict(os.environ)
    if "switch-client" not in argv:
        # Attaching from inside another tmux server is a deliberate nesting: tmux wants TMUX unset.
        env.pop("TMUX", None)
    with app.suspend():
        subprocess.run(argv, env=env, check=False)


class Confirm(ModalScreen[bool]):
    """A yes/no question; ``y`` or the Stop button answers yes."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Yes"), Binding("n", "answer(False)", "No"),
        Binding("escape", "answer(False)", "No"),
    ]
    DEFAULT_CSS = """
    Confirm { align: center middle; }
    Confirm > Vertical { width: 64; height: auto; border: thick $error; background: $surface; padding: 1 2; }
    Confirm Horizontal { height: auto; margin-top: 1; }
    Confirm Button { margin-right: 2; }
    """

    def __init__(self, question: Text) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self.question)
            with Horizontal():
                yield Button("Stop (y)", variant="error", id="yes")
                yield Button("Cancel (n)", id="no")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


class ConsoleApp(App[None]):
    """``cao console``. ``team`` is a snapshot already read (shown at once); ``session`` keeps one
    session; ``attach`` runs the attach argv (tests pass a recorder: a test has no terminal to hand
    over)."""

    TITLE = "cao console"
    ENABLE_COMMAND_PALETTE = False
    AUTO_FOCUS = "#tree"
    CSS = """
    #title { height: 1; padding: 0 1; background: $panel; }
    #main { height: 1fr; }
    #tree { width: 55%; min-width: 30; border-right: solid $panel; }
    #right { width: 1fr; }
    #details { height: auto; max-height: 20; padding: 0 1; border-bottom: solid $panel; }
    #screen-box { height: 1fr; }
    #screen { width: auto; padding: 0 1; }
    #state { height: 1; padding: 0 1; color: $text-muted; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("i", "send", "Input"),
        Binding("a", "answer", "Answer"),
        Binding("r", "refresh", "Refresh"),
        Binding("t", "attach", "Attach"),
        Binding("x", "stop_terminal", "Stop terminal"),
        Binding("X", "stop_session", "Stop session"),
        Binding("escape", "back", "Back", show=False),
        Binding("q", "quit", "Quit"),
        # Options are numbered from 1 on screen and on the wire; a prompt shows at most nine.
        *(Binding(str(n), f"pick({n})", f"Option {n}", show=False) for n in range(1, 10)),
    ]

    def __init__(self, server: ConsoleServer, *, team: dict[str, Any] | None = None,
                 session: str | None = None, attach: Attach | None = None) -> None:
        super().__init__()
        self.server = server
        self.session_filter = session
        self.team = Team.from_json(team) if team is not None else Team()
        self.attach = attach or attach_in_terminal
        self.selected: str | None = None  # the terminal shown on the right
        self.highlighted_session: str | None = None
        self.pending: list[Message] = []
        self.mode = "send"  # what Enter in the input line does: send input, or answer a prompt
        self.picked: tuple[str, int] | None = None  # (prompt id, option) whose text the input line takes
        self.connected = False
        self._tree_nodes: dict[str, TreeNode[tuple[str, str]]] = {}
        self._dirty_inboxes: set[str] = set()
        self._reading_inboxes = False
        self._shown_once = False

    # -- layout -----------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Static(Text.assemble(("cao console", "bold"), "  ", (self.server.url, "dim")), id="title")
        with Horizontal(id="main"):
            tree: Tree[tuple[str, str]] = Tree("team", id="tree")
            tree.show_root = False
            tree.guide_depth = 3
            yield tree
            with Vertical(id="right"):
                yield Static(Text(""), id="details")
                with ScrollableContainer(id="screen-box"):
                    yield Static(Text(""), id="screen")
        yield Input(placeholder=self._placeholder(), id="input")
        yield Static(Text("connecting to the event stream", style="dim"), id="state")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(Input).cursor_blink = False
        self._rebuild_tree()
        self.follow_events()

    async def on_unmount(self) -> None:
        await self.server.aclose()

    # -- the tree ---------------------------------------------------------------------------------

    def _rebuild_tree(self) -> None:
        """Draw the tree again from the team, keeping the cursor on the selected terminal and what the
        user folded folded."""
        tree = self.query_one("#tree", Tree)
        folded = {key for key, node in self._tree_nodes.items() if node.allow_expand and not node.is_expanded}
        line_of_cursor = tree.cursor_line
        tree.clear()
        self._tree_nodes = {}
        lines: dict[str, int] = {}
        line = 0
        names = self.team.names()

        def add(parent: TreeNode[tuple[str, str]], key: str, label: Text, data: tuple[str, str],
                has_children: bool, visible: bool) -> TreeNode[tuple[str, str]]:
            nonlocal line
            node = parent.add(label, data=data, expand=key not in folded, allow_expand=has_children)
            self._tree_nodes[key] = node
            if visible:
                lines[key] = line
                line += 1
            return node

        for session in sorted(self.team.sessions.values(), key=lambda s: s.name):
            skey = "session:" + session.name
            snode = add(tree.root, skey, session_label(session), ("session", session.name), True, True)
            roots, children = session.roots_and_children()

            def grow(parent: TreeNode[tuple[str, str]], member: Member, visible: bool) -> None:
                kids = children.get(member.id, [])
                node = add(parent, member.id, member_label(member, names), ("terminal", member.id),
                           bool(kids), visible)
                for kid in kids:
                    grow(node, kid, visible and node.is_expanded)

            for member in roots:
                grow(snode, member, snode.is_expanded)

        first = next((line for key, line in lines.items() if not key.startswith("session:")), None)
        if self.selected in lines:
            tree.cursor_line = lines[self.selected]
        elif not self._shown_once and first is not None:
            tree.cursor_line = first  # opening on a terminal shows a screen at once
        elif self._tree_nodes:
            tree.cursor_line = max(0, min(line_of_cursor, line - 1))
        self._shown_once = self._shown_once or first is not None
        before = self.selected
        self._highlight(tree.cursor_node)
        if before is None and self.selected is None:
            self._show_details()  # nothing was or is shown: say why

    def _relabel(self, terminal_id: str) -> None:
        member, node = self.team.find(terminal_id), self._tree_nodes.get(terminal_id)
        if member is not None and node is not None:
            node.set_label(member_label(member, self.team.names()))

    def on_tree_node_highlighted(self, event: Tree.NodeHighlighted[tuple[str, str]]) -> None:
        self._highlight(event.node)

    def _highlight(self, node: TreeNode[tuple[str, str]] | None) -> None:
        kind, key = node.data if node is not None and node.data else ("", "")
        member = self.team.find(key) if kind == "terminal" else None
        self.highlighted_session = member.session_name if member else key if kind == "session" else None
        if member is not None:
            self._select(member.id)
        elif self.selected is not None and self.team.find(self.selected) is None:
            self._select(None)  # the terminal shown was removed

    def _select(self, terminal_id: str | None) -> None:
        if terminal_id == self.selected:
            return
        removed = self.selected if terminal_id is None else None
        self.selected, self.pending = terminal_id, []
        self._show_details(removed=removed)
        self.query_one("#screen", Static).update(Text(""))
        self.query_one(Input).placeholder = self._placeholder()
        if terminal_id is not None:
            self.load_screen(terminal_id)
            self._queue_inboxes({terminal_id})

    def _show_details(self, removed: str | None = None) -> None:
        member = self.team.find(self.selected) if self.selected else None
        empty = next(iter(self.team.members()), None) is None
        self.query_one("#details", Static).update(
            details_text(member, self.pending, removed, empty, self.team.names()))

    def _note(self, text: str, style: str = "") -> None:
        self.query_one("#state", Static).update(Text(text, style=style))

    def _problem(self, title: str, text: str) -> None:
        """A request that failed: a notification that fades, and the state line until the next news."""
        self.notify(text, title=title, severity="error", markup=False)
        self._note(f"{title}: {text}", "red")

    def _placeholder(self) -> str:
        member = self.team.find(self.selected) if self.selected else None
        if member is None:
            return "select a terminal, then i to type input or a to answer its prompt"
        what = "answer for" if self.mode == "answer" else "input for"
        prompt = member.prompt
        if self.mode == "answer" and self.picked is not None and prompt is not None:
            what = f"text for option {self.picked[1]} ({prompt.label(self.picked[1])}) of"
        return f"{what} {member.name or member.id} (Enter sends, Esc goes back to the tree)"

    # -- the event stream -------------------------------------------------------------------------

    @work(exclusive=True, group="events")
    async def follow_events(self) -> None:
        delay = RETRY_FIRST
        while True:
            try:
                async for data in self.server.events(self.session_filter):
                    event = decode_event(data)
                    if isinstance(event, Subscribed):
                        await self._read_team()
                        self.connected, delay = True, RETRY_FIRST
                        self._note(f"live: events from {self.server.url}")
                    elif isinstance(event, Overflow):
                        self._note("fell behind the event stream; reading the team again", "yellow")
                    elif event is not None:
                        self._apply(event)
                problem = "the event stream ended"
            except CaoError as exc:
                problem = str(exc)
            except ValueError as exc:  # a line that is not JSON: start over rather than guess
                problem = f"unreadable event stream ({exc})"
            self.connected = False
            self._note(f"{problem}; trying again in {delay:g} s", "yellow")
            await asyncio.sleep(delay)
            delay = min(delay * 2, RETRY_MAX)

    async def _read_team(self) -> None:
        self.team = Team.from_json(await self.server.team(self.session_filter))
        self._rebuild_tree()
        if self.selected is not None and self.team.find(self.selected) is not None:
            self._show_details()
            self.load_screen(self.selected)
        self._queue_inboxes({m.id for m in self.team.members()
                             if m.pending_messages or m.id == self.selected})

    def _apply(self, event: Any) -> None:
        change = self.team.apply(event)
        if change.structure:
            self._rebuild_tree()
        for terminal_id in change.terminals:
            self._relabel(terminal_id)
        if self.selected is not None and (change.structure or self.selected in change.terminals):
            self._show_details()
            self.query_one(Input).placeholder = self._placeholder()
        if isinstance(event, StatusChanged) and event.terminal_id == self.selected:
            self.load_screen(event.terminal_id)
        if change.inboxes:
            self._queue_inboxes(change.inboxes)

    def _queue_inboxes(self, terminal_ids: set[str]) -> None:
        """Read these terminals' pending messages again; a burst of message events costs one read per
        terminal, not one per event."""
        self._dirty_inboxes |= terminal_ids
        if self._dirty_inboxes and not self._reading_inboxes:
            self._reading_inboxes = True
            self.read_inboxes()

    @work(group="inboxes")
    async def read_inboxes(self) -> None:
        try:
            while self._dirty_inboxes:
                terminal_id = self._dirty_inboxes.pop()
                try:
                    messages = await self.server.pending(terminal_id)
                except CaoError:  # gone meanwhile; its removal event redraws the tree
                    continue
                member = self.team.find(terminal_id)
                if member is None:
                    continue
                # A full page says "at least this many": a larger count from the team read stands.
                count = len(messages) if len(messages) < PENDING_LIMIT else max(len(messages),
                                                                                  member.pending_messages)
                if member.pending_messages != count:
                    member.pending_messages = count
                    self._relabel(terminal_id)
                if terminal_id == self.selected:
                    self.pending = messages
                    self._show_details()
        finally:
            self._reading_inboxes = False

    # -- the selected terminal's screen -----------------------------------------------------------

    @work(exclusive=True, group="screen")
    async def load_screen(self, terminal_id: str) -> None:
        try:
            capture = await self.server.screen(terminal_id)
        except CaoError as exc:
            capture, problem = "", str(exc)
        else:
            problem = ""
        if terminal_id != self.selected:
            return
        screen = self.query_one("#screen", Static)
        screen.update(Text(problem, style="dim") if problem else screen_text(capture))
        self.query_one("#screen-box").scroll_end(animate=False, immediate=True)

    # -- actions ----------------------------------------------------------------------------------

    def _selected_member(self) -> Member | None:
        member = self.team.find(self.selected) if self.selected else None
        if member is None:
            self.notify("Select a terminal first.", severity="warning", markup=False)
        return member

    def action_send(self) -> None:
        self._input_mode("send")

    def action_answer(self) -> None:
        self._input_mode("answer")

    def action_pick(self, number: int) -> None:
        member = self._selected_member()
        if member is None:
            return
        prompt = member.prompt
        if prompt is None or not 0 < number <= len(prompt.options):
            what = "waits on no prompt" if prompt is None else f"has no option {number}"
            self.notify(f"{member.name or member.id} {what}.", severity="warning", markup=False)
            return
        if prompt.options[number - 1].takes_text:
            self._input_mode("answer", (prompt.id, number))
            return
        self.answer_option(member.id, prompt.id, number, None)

    def _input_mode(self, mode: str, picked: tuple[str, int] | None = None) -> None:
        if self._selected_member() is None:
            return
        self.mode, self.picked = mode, picked
        box = self.query_one(Input)
        box.placeholder = self._placeholder()
        box.focus()

    def action_back(self) -> None:
        self.mode, self.picked = "send", None
        self.query_one(Input).placeholder = self._placeholder()
        self.query_one("#tree").focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        member = self._selected_member()
        if member is None or not event.value.strip():
            return
        event.input.value = ""
        prompt = member.prompt
        if self.mode == "answer" and self.picked is not None:
            prompt_id, option = self.picked
            self.answer_option(member.id, prompt_id, option, event.value)
        elif self.mode == "answer" and prompt is not None and prompt.free_text:
            self.answer_option(member.id, prompt.id, None, event.value)
        else:
            self.deliver(self.mode, member.id, event.value)

    @work(group="steer")
    async def answer_option(self, terminal_id: str, prompt_id: str, option: int | None,
                            text: str | None) -> None:
        """Answer ``prompt_id`` by number and/or text; a refusal (another prompt is open, it was answered
        already, it left the screen) is said as the server words it."""
        try:
            await self.server.answer_prompt(terminal_id, prompt_id, option=option, text=text)
        except CaoError as exc:
            self._problem("Not answered", str(exc))
            return
        finally:
            if self.mode == "answer":
                self.mode, self.picked = "send", None
                self.query_one(Input).placeholder = self._placeholder()
        what = f"option {option}" if option else "text"
        self._note(f"answered prompt {prompt_id} with {what}" + (" and text" if option and text else ""))
        if terminal_id == self.selected:
            self.load_screen(terminal_id)

    @work(group="steer")
    async def deliver(self, mode: str, terminal_id: str, text: str) -> None:
        try:
            if mode == "answer":
                await self.server.answer(terminal_id, text)
            else:
                await self.server.send(terminal_id, text)
        except CaoError as exc:
            self._problem("Not sent", str(exc))
            return
        self._note(f"{'answered' if mode == 'answer' else 'sent input to'} {terminal_id}")
        if mode == "answer":
            self.mode = "send"
            self.query_one(Input).placeholder = self._placeholder()
        if terminal_id == self.selected:
            self.load_screen(terminal_id)

    def action_refresh(self) -> None:
        if self.selected is not None:
            self.load_screen(self.selected)
            self._queue_inboxes({self.selected})

    def action_stop_terminal(self) -> None:
        node = self.query_one("#tree", Tree).cursor_node
        if node is None or not node.data or node.data[0] != "terminal":
            # Stopping acts on the row under the cursor, never on one scrolled out of sight.
            self.notify("Move to a terminal to stop it (X stops its whole session).", severity="warning",
                        markup=False)
            return
        member = self._selected_member()
        if member is None:
            return
        question = Text.assemble("Stop terminal ", (member.name or member.id, "bold"),
                                 f" ({member.id}) and its agent? Its workers keep running.")

        def answered(yes: bool | None) -> None:
            if yes:
                self.stop("terminal", member.id)

        self.push_screen(Confirm(question), answered)

    def action_stop_session(self) -> None:
        name = self.highlighted_session
        session = self.team.sessions.get(name) if name else None
        if session is None:
            self.notify("Select a session or one of its terminals first.", severity="warning", markup=False)
            return
        count = len(session.members)
        question = Text.assemble("Stop session ", (session.name, "bold"),
                                 f" and its {count} terminal{'s' if count != 1 else ''}?")

        def answered(yes: bool | None) -> None:
            if yes:
                self.stop("session", session.name)

        self.push_screen(Confirm(question), answered)

    @work(group="steer")
    async def stop(self, kind: str, key: str) -> None:
        try:
            if kind == "session":
                await self.server.stop_session(key)
            else:
                await self.server.stop_terminal(key)
        except CaoError as exc:
            self._problem(f"{kind.capitalize()} not stopped", str(exc))
            return
        # The removal events redraw the tree; this says the request went through meanwhile.
        self._note(f"stopped {kind} {key}")

    def action_attach(self) -> None:
        member = self._selected_member()
        if member is not None:
            self.attach_to(member)

    @work(exclusive=True, group="attach")
    async def attach_to(self, member: Member) -> None:
        from textual.app import SuspendNotSupported

        try:
            argv = await self.server.attach_argv(member)
        except CaoError as exc:
            self._problem("Cannot attach", str(exc))
            return
        try:
            self.attach(self, argv)
        except (SuspendNotSupported, OSError) as exc:
            self._problem("Cannot attach", f"{' '.join(argv)}: {exc}")
            return
        if member.id == self.selected:  # what was typed there changed the screen
            self.load_screen(member.id)


__all__ = ["ConsoleApp", "attach_in_terminal"]
