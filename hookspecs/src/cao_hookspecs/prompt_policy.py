"""Prompt policies: data that answers an agent's prompts, or says how long to wait for a person.

A policy comes from a profile's frontmatter (``promptPolicy``), from a session (set at launch or later),
or from the cao settings (a YAML file), and always has this shape::

    rules:                              # tried in order; the first that matches decides
      - allow: "Bash(git status)"       # Tool(argument pattern): answer with the option that allows once
      - deny: "Bash(rm -rf *)"          # answer with the option that denies
      - allow_always: "Read"            # a tool name alone matches any arguments
      - ask: "Bash(git push*)"          # always leave it to a person
      - answer: "SQLite"                # a question: the option with this label (or number)
        when: "Which database*"         # ... when the question matches this pattern
    timeout: 300                        # seconds a prompt may wait for a person
    on_timeout: escalate                # then: escalate (tell the supervisor and the notifiers),
                                        # default (take the option Enter would take) or deny
    supervisor: true                    # whether a supervisor may answer its own workers' prompts

Patterns are shell-style (``*``, ``?``, ``[...]``); tool names match without regard to case. An argument
pattern is matched against the tool's main argument (its command, path or URL; else all arguments
joined). An allowing rule never matches an argument the screen showed only in part, nor a command that
chains others (``;``, ``&&``, ``|``, ``$(``, a new line...) unless its pattern spells that operator out:
``allow: "Bash(git status)"`` must not let ``git status && rm -rf ~`` through. Denying rules match on
what is shown. A rule names one action; several actions in one rule, unknown keys and wrong types are
refused with the rule's number and the key.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from .errors import InvalidInput
from .prompts import OptionEffect, Prompt, PromptDecision, PromptKind

__all__ = ["ON_TIMEOUT", "PolicyRule", "PromptPolicy", "decide", "parse_policy", "merged_settings"]

TOOL_ACTIONS = ("allow", "allow_always", "deny", "ask")
ACTIONS = (*TOOL_ACTIONS, "answer")
ON_TIMEOUT = ("escalate", "default", "deny")
MAX_RULES = 200
MAX_PATTERN = 1000
_RULE_KEYS = frozenset({*ACTIONS, "when", "kind", "reason"})
_TOP_KEYS = frozenset({"rules", "timeout", "on_timeout", "supervisor"})
_TOOL_PATTERN = re.compile(r"^\s*(?P<tool>[^()]+?)\s*(?:\((?P<argument>.*)\))?\s*$", re.DOTALL)
# Operators that make one command line run several commands (or feed one into another).
_CHAINING = ("&&", "||", ";", "|", "`", "$(", "\n", "&", ">", "<")
_MAIN_ARGUMENTS = ("command", "cmd", "file_path", "path", "url", "pattern", "query")


@attrs.frozen(kw_only=True)
class PolicyRule:
    """One rule: ``action`` one of ``allow``, ``allow_always``, ``deny``, ``ask``, ``answer``.

    Tool rules carry ``tool`` (a pattern) and ``argument`` (a pattern, or None for any); ``answer`` rules
    carry ``answer`` (an option label or number) and ``when`` (a pattern for the question, or None).
    ``kind`` limits any rule to prompts of that kind.
    """

    action: str
    tool: str | None = None
    argument: str | None = None
    answer: str | None = None
    when: str | None = None
    kind: PromptKind | None = None
    reason: str = ""


@attrs.frozen(kw_only=True)
class PromptPolicy:
    rules: tuple[PolicyRule, ...] = ()
    timeout: float | None = None
    on_timeout: str = "escalate"
    supervisor: bool | None = None

    @property
    def empty(self) -> bool:
        return not self.rules and self.timeout is None and self.supervisor is None


def parse_policy(data: Any, origin: str) -> PromptPolicy:
    """Check and read a policy (a mapping as YAML or JSON gives it). ``origin`` names where it came from
    in the error: every problem raises ``InvalidInput`` naming ``origin``, the rule and the key."""
    if data is None:
        return PromptPolicy()
    if not isinstance(data, Mapping):
        raise InvalidInput(f"{origin}: a prompt policy must be a mapping (got {type(data).__name__})")
    unknown = sorted(str(key) for key in data if key not in _TOP_KEYS)
    if unknown:
        raise InvalidInput(f"{origin}: unknown prompt policy key {unknown[0]!r} "
                           f"(known: {', '.join(sorted(_TOP_KEYS))})")
    rules_data = data.get("rules")
    rules_data = [] if rules_data is None else rules_data
    if not isinstance(rules_data, list):
        raise InvalidInput(f"{origin}: 'rules' must be a list of rules")
    if len(rules_data) > MAX_RULES:
        raise InvalidInput(f"{origin}: at most {MAX_RULES} rules (got {len(rules_data)})")
    rules = tuple(_parse_rule(rule, f"{origin}: rule {n}") for n, rule in enumerate(rules_data, 1))
    timeout = data.get("timeout")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float))
                                or not 0 < timeout <= 7 * 24 * 3600):
        raise InvalidInput(f"{origin}: 'timeout' must be a number of seconds above 0 and at most a week "
                           f"(got {timeout!r})")
    on_timeout = data.get("on_timeout", "escalate")
    if on_timeout not in ON_TIMEOUT:
        raise InvalidInput(f"{origin}: 'on_timeout' must be one of {', '.join(ON_TIMEOUT)} "
                           f"(got {on_timeout!r})")
    supervisor = data.get("supervisor")
    if supervisor is not None and not isinstance(supervisor, bool):
        raise InvalidInput(f"{origin}: 'supervisor' must be true or false (got {supervisor!r})")
    return PromptPolicy(rules=rules, timeout=None if timeout is None else float(timeout),
                        on_timeout=on_timeout, supervisor=supervisor)


def _parse_rule(data: Any, where: str) -> PolicyRule:
    if not isinstance(data, Mapping):
        raise InvalidInput(f"{where} must be a mapping such as {{allow: \"Bash(git status)\"}}")
    unknown = sorted(str(key) for key in data if key not in _RULE_KEYS)
    if unknown:
        raise InvalidInput(f"{where}: unknown key {unknown[0]!r} (a rule takes one of "
                           f"{', '.join(ACTIONS)}, and optionally when, kind, reason)")
    actions = [key for key in ACTIONS if key in data]
    if len(actions) != 1:
        raise InvalidInput(f"{where} must name exactly one action of {', '.join(ACTIONS)} "
                           f"(got {', '.join(actions) or 'none'})")
    action = actions[0]
    value = data[action]
    kind = data.get("kind")
    if kind is not None:
        try:
            kind = PromptKind(kind)
        except ValueError:
            raise InvalidInput(f"{where}: 'kind' must be one of {', '.join(k.value for k in PromptKind)} "
                               f"(got {kind!r})") from None
    when = data.get("when")
    if when is not None and (not isinstance(when, str) or len(when) > MAX_PATTERN):
        raise InvalidInput(f"{where}: 'when' must be a pattern of at most {MAX_PATTERN} characters")
    reason = data.get("reason", "")
    if not isinstance(reason, str):
        raise InvalidInput(f"{where}: 'reason' must be text")
    if action == "answer":
        if isinstance(value, bool) or not isinstance(value, (str, int)) or not str(value).strip():
            raise InvalidInput(f"{where}: 'answer' must be an option label or number (got {value!r})")
        return PolicyRule(action=action, answer=str(value).strip(), when=when, kind=kind, reason=reason)
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_PATTERN:
        raise InvalidInput(f"{where}: {action!r} must be a tool pattern such as \"Bash(git status)\" "
                           f"of at most {MAX_PATTERN} characters (got {value!r})")
    found = _TOOL_PATTERN.match(value)
    if not found:
        raise InvalidInput(f"{where}: {action!r} pattern {value!r} is not Tool or Tool(arguments)")
    return PolicyRule(action=action, tool=found.group("tool"), argument=found.group("argument"),
                      when=when, kind=kind, reason=reason)


def main_argument(prompt: Prompt) -> str | None:
    """The argument a tool pattern's parentheses are matched against."""
    for name in _MAIN_ARGUMENTS:
        if name in prompt.arguments:
            return prompt.arguments[name]
    if prompt.arguments:
        return " ".join(prompt.arguments.values())
    return None


def _chains(text: str, pattern: str) -> bool:
    return any(op in text and op not in pattern for op in _CHAINING)


def rule_matches(rule: PolicyRule, prompt: Prompt) -> bool:
    """Whether ``rule`` applies to ``prompt`` (see the module docstring)."""
    if rule.kind is not None and rule.kind != prompt.kind:
        return False
    if rule.when is not None and not fnmatch.fnmatchcase(prompt.question, rule.when):
        return False
    if rule.action == "answer":
        return _answer_number(rule, prompt) is not None
    if prompt.tool is None or rule.tool is None:
        return False
    if not fnmatch.fnmatchcase(prompt.tool.lower(), rule.tool.lower()):
        return False
    if rule.argument is None:
        return True
    argument = main_argument(prompt)
    if argument is None:
        return False
    allowing = rule.action in ("allow", "allow_always")
    if allowing and (not prompt.arguments_complete or _chains(argument, rule.argument)):
        return False
    return fnmatch.fnmatchcase(argument, rule.argument)


def _answer_number(rule: PolicyRule, prompt: Prompt) -> int | None:
    assert rule.answer is not None
    if rule.answer.isdigit():
        number = int(rule.answer)
        return number if 1 <= number <= len(prompt.options) else None
    wanted = rule.answer.casefold()
    for number, option in enumerate(prompt.options, 1):
        if option.label.casefold() == wanted:
            return number
    return None


_EFFECTS = {"allow": OptionEffect.ALLOW, "allow_always": OptionEffect.ALLOW_ALWAYS, "deny": OptionEffect.DENY}


def decide(prompt: Prompt, policies: Iterable[tuple[str, PromptPolicy]]) -> PromptDecision | None:
    """The first matching rule's decision over ``policies`` (source name, policy) in order; None when
    no rule matches. A matching rule whose action the prompt has no option for (``deny`` on a prompt
    without a denying option) leaves the prompt to a person, and says so."""
    for source, policy in policies:
        for number, rule in enumerate(policy.rules, 1):
            if not rule_matches(rule, prompt):
                continue
            by = f"policy:{source}#{number}"
            reason = rule.reason or _describe(rule)
            if rule.action == "ask":
                return PromptDecision(by=by, ask=True, reason=reason)
            if rule.action == "answer":
                return PromptDecision(by=by, option=_answer_number(rule, prompt), reason=reason)
            options = prompt.numbers_with(_EFFECTS[rule.action])
            if not options:
                return PromptDecision(by=by, ask=True,
                                      reason=f"{reason}, but the prompt has no option that does that")
            # An option that asks why (``No, and tell the agent what to do differently``) is told.
            asks_why = prompt.option(options[0]).takes_text
            text = f"Not allowed by a cao prompt policy: {reason}" if asks_why else None
            return PromptDecision(by=by, option=options[0], text=text, reason=reason)
    return None


def _describe(rule: PolicyRule) -> str:
    if rule.action == "answer":
        return f"answer {rule.answer}" + (f" when {rule.when}" if rule.when else "")
    argument = "" if rule.argument is None else f"({rule.argument})"
    return f"{rule.action} {rule.tool}{argument}"


def merged_settings(policies: Sequence[PromptPolicy]) -> tuple[float | None, str, bool]:
    """The timeout, what happens then, and whether supervisors may answer, over ``policies`` in order:
    the first that sets a timeout gives both timeout values; any that forbids supervisors forbids."""
    timeout, on_timeout = None, "escalate"
    for policy in policies:
        if policy.timeout is not None:
            timeout, on_timeout = policy.timeout, policy.on_timeout
            break
    supervisor = all(policy.supervisor is not False for policy in policies)
    return timeout, on_timeout, supervisor
