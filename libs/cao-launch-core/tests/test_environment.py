"""The environment an agent CLI starts in."""

from __future__ import annotations

from cao_hookspecs import AgentProfile, LaunchContext, Terminal
from cao_launch_core.environment import environment


def test_the_terminals_environment_lies_over_this_processs(monkeypatch):
    monkeypatch.setenv("CAO_LAUNCH_CORE_PROBE", "process")
    monkeypatch.setenv("CAO_LAUNCH_CORE_KEPT", "kept")
    terminal = Terminal(id="0a1b2c3d", name="t", session_name="s", provider="acme", agent_profile="p")
    ctx = LaunchContext(terminal=terminal, profile=AgentProfile(name="p"), working_directory="/w",
                        runtime_dir="/r", env={"CAO_LAUNCH_CORE_PROBE": "terminal"})
    env = environment(ctx)
    assert env["CAO_LAUNCH_CORE_PROBE"] == "terminal" and env["CAO_LAUNCH_CORE_KEPT"] == "kept"
    assert ctx.env == {"CAO_LAUNCH_CORE_PROBE": "terminal"}
