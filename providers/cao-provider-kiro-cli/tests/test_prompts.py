"""Kiro CLI's prompts read as cao's Prompt: the line-based chat's permission question and Kiro 2's
trust-all-tools consent, on the documented screens and variations of them; properties over the
documented screens."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cao_hookspecs import OptionEffect, PromptKind, TerminalStatus
from cao_provider_kiro_cli.dialogs import TRUST_ALL_TOOLS
from cao_provider_kiro_cli.prompts import cursor_menu, read_prompt
from cao_provider_kiro_cli.screen import detect_status

SCREENS = Path(__file__).parent / "screens"
ASK = "Allow this action? Use 't' to trust (always allow) this tool for the session. [y/n/t]:"
PROMPT = "[cao-developer-0123abcd] 20% λ >"


def screen(name: str) -> str:
    return (SCREENS / f"{name}.txt").read_text(encoding="utf-8")


def prompt_free() -> list[str]:
    names = []
    for folder in sorted(SCREENS.iterdir()):
        entries = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))["screens"]
        names += [f"{folder.name}/{n}" for n, e in entries.items() if e["status"] != "waiting_user_answer"]
    return names


def test_the_classic_permission_question():
    prompt = read_prompt(screen("1.20.0/waiting_user_answer"))
    assert prompt is not None and prompt.kind == PromptKind.PERMISSION
    assert (prompt.question, prompt.tool) == ("Allow this action?", "shell")
    assert dict(prompt.arguments) == {"command": "aws s3 ls s3://094459-assets/"}
    assert [(o.label, o.keys) for o in prompt.options] == [("y", ("y", "Enter")), ("n", ("n", "Enter")),
                                                             ("t", ("t", "Enter"))]
    assert [o.effect for o in prompt.options] == [OptionEffect.ALLOW, OptionEffect.DENY,
                                                  OptionEffect.ALLOW_ALWAYS]
    assert prompt.default is None and not prompt.free_text
    # The MCP tool that ran before it is not part of the question.
    assert prompt.evidence[0].startswith("I will run the following command:")
    assert prompt.evidence[1] == "Purpose: List files in S3 bucket 094459-assets"


def test_an_answered_question_stays_in_the_scrollback_closed():
    text = screen("1.20.0/completed")
    assert ASK in text and read_prompt(text) is None


def test_text_typed_at_the_question_is_not_read():
    typed = screen("1.20.0/waiting_user_answer").rstrip("\n") + " [Message from terminal 9445aa60] Status?\n"
    assert detect_status(typed).status == TerminalStatus.WAITING_USER_ANSWER
    assert read_prompt(typed) is None


def test_the_trust_all_tools_consent():
    text = screen("2.25.0/dialog_trust_all_tools")
    prompt = read_prompt(text)
    assert prompt is not None and prompt.kind == PromptKind.STARTUP_DIALOG
    assert (prompt.title, prompt.question) == ("Warning", "Kiro is running in trust all tools mode")
    assert [o.label for o in prompt.options] == ["No, exit", "Yes, I accept"]
    assert [o.effect for o in prompt.options] == [OptionEffect.DENY, OptionEffect.ALLOW]
    assert prompt.default == 1 and [o.keys for o in prompt.options] == [("Enter",), ("Down", "Enter")]
    # The keys the kernel answers the dialog with are the ones that pick "Yes, I accept".
    assert tuple(TRUST_ALL_TOOLS.keys) == prompt.options[1].keys


def test_the_consent_with_the_cursor_moved():
    moved = "Warning: Kiro is running in trust all tools mode\n\n    No, exit\n  ❯ Yes, I accept\n"
    prompt = read_prompt(moved)
    assert prompt is not None and prompt.default == 2
    assert [o.keys for o in prompt.options] == [("Up", "Enter"), ("Enter",)]


@pytest.mark.parametrize("rows, expected", [
    (["  ❯ a", "    b"], (["a", "b"], 1)),
    (["title", "", "    a", "  › b", "    c"], (["a", "b", "c"], 2)),
    (["  ❯ a", "", "    b"], None),            # a blank row ends the menu
    (["  ❯ a", "    b", "footer"], None),      # the menu must end the screen
    (["  ❯ a", "  ❯ b"], None),                # two cursors
    (["    a", "    b"], None),                # no cursor
    (["  ❯ a", "      b"], None),              # labels not lined up
])
def test_cursor_menu(rows, expected):
    assert cursor_menu(rows) == expected


@pytest.mark.parametrize("name", prompt_free())
def test_prompt_free_screens(name):
    assert read_prompt(screen(name)) is None
