"""Every hook is documented in docs/hooks.md, has a complete docstring, and has a ``test_hook_*`` test.

The signature check deliberately reads the hookspec source with ``ast`` instead of reusing the
generator's ``inspect`` code, so a bug in either side shows up as a disagreement.
"""

from __future__ import annotations

import ast
import inspect
import re
import subprocess
import sys
from functools import cache
from pathlib import Path
from types import ModuleType

import pytest

from cao_hookspecs import ALL_SPEC_MODULES
from cao_kernel.plugins import create_plugin_manager
from cao_testkit.modules import load_file

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "hooks.md"
GENERATOR = ROOT / "scripts" / "gen_hooks_doc.py"
TEST_DIRS = ("tests", "hookspecs/tests", "plugins/*/tests", "providers/*/tests")


def _hook_names() -> list[str]:
    pm = create_plugin_manager()
    return sorted(name for name, caller in vars(pm.hook).items() if getattr(caller, "spec", None))


HOOKS = _hook_names()


def _spec_function(name: str):
    caller = getattr(create_plugin_manager().hook, name)
    return caller.spec.function


def _generator() -> ModuleType:
    return load_file(GENERATOR, "_cao_gen_hooks_doc")


@cache
def _doc_text() -> str:
    return DOC.read_text(encoding="utf-8")


def _written_signature(name: str) -> str:
    """The hookspec's signature exactly as written in its module, via ast."""
    fn = _spec_function(name)
    tree = ast.parse(Path(inspect.getsourcefile(fn)).read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            params = []
            for arg in node.args.args:
                params.append(f"{arg.arg}: {ast.unparse(arg.annotation)}" if arg.annotation else arg.arg)
            returns = f" -> {ast.unparse(node.returns)}" if node.returns else ""
            return f"{name}({', '.join(params)}){returns}"
    raise AssertionError(f"{name} not found in {inspect.getsourcefile(fn)}")


def test_contract_has_the_expected_number_of_hooks():
    # Pinned so adding or dropping a hook is a deliberate change seen in review.
    assert len(HOOKS) == 34, HOOKS
    from_modules = {
        name for module in ALL_SPEC_MODULES for name, obj in vars(module).items()
        if name.startswith("cao_") and hasattr(obj, "cao_spec")
    }
    assert from_modules == set(HOOKS)


@pytest.mark.parametrize("hook", HOOKS)
def test_hook_is_documented_with_its_exact_signature(hook: str):
    lines = _doc_text().splitlines()
    assert f"## {hook}" in lines, f"docs/hooks.md has no '## {hook}' heading"
    signature = _written_signature(hook)
    assert signature in lines, f"docs/hooks.md lacks the signature line {signature!r}"
    # The signature sits in the code block right after the heading, not somewhere else on the page.
    heading = lines.index(f"## {hook}")
    assert lines[heading + 1: heading + 5] == ["", "```python", signature, "```"]


def test_docs_are_up_to_date():
    assert _generator().render() == _doc_text(), (
        "docs/hooks.md is out of date: run `uv run python scripts/gen_hooks_doc.py`"
    )


def test_generator_check_mode_detects_a_stale_file(tmp_path: Path):
    target = tmp_path / "hooks.md"
    cmd = [sys.executable, str(GENERATOR), "--output", str(target)]
    missing = subprocess.run([*cmd, "--check"], capture_output=True, text=True, timeout=60)
    assert missing.returncode == 1
    assert "out of date" in missing.stderr

    assert subprocess.run(cmd, capture_output=True, text=True, timeout=60).returncode == 0
    assert target.read_text(encoding="utf-8") == _doc_text()
    fresh = subprocess.run([*cmd, "--check"], capture_output=True, text=True, timeout=60)
    assert fresh.returncode == 0, fresh.stderr

    target.write_text(target.read_text(encoding="utf-8").replace("## cao_startup", "## cao_start"))
    stale = subprocess.run([*cmd, "--check"], capture_output=True, text=True, timeout=60)
    assert stale.returncode == 1
    assert str(target) in stale.stderr


def test_generator_renders_rest_markup_as_markdown():
    gen = _generator()
    doc = """Summary line.

    Kind: lookup, ``firstresult=True``.

    :param terminal: the terminal; see :class:`~cao_hookspecs.types.Terminal`
        and :class:`cao_hookspecs.types.Message`.
    :return: a report.

    Example::

        @hookimpl
        def cao_x(terminal):
            return None
    """
    out = gen.docstring_markdown(doc)
    assert "**Kind:** lookup, `firstresult=True`." in out
    assert "- `terminal`: the terminal; see `Terminal` and `cao_hookspecs.types.Message`." in out
    assert "**Returns:** a report." in out
    assert "```python\n@hookimpl\ndef cao_x(terminal):\n    return None\n```" in out
    assert "``firstresult" not in out and ":class:" not in out


# -- the docstring checklist ------------------------------------------------------------------------


@pytest.mark.parametrize("hook", HOOKS)
def test_hookspec_docstring_covers_the_checklist(hook: str):
    fn = _spec_function(hook)
    doc = inspect.getdoc(fn) or ""
    missing = []
    if not re.search(r"^Kind: \S", doc, re.MULTILINE):
        missing.append("a 'Kind:' line")
    for param in inspect.signature(fn).parameters:
        if not re.search(rf"^:param {param}:", doc, re.MULTILINE):
            missing.append(f"':param {param}:'")
    returns = inspect.signature(fn).return_annotation
    if returns not in ("None", None) and not re.search(r"^(:return:|:returns:|Returns? )", doc, re.MULTILINE):
        missing.append("':return:'")
    for label in ("Errors:", "Stability:", "Example::"):
        if not re.search(rf"^{re.escape(label)}", doc, re.MULTILINE):
            missing.append(repr(label))
    assert not missing, f"{hook} docstring lacks {', '.join(missing)}"


# -- datasette's rule: every hook has a test_hook_* test --------------------------------------------


@cache
def _hook_tests() -> tuple[tuple[str, str, str], ...]:
    """(file, function name, function source) for every ``test_hook_*`` function in the repo."""
    found = []
    for pattern in TEST_DIRS:
        for folder in sorted(ROOT.glob(pattern)):
            for path in sorted(folder.rglob("test_*.py")):
                source = path.read_text(encoding="utf-8")
                for node in ast.walk(ast.parse(source, filename=str(path))):
                    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith(
                        "test_hook_"
                    ):
                        segment = ast.get_source_segment(source, node) or ""
                        found.append((str(path.relative_to(ROOT)), node.name, segment))
    return tuple(found)


def _mentions(hook: str, func_name: str, source: str) -> bool:
    short = hook.removeprefix("cao_")
    # test_hook_<name>, with or without the cao_ prefix, optionally followed by _<what it checks>.
    named = any(func_name == f"test_hook_{n}" or func_name.startswith(f"test_hook_{n}_") for n in (short, hook))
    return named or re.search(rf"\b{hook}\b", source) is not None


@pytest.mark.parametrize("hook", HOOKS)
def test_every_hook_has_a_test_hook_test(hook: str):
    tests = [f"{file}::{name}" for file, name, source in _hook_tests() if _mentions(hook, name, source)]
    assert tests, f"no test function named test_hook_* mentions {hook}"


def test_scan_for_hook_tests_is_not_vacuous():
    # The scan must not pass by accident: a made-up hook name is mentioned nowhere.
    assert _hook_tests()
    assert not any(_mentions("cao_not_a_hook", name, source) for _, name, source in _hook_tests())
