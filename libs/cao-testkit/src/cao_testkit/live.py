"""Orchestration through real agent CLIs: a model script that answers by role, and a kit of live tests.

Several agents of one run (a supervisor and its workers) talk to one scripted model server, as they
would share one model API in real use. :class:`RoleScript` tells them apart by their instructions: each
role is named by a marker, a line of its profile's body, which the CLI puts in the system prompt of
every request it sends. A request is answered from the turns of the role whose marker its system prompt
holds, so the order in which agents happen to ask does not matter::

    roles = RoleScript(supervisor="# Live supervisor", worker="# Live worker")
    roles.add("supervisor", call_tool("mcp__cao__handoff", {...}), reply("Done."))
    roles.behave("worker", lambda conversation: reply(conversation.last_user_text.upper()))
    server = AnthropicServer(roles)

:class:`LiveOrchestration` is the kit of live tests for a provider: handoff, assign with its callback,
and the MCP readiness gate, each with the real CLI on both ends. A provider's tests subclass it and give
it a ``live_world`` fixture yielding a :class:`LiveWorld`, which :func:`serve_world` makes: the
provider's kernel served by a real cao-server in this process, with cao-mcp's routes mounted, so each
agent's ``cao-mcp-server`` relays to ``/mcp`` and reports in through it::

    @pytest.fixture
    def live_world(model_server, make_kernel, workdir):
        kernel = make_kernel(*live_server_plugins("my_cli"))
        ...  # add_agent(name, instructions): a profile of the provider with cao's MCP server
        with serve_world(kernel, model_server, add_agent, lambda name: f"cao_{name}", workdir) as world:
            yield world

    class TestLiveOrchestration(LiveOrchestration):
        pass   # the module's pytestmark marks the tests live_cli

Every check reads what the agents really sent: the requests the scripted server recorded (the task a
worker received, the tool results its CLI passed back) and cao's own records (inbox messages).
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

import attrs
from cao_hookspecs import CreateTerminalRequest

from .models.script import (
    Answer,
    Conversation,
    Failure,
    RecordedRequest,
    Script,
    ScriptError,
    call_tool,
    hold,
    reply,
    resolve,
    respond,
)
from .waiting import eventually

if TYPE_CHECKING:
    import pytest

    from cao_hookspecs import AgentProfile

    from .models.script import ScriptedServer

__all__ = [
    "CALLBACK_RE",
    "LiveOrchestration",
    "LiveWorld",
    "RoleScript",
    "answers_by",
    "callback_target",
    "eventually",
    "new_roles",
    "offered_tools",
    "serve_world",
    "json_answer",
    "tool_payload",
]

#: The callback line cao appends to an assigned task; group 1 is the supervisor's terminal id.
CALLBACK_RE = re.compile(r"\[Assigned by terminal ([a-f0-9]{8})\. When done, send results back to terminal "
                         r"\1 using send_message\]")


# -- a model that answers by role --------------------------------------------------------------------


@attrs.define(eq=False)
class _Role:
    marker: str
    script: Script
    behaviour: Callable[[Conversation], Any] | None = None


class RoleScript:
    """Scripted turns per role; hand it to a scripted model server in place of a :class:`Script`.

    ``roles`` maps each role's name to its marker. :meth:`add` queues turns for a role (as
    ``Script.add``), :meth:`behave` answers every request of a role with ``fn(conversation)`` instead.
    Side requests (the server's classification) get ``side`` whatever their role. A request whose system
    prompt holds no marker, or several, is a problem: it gets a note saying so, and is reported by
    :meth:`assert_done` and the server's ``assert_healthy``.
    """

    def __init__(self, *, side: Any = "OK", **roles: str) -> None:
        if not roles:
            raise ScriptError("a RoleScript needs at least one role (name=marker)")
        for name, marker in roles.items():
            if not isinstance(marker, str) or not marker.strip():
                raise ScriptError(f"role {name!r} needs a marker: a line of its profile's instructions")
        self._lock = threading.Lock()
        self._roles = {name: _Role(marker=marker, script=Script()) for name, marker in roles.items()}
        self._problems: list[str] = []
        self.side = side
        self.served = 0

    def _role(self, name: str) -> _Role:
        try:
            return self._roles[name]
        except KeyError:
            raise ScriptError(f"no role {name!r} (roles: {', '.join(self._roles)})") from None

    def add(self, role: str, *turns: Any) -> None:
        """Queue turns for ``role``, answered in order to that role's requests."""
        found = self._role(role)
        if found.behaviour is not None:
            raise ScriptError(f"role {role!r} answers with a behaviour; it takes no scripted turns")
        found.script.add(*turns)

    def behave(self, role: str, fn: Callable[[Conversation], Any]) -> None:
        """Answer every request of ``role`` with ``fn(conversation)`` (a turn or plain text)."""
        found = self._role(role)
        if found.script.remaining:
            raise ScriptError(f"role {role!r} already has scripted turns")
        found.behaviour = fn

    def role_of(self, conversation: Conversation | None) -> str | None:
        """The role whose marker the conversation's system prompt holds (None: none, or several)."""
        system = conversation.system if conversation is not None else ""
        found = [name for name, role in self._roles.items() if role.marker in system]
        return found[0] if len(found) == 1 else None

    def next_turn(self, conversation: Conversation) -> Answer | Failure:
        with self._lock:
            self.served += 1
        name = self.role_of(conversation)
        if name is None:
            markers = ", ".join(f"{n}={r.marker!r}" for n, r in self._roles.items())
            with self._lock:
                self._problems.append(f"a request matched no single role ({markers}); its system prompt "
                                      f"starts {conversation.system[:200]!r}")
            return reply("[scripted model: this request belongs to no role of the script]")
        role = self._roles[name]
        if role.behaviour is not None:
            return resolve(respond(role.behaviour), conversation)
        return role.script.next_turn(conversation)

    def side_turn(self, conversation: Conversation) -> Answer | Failure:
        return resolve(self.side, conversation)

    @property
    def problems(self) -> list[str]:
        """What went wrong so far: requests of no role, requests a role had no turn left for."""
        with self._lock:
            found = list(self._problems)
        for name, role in self._roles.items():
            found += [f"{name}: {problem}" for problem in role.script.problems]
        return found

    @property
    def remaining(self) -> int:
        return sum(role.script.remaining for role in self._roles.values())

    def assert_done(self) -> None:
        """Fail unless every role used all its turns and no request went unanswered by the script."""
        problems = self.problems
        if problems:
            raise ScriptError("; ".join(problems))
        left = {name: role.script.remaining for name, role in self._roles.items() if role.script.remaining}
        if left:
            listed = ", ".join(f"{name}: {count}" for name, count in left.items())
            raise ScriptError(f"scripted turns never requested: {listed}")

    def turns(self, server: ScriptedServer, role: str) -> list[RecordedRequest]:
        """The requests of ``role`` that ``server`` answered as turns, oldest first."""
        self._role(role)
        return [r for r in server.turns() if self.role_of(r.conversation) == role]


def answers_by(
    markers: Mapping[str, str], behaviours: Mapping[str, Callable[[Conversation], Any]]
) -> RoleScript:
    """A RoleScript whose every role answers with its behaviour (``behaviours`` keyed like ``markers``)."""
    roles = RoleScript(**markers)
    for name, fn in behaviours.items():
        roles.behave(name, fn)
    return roles


# -- reading what agents sent -----------------------------------------------------------------------


def json_answer(text: str) -> Any:
    """The JSON object in a tool result's text as a CLI passed it on.

    CLIs wrap MCP results differently: Codex puts a line before it, so the outermost object is taken;
    Qwen Code puts the result's structured copy (compact JSON) before its text, so when the outermost
    braces hold no one object, the first object is. Raises ``ValueError`` when there is none.
    """
    start = text.index("{")
    try:
        return json.loads(text[start:text.rindex("}") + 1])
    except ValueError:
        return json.JSONDecoder().raw_decode(text, start)[0]


def tool_payload(conversation: Conversation) -> dict[str, Any]:
    """The JSON object a cao tool answered with, from the tool result the agent just sent back
    (:func:`json_answer`)."""
    result = conversation.last_tool_result
    if result is None:
        raise AssertionError(f"the request carries no tool result; last user text: "
                             f"{conversation.last_user_text[:300]!r}")
    text = result.output
    try:
        payload = json_answer(text)
    except ValueError:
        raise AssertionError(f"the tool result is not a cao tool's JSON answer: {text[:500]!r}") from None
    if not isinstance(payload, dict):
        raise AssertionError(f"the tool result is not a JSON object: {text[:500]!r}")
    return payload


def offered_tools(conversation: Conversation) -> set[str]:
    """The tools a request offered the model: those it attached, plus tools announced by name only.

    Claude Code defers MCP tools: it attaches a search tool and lists the deferred names, one a line, in a
    message of the ``system`` role; the model may call them by those names.
    """
    names = set(conversation.tools)
    for message in conversation.messages:
        if message.role == "system":
            names.update(line.strip() for line in message.text.splitlines() if line.strip())
    return names


def callback_target(conversation: Conversation) -> str:
    """The supervisor named by the callback line of an assigned task (what a model reads to answer)."""
    found = CALLBACK_RE.search(conversation.last_user_text)
    if found is None:
        raise AssertionError(f"the task has no callback line: {conversation.last_user_text[-300:]!r}")
    return found.group(1)


# -- the kit -----------------------------------------------------------------------------------------

SUPERVISOR = "live_supervisor"
WORKER = "live_worker"
LISTENER = "live_listener"
#: Role markers: the first line of each profile's instructions.
MARKERS = {"supervisor": "# Live supervisor", "worker": "# Live worker"}
BODIES = {
    "supervisor": (f"{MARKERS['supervisor']}\n\nYou delegate work to other agents with cao's tools: handoff "
                   "when you need the answer at once, assign when the result may come back later."),
    "worker": (f"{MARKERS['worker']}\n\nDo the task you are given. When it ends with a callback line naming "
               "a terminal, send your result to that terminal with send_message."),
}


@attrs.define(kw_only=True, eq=False)
class LiveWorld:
    """What the kit needs from a provider's tests.

    - ``url``: a cao-server serving a kernel of this process (the gate test reads the kernel's log) with
      cao-mcp's routes mounted (``serve_in_thread`` with the kernel's routes), the provider's plugin,
      ``mock_cli``, an inbox store and tmux;
    - ``model``: the scripted model server the CLI is pointed at; its script is ``roles``;
    - ``add_agent(name, instructions)``: makes a profile of the provider available to that kernel, with the
      instructions as its body and cao's MCP server (``cao-mcp-server``) among its MCP servers;
    - ``add_profile(profile)``: makes any profile available (the kit adds a ``mock_cli`` listener);
    - ``tool(name)``: the name under which the CLI offers cao's tool ``name`` to the model;
    - ``workdir``: the agents' working folder.
    """

    url: str
    model: ScriptedServer
    roles: RoleScript
    add_agent: Callable[[str, str], None]
    add_profile: Callable[[AgentProfile], None]
    tool: Callable[[str], str]
    workdir: str
    #: The kernel's cao home (a ``cao`` command run against ``url`` reads the API token there).
    home: str = ""

    def client(self) -> Any:
        from cao_server.client import HttpKernel

        return HttpKernel(self.url, timeout=90)

    def turns(self, role: str) -> list[RecordedRequest]:
        return self.roles.turns(self.model, role)

    async def wait_turns(self, role: str, count: int, timeout: float) -> list[RecordedRequest]:
        async def enough() -> list[RecordedRequest]:
            turns = self.turns(role)
            return turns if len(turns) >= count else []

        return await eventually(enough, timeout, f"{count} model request(s) of the {role}")


def new_roles() -> RoleScript:
    """The kit's script: a supervisor and a worker, told apart by their profiles' first lines."""
    return RoleScript(**MARKERS)


@contextlib.contextmanager
def serve_world(kernel: Any, model: ScriptedServer, add_agent: Callable[[str, str], None],
                tool: Callable[[str], str], workdir: str) -> Iterator[LiveWorld]:
    """The :class:`LiveWorld` of ``kernel`` (not started; it loads the provider, ``mock_cli``, an inbox
    store, tmux, cao-server and cao-mcp), served in a thread while the block runs; ``model`` gets a
    fresh :func:`new_roles` script."""
    from .serve import serve_in_thread

    roles = new_roles()
    model.script = roles
    with serve_in_thread(kernel) as running:
        yield LiveWorld(url=running.url, model=model, roles=roles, add_agent=add_agent,
                        add_profile=kernel.add_profile, tool=tool, workdir=workdir,
                        home=str(kernel.home.root))


def _strip(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


class LiveOrchestration:
    """Handoff, assign and the readiness gate with a real agent CLI as supervisor and worker.

    A subclass needs a ``live_world`` fixture (a :class:`LiveWorld` whose ``roles`` is a fresh
    :func:`new_roles` script) and marks its module ``live_cli``. ``timeout`` bounds each wait.
    """

    timeout = 60.0

    def _agents(self, world: LiveWorld) -> None:
        world.add_agent(SUPERVISOR, BODIES["supervisor"])
        world.add_agent(WORKER, BODIES["worker"])

    async def test_handoff_returns_the_workers_exact_answer(self, live_world: LiveWorld) -> None:
        from cao_hookspecs import TerminalStatus

        world, roles = live_world, live_world.roles
        self._agents(world)
        task = "Report the status of build 4521 in one line."
        answer = "Build 4521 is green: 312 tests passed, 0 failed (took 7m 41s)."
        roles.add("supervisor",
                  call_tool(world.tool("handoff"),
                            {"agent_profile": WORKER, "message": task, "timeout": 120}),
                  respond(lambda conv: reply("The worker answered: " + str(tool_payload(conv)["output"]))))
        roles.add("worker", reply(answer))
        async with world.client() as api:
            supervisor = await api.create_session(CreateTerminalRequest(
                agent_profile=SUPERVISOR, working_directory=world.workdir))
            await api.send_input(supervisor.id, "Ask a worker for the status of build 4521.")
            _, second = await world.wait_turns("supervisor", 2, self.timeout)
            await api.wait_for_status(supervisor.id, {TerminalStatus.COMPLETED}, timeout=self.timeout)

            (worker_turn,) = world.turns("worker")
            assert task in worker_turn.conversation.last_user_text, worker_turn.conversation.last_user_text
            payload = tool_payload(second.conversation)
            assert payload["success"] is True, payload
            # The worker's answer, exactly: read from its screen, returned through the MCP tool result.
            assert payload["output"] == answer, payload
            # The worker is removed once its answer went back (its CLI given its exit command first).
            async def worker_removed() -> bool:
                remaining = await api.list_terminals(supervisor.session_name)
                return [t.id for t in remaining] == [supervisor.id]

            await eventually(worker_removed, self.timeout, "the handoff's worker was not removed")
            final = await api.get_output(supervisor.id, "last")
            assert _strip(final) == "The worker answered: " + answer, final
        roles.assert_done()

    async def test_assign_callback_is_typed_into_the_supervisor_once_it_is_idle(
        self, live_world: LiveWorld
    ) -> None:
        from cao_hookspecs import MessageState, TerminalStatus
        from cao_kernel.delivery import sender_suffix
        from cao_kernel.orchestration import assign_suffix

        world, roles = live_world, live_world.roles
        self._agents(world)
        task = "Count the words in this sentence: the quick brown fox jumps."
        result = "Word count: 5 (the, quick, brown, fox, jumps)."
        # The supervisor's second step is held until the worker's result is waiting in its inbox, so the
        # result arrives while the supervisor is busy.
        busy = threading.Event()
        roles.add(
            "supervisor",
            call_tool(world.tool("assign"), {"agent_profile": WORKER, "message": task}),
            hold(busy, respond(lambda conv: reply(f"Assigned terminal {tool_payload(conv)['terminal_id']}; "
                                                  "waiting for its result.")), timeout=self.timeout),
            respond(lambda conv: reply("Received: " + conv.last_user_text.strip().splitlines()[0])),
        )
        roles.add(
            "worker",
            respond(lambda conv: call_tool(world.tool("send_message"),
                                           {"receiver_id": callback_target(conv), "message": result})),
            reply("Sent the word count to my supervisor."),
        )
        async with world.client() as api:
            supervisor = await api.create_session(CreateTerminalRequest(
                agent_profile=SUPERVISOR, working_directory=world.workdir))
            await api.send_input(supervisor.id, "Have a worker count the words: the quick brown fox jumps.")

            async def waiting_result() -> list[Any]:
                return [m for m in await api.list_messages(supervisor.id) if m.sender_id != supervisor.id]

            (queued,) = await eventually(waiting_result, self.timeout, "the worker's result in the inbox")
            status = (await api.get_status(supervisor.id)).status
            (still_queued,) = [m for m in await api.list_messages(supervisor.id) if m.id == queued.id]
            assert status == TerminalStatus.PROCESSING, status
            assert still_queued.state == MessageState.PENDING, still_queued
            busy.set()

            first, second, third = await world.wait_turns("supervisor", 3, self.timeout)
            await api.wait_for_status(supervisor.id, {TerminalStatus.COMPLETED}, timeout=self.timeout)
            worker_id = tool_payload(second.conversation)["terminal_id"]
            assert queued.sender_id == worker_id, (queued, worker_id)

            # The worker got the task with the callback line naming the supervisor, and its first-turn
            # send_message went through.
            # The worker's turn after its send_message may come after the supervisor's last one.
            task_turn, sent_turn = await world.wait_turns("worker", 2, self.timeout)
            received = task_turn.conversation.last_user_text
            assert task in received and received.rstrip().endswith(assign_suffix(supervisor.id)), received
            sent = tool_payload(sent_turn.conversation)
            assert sent["success"] is True and sent["receiver_id"] == supervisor.id, sent
            assert sent["sender_id"] == worker_id, sent

            # Delivered once the supervisor's turn had ended, and typed in as the supervisor's next input.
            (delivered,) = [m for m in await api.list_messages(supervisor.id) if m.id == queued.id]
            assert delivered.state == MessageState.DELIVERED, delivered
            assert delivered.body == f"{result}\n\n{sender_suffix(worker_id)}", delivered.body
            assert delivered.updated_at > second.at, (second.at, delivered.updated_at)
            typed = third.conversation.last_user_text
            assert result in typed and sender_suffix(worker_id) in typed, typed
            final = await api.get_output(supervisor.id, "last")
            assert _strip(final) == f"Received: {result}", final
        roles.assert_done()

    async def test_a_worker_calling_send_message_in_its_first_turn_has_the_tool(
        self, live_world: LiveWorld, caplog: pytest.LogCaptureFixture
    ) -> None:
        from cao_hookspecs import AgentProfile, MessageState, TerminalStatus

        caplog.set_level(logging.INFO, logger="cao_kernel.terminals")
        world, roles = live_world, live_world.roles
        self._agents(world)
        world.add_profile(AgentProfile(name=LISTENER, provider="mock_cli", system_prompt="You listen."))
        note = "Worker reporting in: ready for the next task."
        roles.add(
            "worker",
            respond(lambda conv: call_tool(world.tool("send_message"),
                                           {"receiver_id": callback_target(conv), "message": note})),
            respond(lambda conv: reply("Reported: " + str(tool_payload(conv)["success"]))),
        )
        async with world.client() as api:
            listener = await api.create_session(CreateTerminalRequest(
                agent_profile=LISTENER, working_directory=world.workdir))
            assigned = await api.assign(listener.id, WORKER, "Tell whoever assigned you that you are ready.")
            assert assigned.success, assigned
            first, second = await world.wait_turns("worker", 2, self.timeout)

            # The task reached the worker only after its MCP client had listed cao's tools...
            opened = [r.created for r in caplog.records
                      if assigned.terminal_id in r.getMessage() and "MCP server" in r.getMessage()
                      and "connected" in r.getMessage()]
            assert opened, "the worker's readiness gate never opened: " + "; ".join(
                r.getMessage() for r in caplog.records)
            assert opened[0] < first.at, (opened, first.at)
            # ...so its very first request offered send_message, and the call worked.
            offered, lead = offered_tools(first.conversation), first.at - opened[0]
            assert world.tool("send_message") in offered, (
                f"the worker's first request did not offer {world.tool('send_message')}: its task was typed "
                f"before its CLI had cao's tools, {lead:.3f} s after the readiness gate opened. "
                f"Offered: {sorted(offered)}")
            result = second.conversation.last_tool_result
            assert result is not None and not result.is_error, result
            assert "No such tool" not in result.output, result.output
            payload = tool_payload(second.conversation)
            assert payload["success"] is True and payload["receiver_id"] == listener.id, payload

            async def delivered() -> list[Any]:
                rows = await api.list_messages(listener.id)
                return [m for m in rows
                        if m.sender_id == assigned.terminal_id and m.state == MessageState.DELIVERED]

            (message,) = await eventually(delivered, self.timeout, "the worker's note, delivered")
            assert message.body.startswith(note), message.body
            await api.wait_for_status(listener.id, {TerminalStatus.COMPLETED}, timeout=self.timeout)
            assert note in await api.get_output(listener.id, "last")
        roles.assert_done()

