"""``cao provider new`` and the provider template (``providers/_template``).

Fast tests render the template and check what comes out; the ones marked ``template`` install the
rendered package into a fresh venv (workspace packages from wheels, the rest from PyPI), run its own
generated tests there, list it with that venv's ``cao plugins``, and re-record its screens.
"""

from __future__ import annotations

import filecmp
import json
import keyword
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cao_hookspecs.names import PROFILE_NAME_RE
from cao_kernel.cli import cli
from cao_kernel.cli.provider import (
    ProviderTemplateError,
    binary_problem,
    build_context,
    name_problem,
    render_project,
    template_dir,
)
from cao_testkit.modules import load_file

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = ROOT / "providers" / "_template"
SCREENS = "tests/screens/0.1.0"


def load_isolation() -> Any:
    """``scripts/isolated_venv.py`` as a module, loaded once per process (shared with the isolated tests)."""
    return load_file(ROOT / "scripts" / "isolated_venv.py", "cao_isolated_venv")


def new(*args: str) -> Any:
    return CliRunner().invoke(cli, ["--no-plugins", "provider", "new", *args], catch_exceptions=False)


def files_under(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts}


def screen_names() -> list[str]:
    path = TEMPLATE / "{{cookiecutter.__project_dir}}" / SCREENS / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    return sorted(manifest["screens"])


# -- rendering ------------------------------------------------------------------------------------


def test_the_kernel_ships_the_template_from_its_single_source():
    # cao_kernel/provider_template is a link to providers/_template, so the wheel carries the same files.
    assert template_dir().resolve() == TEMPLATE.resolve()


def test_cao_help_lists_the_command():
    result = CliRunner().invoke(cli, ["--no-plugins", "--help"])
    assert re.search(r"^\s+provider\s+Create a provider package", result.output, re.MULTILINE), result.output
    result = CliRunner().invoke(cli, ["--no-plugins", "provider", "new", "--help"])
    assert "--binary" in result.output and "--output-dir" in result.output


def test_new_renders_a_complete_package(tmp_path):
    result = new("acme_cli", "--binary", "acme", "--display-name", "Acme CLI", "--output-dir", str(tmp_path))
    assert result.exit_code == 0, result.output
    package = tmp_path / "cao-provider-acme-cli"
    assert f"Created cao-provider-acme-cli in {package}" in result.output
    assert "Next steps" in result.output and "scripts/record_screens.py" in result.output
    assert [p.name for p in tmp_path.iterdir()] == ["cao-provider-acme-cli"]

    module = "src/cao_provider_acme_cli"
    expected = {
        "pyproject.toml", "README.md", "CHANGELOG.md", "scripts/record_screens.py",
        *(f"{module}/{name}.py"
          for name in ("__init__", "plugin", "provider", "launch", "screen", "dialogs", "prompts",
                       "signals")),
        *(f"tests/{name}.py"
          for name in ("conftest", "test_conformance", "test_screen", "test_prompts", "test_launch",
                       "test_live", "test_signals")),
        "tests/programs/example_cli.py", f"{SCREENS}/manifest.json",
        *(f"{SCREENS}/{name}.txt" for name in screen_names()),
    }
    files = files_under(package)
    assert set(files) == expected

    for name, data in files.items():
        text = data.decode("utf-8")
        assert "cookiecutter" not in text and "{{" not in text and "{%" not in text, name
        if name.endswith(".py"):
            compile(text, name, "exec")

    project = tomllib.loads(files["pyproject.toml"].decode())
    assert project["project"]["name"] == "cao-provider-acme-cli"
    assert project["project"]["dependencies"] == ["cao-hookspecs", "cao-launch-core", "cao-screen-core"]
    assert project["project"]["entry-points"] == {"cao": {"acme_cli": "cao_provider_acme_cli.plugin"}}
    test_extra = project["project"]["optional-dependencies"]["test"]
    # What the live tests start: the tmux backend, and a real cao server with its inbox and MCP server.
    assert {"cao-kernel", "cao-testkit", "cao-tmux", "cao-server", "cao-mcp", "cao-inbox-sqlite",
            "cao-provider-mock", "pytest-timeout>=2.3"} <= set(test_extra)
    # Rendered into providers/, every cao package it names comes from the workspace.
    requirements = [*project["project"]["dependencies"], *test_extra]
    named = {re.match(r"[a-z0-9-]+", text).group() for text in requirements}
    sources = project["tool"]["uv"]["sources"]
    assert {name for name in named if name.startswith("cao-")} == set(sources)
    assert all(source == {"workspace": True} for source in sources.values())
    assert project["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"] == [module]
    launch = files[f"{module}/launch.py"].decode()
    assert 'BINARY = "acme"' in launch and 'BINARY_ENV = "CAO_ACME_CLI_BIN"' in launch
    assert 'entry_point = "acme_cli"' in files["tests/test_conformance.py"].decode()
    assert "# cao-provider-acme-cli" in files["README.md"].decode()
    assert "Acme CLI" in files[f"{module}/screen.py"].decode()


def test_screens_and_the_stand_in_program_are_copied_unchanged(tmp_path):
    assert new("acme_cli", "--binary", "acme", "--output-dir", str(tmp_path)).exit_code == 0
    source = TEMPLATE / "{{cookiecutter.__project_dir}}"
    for name in [f"{SCREENS}/{n}.txt" for n in screen_names()] + [f"{SCREENS}/manifest.json",
                                                                   "tests/programs/example_cli.py"]:
        assert (tmp_path / "cao-provider-acme-cli" / name).read_bytes() == (source / name).read_bytes(), name


def test_the_generated_plugin_registers_its_provider(tmp_path):
    assert new("acme_cli", "--binary", "acme", "--output-dir", str(tmp_path)).exit_code == 0
    probe = """
import json
from cao_kernel.kernel import Kernel
import cao_provider_acme_cli.plugin as plugin
kernel = Kernel(load_entrypoints=False)
kernel.register_plugin(plugin, name="acme_cli")
kernel.pm.check_pending()
spec = kernel.providers["acme_cli"]
print(json.dumps({"name": spec.name, "binary": spec.binary, "binary_env": spec.binary_env,
                  "dialogs": [d.name for d in spec.startup_dialogs], "versions": list(spec.tested_versions),
                  "idle": spec.detect_status(">").status.value,
                  "native": [spec.capabilities.native_status, spec.native_signal.__module__,
                             spec.native_answer.__module__], "takes_model": spec.capabilities.takes_model}))
"""
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60,
                          cwd=tmp_path / "cao-provider-acme-cli" / "src", check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"name": "acme_cli", "binary": "acme", "binary_env": "CAO_ACME_CLI_BIN",
                                       "dialogs": ["trust folder"], "versions": ["0.1.0"], "idle": "idle",
                                       "native": [False, "cao_provider_acme_cli.signals",
                                                  "cao_provider_acme_cli.signals"], "takes_model": True}


def test_the_template_uses_only_placeholders_cao_and_cookiecutter_both_render():
    context = build_context(TEMPLATE, {})
    assert context == {
        "provider_name": "acme_cli", "binary": "acme", "display_name": "Acme Cli",
        "__distribution": "cao-provider-acme-cli", "__module": "cao_provider_acme_cli",
        "__project_dir": "cao-provider-acme-cli", "__binary_env": "CAO_ACME_CLI_BIN",
    }
    placeholder = re.compile(r"\{\{\s*cookiecutter\.(?P<key>[A-Za-z_]+)\s*\}\}")
    for path in sorted(TEMPLATE.rglob("*")):
        if path.name == "cookiecutter.json" or "__pycache__" in path.parts:
            continue
        where = path.relative_to(TEMPLATE)
        for text in [path.name] + ([path.read_text(encoding="utf-8")] if path.is_file() else []):
            assert {m.group("key") for m in placeholder.finditer(text)} <= set(context), where
            assert not re.search(r"\{\{|\{%|\{#", placeholder.sub("", text)), (
                f"{where} holds template syntax other than '{{{{ cookiecutter.<key> }}}}'")


# -- refusals -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("args", "message"), [
    (["Acme", "--binary", "acme"], "invalid provider name 'Acme': must be lowercase (acme)"),
    (["acme-cli", "--binary", "acme"], "invalid provider name 'acme-cli': uses '-'"),
    (["1acme", "--binary", "acme"], "must start with a letter"),
    (["acme__cli", "--binary", "acme"], "must not hold '__' or end with '_'"),
    (["cao_acme", "--binary", "acme"], "must not start with 'cao'"),
    (["acme cli", "--binary", "acme"], "may hold only letters, digits, '_' and '-'"),
    (["a" * 65, "--binary", "acme"], "at most 64 characters"),
    (["class", "--binary", "acme"], "is a Python keyword"),
    (["acme_cli", "--binary", "/usr/bin/acme"], "invalid binary '/usr/bin/acme': holds a path separator"),
    (["acme_cli", "--binary", "acme --yolo"], "holds a space"),
    (["acme_cli", "--binary", ""], "invalid binary '': is empty"),
    (["acme_cli", "--binary", "-acme"], "must not start with '-' or '.'"),
    (["acme_cli", "--binary", "ac\"me"], "may hold only letters, digits"),
    (["acme_cli", "--binary", "acme", "--display-name", 'Acme "CLI"'], "invalid display name"),
    (["mock_cli", "--binary", "mock"], "cao-provider-mock already provides the entry point 'mock_cli'"),
])
def test_bad_input_is_refused_naming_the_problem_and_nothing_is_created(tmp_path, args, message):
    result = new(*args, "--output-dir", str(tmp_path))
    assert result.exit_code == 1, result.output
    assert message in result.output
    assert list(tmp_path.iterdir()) == []


def test_an_existing_folder_is_never_overwritten(tmp_path):
    existing = tmp_path / "cao-provider-acme-cli"
    existing.mkdir()
    (existing / "mine.txt").write_text("keep me")
    result = new("acme_cli", "--binary", "acme", "--output-dir", str(tmp_path))
    assert result.exit_code == 1
    assert f"{existing} already exists" in result.output
    assert files_under(existing) == {"mine.txt": b"keep me"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cao-provider-acme-cli"]


def test_a_missing_output_folder_is_an_error(tmp_path):
    result = new("acme_cli", "--binary", "acme", "--output-dir", str(tmp_path / "nowhere"))
    assert result.exit_code == 1
    assert "output folder" in result.output and "does not exist" in result.output
    assert not (tmp_path / "nowhere").exists()


def test_a_template_error_late_in_the_tree_leaves_nothing_behind(tmp_path):
    broken = tmp_path / "template"
    shutil.copytree(TEMPLATE, broken)
    # Rendered last (the tree is walked in sorted order): everything before it has been written.
    (broken / "{{cookiecutter.__project_dir}}" / "tests" / "zz_last.py").write_text("{% if x %}\n")
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(ProviderTemplateError, match=r"zz_last\.py, line 1: template syntax other than"):
        render_project(broken, build_context(broken, {"provider_name": "acme_cli", "binary": "acme"}), out)
    assert list(out.iterdir()) == []


# -- properties -----------------------------------------------------------------------------------

_SNAKE = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*")
names = st.from_regex(r"[a-z][a-z0-9]{0,6}(?:_[a-z0-9]{1,5}){0,3}", fullmatch=True)
binaries = st.from_regex(r"[A-Za-z0-9_+][A-Za-z0-9._+-]{0,15}", fullmatch=True)
display_names = st.lists(st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._+()-]{0,8}", fullmatch=True),
                         min_size=1, max_size=4).map(" ".join)


@given(st.text(max_size=70) | names)
def test_name_rule(name):
    problem = name_problem(name)
    expected_ok = (bool(_SNAKE.fullmatch(name)) and len(name) <= 64 and not keyword.iskeyword(name)
                   and name != "cao" and not name.startswith("cao_"))
    assert (problem is None) == expected_ok, (name, problem)
    if problem is None:
        # Everything derived from it follows the workspace's rules.
        assert PROFILE_NAME_RE.match(name)
        assert re.fullmatch(r"cao-[a-z0-9]+(-[a-z0-9]+)*", "cao-provider-" + name.replace("_", "-"))
        assert ("cao_provider_" + name).isidentifier()
    else:
        assert problem.strip()


@given(st.text(max_size=30) | binaries)
def test_binary_rule(binary):
    problem = binary_problem(binary)
    if problem is None:
        assert binary and "/" not in binary and not any(ch.isspace() for ch in binary)
        assert re.fullmatch(r"[A-Za-z0-9._+-]+", binary) and not binary.startswith(("-", "."))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=names.filter(lambda n: name_problem(n) is None), binary=binaries, display=display_names)
def test_any_accepted_input_renders_a_valid_package(name, binary, display):
    context = build_context(TEMPLATE, {"provider_name": name, "binary": binary, "display_name": display})
    with tempfile.TemporaryDirectory() as out:
        package = render_project(TEMPLATE, context, Path(out))
        assert package.name == "cao-provider-" + name.replace("_", "-")
        project = tomllib.loads((package / "pyproject.toml").read_text())["project"]
        assert project["entry-points"]["cao"] == {name: f"cao_provider_{name}.plugin"}
        for path in package.rglob("*.py"):
            compile(path.read_text(encoding="utf-8"), str(path), "exec")
        launch = (package / "src" / f"cao_provider_{name}" / "launch.py").read_text()
        assert f'BINARY = "{binary}"' in launch


# -- the rendered package, installed alone --------------------------------------------------------


@pytest.fixture(scope="module")
def installed(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A package rendered by ``cao provider new``, installed with its test extra into a fresh venv."""
    isolation = load_isolation()
    out = tmp_path_factory.mktemp("rendered")
    result = new("acme_cli", "--binary", "acme", "--display-name", "Acme CLI", "--output-dir", str(out))
    assert result.exit_code == 0, result.output
    package = out / "cao-provider-acme-cli"
    venv = isolation.IsolatedVenv(tmp_path_factory.mktemp("venv") / "venv").create()
    house = isolation.shared_wheelhouse(request.config, tmp_path_factory)
    # From its wheel, built without sources: the workspace sources it names are for providers/ only.
    venv.install(isolation.read_member(package), house.wheel_of(package).as_uri(), house)
    return package, venv


@pytest.mark.template
@pytest.mark.slow
@pytest.mark.timeout(600)
def test_generated_tests_pass_and_cao_plugins_lists_the_provider(installed, cao_home):
    package, venv = installed
    done = venv.run(["python", "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=package)
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"\b\d{2,} passed\b", done.stdout) and "skipped" not in done.stdout, done.stdout

    done = venv.run(["cao", "plugins"], cwd=package, env={"CAO_HOME_DIR": str(cao_home)})
    assert done.returncode == 0, done.stderr
    listed = re.search(r"^acme_cli\s+active\s+cao-provider-acme-cli 0\.1\.0$", done.stdout, re.MULTILINE)
    assert listed, done.stdout


@pytest.mark.template
@pytest.mark.slow
@pytest.mark.timeout(600)
def test_the_test_extra_holds_what_the_live_tests_start(installed, cao_home):
    # Installed with only its test extra, the package has every plugin a live cao server loads
    # (cao_testkit.server_process.live_server_plugins), and its live tests collect.
    package, venv = installed
    done = venv.run(["cao", "plugins"], cwd=package, env={"CAO_HOME_DIR": str(cao_home)})
    assert done.returncode == 0, done.stderr
    for plugin in ("tmux", "acme_cli", "mock_cli", "inbox_sqlite", "server", "mcp"):
        assert re.search(rf"^{plugin}\s+active\s", done.stdout, re.MULTILINE), (plugin, done.stdout)
    done = venv.run(["python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "--collect-only",
                     "tests/test_live.py"], cwd=package)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "test_a_terminal_of_a_real_cao_server_answers" in done.stdout, done.stdout


@pytest.mark.template
@pytest.mark.slow
@pytest.mark.timeout(600)
def test_the_installed_kernel_renders_the_same_package(installed, tmp_path, cao_home):
    # cao-kernel installed from its wheel: the template travels inside it.
    _, venv = installed
    done = venv.run(["cao", "provider", "new", "other_cli", "--binary", "other",
                     "--output-dir", str(tmp_path)], cwd=tmp_path, env={"CAO_HOME_DIR": str(cao_home)})
    assert done.returncode == 0, done.stderr
    here = tmp_path / "here"
    here.mkdir()
    assert new("other_cli", "--binary", "other", "--output-dir", str(here)).exit_code == 0
    assert files_under(tmp_path / "cao-provider-other-cli") == files_under(here / "cao-provider-other-cli")


@pytest.mark.template
@pytest.mark.slow
@pytest.mark.tmux
@pytest.mark.timeout(600)
def test_recording_again_reproduces_the_shipped_screens(installed, tmp_path):
    """The template's screens are what its recording script captures from the stand-in program."""
    package, venv = installed
    out = tmp_path / "screens"
    done = venv.run(["python", "-m", "cao_testkit.record", ".", "--out", str(out)], cwd=package)
    assert done.returncode == 0, done.stdout + done.stderr
    shipped = package / SCREENS
    assert sorted(p.name for p in out.iterdir()) == sorted(p.name for p in shipped.iterdir())
    mismatched = [p.name for p in shipped.iterdir() if not filecmp.cmp(p, out / p.name, shallow=False)]
    assert not mismatched, mismatched
