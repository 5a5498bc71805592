"""``find_program``: the override variable first, then the environment's own ``PATH``."""

from __future__ import annotations

import pytest

from cao_hookspecs.programs import find_program


@pytest.fixture
def program(tmp_path):
    path = tmp_path / "bin" / "agentcli"
    path.parent.mkdir()
    path.write_text("#!/bin/sh\n", encoding="utf-8")
    path.chmod(0o755)
    return path


def test_the_override_wins_and_home_is_expanded(program, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    env = {"AGENT_BIN": "~/bin/agentcli", "PATH": "/nowhere"}
    assert find_program(env, "agentcli", "AGENT_BIN", missing="x") == str(program)


@pytest.mark.parametrize("make", ["missing", "not_executable", "folder"])
def test_an_override_that_is_not_a_program_names_the_variable(make, program, tmp_path):
    target = {"missing": tmp_path / "none", "folder": tmp_path, "not_executable": program}[make]
    if make == "not_executable":
        program.chmod(0o644)
    with pytest.raises(ValueError, match=r"^AGENT_BIN='.*' is not an executable file$"):
        find_program({"AGENT_BIN": str(target), "PATH": str(program.parent)}, "agentcli", "AGENT_BIN", missing="x")


def test_path_is_the_given_environments_not_the_process(program, monkeypatch):
    monkeypatch.setenv("PATH", str(program.parent))
    with pytest.raises(ValueError, match="^install agentcli$"):
        find_program({"PATH": "/nowhere"}, "agentcli", "AGENT_BIN", missing="install agentcli")
    assert find_program({"PATH": str(program.parent), "AGENT_BIN": ""}, "agentcli", "AGENT_BIN",
                        missing="x") == str(program)
    assert find_program({"PATH": str(program.parent)}, "agentcli", None, missing="x") == str(program)
