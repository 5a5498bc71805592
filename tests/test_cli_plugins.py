"""``cao plugins`` and plugin-contributed commands.

In-process runs hand the ``kernel`` fixture to the CLI (``obj={"kernel": kernel}``), so the plugins
are exactly the objects registered by the test; the subprocess runs use the fixture distribution
``tests/fixtures/plugins/good`` through real entry points.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner, Result

from cao_hookspecs import CommandSpec, LaunchPlan, ProviderSpec, StatusReport, hookimpl
from cao_kernel.cli import cli

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "plugins"
CAO = Path(sys.executable).with_name("cao")
RECORD_KEYS = {"name", "distribution", "version", "status", "error", "hooks", "builtin", "entry_point"}


def invoke(kernel: Any, *args: str) -> Result:
    return CliRunner().invoke(cli, list(args), obj={"kernel": kernel}, prog_name="cao")


def plugin(**hooks: Callable[..., Any]) -> types.SimpleNamespace:
    return types.SimpleNamespace(**{name: hookimpl(fn) for name, fn in hooks.items()})


def provider_plugin() -> types.SimpleNamespace:
    spec = ProviderSpec(name="demo", binary="demo", launch=lambda ctx: LaunchPlan(argv=["demo"]),
                        detect_status=lambda screen: StatusReport(status="idle"),
                        extract_last_message=lambda text: text)
    return plugin(cao_register_providers=lambda: [spec], cao_after_message_queued=lambda message: None)


def command_plugin(*specs: CommandSpec) -> types.SimpleNamespace:
    return plugin(cao_register_commands=lambda: list(specs))


def hello_command(loads: list[str]) -> CommandSpec:
    def load() -> click.Command:
        loads.append("hello")

        @click.command()
        @click.option("--name", default="world", help="Who to greet.")
        def hello(name: str) -> None:
            """Greet someone."""
            click.echo(f"hello {name}")

        return hello

    return CommandSpec(name="hello", load=load, help="Say hello (plugin command).")


# -- cao plugins ------------------------------------------------------------------------------------


def test_plugins_text_lists_plugins_with_hooks_and_status(kernel, register_plugin):
    with register_plugin(kernel, provider_plugin(), name="demo_plugin"):
        result = invoke(kernel, "plugins")
    assert result.exit_code == 0, result.output
    rows = result.stdout.splitlines()
    (row,) = [i for i, line in enumerate(rows) if line.startswith("demo_plugin ")]
    assert rows[row].split() == ["demo_plugin", "active", "(registered", "in", "process)"]
    assert rows[row + 1] == "    hooks: cao_after_message_queued, cao_register_providers"
    assert "cao_kernel.builtins" not in result.stdout


def test_plugins_with_nothing_installed(cao_home):
    from cao_kernel.kernel import Kernel

    kernel = Kernel(load_entrypoints=False, home=cao_home)
    assert invoke(kernel, "plugins").stdout == "No plugins installed.\n"
    assert json.loads(invoke(kernel, "plugins", "--json").stdout) == []


def test_plugins_json(kernel, register_plugin):
    with register_plugin(kernel, provider_plugin(), name="demo_plugin"):
        result = invoke(kernel, "plugins", "--json")
    assert result.exit_code == 0, result.output
    records = json.loads(result.stdout)
    assert all(set(record) == RECORD_KEYS for record in records)
    (demo,) = [r for r in records if r["name"] == "demo_plugin"]
    assert demo == {
        "name": "demo_plugin", "distribution": None, "version": None, "status": "active", "error": None,
        "hooks": ["cao_after_message_queued", "cao_register_providers"], "builtin": False,
        "entry_point": None,
    }
    # The kernel fixture loads no entry point: installed plugins are listed as blocked.
    assert all(r["status"] == "blocked" for r in records if r["distribution"] is not None)


def test_plugins_all_adds_the_builtin(kernel):
    from cao_kernel import __version__

    records = json.loads(invoke(kernel, "plugins", "--all", "--json").stdout)
    builtin = records[0]
    assert builtin["name"] == "cao_kernel.builtins" and builtin["builtin"] is True
    assert builtin["distribution"] == "cao-kernel" and builtin["version"] == __version__
    assert builtin["status"] == "active"
    assert {"cao_deliver_message", "cao_detect_status"} <= set(builtin["hooks"])
    assert [r for r in records[1:] if r["builtin"]] == []
    assert len(records) == len(json.loads(invoke(kernel, "plugins", "--json").stdout)) + 1

    text = invoke(kernel, "plugins", "--all").stdout
    assert any(line.startswith("cao_kernel.builtins ") and f"cao-kernel {__version__}" in line
               for line in text.splitlines())


def test_plugins_hook_filters(kernel, register_plugin):
    observer = plugin(cao_after_message_queued=lambda message: None)
    with register_plugin(kernel, provider_plugin(), name="demo_plugin"), \
            register_plugin(kernel, observer, name="observer"):
        names = [r["name"] for r in json.loads(invoke(kernel, "plugins", "--json", "--hook",
                                                      "cao_register_providers").stdout)]
        assert names == ["demo_plugin"]
        names = [r["name"] for r in json.loads(invoke(kernel, "plugins", "--json", "--hook",
                                                      "cao_after_message_queued").stdout)]
        assert sorted(names) == ["demo_plugin", "observer"]
        # --hook combines with --all.
        names = [r["name"] for r in json.loads(invoke(kernel, "plugins", "--all", "--json", "--hook",
                                                      "cao_detect_status").stdout)]
        assert names == ["cao_kernel.builtins"]
        nobody = invoke(kernel, "plugins", "--hook", "cao_shutdown")
        assert nobody.stdout == "No plugin implements cao_shutdown.\n"

        typo = invoke(kernel, "plugins", "--hook", "cao_regsiter_providers")
        assert typo.exit_code == 2
        assert "unknown hook 'cao_regsiter_providers'" in typo.stderr


# -- plugin commands --------------------------------------------------------------------------------


def test_plugin_command_is_listed_without_loading_and_runs(kernel, register_plugin):
    loads: list[str] = []
    with register_plugin(kernel, command_plugin(hello_command(loads)), name="greeter"):
        helped = invoke(kernel, "--help")
        assert helped.exit_code == 0, helped.output
        (row,) = [line for line in helped.stdout.splitlines() if line.strip().startswith("hello ")]
        assert row.split(None, 1)[1] == "Say hello (plugin command)."
        assert "plugins" in helped.stdout
        assert loads == [], "cao --help must not load plugin commands"

        ran = invoke(kernel, "hello", "--name", "cao")
        assert (ran.exit_code, ran.stdout) == (0, "hello cao\n")
        assert loads == ["hello"]

        own_help = invoke(kernel, "hello", "--help")
        assert own_help.exit_code == 0 and "Who to greet." in own_help.stdout


def test_plugin_command_cannot_replace_a_builtin(kernel, register_plugin):
    def hijack() -> click.Command:
        raise AssertionError("a built-in name must never load the plugin's command")

    loads: list[str] = []
    specs = (CommandSpec(name="plugins", load=hijack, help="Hijacked listing."), hello_command(loads))
    with register_plugin(kernel, command_plugin(*specs), name="hijacker"):
        helped = invoke(kernel, "--help")
        assert helped.exit_code == 0, helped.output
        assert "Hijacked listing." not in helped.stdout
        assert "List installed plugins, their hooks and status." in helped.stdout
        assert "hello" in helped.stdout  # the plugin's other command is unaffected
        (warning,) = [line for line in helped.stderr.splitlines() if "'plugins'" in line]
        assert "'hijacker'" in warning and "built-in" in warning and "cao-kernel" in warning

        listed = invoke(kernel, "plugins", "--json")
        assert listed.exit_code == 0, listed.output
        assert "hijacker" in [r["name"] for r in json.loads(listed.stdout)]


def test_plugin_command_that_loads_garbage_fails_clearly(kernel, register_plugin):
    spec = CommandSpec(name="broken", load=lambda: "not a command", help="Broken command.")
    with register_plugin(kernel, command_plugin(spec), name="sloppy"):
        assert "Broken command." in invoke(kernel, "--help").stdout
        result = invoke(kernel, "broken")
    assert result.exit_code == 1
    assert "plugin command 'broken' did not load a click command" in result.stderr


def test_a_raising_command_registration_does_not_break_the_cli(kernel, register_plugin):
    def explode() -> list[CommandSpec]:
        raise RuntimeError("commands unavailable")

    loads: list[str] = []
    with register_plugin(kernel, command_plugin(hello_command(loads)), name="greeter"), \
            register_plugin(kernel, plugin(cao_register_commands=explode), name="exploder"):
        helped = invoke(kernel, "--help")
        assert helped.exit_code == 0, helped.output
        assert "hello" in helped.stdout
        assert invoke(kernel, "hello").stdout == "hello world\n"
    assert any("'exploder'" in p and "commands unavailable" in p for p in kernel.hooks.problems)


@pytest.mark.parametrize("args", [["--no-plugins", "--help"], ["--help", "--no-plugins"]])
def test_no_plugins_applies_to_help_in_any_order(args: list[str]):
    state: dict[str, Any] = {}
    result = CliRunner().invoke(cli, args, obj=state, prog_name="cao")
    assert result.exit_code == 0, result.output
    assert state["kernel"].loader.policy.only == ()
    assert all(r.status == "blocked" for r in state["kernel"].plugin_records())


# -- real entry points, real processes --------------------------------------------------------------


def run_cao(*args: str) -> subprocess.CompletedProcess[str]:
    assert CAO.exists(), f"the cao script is not installed next to {sys.executable}"
    env = dict(os.environ, PYTHONPATH=str(FIXTURES / "good"))
    return subprocess.run([str(CAO), *args], env=env, capture_output=True, text=True, timeout=60)


def test_installed_plugin_command_through_entry_points():
    helped = run_cao("--help")
    assert helped.returncode == 0, helped.stderr
    assert "fixture-hello" in helped.stdout and "Say hello from the fixture plugin." in helped.stdout
    assert "fixture_good: loading" not in helped.stderr

    ran = run_cao("fixture-hello", "--name", "cao")
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == "hello cao from fixture_good\n"
    assert "fixture_good: loading fixture-hello" in ran.stderr

    listed = run_cao("plugins", "--hook", "cao_register_commands", "--json")
    assert listed.returncode == 0, listed.stderr
    assert "fixture_good" in [r["name"] for r in json.loads(listed.stdout)]


def test_strict_mode_names_the_broken_plugin_in_one_line_without_a_traceback():
    env = dict(os.environ, PYTHONPATH=str(FIXTURES / "import_error"), CAO_STRICT_PLUGINS="1")
    done = subprocess.run([str(CAO), "plugins"], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert "Error: plugin 'fixture_import_error' failed to load" in done.stderr


def test_a_plugin_whose_import_hangs_is_reported_and_cao_goes_on():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(FIXTURES / "hangs"), str(FIXTURES / "good")]),
               CAO_PLUGIN_LOAD_TIMEOUT="1")
    started = time.monotonic()
    done = subprocess.run([str(CAO), "plugins", "--json"], env=env, capture_output=True, text=True,
                          timeout=60)
    assert time.monotonic() - started < 15
    assert done.returncode == 0, done.stderr
    records = {r["name"]: r for r in json.loads(done.stdout)}
    assert records["fixture_hangs"]["status"] == "failed"
    assert "did not finish within 1 s" in records["fixture_hangs"]["error"]
    assert records["fixture_good"]["status"] == "active"
