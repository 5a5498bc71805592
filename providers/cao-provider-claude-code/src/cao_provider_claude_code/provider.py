"""The ``claude_code`` provider record: how cao launches Claude Code and reads its screen."""

from __future__ import annotations

from cao_hookspecs import ProviderCapabilities, ProviderSpec

from .dialogs import STARTUP_DIALOGS
from .launch import BINARY, INSTALL_HINT, launch
from .screen import detect_status, extract_last_message

__all__ = ["NAME", "TESTED_VERSIONS", "claude_code_provider"]

NAME = "claude_code"
#: Claude Code releases whose screens are recorded under tests/screens/ and pass the live tests.
TESTED_VERSIONS = ("2.1.330",)


def claude_code_provider() -> ProviderSpec:
    """The provider record registered by this distribution's plugin."""
    return ProviderSpec(
        name=NAME,
        binary=BINARY,
        launch=launch,
        detect_status=detect_status,
        extract_last_message=extract_last_message,
        exit_command="/exit",
        description="Claude Code, Anthropic's agent CLI",
        # Claude Code takes a bracketed paste and an Enter in one go, and queues messages typed while
        # it works.
        capabilities=ProviderCapabilities(accepts_input_while_busy=True, enter_count=1, submit_delay=0.0),
        startup_dialogs=STARTUP_DIALOGS,
        install_hint=INSTALL_HINT,
        version_args=("--version",),
        tested_versions=TESTED_VERSIONS,
    )
