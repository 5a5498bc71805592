"""Prompt policies: what they accept, how they decide, and that no input makes them raise anything but a
clear ``InvalidInput``."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cao_hookspecs import InvalidInput, OptionEffect, Prompt, PromptOption
from cao_hookspecs.prompt_policy import decide, merged_settings, parse_policy, rule_matches

YES = PromptOption(label="Yes", keys=["1"], effect="allow")
ALWAYS = PromptOption(label="Yes, and don't ask again", keys=["2"], effect="allow_always")
NO = PromptOption(label="No, and tell the agent why", keys=["3"], effect="deny", takes_text=True)


def bash(command: str, *, complete: bool = True) -> Prompt:
    return Prompt(kind="permission", question=f"Allow Bash({command})?", tool="Bash",
                  arguments={"command": command}, arguments_complete=complete, options=[YES, ALWAYS, NO])


def question() -> Prompt:
    return Prompt(kind="question", question="Which database should I use?", options=[
        PromptOption(label="SQLite", keys=["1"], effect="answer"),
        PromptOption(label="Postgres", keys=["2"], effect="answer")])


POLICY = parse_policy({"rules": [
    {"allow": "Bash(git status)"},
    {"deny": "Bash(rm -rf *)", "reason": "never delete trees"},
    {"ask": "Bash(git push*)"},
    {"allow_always": "read"},
    {"answer": "postgres", "when": "Which database*"},
]}, "test")


@pytest.mark.parametrize(("prompt", "expected"), [
    (bash("git status"), ("policy:session#1", 1, None, False)),
    (bash("rm -rf build"), ("policy:session#2", 3, "Not allowed by a cao prompt policy: never delete trees",
                            False)),
    (bash("git push --force"), ("policy:session#3", None, None, True)),
    (question(), ("policy:session#5", 2, None, False)),
])
def test_the_first_matching_rule_decides(prompt, expected):
    decision = decide(prompt, [("session", POLICY)])
    assert (decision.by, decision.option, decision.text, decision.ask) == expected


@pytest.mark.parametrize("command", [
    "git status && rm -rf ~", "git status; curl x | sh", "git status $(rm -rf ~)", "git status\nrm -rf ~",
    "git status > /etc/passwd", "git status `id`",
])
def test_an_allowing_rule_never_lets_a_chained_command_through(command):
    assert decide(bash(command), [("session", POLICY)]) is None


def test_an_allowing_rule_never_matches_an_argument_cut_on_screen():
    assert decide(bash("git status", complete=False), [("session", POLICY)]) is None
    assert decide(bash("rm -rf build", complete=False), [("session", POLICY)]).option == 3


def test_tool_names_match_without_case_and_a_bare_tool_matches_any_arguments():
    read = Prompt(kind="permission", question="Read a file?", tool="Read", arguments={"file_path": "/x"},
                  options=[YES, ALWAYS, NO])
    assert decide(read, [("s", POLICY)]).option == 2
    assert rule_matches(parse_policy({"rules": [{"deny": "*"}]}, "t").rules[0], read)


def test_a_rule_whose_action_the_prompt_cannot_take_leaves_it_to_a_person():
    only_yes = Prompt(kind="permission", question="Go?", tool="Bash", arguments={"command": "rm -rf x"},
                      options=[YES])
    decision = decide(only_yes, [("s", POLICY)])
    assert decision.ask and "no option that does that" in decision.reason


def test_sources_are_tried_in_order_and_settings_merge():
    first = parse_policy({"rules": [{"deny": "Bash"}], "timeout": 30, "on_timeout": "deny"}, "a")
    second = parse_policy({"rules": [{"allow": "Bash"}], "timeout": 5, "supervisor": False}, "b")
    assert decide(bash("ls"), [("one", first), ("two", second)]).by == "policy:one#1"
    assert merged_settings([first, second]) == (30.0, "deny", False)
    assert merged_settings([]) == (None, "escalate", True)


@pytest.mark.parametrize(("data", "message"), [
    ([], "must be a mapping"),
    ({"rule": []}, "unknown prompt policy key 'rule'"),
    ({"rules": {}}, "'rules' must be a list"),
    ({"rules": [{"allow": "Bash", "deny": "Bash"}]}, "rule 1 must name exactly one action"),
    ({"rules": [{}]}, "rule 1 must name exactly one action"),
    ({"rules": ["allow Bash"]}, "rule 1 must be a mapping"),
    ({"rules": [{"allow": ""}]}, "'allow' must be a tool pattern"),
    ({"rules": [{"allow": "Bash(x"}]}, "is not Tool or Tool(arguments)"),
    ({"rules": [{"allow": "Bash", "colour": "red"}]}, "unknown key 'colour'"),
    ({"rules": [{"answer": True}]}, "'answer' must be an option label or number"),
    ({"rules": [{"deny": "Bash", "kind": "nag"}]}, "'kind' must be one of"),
    ({"timeout": 0}, "'timeout' must be a number of seconds above 0"),
    ({"timeout": True}, "'timeout' must be a number"),
    ({"on_timeout": "explode"}, "'on_timeout' must be one of escalate, default, deny"),
    ({"supervisor": "yes"}, "'supervisor' must be true or false"),
])
def test_a_bad_policy_is_refused_naming_the_rule_and_the_key(data, message):
    with pytest.raises(InvalidInput, match=r"^where: .*" + message.replace("(", r"\(").replace(")", r"\)")):
        parse_policy(data, "where")


_json = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner,
                                                                                 max_size=4), max_leaves=20)
_rule = st.fixed_dictionaries({}, optional={
    key: st.text(max_size=30) | st.integers() | st.none() for key in
    ("allow", "allow_always", "deny", "ask", "answer", "when", "kind", "reason")})


@settings(max_examples=300, deadline=None)
@given(data=_json | st.fixed_dictionaries({"rules": st.lists(_rule, max_size=5)}, optional={
    "timeout": st.integers(-5, 10) | st.floats(allow_nan=True), "on_timeout": st.text(max_size=10),
    "supervisor": st.booleans() | st.text(max_size=3)}), command=st.text(max_size=40))
def test_any_input_is_read_or_refused_clearly_and_a_read_policy_decides_without_raising(data, command):
    try:
        policy = parse_policy(data, "fuzz")
    except InvalidInput as exc:
        assert str(exc).startswith("fuzz")
        return
    decision = decide(bash(command), [("fuzz", policy)])
    assert decision is None or decision.by.startswith("policy:fuzz#")
    if decision is not None and decision.option is not None:
        assert 1 <= decision.option <= 3


def test_the_fingerprint_ignores_the_cursor_and_the_evidence():
    one = bash("ls")
    moved = Prompt(**{**{f: getattr(one, f) for f in ("kind", "question", "tool", "arguments", "options")},
                      "default": 2, "evidence": ["a redraw"]})
    assert one.fingerprint == moved.fingerprint
    assert one.fingerprint != bash("ls -la").fingerprint
    assert one.numbers_with(OptionEffect.DENY) == [3] and one.option(3).takes_text
    with pytest.raises(IndexError):
        one.option(4)
