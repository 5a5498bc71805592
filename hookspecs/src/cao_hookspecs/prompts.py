"""Typed prompts: what an agent asks a person, read from its screen, and what became of it.

A provider reads its CLI's prompt screens into a :class:`Prompt` (``ProviderSpec.read_prompt``); the
kernel gives each one it sees an id (:class:`OpenPrompt`) for as long as it is on screen, answers it by
pressing the keys of the chosen :class:`PromptOption`, and records a :class:`PromptEvent` for everything
that happens to it. Options are numbered from 1 everywhere (on the wire, in commands, in ``default``),
the way the CLIs number them on screen.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any

import attrs

__all__ = [
    "OptionEffect",
    "OpenPrompt",
    "Prompt",
    "PromptDecision",
    "PromptEvent",
    "PromptEventKind",
    "PromptKind",
    "PromptOption",
]


def _strings(value: Any) -> tuple[str, ...]:
    return tuple(str(item) for item in value or ())


def _string_mapping(value: Mapping[str, Any] | None) -> Mapping[str, str]:
    import types

    return types.MappingProxyType({str(k): str(v) for k, v in (value or {}).items()})


class PromptKind(enum.StrEnum):
    """What sort of prompt an agent shows."""

    #: A tool call waits for approval (a shell command, a file edit, an MCP tool, network access).
    PERMISSION = "permission"
    #: The model asks the person something (Claude Code's AskUserQuestion, Gemini's ask_user...).
    QUESTION = "question"
    #: A menu that is neither (plan approval, a picker).
    CHOICE = "choice"
    #: A bare yes or no.
    CONFIRMATION = "confirmation"
    #: A screen the CLI shows before its first turn (trust this folder, an API key, an update).
    STARTUP_DIALOG = "startup_dialog"


class OptionEffect(enum.StrEnum):
    """What picking an option means, so a policy can say "allow" or "deny" for every CLI alike."""

    ALLOW = "allow"  # this once
    ALLOW_ALWAYS = "allow_always"  # and do not ask again (the CLI's own scope: session, folder...)
    DENY = "deny"
    ANSWER = "answer"  # one of the answers to a question
    OTHER = "other"


class PromptEventKind(enum.StrEnum):
    OPENED = "opened"  # the prompt appeared
    ANSWERED = "answered"  # its option's keys were pressed (and the text typed, if any)
    REFUSED = "refused"  # an answer was not typed: stale, unknown option, not allowed
    ESCALATED = "escalated"  # its timeout passed and the supervisor or a person was told
    CLOSED = "closed"  # it left the screen


@attrs.frozen(kw_only=True)
class PromptOption:
    """One option of a prompt, in the order the CLI draws it.

    ``keys`` are tmux key names (or literal characters) that pick this option from the screen as it was
    read: ``("1",)``, ``("y", "Enter")``, ``("Down", "Down", "Enter")``, ``("Escape",)``.
    ``takes_text``: picking it opens a text field (``Type something.``, ``No, and tell Codex what to do
    differently``); an answer may give the text, typed after the keys.
    """

    label: str
    keys: tuple[str, ...] = attrs.field(converter=_strings)
    effect: OptionEffect = attrs.field(default=OptionEffect.OTHER, converter=OptionEffect)
    description: str = ""
    takes_text: bool = False


def _options(value: Any) -> tuple[PromptOption, ...]:
    # Options read back from JSON arrive as mappings.
    return tuple(PromptOption(**item) if isinstance(item, Mapping) else item for item in value or ())


@attrs.frozen(kw_only=True)
class Prompt:
    """A prompt as read from one screen.

    - ``question``: what is asked (``Do you want to proceed?``, ``Which database should I use?``);
      ``title`` a heading above it (``Bash command``, ``Database``).
    - ``tool`` and ``arguments``: the tool asking and its arguments, as far as the screen shows them
      (``Bash``, ``{"command": "rm -rf build"}``); None and empty when the screen names none. A long
      argument may be cut by the screen: ``arguments_complete`` is False when the reader saw that.
    - ``options`` in screen order; ``default`` the number of the option Enter takes now (None: unknown).
    - ``free_text``: the prompt takes typed text itself (a question with a text field, a ``[y/n/t]``
      line typed at the chat input).
    - ``evidence``: the screen rows the record was read from.
    """

    kind: PromptKind = attrs.field(converter=PromptKind)
    question: str
    title: str = ""
    tool: str | None = None
    arguments: Mapping[str, str] = attrs.field(factory=dict, converter=_string_mapping)
    arguments_complete: bool = True
    options: tuple[PromptOption, ...] = attrs.field(factory=tuple, converter=_options)
    default: int | None = None
    free_text: bool = False
    evidence: tuple[str, ...] = attrs.field(factory=tuple, converter=_strings)

    @property
    def fingerprint(self) -> str:
        """What makes two readings the same prompt: everything but the cursor and the evidence rows,
        so a redraw (a spinner, the cursor moving) is not a new prompt."""
        import hashlib
        import json

        content = [self.kind.value, self.question, self.title, self.tool or "",
                   sorted(self.arguments.items()), [option.label for option in self.options]]
        digest = hashlib.sha256(json.dumps(content, ensure_ascii=False).encode()).hexdigest()
        return digest[:16]

    def option(self, number: int) -> PromptOption:
        """The option numbered ``number`` (from 1); IndexError when there is none."""
        if not 1 <= number <= len(self.options):
            raise IndexError(number)
        return self.options[number - 1]

    def numbers_with(self, effect: OptionEffect) -> list[int]:
        return [n for n, option in enumerate(self.options, 1) if option.effect == effect]


@attrs.frozen(kw_only=True)
class OpenPrompt:
    """A prompt on a terminal's screen now, with the id answers name it by.

    ``id`` is ``<terminal id>-<n>``; ``n`` grows each time a different prompt appears (or the same one
    appears again after it left), so an answer meant for one prompt never lands on the next.
    """

    id: str
    terminal_id: str
    prompt: Prompt
    opened_at: float


@attrs.frozen(kw_only=True)
class PromptDecision:
    """How a prompt should be answered, as a policy rule or a ``cao_decide_prompt`` plugin decides.

    ``option`` (a number from 1) and ``text`` as for an answer; ``ask`` True means leave it to a person
    (and stop looking at further rules). ``by`` names the decider in the audit trail
    (``policy:session#2``, ``plugin:my-engine``); ``reason`` says why in a few words.
    """

    by: str
    option: int | None = None
    text: str | None = None
    ask: bool = False
    reason: str = ""


@attrs.frozen(kw_only=True)
class PromptEvent:
    """One entry of a terminal's prompt audit trail.

    ``by`` names who acted: ``person`` (or ``person:<name>``), ``terminal:<id>`` (a supervisor),
    ``policy:<source>#<rule>``, ``plugin:<name>``, ``timeout``; empty for what the screen did (opened,
    closed). ``option`` and ``text`` are the answer given; ``detail`` says why an answer was refused or
    where an escalation went.
    """

    kind: PromptEventKind = attrs.field(converter=PromptEventKind)
    prompt: OpenPrompt
    at: float
    by: str = ""
    option: int | None = None
    text: str | None = None
    detail: str = ""
