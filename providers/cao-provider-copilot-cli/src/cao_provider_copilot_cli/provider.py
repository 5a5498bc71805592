"""The ``copilot_cli`` provider record: how cao launches GitHub Copilot CLI and reads its screen."""

from __future__ import annotations

from cao_hookspecs import ProviderCapabilities, ProviderSpec

from .dialogs import STARTUP_DIALOGS
from .launch import BINARY, BINARY_ENV, INSTALL_HINT, launch, model_endpoint
from .screen import detect_status, extract_last_message

__all__ = ["NAME", "TESTED_VERSIONS", "copilot_cli_provider"]

NAME = "copilot_cli"
#: Copilot CLI releases whose screens are recorded under tests/screens/ and pass the live tests.
TESTED_VERSIONS = ("1.0.102",)


def copilot_cli_provider() -> ProviderSpec:
    """The provider record registered by this distribution's plugin."""
    return ProviderSpec(
        name=NAME,
        binary=BINARY,
        binary_env=BINARY_ENV,
        launch=launch,
        detect_status=detect_status,
        extract_last_message=extract_last_message,
        exit_command="/exit",
        description="GitHub Copilot CLI",
        # A bracketed paste and an Enter in one go submit; a message typed while a turn runs is queued
        # by the CLI and sent when the turn ends.
        capabilities=ProviderCapabilities(accepts_input_while_busy=True, enter_count=1, submit_delay=0.0),
        startup_dialogs=STARTUP_DIALOGS,
        install_hint=INSTALL_HINT,
        version_args=("--version",),
        tested_versions=TESTED_VERSIONS,
        model_endpoint=model_endpoint,
    )
