"""The ``mock_cli`` provider record: how cao launches mock_cli and reads its screen."""

from __future__ import annotations

import os
import sys
from typing import Any

from cao_hookspecs import AgentProfile, LaunchContext, LaunchPlan, ProviderCapabilities, ProviderSpec

from .contract import DEFAULT_DELAY_MS, VERSION
from .screen import detect_status, extract_last_message

NAME = "mock_cli"
DELAY_KEY = "mock_delay_ms"


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


def delay_ms(profile: AgentProfile | None) -> int:
    """The reply delay a profile asks for in its ``mock_delay_ms`` frontmatter key (default 50)."""
    if profile is None or DELAY_KEY not in profile.extra:
        return DEFAULT_DELAY_MS
    value: Any = profile.extra[DELAY_KEY]
    if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(
            f"agent profile {profile.name!r}: {DELAY_KEY} must be a whole number of milliseconds >= 0, "
            f"got {value!r}"
        )
    return value


def launch(ctx: LaunchContext) -> LaunchPlan:
    """Launch plan for one terminal: mock_cli with the profile's reply delay."""
    return LaunchPlan(argv=(*mock_cli_command(), "--delay-ms", str(delay_ms(ctx.profile))))


def mock_provider() -> ProviderSpec:
    """The provider record registered by this distribution's plugin."""
    return ProviderSpec(
        name=NAME,
        binary=NAME,
        launch=launch,
        detect_status=detect_status,
        extract_last_message=extract_last_message,
        exit_command="/exit",
        description="Offline mock agent: answers every input with '> MOCK: <input>' (no account, no network)",
        capabilities=ProviderCapabilities(enter_count=1, submit_delay=0.0),
        install_hint="pip install cao-provider-mock (it ships the mock_cli program)",
        tested_versions=(VERSION,),
    )
