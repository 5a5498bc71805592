"""q chat's permission question read as a prompt: the documented screens, an answered question in the
scrollback, text typed at the question's prompt, and properties over the documented screens."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cao_hookspecs import OptionEffect, PromptKind, TerminalStatus
from cao_provider_q_cli.prompts import read_prompt
from cao_provider_q_cli.screen import detect_status

SCREENS = Path(__file__).parent / "screens" / "1.17.0"
MANIFEST = json.loads((SCREENS / "manifest.json").read_text(encoding="utf-8"))["screens"]
ASK = "Allow this action? Use 't' to trust (always allow) this tool for the session. [y/n/t]:"
PROMPT = "[cao-developer-0123abcd] >"


def screen(name: str) -> str:
    return (SCREENS / f"{name}.txt").read_text(encoding="utf-8")


PROMPT_FREE = [name for name, entry in MANIFEST.items() if entry["status"] != "waiting_user_answer"]


def test_the_documented_question():
    prompt = read_prompt(screen("waiting_user_answer"))
    assert prompt is not None and prompt.kind == PromptKind.PERMISSION
    assert prompt.question == "Allow this action?" and prompt.tool == "execute_bash"
    command = ("mkdir -p frontend/src/{components,hooks,services} "
               "backend/{src/{controllers,models,routes},public} infrastructure")
    assert dict(prompt.arguments) == {"command": command}
    assert [o.label for o in prompt.options] == ["y", "n", "t"]
    assert [o.keys for o in prompt.options] == [("y", "Enter"), ("n", "Enter"), ("t", "Enter")]
    assert [o.effect for o in prompt.options] == [OptionEffect.ALLOW, OptionEffect.DENY,
                                                  OptionEffect.ALLOW_ALWAYS]
    assert prompt.options[2].description == "trust (always allow) this tool for the session"
    assert prompt.default is None and not prompt.free_text and prompt.arguments_complete
    assert prompt.evidence[0] == "🛠️  Using tool: execute_bash" and prompt.evidence[-2:] == (ASK, PROMPT)


def test_text_typed_at_the_question_leaves_it_waiting_but_unanswerable():
    text = screen("waiting_user_answer_injected")
    assert detect_status(text).status == TerminalStatus.WAITING_USER_ANSWER
    assert read_prompt(text) is None


def test_an_answered_question_in_the_scrollback_is_not_open():
    answered = screen("waiting_user_answer").rstrip("\n") + " y\n\n> Created the folders.\n\n" + PROMPT + "\n"
    assert detect_status(answered).status == TerminalStatus.COMPLETED
    assert read_prompt(answered) is None
    # The same question asked again further down is the open one.
    again = (answered + "\n🛠️  Using tool: execute_bash\n ● I will run the following shell command:\n"
             f"ls\n\n{ASK}\n\n{PROMPT}")
    prompt = read_prompt(again)
    assert prompt is not None and dict(prompt.arguments) == {"command": "ls"}


def test_an_answer_quoting_the_question_is_not_one():
    quoted = f"{PROMPT} What does q ask?\n\n> It asks:\n{ASK}\nand waits.\n\n{PROMPT}\n"
    assert read_prompt(quoted) is None


@pytest.mark.parametrize("name", PROMPT_FREE)
def test_prompt_free_screens(name):
    assert read_prompt(screen(name)) is None
