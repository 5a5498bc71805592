"""``cao skills``: cao's shipped skills are well formed and say what the kernel does, and the command lists,
shows and installs them (real files in temporary folders)."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from cao_kernel.cli.skills_cmd import frontmatter, list_skills, skills, skills_root
from cao_kernel.delivery import sender_suffix
from cao_kernel.orchestration import assign_suffix

ROOT = Path(__file__).resolve().parents[1]
NAMES = ["cao-sessions", "cao-supervisor", "cao-worker"]


def invoke(*args: str, home: Path | None = None):
    env = {"HOME": str(home)} if home is not None else None
    return CliRunner().invoke(skills, list(args), env=env, catch_exceptions=False)


def test_the_shipped_skills_are_well_formed_and_live_in_one_place():
    found = list_skills()
    assert [s.name for s in found] == NAMES
    assert all(len(s.description) > 80 for s in found)
    assert skills_root() == ROOT / "cao_kernel" / "skills"
    # The repository's top-level skills/ folder is the package's, not a copy that could drift.
    assert (ROOT / "skills").resolve() == skills_root().resolve()


def test_the_skills_quote_the_protocol_lines_the_kernel_writes():
    text = {s.name: s.text() for s in list_skills()}
    assert assign_suffix("<supervisor id>") in text["cao-worker"]
    assert sender_suffix("<sender id>") in text["cao-worker"]
    assert assign_suffix("<your id>") in text["cao-supervisor"]
    assert sender_suffix("<worker id>") in text["cao-supervisor"]
    for tool in ("handoff", "assign", "send_message", "delete_terminal"):
        assert f"`{tool}" in text["cao-supervisor"]
    for command in ("cao server", "cao install", "cao launch", "cao session status", "cao terminal inbox",
                    "cao shutdown"):
        assert command in text["cao-sessions"]


def test_list_and_show():
    listed = invoke("list")
    assert listed.exit_code == 0
    assert [line for line in listed.output.splitlines() if not line.startswith(" ")] == NAMES
    rows = json.loads(invoke("list", "--json").output)
    assert [r["name"] for r in rows] == NAMES and all(Path(r["path"]).is_file() for r in rows)
    shown = invoke("show", "cao-worker")
    assert shown.exit_code == 0 and shown.output.startswith("---\nname: cao-worker\n")
    missing = invoke("show", "nope")
    assert missing.exit_code == 1
    assert "no skill named 'nope' (cao has: cao-sessions, cao-supervisor, cao-worker)" in missing.output


def test_install_for_claude_code_into_a_project_then_again(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    first = invoke("install", "--provider", "claude_code")
    assert first.exit_code == 0, first.output
    for name in NAMES:
        installed = tmp_path / ".claude" / "skills" / name / "SKILL.md"
        assert installed.read_text() == (skills_root() / name / "SKILL.md").read_text()
        assert f"installed: {installed}" in first.output
    again = invoke("install", "--provider", "claude_code")
    assert again.exit_code == 0 and again.output.count("unchanged: ") == 3


def test_a_changed_file_is_refused_and_nothing_is_written(tmp_path):
    target = tmp_path / ".claude" / "skills"
    assert invoke("install", "--provider", "claude_code", "--project", str(tmp_path)).exit_code == 0
    edited = target / "cao-worker" / "SKILL.md"
    edited.write_text("my own notes\n")
    (target / "cao-sessions" / "SKILL.md").unlink()
    refused = invoke("install", "--provider", "claude_code", "--project", str(tmp_path))
    assert refused.exit_code == 1
    assert "nothing was written" in refused.output and str(edited) in refused.output
    assert edited.read_text() == "my own notes\n"
    assert not (target / "cao-sessions" / "SKILL.md").exists()  # no half-done install
    forced = invoke("install", "--provider", "claude_code", "--project", str(tmp_path), "--force")
    assert forced.exit_code == 0
    assert f"replaced: {edited}" in forced.output and f"installed: {target / 'cao-sessions' / 'SKILL.md'}" in forced.output
    assert edited.read_text() == (skills_root() / "cao-worker" / "SKILL.md").read_text()


def test_codex_user_install_and_chosen_skills(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    done = invoke("install", "cao-worker", "cao-worker", "--provider", "codex", "--user", home=home)
    assert done.exit_code == 0, done.output
    assert [p.relative_to(home).as_posix() for p in home.rglob("*.md")] == [".agents/skills/cao-worker/SKILL.md"]


def test_dir_and_bad_arguments(tmp_path):
    custom = tmp_path / "somewhere"
    assert invoke("install", "cao-supervisor", "--provider", "anything", "--dir", str(custom)).exit_code == 0
    assert (custom / "cao-supervisor" / "SKILL.md").is_file()
    unknown = invoke("install", "--provider", "no_such_cli", "--project", str(tmp_path))
    assert unknown.exit_code == 2 and "unknown provider 'no_such_cli'" in unknown.output
    assert "claude_code" in unknown.output and "codex" in unknown.output
    both = invoke("install", "--provider", "codex", "--user", "--project", str(tmp_path))
    assert both.exit_code == 2 and "at most one of --project, --user and --dir" in both.output
    no_such = invoke("install", "nope", "--provider", "codex", "--project", str(tmp_path))
    assert no_such.exit_code == 1 and "no skill named 'nope'" in no_such.output
    assert not (tmp_path / ".agents").exists()


@pytest.mark.parametrize("text, problem", [
    ("no frontmatter", "no YAML frontmatter"),
    ("---\n[unclosed\n---\nbody", "not valid YAML"),
    ("---\n- a list\n---\n", "must be a mapping"),
    ("---\nname: Bad Name\ndescription: x\n---\n", "name must be lowercase"),
    ("---\nname: ok\n---\n", "description must be 1 to 1024"),
    ("---\nname: ok\ndescription: " + "x" * 1025 + "\n---\n", "description must be 1 to 1024"),
])
def test_frontmatter_errors_name_the_file_and_the_problem(text, problem):
    with pytest.raises(ValueError, match=problem) as caught:
        frontmatter(text, "some/SKILL.md")
    assert str(caught.value).startswith("some/SKILL.md: ")


@given(st.text())
def test_frontmatter_raises_only_value_error(text):
    try:
        meta = frontmatter(text, "x")
    except ValueError:
        return
    assert set(meta) == {"name", "description"}


def _named_commands(text: str) -> list[list[str]]:
    """Every ``cao ...`` command line the text names: code block lines and inline code, split into words
    up to a comment or an alternative (``|``)."""
    import re
    import shlex

    blocks = re.findall(r"^```[^\n]*\n(.*?)^```", text, flags=re.S | re.M)
    lines = [line.strip() for block in blocks for line in block.splitlines()]
    found = [line for line in lines if line.startswith("cao ")]
    found += re.findall(r"`(cao [^`]+)`", re.sub(r"^```.*?^```", "", text, flags=re.S | re.M))
    commands = []
    for line in found:
        words = shlex.split(line.split(" #")[0].split(" | ")[0].replace("[", " ").replace("]", " "))
        commands.append(words[1:])
    return commands


def test_every_command_and_flag_the_printed_guide_names_exists(tmp_path):
    """`cao --skill` prints the shell guide; each command, subcommand and flag it names is one cao has."""
    from cao_kernel.cli import GUIDE_SKILL, cli

    printed = CliRunner().invoke(cli, ["--skill"], env={"CAO_HOME_DIR": str(tmp_path)})
    assert printed.exit_code == 0
    assert printed.output == next(s for s in list_skills() if s.name == GUIDE_SKILL).text()
    commands = _named_commands(printed.output)
    assert ["agent", "result", "JOB_ID"] in commands and len(commands) > 25
    ctx = cli.make_context("cao", [], obj={}, resilient_parsing=True)
    for words in commands:
        command, path, named = cli, ["cao"], f"(the guide: cao {' '.join(words)})"
        for word in words:
            if word.startswith("-"):
                options = {o for p in command.params for o in [*p.opts, *p.secondary_opts]}
                assert word.split("=")[0] in options, f"{' '.join(path)} has no option {word} {named}"
            elif isinstance(command, click.Group):  # a group takes no argument but a command's name
                found = command.get_command(ctx, word)
                assert found is not None, f"{' '.join(path)} has no command {word!r} {named}"
                command, path = found, [*path, word]
