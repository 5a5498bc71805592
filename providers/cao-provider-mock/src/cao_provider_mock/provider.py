"""The ``mock_cli`` provider record: how cao launches mock_cli and reads its screen."""

from __future__ import annotations

import os
import sys
from typing import Any

from cao_hookspecs import AgentProfile, LaunchContext, LaunchPlan, ProviderCapabilities, ProviderSpec
from cao_launch_core.json_config import mcp_config

from .contract import DEFAULT_DELAY_MS, VERSION
from .prompts import read_prompt
from .screen import detect_status, extract_last_message

NAME = "mock_cli"
DELAY_KEY = "mock_delay_ms"
# How long the agent waits after its prompt before it connects cao's MCP server (a slow MCP start).
MCP_DELAY_KEY = "mock_mcp_delay_ms"
BEHAVIOUR_KEY = "mockBehaviour"
MCP_CONFIG_FILE = "mcp.json"
# Where behaviour modules are looked for, besides sys.path and the agent's working directory. Read from
# the environment of the process that launches agents (cao-server) and handed to each agent.
BEHAVIOUR_PATH_VARIABLE = "CAO_MOCK_BEHAVIOUR_PATH"


def mock_cli_command() -> tuple[str, ...]:
    """The command that runs this distribution's mock_cli, found without looking at PATH.

    The console script installed next to the running interpreter when there is one (it starts
    fastest), else the package run as a module by the same interpreter.
    """
    if not sys.executable:
        raise ValueError("cannot run mock_cli: the Python interpreter's path is unknown "
                         "(sys.executable is empty)")
    script = os.path.join(os.path.dirname(sys.executable), NAME)
    if os.path.isfile(script) and os.access(script, os.X_OK):
        return (script,)
    return (sys.executable, "-m", "cao_provider_mock")


def delay_ms(profile: AgentProfile | None, key: str = DELAY_KEY, default: int = DEFAULT_DELAY_MS) -> int:
    """The reply delay a profile asks for in its ``mock_delay_ms`` frontmatter key (default 50), or the
    milliseconds of another such ``key``."""
    if profile is None or key not in profile.extra:
        return default
    value: Any = profile.extra[key]
    if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(
            f"agent profile {profile.name!r}: {key} must be a whole number of milliseconds >= 0, "
            f"got {value!r}"
        )
    return value


def behaviour(profile: AgentProfile | None) -> str | None:
    """The scripted behaviour a profile names in its ``mockBehaviour`` key, checked for shape, or None."""
    if profile is None or profile.extra.get(BEHAVIOUR_KEY) is None:
        return None
    from .behaviours import BehaviourError, check_spec

    value = profile.extra[BEHAVIOUR_KEY]
    try:
        return check_spec(value.strip() if isinstance(value, str) else value)
    except BehaviourError as exc:
        raise ValueError(f"agent profile {profile.name!r}: {BEHAVIOUR_KEY}: {exc}") from None


def launch(ctx: LaunchContext) -> LaunchPlan:
    """Launch plan for one terminal: mock_cli with the profile's reply delay and, when the profile names
    one, its scripted behaviour; the profile's MCP servers go to a JSON file in the runtime folder."""
    argv = [*mock_cli_command(), "--delay-ms", str(delay_ms(ctx.profile))]
    files: dict[str, str] = {}
    env: dict[str, str] = {}
    if ctx.mcp_servers:
        files[MCP_CONFIG_FILE] = mcp_config(ctx.mcp_servers)
        argv += ["--mcp-config", os.path.join(ctx.runtime_dir, MCP_CONFIG_FILE)]
        mcp_delay = delay_ms(ctx.profile, MCP_DELAY_KEY, 0)
        if mcp_delay:
            argv += ["--mcp-delay-ms", str(mcp_delay)]
    name = behaviour(ctx.profile)
    if name is not None:
        argv += ["--behaviour", name]
        if os.environ.get(BEHAVIOUR_PATH_VARIABLE):
            env[BEHAVIOUR_PATH_VARIABLE] = os.environ[BEHAVIOUR_PATH_VARIABLE]
    return LaunchPlan(argv=tuple(argv), env=env, files=files)


def mock_provider() -> ProviderSpec:
    """The provider record registered by this distribution's plugin."""
    return ProviderSpec(
        name=NAME,
        binary=NAME,
        launch=launch,
        detect_status=detect_status,
        extract_last_message=extract_last_message,
        read_prompt=read_prompt,
        exit_command="/exit",
        description="Offline mock agent: answers every input with '> MOCK: <input>' (no account, no network)",
        capabilities=ProviderCapabilities(enter_count=1, submit_delay=0.0,
                                          uncertain_delivery="retype"),
        install_hint="pip install cao-provider-mock (it ships the mock_cli program)",
        tested_versions=(VERSION,),
        # No model API: mock_cli computes its answers itself.
        model_endpoint=None,
    )
