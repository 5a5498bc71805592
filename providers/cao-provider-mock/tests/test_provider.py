"""The plugin, its provider record and its launch plan."""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys

import pytest

from cao_hookspecs import AgentProfile, LaunchContext, LaunchPlan, ProviderSpec, Terminal, TerminalStatus
from cao_provider_mock import plugin
from cao_provider_mock.provider import mock_cli_command


def _context(tmp_path, profile=None) -> LaunchContext:
    terminal = Terminal(id="0123abcd", name="dev-1a2b", session_name="cao-t", provider="mock_cli",
                        agent_profile="dev")
    return LaunchContext(terminal=terminal, profile=profile, working_directory=str(tmp_path),
                         runtime_dir=str(tmp_path))


def _spec() -> ProviderSpec:
    (spec,) = plugin.cao_register_providers()
    return spec


def test_plugin_registers_into_a_fresh_manager_with_no_unknown_hooks():
    from cao_kernel.plugins import create_plugin_manager, hook_names, register_checked

    pm = create_plugin_manager()
    register_checked(pm, plugin, "mock_cli")  # raises on a hook the contract does not declare
    assert hook_names(pm, plugin) == ("cao_register_providers",)
    (specs,) = pm.hook.cao_register_providers()
    (spec,) = specs
    assert isinstance(spec, ProviderSpec)
    assert (spec.name, spec.binary, spec.exit_command) == ("mock_cli", "mock_cli", "/exit")
    assert (spec.capabilities.enter_count, spec.capabilities.submit_delay) == (1, 0)
    assert spec.description and "cao-provider-mock" in spec.install_hint
    assert spec.tested_versions == ("0.1.0",)


def test_entry_point_and_console_script_are_in_installed_metadata():
    dist = importlib.metadata.distribution("cao-provider-mock")
    (entry,) = [ep for ep in dist.entry_points if ep.group == "cao"]
    assert (entry.name, entry.value) == ("mock_cli", "cao_provider_mock.plugin")
    assert entry.load() is plugin
    (script,) = [ep for ep in dist.entry_points if ep.group == "console_scripts"]
    assert (script.name, script.value) == ("mock_cli", "cao_provider_mock.agent:main")


def test_kernel_loads_the_provider_from_its_entry_point(tmp_path):
    from cao_kernel.kernel import Kernel
    from cao_kernel.plugins import LoadPolicy

    kernel = Kernel(policy=LoadPolicy(only=("mock_cli",)), home=tmp_path)
    assert kernel.provider("mock_cli").binary == "mock_cli"
    assert not kernel.failed_plugins


def test_plugin_module_stays_cheap_to_import():
    code = ("import sys, cao_provider_mock.plugin; "
            "print(sorted(m for m in sys.modules if m.startswith('cao_provider_mock')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['cao_provider_mock', 'cao_provider_mock.plugin']"


def test_launch_runs_the_installed_console_script_with_the_default_delay(tmp_path):
    plan = _spec().launch(_context(tmp_path))
    assert isinstance(plan, LaunchPlan)
    script = os.path.join(os.path.dirname(sys.executable), "mock_cli")
    assert plan.argv == (script, "--delay-ms", "50")
    result = subprocess.run([*plan.argv[:-2], "--version"], capture_output=True, text=True, timeout=10)
    assert result.stdout == "mock_cli 0.1.0\n"


def test_launch_takes_the_delay_from_the_profile(tmp_path):
    for value, expected in ((250, "250"), ("0", "0"), (" 75 ", "75")):
        profile = AgentProfile(name="dev", provider="mock_cli", extra={"mock_delay_ms": value})
        assert _spec().launch(_context(tmp_path, profile)).argv[-2:] == ("--delay-ms", expected)
    plain = AgentProfile(name="dev", provider="mock_cli")
    assert _spec().launch(_context(tmp_path, plain)).argv[-1] == "50"


@pytest.mark.parametrize("bad", [-1, 1.5, True, "soon", None, [50]])
def test_launch_refuses_a_bad_delay_naming_the_profile_and_key(tmp_path, bad):
    profile = AgentProfile(name="dev", provider="mock_cli", extra={"mock_delay_ms": bad})
    with pytest.raises(ValueError, match=r"agent profile 'dev': mock_delay_ms must be a whole number"):
        _spec().launch(_context(tmp_path, profile))


def test_without_a_console_script_the_module_runs_under_the_same_interpreter(tmp_path, monkeypatch):
    real_python = sys.executable
    lone_python = tmp_path / "bin" / "python3"
    lone_python.parent.mkdir()
    lone_python.symlink_to(real_python)
    monkeypatch.setattr(sys, "executable", str(lone_python))
    assert mock_cli_command() == (str(lone_python), "-m", "cao_provider_mock")
    plan = _spec().launch(_context(tmp_path))
    assert plan.argv == (str(lone_python), "-m", "cao_provider_mock", "--delay-ms", "50")
    # A symlink outside the environment would not see the package; run the same command with the real one.
    result = subprocess.run([real_python, *plan.argv[1:]], input=b"hi\n", capture_output=True, timeout=10)
    assert b"> MOCK: hi\n" in result.stdout


def test_unknown_interpreter_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(sys, "executable", "")
    with pytest.raises(ValueError, match="sys.executable is empty"):
        mock_cli_command()


def test_provider_functions_are_the_screen_readers():
    spec = _spec()
    assert spec.detect_status("\u276f").status == TerminalStatus.IDLE
    assert spec.extract_last_message("> MOCK: done\n\u276f") == "done"
    assert spec.model_endpoint is None and spec.binary_env is None
