"""Prompts agents wait on: given an id while shown, decided by plugins and policies, answered once.

Life of a prompt. A screen reading of ``waiting_user_answer`` that carries a prompt (the detector's, or
``cao_read_prompt``'s) whose fingerprint differs from the open one opens a new prompt, numbered
``<terminal>-<n>``; the status event that follows carries it. The prompt closes when the status leaves
``waiting_user_answer`` or the terminal goes; the same question asked again later is a new prompt, so an
answer meant for the first never lands on the second.

Deciding. When a prompt opens, ``cao_decide_prompt`` is asked, then the policies in order (the session's,
the profile's, the settings'); a decision with an option answers at once. Otherwise a person is waited
for, as long as the first policy that sets a ``timeout`` says; then the prompt escalates (its supervisor
gets a message, observers an ``escalated`` event), or takes its default, or is denied.

Answering. Under the terminal's answer lock, the screen is read again: an answer naming another prompt,
or given while the screen shows something else, or for a prompt already answered, is refused and
nothing is typed. Otherwise the chosen option's keys, read from that fresh screen, are pressed (then the
text, for an option that takes text), and the answer returns once the prompt has left the screen.
What happens to a prompt is recorded in the terminal's audit trail (``prompt_log``) and told to
``cao_after_prompt``; an answer refused while no prompt is open is refused with its reason and recorded
nowhere (there is no prompt to file it under).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from cao_hookspecs import (
    OpenPrompt,
    OptionEffect,
    Prompt,
    PromptDecision,
    PromptEvent,
    PromptEventKind,
    StatusReport,
    TerminalStatus,
)
from cao_hookspecs.names import MAX_ANSWER_CHARS
from cao_hookspecs.prompt_policy import PromptPolicy, decide, merged_settings, parse_policy

from . import validate
from .errors import CaoError, Conflict, InvalidInput, NotFound, Timeout, Vetoed

if TYPE_CHECKING:
    from cao_hookspecs import AgentProfile, TerminalBackend

    from .hooks import Hooks
    from .iopool import IoPool
    from .live import LiveTerminal
    from .prompt_log import PromptLog

log = logging.getLogger(__name__)

#: The setting naming a YAML file with the installation's prompt policy (default: ``prompt-policy.yaml``
#: in the cao home, when there is one).
POLICY_SETTING = "CAO_PROMPT_POLICY"
POLICY_FILE = "prompt-policy.yaml"
SESSION_POLICIES = "prompt-policies"
#: How long an answer waits for its prompt to leave the screen before it says the keys did nothing.
LEAVE_TIMEOUT = 5.0
#: How long an option that opens a text field gets to draw it before the text is typed.
TEXT_FIELD_WAIT = 1.0
#: How long a prompt is on screen before a plugin's or a policy's answer is typed: some CLIs drop keys
#: that arrive the moment they draw a prompt.
AUTO_SETTLE = 0.3
_MAX_CHAIN = 32

#: ``(worker, supervisor, text)``: put an escalation in the supervisor's inbox.
Escalate = Callable[[str, str, str], Awaitable[object]]


def load_settings_policy(settings: Mapping[str, Any], home_root: Path) -> PromptPolicy:
    """The installation's policy: the YAML file ``CAO_PROMPT_POLICY`` names, else the home's
    ``prompt-policy.yaml`` if it exists, else none. ``InvalidInput`` names the file and the problem."""
    import yaml

    named = settings.get(POLICY_SETTING)
    path = Path(str(named)).expanduser() if named else home_root / POLICY_FILE
    if not named and not path.is_file():
        return PromptPolicy()
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InvalidInput(f"prompt policy {path} ({POLICY_SETTING}) cannot be read: {exc}") from None
    except yaml.YAMLError as exc:
        raise InvalidInput(f"prompt policy {path} is not valid YAML: {exc}") from None
    return parse_policy(data, f"prompt policy {path}")


@attrs.define(eq=False)
class _Shown:
    """What the desk holds for one terminal."""

    count: int | None = None  # the last prompt number used (None: not read from the trail yet)
    open: OpenPrompt | None = None
    answer: PromptEvent | None = None  # the answer given to ``open``
    timer: asyncio.TimerHandle | None = None
    lock: asyncio.Lock = attrs.field(factory=asyncio.Lock)
    # An answer is being typed: what the screen shows meanwhile (the text field an option opened) is
    # part of it, not a new prompt.
    typing: bool = False


@attrs.define(kw_only=True, eq=False)
class PromptDesk:
    """The prompts of every terminal of one kernel. Lives on the kernel's event loop."""

    _hooks: Hooks
    _io: IoPool
    _backend: TerminalBackend
    _log: PromptLog
    _lookup: Callable[[str], LiveTerminal | None]
    _load_profile: Callable[[str], AgentProfile]
    _settings_policy: PromptPolicy
    _home_root: Path
    escalate: Escalate | None = None
    _shown: dict[str, _Shown] = attrs.field(init=False, factory=dict)
    _sessions: dict[str, PromptPolicy] = attrs.field(init=False, factory=dict)
    _tasks: set[asyncio.Task[Any]] = attrs.field(init=False, factory=set)

    # -- readings and status ----------------------------------------------------------------------

    def read(self, live: LiveTerminal, screen: str, report: StatusReport | None) -> StatusReport | None:
        """A screen reading: fill in its prompt (``cao_read_prompt``) when it is waiting without one, and
        open a prompt when it shows one that is not open yet. Returns the reading with its prompt."""
        if report is None or report.status != TerminalStatus.WAITING_USER_ANSWER or live.provider is None:
            return report
        if report.prompt is None:
            prompt = self._hooks.read_prompt(live.terminal(), screen, live.provider)
            if prompt is None:
                return report
            report = attrs.evolve(report, prompt=prompt)
        assert report.prompt is not None
        if live.tracker.failed_for_good:
            return report
        shown = self._state(live.id)
        same = shown.open is not None and shown.open.prompt.fingerprint == report.prompt.fingerprint
        if shown.typing or same:
            return report
        self._open(live, shown, report.prompt)
        return report

    def status_changed(self, live: LiveTerminal, new: StatusReport) -> None:
        """The terminal's status changed: a prompt closes when the status leaves ``waiting_user_answer``."""
        if new.status != TerminalStatus.WAITING_USER_ANSWER:
            self._close(live.id, "the prompt left the screen")

    def forget(self, terminal_id: str) -> None:
        """The terminal is gone: its open prompt closes."""
        self._close(terminal_id, "the terminal was removed")
        self._shown.pop(terminal_id, None)

    def dialog_answered(self, terminal_id: str, dialog: str, keys: list[str]) -> None:
        """The kernel answered a start-up dialog of the provider's: on the trail as the prompt's answer."""
        shown = self._shown.get(terminal_id)
        if shown is not None and shown.open is not None and shown.answer is None:
            shown.answer = self._record(PromptEventKind.ANSWERED, shown.open, by=f"startup dialog:{dialog}",
                                        detail=f"keys {' '.join(keys)}")

    def track(self, terminal_id: str) -> None:
        """A terminal the kernel now watches: read the last prompt number of its trail in the background,
        so a prompt that opens later need not read the disk on the event loop."""
        shown = self._state(terminal_id)

        async def load() -> None:
            number = await self._io.run(self._log.last_number, terminal_id)
            if shown.count is None:
                shown.count = number

        self._spawn(load())

    def open_prompt(self, terminal_id: str) -> OpenPrompt | None:
        shown = self._shown.get(terminal_id)
        return shown.open if shown is not None else None

    def _state(self, terminal_id: str) -> _Shown:
        shown = self._shown.get(terminal_id)
        if shown is None:
            shown = self._shown[terminal_id] = _Shown()
        return shown

    def _open(self, live: LiveTerminal, shown: _Shown, prompt: Prompt, *, decide: bool = True) -> None:
        if shown.open is not None:
            self._close(live.id, "another prompt replaced it")
        if shown.count is None:
            # Numbers go on from the trail, so ids stay unique across kernel restarts. ``track`` reads it
            # in the background; a prompt drawn before that read ended reads it here (a few lines).
            shown.count = self._log.last_number(live.id)
        shown.count += 1
        opened = OpenPrompt(id=f"{live.id}-{shown.count}", terminal_id=live.id, prompt=prompt,
                            opened_at=time.time())
        shown.open, shown.answer = opened, None
        live.prompt = opened
        self._record(PromptEventKind.OPENED, opened)
        # While the agent starts, its provider's start-up dialogs are the kernel's to answer (screen_watch).
        if decide and not live.starting:
            self._spawn(self._decide(live, opened))

    def _close(self, terminal_id: str, detail: str) -> None:
        shown = self._shown.get(terminal_id)
        if shown is None or shown.open is None:
            return
        if shown.timer is not None:
            shown.timer.cancel()
            shown.timer = None
        opened, shown.open, shown.answer = shown.open, None, None
        live = self._lookup(terminal_id)
        if live is not None:
            live.prompt = None
        self._record(PromptEventKind.CLOSED, opened, detail=detail)

    def _record(self, kind: PromptEventKind, prompt: OpenPrompt, **fields: Any) -> PromptEvent:
        event = PromptEvent(kind=kind, prompt=prompt, at=time.time(), **fields)
        self._log.append(event)
        self._hooks.after("cao_after_prompt", event=event)
        return event

    def _spawn(self, work: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- deciding ---------------------------------------------------------------------------------

    def policies(self, live: LiveTerminal) -> list[tuple[str, PromptPolicy]]:
        """The policies that apply to the terminal, in the order they decide."""
        found: list[tuple[str, PromptPolicy]] = []
        session = self.session_policy(live.record.session_name)
        if not session.empty:
            found.append(("session", session))
        try:
            profile = self._load_profile(live.record.agent_profile)
        except CaoError:
            profile = None
        if profile is not None and profile.prompt_policy:
            try:
                found.append((f"profile {profile.name}", parse_policy(profile.prompt_policy, profile.name)))
            except InvalidInput as exc:  # the profile was checked when loaded; an edited file may not be
                log.warning("ignoring the prompt policy of profile %s: %s", profile.name, exc)
        if not self._settings_policy.empty:
            found.append(("settings", self._settings_policy))
        return found

    async def _decide(self, live: LiveTerminal, opened: OpenPrompt) -> None:
        decision = self._hooks.decide_prompt(live.terminal(), opened)
        # Reading the policies may touch the disk (a session's file, a profile): off the loop.
        policies = await self._io.run(self.policies, live)
        if decision is None:
            decision = decide(opened.prompt, policies)
        if decision is not None and not decision.ask and (decision.option or decision.text):
            await asyncio.sleep(AUTO_SETTLE)
            await self._answer_quietly(live.id, opened, decision)
            return
        timeout, on_timeout, _ = merged_settings([policy for _, policy in policies])
        shown = self._shown.get(live.id)
        if timeout is not None and shown is not None and shown.open is opened:
            loop = asyncio.get_running_loop()
            shown.timer = loop.call_later(timeout, lambda: self._spawn(self._timed_out(live.id, opened,
                                                                                        on_timeout)))

    async def _answer_quietly(self, terminal_id: str, opened: OpenPrompt, decision: PromptDecision) -> None:
        try:
            await self.answer(terminal_id, option=decision.option, text=decision.text, prompt_id=opened.id,
                              by=decision.by, reason=decision.reason)
        except CaoError as exc:
            log.info("terminal %s: %s could not answer prompt %s: %s", terminal_id, decision.by, opened.id,
                     exc)

    async def _timed_out(self, terminal_id: str, opened: OpenPrompt, on_timeout: str) -> None:
        shown = self._shown.get(terminal_id)
        if shown is None or shown.open is not opened or shown.answer is not None:
            return
        shown.timer = None
        if on_timeout in ("default", "deny"):
            prompt = opened.prompt
            numbers = ([prompt.default] if on_timeout == "default"
                       else prompt.numbers_with(OptionEffect.DENY))
            if numbers and numbers[0]:
                reason = f"no answer in time: took the {on_timeout}"
                text = f"Nobody answered in time ({reason})" if prompt.option(numbers[0]).takes_text else None
                await self._answer_quietly(terminal_id, opened, PromptDecision(
                    by="timeout", option=numbers[0], text=text, reason=reason))
                return
        live = self._lookup(terminal_id)
        caller = live.record.caller_id if live is not None else None
        detail = "no answer in time"
        if caller and self.escalate is not None:
            try:
                await self.escalate(terminal_id, caller, escalation_text(opened))
                detail += f"; supervisor {caller} was told"
            except CaoError as exc:
                detail += f"; telling supervisor {caller} failed: {exc}"
        self._record(PromptEventKind.ESCALATED, opened, by="timeout", detail=detail)

    # -- answering --------------------------------------------------------------------------------

    async def answer(self, terminal_id: str, *, option: int | None = None, text: str | None = None,
                     prompt_id: str | None = None, by: str = "person", as_terminal: str | None = None,
                     reason: str = "") -> PromptEvent:
        """See ``KernelAPI.answer_prompt``."""
        live = self._live(terminal_id)
        _check_answer(option, text, by)
        if as_terminal is not None:
            by = f"terminal:{as_terminal}"
        shown = self._state(terminal_id)
        async with shown.lock:
            opened = shown.open
            if opened is None:
                status = live.tracker.report
                gone = f"prompt {prompt_id} is no longer open: " if prompt_id is not None else ""
                unread = ("; its prompt could not be read: answer with text through answer_user_prompt"
                          if status.status == TerminalStatus.WAITING_USER_ANSWER else "")
                raise Conflict(f"{gone}terminal {terminal_id} has no prompt to answer "
                               f"(status {status.status.value}: {status.evidence}){unread}")
            if prompt_id is not None and prompt_id != opened.id:
                raise self._refuse(opened, by, option, text,
                                   f"prompt {prompt_id} is no longer open; terminal {terminal_id} now shows "
                                   f"prompt {opened.id}: {opened.prompt.question}")
            if shown.answer is not None:
                raise self._refuse(opened, by, option, text,
                                   f"prompt {opened.id} was already answered by {shown.answer.by}")
            if as_terminal is not None:
                policies = await self._io.run(self.policies, live)
                self._check_supervisor(live, as_terminal, opened, option, by, text, policies)
            screen = await self._io.run(self._backend.capture, terminal_id)
            assert live.provider is not None
            now = self._hooks.read_prompt(live.terminal(), screen, live.provider)
            # The prompt may have closed (and the same question opened again) while the screen was read.
            if shown.open is not opened or now is None or now.fingerprint != opened.prompt.fingerprint:
                raise self._refuse(opened, by, option, text,
                                   f"prompt {opened.id} is no longer on the screen of terminal {terminal_id}")
            number = _choose(now, option, text)
            if number is None and text is not None and not now.free_text:
                raise self._refuse(opened, by, option, text, f"prompt {opened.id} takes no text")
            keys = [validate.key(k) for k in now.option(number).keys] if number is not None else []
            # Recorded before the keys go out, so the trail reads opened, answered, closed.
            event = self._record(PromptEventKind.ANSWERED, opened, by=by, option=number, text=text,
                                 detail=reason)
            shown.answer = event
            if shown.timer is not None:
                shown.timer.cancel()
                shown.timer = None
            # No input latch here (unlike a message): the status stays waiting until the screen moves on,
            # which is how the answer learns that its keys worked.
            shown.typing = text is not None
            try:
                if keys:
                    await self._io.run(self._backend.send_keys, terminal_id, keys)
                if text is not None:
                    if keys:
                        await live.tracker.next_screen(TEXT_FIELD_WAIT)
                    caps = live.provider.capabilities
                    await self._io.run(self._backend.send_text, terminal_id, text,
                                       enter_count=caps.enter_count, submit_delay=caps.submit_delay)
            except Exception as exc:
                self._record(PromptEventKind.REFUSED, opened, by=by, option=number, text=text,
                             detail=f"typing the answer failed: {exc}")
                if shown.answer is event:
                    shown.answer = None
                raise
            finally:
                shown.typing = False
        await self._left(live, opened)
        return event

    async def _left(self, live: LiveTerminal, opened: OpenPrompt) -> None:
        """Wait until the answered prompt is off the screen; ``Timeout`` when it stays."""
        deadline = time.monotonic() + LEAVE_TIMEOUT
        while True:
            shown = self._shown.get(live.id)
            if shown is None or shown.open is not opened:
                return
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            await live.tracker.next_screen(remaining)
        # Still the same prompt: the keys did nothing it could see. Open it again under a new id, so the
        # next answer is not refused as already given.
        shown = self._shown.get(live.id)
        if shown is not None and shown.open is opened:
            self._close(live.id, "the answer's keys left the prompt on screen")
            # Not decided again: a policy whose keys did nothing would type them forever.
            self._open(live, shown, opened.prompt, decide=False)
            reopened = shown.open
            assert reopened is not None
            raise Timeout(f"the keys of the answer to prompt {opened.id} were pressed, but the prompt is "
                          f"still on screen after {LEAVE_TIMEOUT:g} s; it is open again as {reopened.id}")

    def _refuse(self, opened: OpenPrompt, by: str, option: int | None, text: str | None,
                detail: str) -> CaoError:
        self._record(PromptEventKind.REFUSED, opened, by=by, option=option, text=text, detail=detail)
        return Conflict(detail)

    def _check_supervisor(self, live: LiveTerminal, supervisor: str, opened: OpenPrompt, option: int | None,
                          by: str, text: str | None, policies: list[tuple[str, PromptPolicy]]) -> None:
        validate.terminal_id(supervisor)
        if supervisor not in self.callers(live):
            self._record(PromptEventKind.REFUSED, opened, by=by, option=option, text=text,
                         detail=f"terminal {supervisor} did not start terminal {live.id}")
            raise Vetoed(f"terminal {supervisor} may not answer the prompts of terminal {live.id}: it did "
                         "not start it (directly or through its workers)")
        _, _, allowed = merged_settings([policy for _, policy in policies])
        if not allowed:
            self._record(PromptEventKind.REFUSED, opened, by=by, option=option, text=text,
                         detail="the prompt policy lets no supervisor answer")
            raise Vetoed(f"the prompt policy of terminal {live.id} lets no supervisor answer its prompts")
        ruled = decide(opened.prompt, policies)
        options = opened.prompt.options
        chosen = options[option - 1] if option and 0 < option <= len(options) else None
        if ruled is not None and chosen is not None and chosen.effect.value.startswith("allow") and (
                ruled.ask or (ruled.option and opened.prompt.option(ruled.option).effect.value == "deny")):
            self._record(PromptEventKind.REFUSED, opened, by=by, option=option, text=text,
                         detail=f"{ruled.by} keeps this for a person")
            raise Vetoed(f"{ruled.by} ({ruled.reason}) does not let a supervisor allow this; a person must "
                         "answer")

    def callers(self, live: LiveTerminal) -> list[str]:
        """The terminals that started ``live``, its caller first, then that one's caller, and so on."""
        chain: list[str] = []
        current = live.record.caller_id
        while current is not None and len(chain) < _MAX_CHAIN and current not in chain:
            chain.append(current)
            caller = self._lookup(current)
            current = caller.record.caller_id if caller is not None else None
        return chain

    def _live(self, terminal_id: str) -> LiveTerminal:
        validate.terminal_id(terminal_id)
        live = self._lookup(terminal_id)
        if live is None:
            raise NotFound(f"terminal {terminal_id} not found")
        return live

    # -- upstream's answer ------------------------------------------------------------------------

    def resolve(self, terminal_id: str, answer: str) -> tuple[int | None, str | None] | None:
        """Turn upstream's free ``answer`` into an option and text for the open prompt: an option's
        number, key or label, else text where the prompt takes it. None when no prompt is open."""
        opened = self.open_prompt(terminal_id)
        if opened is None:
            return None
        prompt, wanted = opened.prompt, answer.strip()
        if wanted.isdigit() and 1 <= int(wanted) <= len(prompt.options):
            return int(wanted), None
        for number, option in enumerate(prompt.options, 1):
            if wanted.casefold() == option.label.casefold() or (
                    len(option.keys) <= 2 and option.keys and wanted == option.keys[0]
                    and len(wanted) == 1):
                return number, None
        if prompt.free_text or any(option.takes_text for option in prompt.options):
            return None, answer
        labels = "; ".join(f"{n}. {o.label}" for n, o in enumerate(prompt.options, 1))
        raise InvalidInput(f"{answer!r} is not an option of prompt {opened.id} ({labels}); answer with a "
                           "number or a label")

    def history(self, terminal_id: str, limit: int) -> list[PromptEvent] | None:
        """The terminal's audit trail (blocks on the disk: call it off the loop)."""
        return self._log.read(terminal_id, limit)

    # -- session policies -------------------------------------------------------------------------

    def session_policy(self, session_name: str) -> PromptPolicy:
        policy = self._sessions.get(session_name)
        if policy is None:
            data = self.session_policy_data(session_name)
            try:
                policy = parse_policy(data, f"session {session_name}") if data else PromptPolicy()
            except InvalidInput as exc:
                log.warning("ignoring the prompt policy of session %s: %s", session_name, exc)
                policy = PromptPolicy()
            self._sessions[session_name] = policy
        return policy

    def _session_file(self, session_name: str) -> Path:
        return self._home_root / SESSION_POLICIES / f"{validate.session_name(session_name)}.json"

    def session_policy_data(self, session_name: str) -> dict[str, Any] | None:
        try:
            data = json.loads(self._session_file(session_name).read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            log.warning("the prompt policy of session %s cannot be read: %s", session_name, exc)
            return None
        return data if isinstance(data, dict) else None

    def set_session_policy(self, session_name: str, data: Mapping[str, Any] | None) -> None:
        """Check and store (None: remove) a session's policy. Blocks on the disk: call it off the loop."""
        path = self._session_file(session_name)
        if data is None:
            path.unlink(missing_ok=True)
            self._sessions[session_name] = PromptPolicy()
            return
        policy = parse_policy(data, f"the prompt policy of session {session_name}")
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        temporary = path.with_suffix(".tmp")
        temporary.write_text(json.dumps(dict(data)), encoding="utf-8")
        temporary.chmod(0o600)
        temporary.replace(path)
        self._sessions[session_name] = policy

    async def aclose(self) -> None:
        for shown in self._shown.values():
            if shown.timer is not None:
                shown.timer.cancel()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._log.close()


def _check_answer(option: int | None, text: str | None, by: str) -> None:
    if option is not None and (isinstance(option, bool) or not isinstance(option, int) or option < 1):
        raise InvalidInput(f"option must be a number from 1 (got {option!r})")
    if text is not None:
        if not isinstance(text, str) or not text.strip():
            raise InvalidInput("text must not be empty")
        if len(text) > MAX_ANSWER_CHARS:
            raise InvalidInput(f"text is {len(text)} characters; the limit is {MAX_ANSWER_CHARS}")
    if option is None and text is None:
        raise InvalidInput("an answer needs an option, text, or both")
    if not isinstance(by, str) or not by.strip() or len(by) > 200 or any(ord(c) < 32 for c in by):
        raise InvalidInput("'by' must name who answers, on one line of at most 200 characters")


def _choose(prompt: Prompt, option: int | None, text: str | None) -> int | None:
    """The option to press for an answer (None: type the text alone, at a prompt that takes text)."""
    if option is not None:
        if option > len(prompt.options):
            labels = "; ".join(f"{n}. {o.label}" for n, o in enumerate(prompt.options, 1))
            raise InvalidInput(f"the prompt has no option {option} (its options: {labels})")
        chosen = prompt.option(option)
        if text is not None and not chosen.takes_text:
            raise InvalidInput(f"option {option} ({chosen.label}) takes no text")
        return option
    if text is not None and not prompt.free_text:
        for number, candidate in enumerate(prompt.options, 1):
            if candidate.takes_text:
                return number
    return None


def escalation_text(opened: OpenPrompt) -> str:
    """What a supervisor reads when a worker's prompt waited too long."""
    prompt = opened.prompt
    tool = f" ({prompt.tool} {' '.join(prompt.arguments.values())})" if prompt.tool else ""
    options = "; ".join(f"{n}. {o.label}" for n, o in enumerate(prompt.options, 1))
    return (f"Terminal {opened.terminal_id} is waiting on prompt {opened.id}: {prompt.question}{tool}. "
            f"Options: {options}. Answer with answer_user_prompt(terminal_id=\"{opened.terminal_id}\", "
            f"answer=\"<number>\", prompt_id=\"{opened.id}\") or ask the person at the console.")


__all__ = ["PromptDesk", "escalation_text", "load_settings_policy"]
