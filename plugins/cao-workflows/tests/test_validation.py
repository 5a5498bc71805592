"""Bad input is refused with a message naming the problem: files, run ids, inputs (parsers checked
with hypothesis), and the same through a real server."""

from __future__ import annotations

import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cao_workflows import names
from cao_workflows.errors import BadRunInput, WorkflowFileError
from cao_workflows.source import WorkflowSource, check, read_file

GOOD = "def workflow(inputs):\n    return 1\n"


def _source(text: str) -> WorkflowSource:
    return WorkflowSource(name="w", path="w.py", text=text)


def test_a_missing_file_is_named(tmp_path):
    with pytest.raises(WorkflowFileError, match=r"nope\.py' does not exist"):
        read_file(tmp_path / "nope.py")


def test_a_relative_path_is_read_from_the_base(tmp_path):
    (tmp_path / "w.py").write_text(GOOD)
    assert read_file("w.py", base=tmp_path).text == GOOD


@pytest.mark.parametrize(("path", "problem"), [
    ("/etc/passwd", "not a Python file"),
    ("", "empty or holding control characters"),
    ("a\x00.py", "control characters"),
    ("x\n.py", "control characters"),
])
def test_hostile_paths_are_refused_before_opening(path, problem):
    with pytest.raises(WorkflowFileError, match=problem):
        read_file(path)


def test_a_fifo_or_a_directory_is_not_read(tmp_path):
    os.mkfifo(tmp_path / "pipe.py")
    (tmp_path / "dir.py").mkdir()
    for name in ("pipe.py", "dir.py"):
        with pytest.raises(WorkflowFileError, match="not a regular file"):
            read_file(tmp_path / name)


def test_a_syntax_error_names_its_line():
    with pytest.raises(WorkflowFileError, match="syntax error at line 2"):
        check(_source("def workflow(inputs):\n    return (\n"))


@pytest.mark.parametrize("text", ["x = 1\n", "def workflow():\n    pass\n",
                                  "def workflow(a, b):\n    pass\n"])
def test_the_workflow_function_must_exist_and_take_the_inputs(text):
    with pytest.raises(WorkflowFileError, match="workflow"):
        check(_source(text))


def test_profiles_named_literally_are_found_with_their_lines():
    text = GOOD + "run_step('a', 'x')\nStep(profile='b', prompt='y')\nrun_step(name, 'z')\n"
    assert [(u.profile, u.line) for u in check(_source(text))] == [("a", 3), ("b", 4)]


@given(st.text(max_size=80))
def test_run_ids_are_accepted_exactly_when_they_follow_the_rule(value):
    ok = bool(names.RUN_ID_RE.fullmatch(value))
    if ok:
        assert names.run_id(value) == value
    else:
        with pytest.raises(BadRunInput, match="invalid run id"):
            names.run_id(value)


@given(st.dictionaries(st.from_regex(names.INPUT_KEY_RE, fullmatch=True),
                       st.text().filter(lambda v: "\x00" not in v), max_size=5))
def test_input_pairs_round_trip(inputs):
    assert names.parse_inputs([f"{k}={v}" for k, v in inputs.items()]) == inputs


@given(st.text(max_size=40))
def test_input_pairs_either_parse_or_name_their_problem(pair):
    try:
        parsed = names.parse_inputs([pair])
    except BadRunInput as exc:
        assert "input" in str(exc)
    else:
        ((key, value),) = parsed.items()
        assert f"{key}={value}" == pair


def test_an_input_given_twice_is_refused():
    with pytest.raises(BadRunInput, match="given twice"):
        names.parse_inputs(["a=1", "a=2"])


def test_generated_run_ids_follow_the_rule():
    assert names.run_id(names.new_run_id("x" * 64))
