"""A worker's permission prompt during an assign, with a real agent CLI as supervisor and worker.

The worker's model calls a shell command its profile does not pre-approve, so the CLI asks for
permission. :class:`LivePrompts` checks what a person sees and does about it, from outside, through the
server and the ``cao`` command a person runs: the prompt is on the event stream within a second of being
drawn, ``cao session status`` shows it with the command that answers it, ``cao terminal answer`` answers
it, the command runs and the supervisor gets the worker's result. The same run with a policy rule in the
worker's profile completes with no person, and the audit trail names the rule.

A provider's tests subclass it with a ``live_world`` fixture (:class:`~cao_testkit.live.LiveWorld`) and
say how their CLI asks: :meth:`LivePrompts.asking_profile` (the worker's profile, in the CLI's prompting
mode), :attr:`LivePrompts.command_call` (the model's tool call that runs :data:`COMMAND`) and
:attr:`LivePrompts.allow_rule` (the policy rule that allows it, in the CLI's tool name).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from cao_hookspecs import CreateTerminalRequest, NotFound

from .live import BODIES, SUPERVISOR, callback_target
from .models.script import call_tool, reply, respond
from .waiting import eventually

if TYPE_CHECKING:
    from cao_hookspecs import AgentProfile

    from .live import LiveWorld

__all__ = ["COMMAND", "LivePrompts", "MARKER"]

ASKING = "live_asking_worker"
#: What the worker's model runs: a file the test then finds in the working folder.
MARKER = "prompt-marker.txt"
COMMAND = f"touch {MARKER}"
RESULT = f"Created {MARKER}."


class LivePrompts:
    """See the module docstring. ``timeout`` bounds each wait."""

    timeout: ClassVar[float] = 60.0
    #: The provider's entry point and name (its ``read_prompt`` tells when the prompt is drawn).
    provider: ClassVar[str]
    command_call: ClassVar[Any]
    allow_rule: ClassVar[str]

    def asking_profile(self, world: LiveWorld, name: str, instructions: str,
                       policy: dict[str, Any] | None) -> AgentProfile:
        """The worker's profile: the CLI in a mode where :attr:`command_call` asks for permission, with
        cao's MCP server (so it can send its result) and ``policy`` as its prompt policy."""
        raise NotImplementedError

    def _script(self, world: LiveWorld) -> None:
        roles = world.roles
        roles.add("supervisor",
                  call_tool(world.tool("assign"), {"agent_profile": ASKING, "message": f"Run `{COMMAND}`."}),
                  reply("Assigned the worker; waiting for its result."),
                  respond(lambda conv: reply("Received: " + conv.last_user_text.strip().splitlines()[0])))
        roles.add("worker",
                  self.command_call,
                  respond(lambda conv: call_tool(world.tool("send_message"),
                                                 {"receiver_id": callback_target(conv), "message": RESULT})),
                  reply("Sent the result to my supervisor."))

    def _cao(self, world: LiveWorld, *args: str) -> str:
        """Run ``cao ARGS`` against the world's server as a person would; its output."""
        host, port = world.url.rsplit("//", 1)[1].rsplit(":", 1)
        env = {**os.environ, "CAO_API_HOST": host, "CAO_API_PORT": port, "CAO_HOME_DIR": world.home}
        done = subprocess.run([sys.executable, "-m", "cao_kernel", *args], env=env, capture_output=True,
                              text=True, timeout=60, check=False)
        assert done.returncode == 0, f"cao {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"
        return done.stdout

    async def _run(self, world: LiveWorld, policy: dict[str, Any] | None) -> tuple[Any, Any, Any]:
        """The assign with the asking worker; ``person`` answers the prompt when no policy does.
        Returns the supervisor, the worker and the worker's audit trail."""
        from cao_hookspecs import TerminalStatus

        world.add_agent(SUPERVISOR, BODIES["supervisor"])
        world.add_profile(self.asking_profile(world, ASKING, BODIES["worker"], policy))
        self._script(world)
        marker = Path(world.workdir) / MARKER
        async with world.client() as api:
            supervisor = await api.create_session(CreateTerminalRequest(
                agent_profile=SUPERVISOR, working_directory=world.workdir))
            opened: dict[str, Any] = {}
            stream = asyncio.ensure_future(self._watch_prompts(api, supervisor.session_name, opened))
            try:
                await api.send_input(supervisor.id, f"Have a worker run `{COMMAND}`.")
                if policy is None:
                    await self._answered_by_a_person(world, api, supervisor, opened)
                try:
                    await eventually(lambda: _async(marker.exists()), self.timeout,
                                     f"{MARKER} created by the worker")
                    await world.wait_turns("supervisor", 3, self.timeout)
                    await api.wait_for_status(supervisor.id, {TerminalStatus.COMPLETED}, timeout=self.timeout)
                except AssertionError as exc:
                    raise AssertionError(f"{exc}\n{await _screens(api, supervisor.session_name)}") from None
                final = await api.get_output(supervisor.id, "last")
                assert final.strip() == f"Received: {RESULT}", final
                worker_id = opened["event"]["terminal_id"]
                trail = await api.prompt_history(worker_id)
            finally:
                stream.cancel()
                await asyncio.gather(stream, return_exceptions=True)
        world.roles.assert_done()
        return supervisor, worker_id, trail

    async def _watch_prompts(self, api: Any, session: str, opened: dict[str, Any]) -> None:
        async for event in api.events(session):
            if event.get("event") == "prompt" and event.get("kind") == "opened" and "event" not in opened:
                opened["event"], opened["at"] = event, time.monotonic()

    async def _answered_by_a_person(self, world: LiveWorld, api: Any, supervisor: Any,
                                    opened: dict[str, Any]) -> None:
        from cao_kernel.testing.conformance import load_provider

        read_prompt = load_provider(self.provider, self.provider).read_prompt
        assert read_prompt is not None

        # When the CLI has drawn its prompt: the worker's screen read through the API as fast as it answers,
        # apart from the kernel's own reading that opens the prompt.
        async def drawn() -> float | None:
            for terminal in await api.list_terminals(supervisor.session_name):
                if terminal.id == supervisor.id:
                    continue
                try:
                    screen = await api.get_output(terminal.id)
                except NotFound:  # listed as it is being created, before its window exists: next look
                    continue
                if read_prompt(screen) is not None:
                    return time.monotonic()
            return None

        shown_at = await eventually(drawn, self.timeout, "the worker's permission prompt on its screen",
                                    interval=0.01)
        await eventually(lambda: _async("event" in opened), self.timeout, "the prompt on the event stream")
        prompt = opened["event"]["prompt"]
        late = opened["at"] - shown_at
        assert late < 1.0, f"the prompt reached the event stream {late:.2f} s after it was drawn"
        worker_id = opened["event"]["terminal_id"]
        assert COMMAND in " ".join(prompt["prompt"]["arguments"].values()), prompt

        status = self._cao(world, "session", "status", supervisor.session_name)
        assert f"Terminal {worker_id} waits on a prompt" in status and prompt["id"] in status, status
        assert f"cao terminal answer {worker_id} <number> --prompt {prompt['id']}" in status, status
        options = prompt["prompt"]["options"]
        allow = next(n for n, option in enumerate(options, 1) if option["effect"] == "allow")
        answered = self._cao(world, "terminal", "answer", worker_id, str(allow), "--prompt", prompt["id"],
                             "--by", "person:tester")
        assert f"Answered prompt {prompt['id']} with option {allow}" in answered, answered
        # The same prompt cannot be answered twice.
        host, port = world.url.rsplit("//", 1)[1].rsplit(":", 1)
        again = subprocess.run(
            [sys.executable, "-m", "cao_kernel", "terminal", "answer", worker_id, str(allow), "--prompt",
             prompt["id"]], env={**os.environ, "CAO_API_HOST": host, "CAO_API_PORT": port,
                                 "CAO_HOME_DIR": world.home},
            capture_output=True, text=True, timeout=60, check=False)
        assert again.returncode == 1 and prompt["id"] in again.stderr, (again.stdout, again.stderr)

    async def test_a_person_answers_a_workers_permission_prompt(self, live_world: LiveWorld) -> None:
        _, worker_id, trail = await self._run(live_world, None)
        kinds = [(event.kind.value, event.by) for event in trail]
        assert ("answered", "person:tester") in kinds, kinds
        assert kinds == [("opened", ""), ("answered", "person:tester"), ("closed", "")], kinds

    async def test_a_policy_rule_answers_it_with_no_person(self, live_world: LiveWorld) -> None:
        policy = {"rules": [{"deny": "*(rm *)"}, {"allow": self.allow_rule}]}
        _, worker_id, trail = await self._run(live_world, policy)
        answered = [event for event in trail if event.kind.value == "answered"]
        assert [(event.by, event.prompt.prompt.option(event.option).effect.value) for event in answered] == [
            (f"policy:profile {ASKING}#2", "allow")], [(e.kind.value, e.by, e.option) for e in trail]


async def _screens(api: Any, session: str) -> str:
    """Every terminal's last rows, for a failure's message."""
    shown = []
    for terminal in await api.list_terminals(session):
        rows = (await api.get_output(terminal.id)).rstrip().splitlines()[-25:]
        heading = f"-- {terminal.id} ({terminal.agent_profile}, {terminal.status.value}):"
        shown.append("\n".join([heading, *rows]))
    return "\n".join(shown)


async def _async(value: Any) -> Any:
    return value
